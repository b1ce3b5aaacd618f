"""``--output pipe``: the commands write into a pipe that pairbench reads and throws away.

hyperfine's ``--output=pipe`` feeds a command's output through a pipe before
discarding it, so a command that writes a lot pays for a reader keeping up
(as in a real pipeline) rather than for ``/dev/null``'s free writes. The
executor opens its output by path, so the pipe is a FIFO in a private
temporary directory (mode 0700): :class:`DrainedPipe` opens its reading end
first and drains it in a thread until every writer has closed it.
:class:`PipedExecutor` closes the pipe after the executor it feeds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading

from pairbench.command import Command
from pairbench.measure.executor import Execution, Executor, ExecutorInfo

_CHUNK = 1 << 16


class DrainedPipe:
    """A FIFO at ``path`` whose every byte is read and discarded until :meth:`close`."""

    def __init__(self):
        self._directory = tempfile.mkdtemp(prefix="pairbench-output-")
        self.path = os.path.join(self._directory, "pipe")
        try:
            os.mkfifo(self.path, 0o600)
            self._reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            # our own writer keeps the reader from seeing end-of-file before the executor opens the pipe
            self._keeper = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except BaseException:
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        os.set_blocking(self._reader, True)
        self._thread = threading.Thread(target=self._drain, name="pairbench-output-pipe", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self._reader, _CHUNK):
                pass

    def close(self, timeout_s: float = 1.0) -> None:
        """Stop keeping the pipe open, let the reader finish (a process that still holds the pipe is
        not waited for longer than ``timeout_s``), and remove the FIFO. Idempotent."""
        if self._keeper is not None:
            os.close(self._keeper)
            self._keeper = None
            self._thread.join(timeout_s)
            if not self._thread.is_alive():
                os.close(self._reader)
            shutil.rmtree(self._directory, ignore_errors=True)


class PipedExecutor:
    """An executor whose commands write into a :class:`DrainedPipe`; closing it closes the pipe too."""

    def __init__(self, executor: Executor, pipe: DrainedPipe):
        self._executor = executor
        self._pipe = pipe

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        return self._executor.run(command, timeout_ns=timeout_ns)

    def now_ns(self) -> int:
        return self._executor.now_ns()

    def info(self) -> ExecutorInfo:
        return self._executor.info()

    def close(self) -> None:
        try:
            self._executor.close()
        finally:
            self._pipe.close()
