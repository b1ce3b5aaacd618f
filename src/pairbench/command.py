"""What to execute, what one execution cost and how its end is described: the part of the data
model with no numpy.

Kept apart from ``model`` so that the executor (and the small spawner process that
runs it, see ``measure/spawner.py``) and a Python worker can import it without loading numpy.
"""

from __future__ import annotations

import signal

from pairbench.frozen import frozen
from pairbench.notes import Note

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


@frozen
class Command:
    """What to execute: argv without a shell, or a string for ``sh -c`` when ``shell``."""

    text: str
    argv: tuple[str, ...]
    shell: bool = False

    def to_dict(self) -> dict:
        return {"text": self.text, "argv": list(self.argv), "shell": self.shell}


@frozen
class Execution:
    """What one execution cost: a command's, as an executor measured it, or a worker's sample, as the
    worker measured it around its loop (``worker.protocol.parse_reply``).

    ``start_ns`` is on the measuring clock (see ``measure.executor.Executor.now_ns``).
    ``status`` follows the sample convention: exit code, -signal, or
    ``STATUS_TIMEOUT``. ``leftover_processes`` counts processes the command
    left alive after it exited, in its process group or (through the spawner) having
    left it with ``setsid``; they are killed. ``escaped_processes`` counts those still
    running when pairbench gave up ending them (only where the machine gives no cgroup:
    see ``measure.containment``). A worker also reports the page faults its loop took
    (``minor_faults``, ``major_faults``), and, when a hardware counter counted them, the
    user-space instructions its loop executed (``instructions``; None: not counted).
    """

    wall_ns: int
    start_ns: int
    status: int = 0
    user_ns: int = 0
    sys_ns: int = 0
    max_rss_kib: int = 0
    voluntary_cs: int = 0
    involuntary_cs: int = 0
    leftover_processes: int = 0
    escaped_processes: int = 0
    minor_faults: int = 0
    major_faults: int = 0
    instructions: int | None = None


@frozen
class ExecutorInfo:
    """What an executor can report, recorded with every run.

    ``kind`` names the executor; ``rss_floor_kib`` is the smallest max RSS it
    can report (the size of the process commands are spawned from, which Linux
    charges to a child at exec; None when it has none); ``notes`` say how it
    differs from what was asked (a fallback). ``spawner`` names the spawner
    process that ran the commands (``"native"`` or ``"python"``; None: none,
    they ran from pairbench itself or were not commands); ``peak_memory`` how
    max RSS was measured (``"rusage"``: ``wait4``'s ``ru_maxrss``; ``"cgroup"``:
    ``memory.peak`` of a cgroup per command; None: not by the executor),
    ``peak_memory_reason`` why a delegated cgroup was not used, and ``containment``
    how what a command left running was ended (``"cgroup"``: a cgroup of its own;
    ``"scan"``: the spawner's scan of its descendants; ``"group"``: its process
    group only; None: unknown), with ``containment_reason`` why not a cgroup.
    """

    kind: str
    rss_floor_kib: int | None = None
    notes: tuple[Note, ...] = ()
    spawner: str | None = None
    peak_memory: str | None = None
    peak_memory_reason: str = ""
    containment: str | None = None
    containment_reason: str = ""

    def to_dict(self) -> dict:
        """The ``environment.executor`` record of a result document (the keys after the floor only
        when known: documents before them lack them)."""
        record = {"kind": self.kind, "rss_floor_kib": self.rss_floor_kib}
        if self.spawner is not None:
            record["spawner"] = self.spawner
        if self.peak_memory is not None:
            record["peak_memory"] = self.peak_memory
        if self.peak_memory_reason:
            record["peak_memory_reason"] = self.peak_memory_reason
        if self.containment is not None:
            record["containment"] = self.containment
        if self.containment_reason:
            record["containment_reason"] = self.containment_reason
        return record
