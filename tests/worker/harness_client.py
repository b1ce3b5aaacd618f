"""A tiny client of the worker protocol for the harness's tests: starts ``python -m
pairbench.worker`` on two real pipes and checks every line with ``pairbench.worker.protocol``'s parsers.

Every read is bounded: at most ``MAX_LINE_BYTES`` a line, at most ``timeout`` seconds (select).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pairbench.command import Execution
from pairbench.worker import protocol

TIMEOUT_S = 10.0


class WorkerGone(Exception):
    """The worker closed its reply pipe (it exited) where a line was expected."""


def worker_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "pairbench.worker", *map(str, args)]


class HarnessClient:
    """A running Python worker and the two pipes to it; use as a context manager.

    The worker's environment also holds ``HARNESS_CLIENT_FDS`` (the descriptors' numbers under a
    name the worker leaves alone), so that a benchmark can check what became of them."""

    def __init__(self, *args: str, cwd: Path | None = None, env: dict | None = None,
                 fds_value: str | None = None):
        request_r, self.request_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self.fds = (request_r, reply_w)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        environment = {**os.environ, **(env or {}), "HARNESS_CLIENT_FDS": f"{request_r},{reply_w}",
                       protocol.FDS_VARIABLE: fds_value or f"{request_r},{reply_w}"}
        self.process = subprocess.Popen(worker_argv(*args), cwd=cwd, env=environment,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self._stderr, pass_fds=self.fds)
        os.close(request_r)
        os.close(reply_w)
        self._buffer = b""

    def __enter__(self) -> HarnessClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- raw lines

    def send(self, data: bytes | str) -> None:
        os.write(self.request_w, data.encode() if isinstance(data, str) else data)

    def readline(self, timeout: float = TIMEOUT_S) -> str:
        """The next reply line without its newline; ``WorkerGone`` at end of file."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if len(self._buffer) >= protocol.MAX_LINE_BYTES:
                raise protocol.ProtocolError("a reply line is over the limit")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reply_r], [], [], left)[0]:
                raise TimeoutError(f"no reply within {timeout} s; stderr: {self.stderr()!r}")
            chunk = os.read(self.reply_r, protocol.MAX_LINE_BYTES)
            if not chunk:
                raise WorkerGone(f"the worker closed its reply pipe; stderr: {self.stderr()!r}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        assert len(line) + 1 <= protocol.MAX_LINE_BYTES
        return line.decode("utf-8")

    # -- requests, checked

    def greeting(self) -> None:
        protocol.parse_greeting(self.readline())

    def list(self) -> list[str]:
        self.send(protocol.list_request())
        count = protocol.parse_count(self.readline())
        return [protocol.parse_listed(self.readline()) for _ in range(count)]

    def run(self, name: str, iterations: int) -> Execution | protocol.ErrorReply:
        self.send(protocol.run_request(name, iterations))
        return protocol.parse_reply(self.readline())

    def sample(self, name: str, iterations: int) -> Execution:
        """A sample that must succeed."""
        reply = self.run(name, iterations)
        assert isinstance(reply, Execution), reply
        return reply

    def quit(self) -> int:
        self.send(protocol.quit_request())
        return self.wait()

    # -- the process

    def wait(self, timeout: float = TIMEOUT_S) -> int:
        return self.process.wait(timeout)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def close_requests(self) -> None:
        """Close the request pipe: the worker reads end of file."""
        if self.request_w is not None:
            os.close(self.request_w)
            self.request_w = None

    def close(self) -> None:
        self.close_requests()
        if self.reply_r is not None:
            os.close(self.reply_r)
            self.reply_r = None
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()
