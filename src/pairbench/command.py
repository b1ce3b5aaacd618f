"""What to execute and how its end is described: the part of the data model with no numpy.

Kept apart from ``model`` so that the executor (and the small spawner process that
runs it, see ``measure/spawner.py``) can import it without loading numpy.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

STATUS_TIMEOUT = -1000
"""``status`` of a sample that pairbench killed after ``--timeout``."""
STATUS_PROTOCOL = -1001
"""``status`` of a sample whose worker broke the worker protocol (and was stopped)."""
STATUS_BENCHMARK_ERROR = -1002
"""``status`` of a sample whose benchmark reported an error (the worker goes on)."""
STATUS_UNREADABLE = -1003
"""``status`` of a harness invocation whose output could not be read (a format pairbench does not know)."""
STATUS_NO_RESULT = -1004
"""``status`` of a harness invocation that exited without a result for its benchmark (the filter
matched nothing: the benchmark was renamed or removed)."""


def describe_status(status: int) -> str:
    """Say in words what a sample's ``status`` means ("exit code 2", "signal 9 (SIGKILL)")."""
    if status == STATUS_TIMEOUT:
        return "timed out"
    if status == STATUS_PROTOCOL:
        return "broke the worker protocol"
    if status == STATUS_BENCHMARK_ERROR:
        return "the benchmark reported an error"
    if status == STATUS_UNREADABLE:
        return "its output could not be read"
    if status == STATUS_NO_RESULT:
        return "it reported no result for the benchmark"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "unknown"
        return f"killed by signal {-status} ({name})"
    return f"exit code {status}"


@dataclass(frozen=True)
class Command:
    """What to execute: argv without a shell, or a string for ``sh -c`` when ``shell``."""

    text: str
    argv: tuple[str, ...]
    shell: bool = False

    def to_dict(self) -> dict:
        return {"text": self.text, "argv": list(self.argv), "shell": self.shell}
