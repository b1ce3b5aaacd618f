"""What to execute and how its end is described: the part of the data model with no numpy.

Kept apart from ``model`` so that the executor (and the small spawner process that
runs it, see ``measure/spawner.py``) can import it without loading numpy.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

STATUS_TIMEOUT = -1000
"""``status`` of a sample that pairbench killed after ``--timeout``."""


def describe_status(status: int) -> str:
    """Say in words what a sample's ``status`` means ("exit code 2", "signal 9 (SIGKILL)")."""
    if status == STATUS_TIMEOUT:
        return "timed out"
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
