"""Go: test binaries built with ``go test -c``, their ``Benchmark*`` functions and sub-benchmarks.

Listing: ``-test.list ^Benchmark`` names the top-level benchmarks; one
discovery run at one iteration each (``-test.benchtime 1x``) names every
sub-benchmark (``b.Run``) as well, since only running a benchmark reveals them.
An invocation runs one benchmark (``-test.bench``, each level of its name
anchored and quoted, as the testing package splits the pattern on ``/``) for
exactly N iterations (``-test.benchtime Nx``) with ``-test.benchmem`` and no
tests (``-test.run ^$``), repeated ``-test.count`` times (``bench``'s rounds:
``--repetitions``; once for the pilot and validation). GOMAXPROCS is fixed with
``-test.cpu``: ``$GOMAXPROCS`` when set (a ``b.RunParallel`` benchmark wants several), else 1,
so the ``-P`` suffix the testing package adds to every name is known and removed.

Why one P by default: with two, the runtime's idle P spins and its threads park and wake
hundreds of times an invocation (560 voluntary switches against 84 with one); on a shared
2-CPU machine at load 15 that made an A/A's per-round log-ratios spread four times wider (their
IQR 0.71-1.24 against 0.23, ``benchmarks/results/harness_equivalence.md``). A sequential
benchmark runs on one P either way; the garbage collector's background work then shares it, on
both sides alike.

Read from the text (``parse_text``, also used by ``pairbench import``): lines
in the Go benchmark format, ``NAME-P  N  V ns/op  V B/op  V allocs/op  V
unit...``; ns/op times N is the sample, and every other per-operation unit is
kept as a total over the N iterations under its own name (``B/op``,
``allocs/op``, ``widgets/op``: ``analysis.metrics`` divides it again), other
units (``MB/s``) as reported. The testing package leaves ns/op out of a line
when the time it measured is 0 (the timer stopped throughout, or too coarse to
advance): such a line is a time of 0, which the analysis refuses to compare.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from pathlib import Path

from pairbench.frozen import frozen
from pairbench.harness_registry import GO as NAME
from pairbench.measure.harnesses.base import (
    LISTING_TIMEOUT_S,
    Discovery,
    DiscoveryError,
    FormatError,
    Invocation,
    NoResult,
    Program,
    Report,
    capture,
    count,
    finite_number,
    listed_names,
    metric_total,
    numbered_lines,
    own_metric,
    total_ns,
)

_RE2_SPECIAL = re.compile(r"([\\.+*?()|\[\]{}^$])")
_LINE = re.compile(r"^(Benchmark\S*)\s+(\d+)\s+(\S.*)$")
_CONFIG = re.compile(r"^([a-z][^\s:]*):\s?(.*)$")
_COUNT_DIGITS = 16  # 2**53 has 16 digits
_UNIT_VALUE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


DEFAULT_PROCS = 1
"""GOMAXPROCS of a benchmark run when ``$GOMAXPROCS`` is not set (see the module's docstring)."""


def procs() -> int:
    """GOMAXPROCS a Go benchmark runs with (``-test.cpu``): ``$GOMAXPROCS`` when it is a positive
    number, else ``DEFAULT_PROCS``."""
    value = os.environ.get("GOMAXPROCS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return DEFAULT_PROCS


def pattern_for(name: str) -> str:
    """The ``-test.bench`` pattern that matches ``name`` alone: each ``/``-separated level
    anchored and quoted (Go's ``regexp.QuoteMeta`` set)."""
    return "/".join("^" + _RE2_SPECIAL.sub(r"\\\1", part) + "$" for part in name.split("/"))


class GoTest:
    """The adapter of Go test binaries."""

    name = NAME

    def __init__(self, gomaxprocs: int | None = None):
        self.gomaxprocs = gomaxprocs or procs()

    def discover(self, program: Program, scratch: Path, timeout_s: float | None) -> Discovery:
        """Every benchmark the binary runs, sub-benchmarks included, in its order."""
        listed = capture(program.command("-test.list", "^Benchmark"), timeout_s=timeout_s)
        if listed.status != 0:
            raise DiscoveryError(listed.failure("listing its benchmarks (-test.list)"))
        top = list(listed_names((line.strip() for _, line in numbered_lines(listed.text())
                                 if line.strip().startswith("Benchmark")), NAME))
        if not top:
            return Discovery((), explicit_iterations=True)
        names = self._leaves(program, top, timeout_s)
        if names is None:  # one of them failed the run: each alone, so the others are found
            names = self._each_alone(program, top, timeout_s)
        return Discovery(tuple(dict.fromkeys(names)), explicit_iterations=True)

    def _each_alone(self, program: Program, top: list[str], timeout_s: float | None) -> list[str]:
        """The leaves of each top-level benchmark run alone, all within one listing's time (a binary
        of thousands of benchmarks is not given thousands of listing times)."""
        limit = LISTING_TIMEOUT_S if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit
        names = []
        for name in top:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DiscoveryError(f"running its {len(top)} benchmarks one by one to list their sub-benchmarks "
                                     f"took over {limit:g} s (--timeout)")
            names.extend(self._leaves(program, [name], left) or [name])
        return names

    def _leaves(self, program: Program, top: list[str], timeout_s: float | None) -> list[str] | None:
        """The benchmarks that report results when ``top`` run once each (sub-benchmarks in place of
        their parents); None when the run fails or prints a line that cannot be read (that benchmark
        is named when it is measured)."""
        bench = "^(" + "|".join(_RE2_SPECIAL.sub(r"\\\1", name) for name in top) + ")$"
        ran = capture(program.command(*self._options(bench, 1)), timeout_s=timeout_s)
        if ran.status != 0:
            return None
        try:
            return [r.name for r in parse_text(ran.text(), program.text or program.argv[0], self.suffix).results]
        except FormatError:
            return None

    @property
    def suffix(self) -> str:
        """What the testing package appends to every name: "-P" for GOMAXPROCS P > 1."""
        return f"-{self.gomaxprocs}" if self.gomaxprocs > 1 else ""

    def _options(self, bench: str, iterations: int, repetitions: int = 1) -> tuple[str, ...]:
        return ("-test.run", "^$", "-test.bench", bench, "-test.benchtime", f"{iterations}x", "-test.benchmem",
                "-test.count", str(repetitions), "-test.cpu", str(self.gomaxprocs))

    def invocation(self, program: Program, name: str, iterations: int | None, sample_time_ns: int,
                   scratch: Path) -> Invocation:
        """One run of ``name`` at exactly ``iterations`` (the testing package always takes a count)."""
        return self.repeated(program, name, iterations, 1)

    def repeated(self, program: Program, name: str, iterations: int | None, repetitions: int) -> Invocation:
        """One run of ``name`` at exactly ``iterations``, repeated ``repetitions`` times in its one
        process (``-test.count``): a line each, read by :meth:`reports`."""
        count = iterations or 1
        return Invocation(program.command(*self._options(pattern_for(name), count, repetitions)), name, count,
                          None, repetitions)

    def read(self, invocation: Invocation, output: bytes) -> Report:
        """The benchmark's line in the invocation's output (``NoResult`` if it printed none)."""
        return self.reports(invocation, output)[-1]

    def reports(self, invocation: Invocation, output: bytes) -> tuple[Report, ...]:
        """The benchmark's lines in the invocation's output, one per repetition, in order: exactly
        ``invocation.repetitions`` of them (``NoResult`` if it printed none, ``FormatError`` if
        another number: a repetition not read could not be told apart from one left out)."""
        source = invocation.command.text
        found = tuple(r for r in parse_text(output.decode("utf-8", "replace"), source, self.suffix).results
                      if r.name == invocation.benchmark)
        if not found:
            raise NoResult(NAME, source, f"no result line for {invocation.benchmark!r} (the -test.bench "
                           "pattern matched none)")
        if invocation.repetitions > 1 and len(found) != invocation.repetitions:
            raise FormatError(NAME, source, f"{len(found)} result lines for {invocation.benchmark!r}, where "
                              f"-test.count {invocation.repetitions} asked for {invocation.repetitions}")
        return found


@frozen
class GoReport:
    """Go benchmark text: its configuration lines (``goos``, ``pkg``, ``cpu``...) and its results, each
    with the configuration in force at its line (``configs``, one per result)."""

    config: Mapping[str, str]
    results: tuple[Report, ...]
    configs: tuple[Mapping[str, str], ...] = field(default=())


def parse_text(text: str, source: str, suffix: str | None = None) -> GoReport:
    """Read Go benchmark lines (``go test -bench`` output, with ``-count`` any number of lines a
    benchmark): see :class:`GoText`."""
    reader = GoText(source, suffix)
    found = list(reader.results(line for _, line in numbered_lines(text)))
    return GoReport(reader.config, tuple(r for r, _ in found), tuple(c for _, c in found))


class GoText:
    """Go benchmark text read a line at a time (``pairbench import`` streams a file through it).

    ``suffix`` is the "-P" to remove from names; None removes any trailing "-digits" as benchstat
    does. Lines of other kinds (PASS, ok, logs) are skipped; a benchmark line that is not well formed
    is a ``FormatError`` naming its line. ``config`` is the configuration read so far.
    """

    def __init__(self, source: str, suffix: str | None = None):
        self.source, self.suffix = source, suffix
        self.config: dict[str, str] = {}

    def results(self, lines: Iterable[str]) -> Iterator[tuple[Report, Mapping[str, str]]]:
        """Each benchmark line's report, with the configuration in force at it (one copy shared by
        the lines between two configuration lines)."""
        snapshot: Mapping[str, str] | None = None
        for number, line in enumerate(lines, start=1):
            line = line.rstrip()
            if m := _CONFIG.match(line):
                self.config[m.group(1)] = m.group(2)
                snapshot = None
                continue
            m = _LINE.match(line)
            if not m or not _has_measurement(m.group(3)):
                continue
            if snapshot is None:
                snapshot = dict(self.config)
            yield _result(m, self.source, number, self.suffix), snapshot


def _has_measurement(rest: str) -> bool:
    """Whether the rest of a line after "NAME N" can be "VALUE UNIT" pairs (two words at least; what
    follows is then read strictly, as benchfmt does)."""
    return len(rest.split()) >= 2


def _result(m: re.Match, source: str, line: int, suffix: str | None) -> Report:
    name = _without_procs(m.group(1), suffix)
    digits = m.group(2)  # int() of thousands of digits is refused (or slow): their number is checked first
    if len(digits) > _COUNT_DIGITS:
        raise FormatError(NAME, source, f"{name!r}: an iteration count of {len(digits)} digits, beyond 2**53 - 1",
                          line)
    iterations = count(int(digits), NAME, source, f"{name!r}: the iteration count", line=line)
    values = dict(_pairs(m.group(3).split(), name, source, line))
    ns_per_op = values.pop("ns/op", 0.0)  # left out when it is 0
    metrics: dict[str, float] = {}
    for unit, value in values.items():
        per_op = unit.endswith("/op")
        metrics[own_metric(unit, metrics)] = (  # "B/op" holds the total: analysis.metrics divides it
            metric_total(value, iterations, NAME, source, f"{name!r}: {unit[:40]}", line=line) if per_op
            else value)
    total = 0.0 if ns_per_op == 0 else total_ns(ns_per_op, iterations, NAME, source, f"{name!r}: ns/op", line=line)
    return Report(name, iterations, total, metrics)


def _pairs(words: list[str], name: str, source: str, line: int) -> Iterable[tuple[str, float]]:
    if len(words) % 2:
        raise FormatError(NAME, source, f"{name!r}: values and units do not pair up: {' '.join(words)!r}"[:300],
                          line)
    for value, unit in zip(words[::2], words[1::2], strict=True):
        if not _UNIT_VALUE.match(value):
            raise FormatError(NAME, source, f"{name!r}: {value!r} is not a number (before {unit!r})"[:300], line)
        yield unit, finite_number(float(value), NAME, source, f"{name!r}: {unit[:40]}", line=line)


def _without_procs(name: str, suffix: str | None) -> str:
    if suffix is None:
        return re.sub(r"-\d+$", "", name)
    return name[: -len(suffix)] if suffix and name.endswith(suffix) else name
