"""Counting instructions with Callgrind: the program line that runs a side under it, and the
reading of the counts it writes.

Callgrind (Valgrind's call-graph tool) runs a program on a simulated CPU and counts every
user-space instruction it executes (``Ir``), and with its cache simulation every data read
and write and the misses of a simulated two-level cache. The counts do not depend on what
else runs on the machine: only on the program, its input and its environment (address-space
layout, hash seeds and garbage collection can still move them). The price is speed: a
program runs 20 to 100 times slower under it (``SLOWDOWN``).

Two ways to count:

* a whole process tree (a command, a harness invocation): ``--trace-children=yes`` and one
  output file per process (``cg.PID``), summed;
* a region (an in-process worker's timed loop): ``--collect-atstart=no``; the worker switches
  collection on and off around its loop with Callgrind's client requests and dumps the counts
  after it (``CALLGRIND_DUMP_STATS_AT``), one file per sample (``cg.PID.N``).

The files are read by pairbench after the sample has ended, between samples, and only their
header (where Callgrind writes the ``summary:`` line of totals); each file is removed once read.
Everything in them is treated as hostile: bounded, parsed strictly.

The cache is simulated with fixed geometry (``CACHE_GEOMETRY``), not the machine's, so the cycle
model gives one figure on every machine (this virtual machine reports a 256 MiB direct-mapped
last-level cache). The cycle model (``cycles_model``) is the one iai-callgrind and CodSpeed
derive from the same counts (Itamar Turner-Trauring's weights): an L1 hit costs 1 cycle, a
last-level hit 5, a memory access 35 (``CYCLE_WEIGHTS``). It is a model, not a measurement:
it knows nothing of branch prediction, out-of-order execution, prefetching or instructions of
unequal cost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pairbench.command import STATUS_UNREADABLE, Command
from pairbench.frozen import frozen
from pairbench.measure.targets import CommandTarget, CountedCommand, Row
from pairbench.model import CYCLES_MODEL_METRIC, INSTRUCTIONS_METRIC

EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
"""The events Callgrind counts with its cache simulation on, in the order it writes them."""
CACHE_GEOMETRY = (("I1", 32768, 8, 64), ("D1", 32768, 8, 64), ("LL", 8388608, 16, 64))
"""The simulated caches: (name, bytes, ways, line bytes): 32 KiB 8-way L1s and an 8 MiB 16-way
last level, with 64-byte lines, whatever the machine has."""
CYCLE_WEIGHTS = {"l1_hit": 1, "ll_hit": 5, "memory": 35}
"""The cycle model's cost of an access by where it is served (Turner-Trauring; iai-callgrind)."""
SLOWDOWN = (20, 100)
"""How many times slower a program runs under Callgrind with its cache simulation (Valgrind's
manual gives 20 to 100 for Callgrind; an interpreter lies at the slow end)."""
OUTPUT_PREFIX = "cg"
LOG_PREFIX = "valgrind"
"""Valgrind's own messages go to ``valgrind.PID`` in the output directory, not to the program's
standard error."""
MAX_HEADER_BYTES = 65536
"""The most of an output file read to find its totals: Callgrind writes them in the header."""
MAX_COUNT = 10**19
_SUMMARY = re.compile(r"^summary:((?: [0-9]{1,20})+)$")
_EVENTS = re.compile(r"^events:((?: [A-Za-z0-9]{1,16})+)$")
_DUMP_NAME = re.compile(r"^" + OUTPUT_PREFIX + r"\.([0-9]{1,10})(?:\.([0-9]{1,10}))?$")


class CallgrindError(Exception):
    """Callgrind's output could not be read, or held no counts where some were expected."""


@frozen
class Counts:
    """What Callgrind counted over a sample: ``events`` by name (``EVENTS``; ``Ir`` alone without
    the cache simulation)."""

    events: Mapping[str, int]

    @property
    def instructions(self) -> int:
        return self.events["Ir"]

    @property
    def cycles_model(self) -> int | None:
        """Estimated cycles (``CYCLE_WEIGHTS``) from the cache simulation's counts; None without it."""
        if any(name not in self.events for name in EVENTS):
            return None
        e = self.events
        accesses = e["Ir"] + e["Dr"] + e["Dw"]
        l1_misses = e["I1mr"] + e["D1mr"] + e["D1mw"]
        memory = e["ILmr"] + e["DLmr"] + e["DLmw"]
        return (CYCLE_WEIGHTS["l1_hit"] * (accesses - l1_misses) + CYCLE_WEIGHTS["ll_hit"] * (l1_misses - memory)
                + CYCLE_WEIGHTS["memory"] * memory)

    def __add__(self, other: Counts) -> Counts:
        names = self.events.keys() & other.events.keys()
        return Counts({name: self.events[name] + other.events[name] for name in names})


def find_valgrind() -> str | None:
    """The ``valgrind`` program on the PATH, or None (Debian's package ``valgrind`` has it)."""
    return shutil.which("valgrind")


def callgrind_argv(valgrind: str, directory: str, *, region: bool) -> tuple[str, ...]:
    """The words that run a program under Callgrind, its output in ``directory``: with ``region``
    nothing is counted until the program's client requests switch collection on (a worker's
    loop), and nothing is instrumented until its first sample (a Python worker then starts in
    half the time); without, every process of the tree is counted, each into its own file."""
    caches = [f"--{name}={size},{ways},{line}" for name, size, ways, line in CACHE_GEOMETRY]
    return (valgrind, "--tool=callgrind", "--quiet", "--cache-sim=yes", *caches,
            "--compress-strings=no", "--compress-pos=no", "--dump-line=no",
            f"--callgrind-out-file={os.path.join(directory, OUTPUT_PREFIX)}.%p",
            f"--log-file={os.path.join(directory, LOG_PREFIX)}.%p",
            *(("--collect-atstart=no", "--instr-atstart=no") if region else ("--trace-children=yes",)))


def parse_counts(head: str, source: str) -> Counts:
    """The totals of one Callgrind output file from its header (the ``events:`` and ``summary:``
    lines); ``CallgrindError`` naming ``source`` when it has neither or they do not match."""
    names: tuple[str, ...] | None = None
    for line in head.splitlines():
        found = _EVENTS.match(line)
        if found:
            names = tuple(found.group(1).split())
            continue
        found = _SUMMARY.match(line)
        if found:
            if names is None:
                raise CallgrindError(f"{source}: a summary line before the events line")
            values = [int(v) for v in found.group(1).split()]
            if len(values) > len(names) or any(v >= MAX_COUNT for v in values):
                raise CallgrindError(f"{source}: the summary line does not fit the events {' '.join(names)}")
            values += [0] * (len(names) - len(values))  # Callgrind leaves trailing zeros out
            events = dict(zip(names, values, strict=True))
            if "Ir" not in events:
                raise CallgrindError(f"{source}: no instruction count (Ir) among the events")
            return Counts(events)
    raise CallgrindError(f"{source}: no summary line in its first {MAX_HEADER_BYTES} bytes: not Callgrind's "
                         "output, or cut short")


def read_head(path: str) -> str:
    """The first ``MAX_HEADER_BYTES`` of a file as text (no link followed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_HEADER_BYTES).decode("utf-8", "replace")


class OutputDirectory:
    """A private directory (mode 0700) that receives one side's Callgrind output, and its reading."""

    def __init__(self, label: str = "side"):
        self.path = tempfile.mkdtemp(prefix=f"pairbench-callgrind-{re.sub(r'[^A-Za-z0-9]', '_', label)[:20]}-")

    def files(self) -> list[tuple[str, int, int | None]]:
        """The output files present: (name, process id, dump number or None for a process's last)."""
        found = []
        for name in os.listdir(self.path):
            match = _DUMP_NAME.match(name)
            if match:
                found.append((name, int(match.group(1)), int(match.group(2)) if match.group(2) else None))
        return sorted(found, key=lambda f: (f[1], f[2] or 0))

    def take(self, names: Iterable[str]) -> Counts:
        """The sum of the counts in the files ``names``, each removed once read."""
        total: Counts | None = None
        for name in names:
            path = os.path.join(self.path, name)
            try:
                counts = parse_counts(read_head(path), name)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            total = counts if total is None else total + counts
        if total is None:
            raise CallgrindError("Callgrind wrote no output")
        return total

    def take_processes(self) -> Counts:
        """A whole tree's counts: every process's file (a command's sample), removed once read."""
        return self.take([name for name, _, dump in self.files() if dump is None])

    def take_dump(self) -> Counts | None:
        """The one dump a worker's sample made (``cg.PID.N``), removed once read; None when it made
        none (a worker built without Callgrind's client requests)."""
        dumps = [name for name, _, dump in self.files() if dump is not None]
        if not dumps:
            return None
        if len(dumps) > 1:
            self.take(dumps)
            raise CallgrindError(f"{len(dumps)} Callgrind dumps from one sample: the program dumps its counts "
                                 "itself (CALLGRIND_DUMP_STATS)")
        return self.take(dumps)

    def clear(self) -> None:
        """Remove every file (counts not read, Valgrind's messages)."""
        for name in os.listdir(self.path):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.path, name))

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def count_metrics(counts: Counts) -> dict[str, float]:
    """The float metric columns a sample stores for ``counts`` (totals over its iterations)."""
    metrics = {INSTRUCTIONS_METRIC: float(counts.instructions)}
    cycles = counts.cycles_model
    if cycles is not None:
        metrics[CYCLES_MODEL_METRIC] = float(cycles)
    return metrics


@dataclass
class CallgrindCommandTarget(CountedCommand):
    """A whole command counted by Callgrind: the command's process tree runs under it, and after
    it has ended its counts join the sample's row as metrics. ``--prepare`` and ``--conclude`` run
    as they would, not counted."""

    target: CommandTarget
    valgrind: str
    directory: OutputDirectory

    def counted_command(self) -> Command:
        command = self.target.command
        return Command(command.text, (*callgrind_argv(self.valgrind, self.directory.path, region=False),
                                      *command.argv), shell=False)

    def before_counting(self) -> None:
        self.directory.clear()

    def counted(self, row: Row) -> Row:
        """The row with its counts, read after the command ended; a failed one stays failed (its
        counts, if any, are dropped); unreadable output fails the row, saying why."""
        if row.execution.status != 0:
            self.directory.clear()
            return row
        try:
            counts = self.directory.take_processes()
        except (CallgrindError, OSError) as exc:
            return dataclasses.replace(row, execution=dataclasses.replace(row.execution, status=STATUS_UNREADABLE),
                                       detail=f"Callgrind's counts could not be read: {exc}")
        return dataclasses.replace(row, metrics={**row.metrics, **count_metrics(counts)})
