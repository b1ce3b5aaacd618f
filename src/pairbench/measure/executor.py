"""The executor seam: run one command once and report what it cost.

An :class:`Executor` runs a :class:`~pairbench.model.Command` and returns an
:class:`~pairbench.command.Execution`. The real one (``measure.posix.PosixExecutor``) spawns the
command in its own process group and reads its rusage from ``wait4``; the fake
one (``FakeExecutor``, in ``tests/support/fakes.py``) returns scripted durations on a virtual
clock, so sampling plans, stopping rules and the CLI can be tested exactly.
"""

from __future__ import annotations

import time
from typing import Protocol

from pairbench.command import Command, Execution, ExecutorInfo
from pairbench.frozen import frozen

__all__ = ["Execution", "Executor", "ExecutorInfo", "OutputPolicy", "WallClock"]


@frozen
class OutputPolicy:
    """Where a command's stdout and stderr go: ``null`` (default), ``inherit`` or a file path."""

    mode: str = "null"  # "null" | "inherit" | "file"
    path: str = ""

    @classmethod
    def parse(cls, text: str) -> OutputPolicy:
        if text in ("null", "inherit"):
            return cls(text)
        return cls("file", text)


@frozen
class WallClock:
    """The sampler's executor when the targets time themselves (workers, in-process functions):
    only its clock is used; ``kind`` names what measured, in the run's environment, and
    ``rss_floor_kib`` the smallest max RSS the targets can report (a worker's is the size of
    pairbench when it started the worker), if they have one."""

    kind: str
    rss_floor_kib: int | None = None

    def now_ns(self) -> int:
        return time.monotonic_ns()

    def info(self) -> ExecutorInfo:
        return ExecutorInfo(self.kind, self.rss_floor_kib)


class Executor(Protocol):
    """Runs commands one at a time and times them."""

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Run ``command`` once; raise ``CommandNotFound`` if it cannot be started.

        A non-zero exit, a signal or a timeout is *not* an exception here: it is
        reported in ``Execution.status`` and the caller decides what to do.
        """
        ...

    def now_ns(self) -> int:
        """The executor's monotonic clock, in nanoseconds."""
        ...

    def info(self) -> ExecutorInfo:
        """What this executor can report (its RSS floor now) and how it runs commands."""
        ...

    def close(self) -> None:
        """Release resources (open output files); idempotent."""
        ...
