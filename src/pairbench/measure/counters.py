"""What counts instructions on this machine, and the targets that count them.

``--metric instructions`` counts with the processor's own counter where the machine has one (a
``cpu`` performance-monitoring unit in ``/sys/bus/event_source/devices``, and a
``perf_event_paranoid`` that lets a user count their own processes), else with Callgrind
(``measure.callgrind``); ``--metric cycles-model`` always with Callgrind, whose cache simulation
it is. Many virtual machines have no counters (this project's has none: the hardware path is
built and its detection tested, but it has not counted on real counters here).

A hardware count is the program's user-space instructions (``instructions:u``) at full speed, so
its time is measured in the same sample; Callgrind's is the simulated program's, 20 to 100 times
slower, so the sample's times are not the program's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from pairbench.command import STATUS_UNREADABLE, Command
from pairbench.errors import UsageError
from pairbench.frozen import frozen
from pairbench.measure import callgrind
from pairbench.measure.targets import CommandTarget, CountedCommand, Row
from pairbench.model import INSTRUCTIONS_METRIC

PMU_NAMES = ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3", "armv8_pmuv3_0")
"""The performance-monitoring units whose presence means the processor's counters can be read."""
MOST_PARANOID = 2
"""The ``perf_event_paranoid`` at and below which a user may count their own processes' user-space
events (above it, only a privileged one)."""
_PERF_LINE = re.compile(r"^([0-9]{1,20}|<not supported>|<not counted>),[^,]*,instructions:u,")


class CountingUnavailable(UsageError):
    """What the metric needs is not on this machine; the message says what to install."""


@frozen
class HardwareCounters:
    """Whether this machine's processor counters can count a user's instructions, and why not."""

    usable: bool
    why_not: str = ""


def hardware_counters(root: str = "/") -> HardwareCounters:
    """Whether the processor's instruction counter can be read here (``root``: a fixture tree)."""
    devices = os.path.join(root, "sys/bus/event_source/devices")
    try:
        present = set(os.listdir(devices))
    except OSError:
        return HardwareCounters(False, f"{devices} cannot be read")
    if not present & set(PMU_NAMES):
        return HardwareCounters(False, "the processor's performance counters are not exposed here (no cpu PMU in "
                                f"{devices}: a virtual machine without counter passthrough)")
    try:
        with open(os.path.join(root, "proc/sys/kernel/perf_event_paranoid")) as f:
            paranoid = int(f.read(20).strip())
    except (OSError, ValueError):
        return HardwareCounters(False, "perf_event_paranoid cannot be read")
    if paranoid > MOST_PARANOID and os.geteuid() != 0:
        return HardwareCounters(False, f"perf_event_paranoid is {paranoid}: a user may count their own processes "
                                f"only at {MOST_PARANOID} or below (sysctl kernel.perf_event_paranoid=2)")
    return HardwareCounters(True)


@frozen
class Counter:
    """How a run counts: ``hardware`` or ``callgrind``, with the program it runs (``perf`` or
    ``valgrind``) and what that says it is."""

    kind: str
    program: str
    version: str = ""

    def to_note_data(self) -> dict:
        return {"counter": self.kind, "program": os.path.basename(self.program), "version": self.version,
                "slowdown": list(callgrind.SLOWDOWN) if self.kind == "callgrind" else None}


def choose_counter(metric: str, root: str = "/", *, commands: bool = True) -> Counter:
    """The counter for ``metric`` on this machine; ``CountingUnavailable`` saying what to install.
    ``commands``: whole commands are counted (the hardware path runs them under ``perf stat``)."""
    if metric == "instructions":
        hardware = hardware_counters(root)
        perf = shutil.which("perf")
        if hardware.usable and (perf or not commands):
            return Counter("hardware", perf or "", _version([perf, "--version"]) if perf else "")
    valgrind = callgrind.find_valgrind()
    if valgrind is None:
        why = "" if metric == "instructions" else ", and the cache model is Callgrind's own"
        raise CountingUnavailable(f"--metric {metric} needs Valgrind's Callgrind (this machine has no usable "
                                  f"hardware counters{why}): install it (Debian and Ubuntu: apt-get install valgrind)")
    return Counter("callgrind", valgrind, _version([valgrind, "--version"]))


GO_MARK = b"\xff Go buildinf:"
"""The start of the build information every Go program carries (``debug/buildinfo``)."""
GO_SCAN_BYTES = 64 << 20


def is_go_program(path: str) -> bool:
    """Whether the file at ``path`` is a Go program (its build information's mark, in its first
    ``GO_SCAN_BYTES``); False when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return GO_MARK in f.read(GO_SCAN_BYTES)
    except OSError:
        return False


def refuse_go(text: str) -> None:
    """``CountingUnavailable`` when the program a command or worker ``text`` starts is a Go program:
    Valgrind does not support the Go runtime (its goroutine stacks, signals and threads), so Callgrind
    would give wrong counts or none."""
    first = text.split()[0] if text.split() else ""
    path = shutil.which(first) or first
    if path and is_go_program(path):
        raise CountingUnavailable(f"{first} is a Go program: Valgrind does not support the Go runtime, so "
                                  "Callgrind cannot count it; count it on a machine with hardware counters "
                                  "(--metric instructions uses them where /sys/bus/event_source/devices has cpu), "
                                  "or compare its time (--metric cpu)")


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return re.sub(r"[^\x20-\x7e]", "?", done.stdout.strip())[:60]


def parse_perf_stat(text: str, source: str) -> int:
    """The ``instructions:u`` count of ``perf stat -x,`` output; ``ValueError`` naming ``source`` when
    there is none (the event not supported, or not counted)."""
    for line in text.splitlines():
        found = _PERF_LINE.match(line)
        if found:
            if not found.group(1).isdigit():
                raise ValueError(f"{source}: perf counted no instructions ({found.group(1)})")
            return int(found.group(1))
    raise ValueError(f"{source}: no instructions:u line in perf's output")


@dataclass
class PerfCommandTarget(CountedCommand):
    """A whole command counted by the processor's counter: ``perf stat -e instructions:u`` runs it
    (children included) and writes the count to a private file read after the sample."""

    target: CommandTarget
    perf: str
    directory: callgrind.OutputDirectory

    def _path(self) -> str:
        return os.path.join(self.directory.path, "perf.csv")

    def counted_command(self) -> Command:
        command = self.target.command
        return Command(command.text, (self.perf, "stat", "-x,", "--no-big-num", "-e", "instructions:u", "-o",
                                      self._path(), "--", *command.argv), shell=False)

    def counted(self, row: Row) -> Row:
        try:
            text = callgrind.read_head(self._path())
            count = parse_perf_stat(text, "perf stat")
        except (OSError, ValueError) as exc:
            if row.execution.status != 0:
                return row
            return dataclasses.replace(row, execution=dataclasses.replace(row.execution, status=STATUS_UNREADABLE),
                                       detail=f"the instruction count could not be read: {exc}")
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self._path())
        if row.execution.status != 0:
            return row
        return dataclasses.replace(row, metrics={**row.metrics, INSTRUCTIONS_METRIC: float(count)})


def counted_targets(targets, counter: Counter) -> tuple[tuple, list[callgrind.OutputDirectory]]:
    """``targets`` (commands) counted by ``counter``, and the private directories that receive the
    counts (removed by the caller when the run ends)."""
    counted, directories = [], []
    for target in targets:
        directory = callgrind.OutputDirectory(target.name)
        directories.append(directory)
        if counter.kind == "hardware":
            counted.append(PerfCommandTarget(target, counter.program, directory))
        else:
            counted.append(callgrind.CallgrindCommandTarget(target, counter.program, directory))
    return tuple(counted), directories
