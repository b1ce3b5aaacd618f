"""What every harness adapter shares: a program, an invocation, one benchmark's report, and errors.

A *harness* is a foreign benchmark program (a Google Benchmark binary, a Go
test binary, a criterion bench binary, a pytest-benchmark suite). pairbench
drives it one benchmark at a time: an *invocation* runs that benchmark once,
with a filter that matches it alone, and the harness reports the time it
measured around its own loop (:class:`Report`). The invocation is a fresh
process, timed and given its rusage by the executor like any command.

Everything a harness prints is hostile: outputs are read in bounded size
(``MAX_OUTPUT_BYTES``), parsed strictly, and a problem is a :class:`FormatError`
naming the source, the line when there is one, and the harness.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from pairbench.command import Command, describe_status
from pairbench.frozen import frozen
from pairbench.harness_registry import words
from pairbench.measure import children
from pairbench.model import MAX_SAMPLE_VALUE, PRIMARY_METRIC

MAX_OUTPUT_BYTES = 16 * 1024 * 1024
"""The most of a harness's output (or result file) read: a report of one benchmark is a few KiB."""
TAIL_BYTES = 2000
LISTING_TIMEOUT_S = 120.0
"""How long a listing (or a discovery run) may take when no --timeout is given."""
MAX_LISTED = 100_000
"""The most benchmarks a harness program may list (its listing is at most ``MAX_OUTPUT_BYTES`` too)."""


class FormatError(ValueError):
    """A harness's output could not be read: ``harness`` names the harness, ``source`` the file or
    stream, ``line`` the line (1-based, 0 when not known)."""

    def __init__(self, harness: str, source: str, problem: str, line: int = 0):
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {problem} ({words(harness)} output)")
        self.harness, self.source, self.problem, self.line = harness, source, problem, line


class NoResult(FormatError):
    """The harness ran and exited, but reported nothing for the benchmark asked for."""


class DiscoveryError(Exception):
    """A harness program could not list its benchmarks (it failed, hung, or printed nothing usable)."""


def own_metric(name: str, taken: Mapping[str, float]) -> str:
    """A harness's metric (a counter, a unit) named so that it never replaces a value of pairbench's:
    the measured time (``value``) or one the parser set already (``cpu_ns``) keeps its name, and the
    harness's gets " (reported)" after it."""
    return f"{name} (reported)" if name == PRIMARY_METRIC or name in taken else name


@frozen
class Report:
    """One benchmark's result in one invocation, as the harness reported it.

    ``total_ns`` is the time over all ``iterations`` (the harness's per-operation
    time times its iteration count), measured by the harness around its loop:
    no process start-up in it. ``metrics`` are further values: totals over the
    iterations for per-operation units (``B`` for Go's B/op), or the reported
    value for rates and counters. ``error`` is the harness's own word that the
    benchmark failed (Google Benchmark's ``error_message``), else empty.
    """

    name: str
    iterations: int
    total_ns: float
    metrics: Mapping[str, float] = field(default_factory=dict)
    error: str = ""


@frozen
class Program:
    """One side's harness program: the argv that starts it (before the harness's own options), the
    directory it runs in, variables added to its environment (through ``env``), how to name it, and
    the path a listing runs (pytest-benchmark's tests; empty for a binary)."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    text: str = ""
    target: str = ""
    unset: tuple[str, ...] = ()  # variables removed from its environment

    def command(self, *options: str, text: str = "") -> Command:
        """The command running this program with ``options``; its directory and variables set by
        ``env(1)`` (``--chdir``, GNU coreutils), which replaces itself with the program, so the
        rusage is the program's and the executor's own directory does not matter."""
        argv = (*self.argv, *options)
        if self.env or self.cwd or self.unset:
            where = (f"--chdir={self.cwd}",) if self.cwd else ()
            removed = tuple(f"--unset={name}" for name in self.unset)
            argv = (_env_program(), *where, *removed, *(f"{k}={v}" for k, v in self.env), *argv)
        return Command(text or f"{self.text or self.argv[0]} {' '.join(options)}".strip(), argv)


def _env_program() -> str:
    return shutil.which("env") or "/usr/bin/env"


@frozen
class Discovery:
    """What a harness program offers: its benchmarks' names (in its order) and whether an
    invocation can be given an exact iteration count (else the harness chooses it from a time)."""

    names: tuple[str, ...]
    explicit_iterations: bool


@frozen
class Invocation:
    """One run of one benchmark: the command, the file the harness writes its report to (None: the
    report is in its standard output), and what it was asked for: ``repetitions`` of the benchmark in
    its one process, each reported apart (only adapters with a ``repeated`` method repeat)."""

    command: Command
    benchmark: str
    iterations: int | None
    result_path: Path | None = None
    repetitions: int = 1


@frozen
class Captured:
    """A listing run's exit status and (bounded) output, standard output and error together."""

    status: int
    output: bytes
    timed_out: bool = False

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def tail(self) -> str:
        return tail_text(self.output)

    def failure(self, what: str) -> str:
        """ "listing its benchmarks failed: exit code 2; its output ended with: ..." """
        how = "timed out" if self.timed_out else describe_status(self.status)
        tail = self.tail()
        return f"{what} failed: {how}" + (f"; its output ended with: {tail}" if tail else "")


def numbered_lines(text: str):
    """``(number, line)`` for each line of a harness's output, split at ``\\n`` only (a Windows
    ``\\r`` removed): never at the other characters ``str.splitlines`` breaks at (``\\v``, ``\\f``,
    ``\\x1c``-``\\x1e``, U+0085, U+2028), which a name may hold."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


def listed_names(lines, harness: str) -> tuple[str, ...]:
    """The names of a listing (``lines``: its names, blank ones skipped), at most ``MAX_LISTED``
    (``DiscoveryError`` beyond)."""
    names = []
    for line in lines:
        if not line.strip():
            continue
        if len(names) == MAX_LISTED:
            raise DiscoveryError(f"it lists more than {MAX_LISTED:,} benchmarks, more than pairbench measures in "
                                 f"one suite ({words(harness)}); split the suite into programs")
        names.append(line)
    return tuple(names)


def tail_text(data: bytes) -> str:
    """The last lines of ``data`` (at most ``TAIL_BYTES``), decoded; control characters are made
    visible where it is shown."""
    return data[-TAIL_BYTES:].decode("utf-8", "replace").strip()


def capture(command: Command, *, timeout_s: float | None = None) -> Captured:
    """Run ``command`` unmeasured (a listing, a discovery run) and keep its output, standard output
    and error together, at most ``MAX_OUTPUT_BYTES`` of it; end it, and all it started, past the
    timeout (it runs under a keeper: ``measure.children``).

    The output goes to a temporary file, so a chatty program cannot fill memory."""
    limit = LISTING_TIMEOUT_S if timeout_s is None else timeout_s
    with tempfile.TemporaryFile() as sink:
        try:
            status = children.run(command.argv, timeout_s=limit, stdout=sink, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise DiscoveryError(f"cannot start {command.argv[0]!r}: {exc.strerror or exc}") from None
        sink.seek(0)
        if status is None:
            return Captured(-signal.SIGKILL, sink.read(MAX_OUTPUT_BYTES), timed_out=True)
        return Captured(status, sink.read(MAX_OUTPUT_BYTES))


def cleared(path: Path) -> Path:
    """``path`` with nothing at it: a file, a link (not followed) or a directory tree an earlier
    invocation (or the harness) left there is removed, so it is never read as this invocation's
    report. ``OSError`` if it cannot be removed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    if stat.S_ISDIR(mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
    return path


def read_bounded(path: Path, harness: str) -> str:
    """The text of a harness's result file, at most ``MAX_OUTPUT_BYTES`` (``FormatError`` if larger,
    missing or not a regular file)."""
    if path.exists() and not path.is_file():  # a pipe or device would block or never end
        raise FormatError(harness, str(path), "not a regular file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_OUTPUT_BYTES + 1)
    except FileNotFoundError:
        raise NoResult(harness, str(path), "the harness wrote no result file") from None
    except OSError as exc:
        raise FormatError(harness, str(path), f"cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_OUTPUT_BYTES:
        raise FormatError(harness, str(path), f"larger than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB")
    return data.decode("utf-8", "replace")


def load_json(text: str, harness: str, source: str):
    """The JSON value of a harness's report (``FormatError`` naming the line when it is not JSON, or
    holds NaN or Infinity, which JSON does not allow)."""
    def refuse(word: str):
        raise ValueError(f"{word} is not a number JSON allows")

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise FormatError(harness, source, f"not JSON ({exc.msg}, column {exc.colno}); the file may be cut "
                          "short", exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise FormatError(harness, source, f"not JSON pairbench reads ({exc})") from None


def finite_number(value, harness: str, source: str, where: str, *, line: int = 0) -> float:
    """``value`` as a finite float (never a bool), else a ``FormatError`` naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
        raise FormatError(harness, source, f"{where} must be a finite number, got {_short(value)}", line)
    return float(value)


def _finite(value: int | float) -> bool:
    """Whether a number is finite as a float (an int of 400 digits is not: float() overflows)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _short(value) -> str:
    """``repr(value)``, cut: a number of 5,000 digits is not shown whole (nor converted to text whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"a whole number of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4,000'} digits"
    return repr(value)[:100]


def count(value, harness: str, source: str, where: str, *, line: int = 0) -> int:
    """``value`` as an iteration or round count: a whole number (never a bool) from 1 to
    ``MAX_SAMPLE_VALUE``, the most a result file holds; else a ``FormatError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLE_VALUE:
        raise FormatError(harness, source, f"{where} must be a whole number from 1 to 2**53 - 1, got "
                          f"{_short(value)}", line)
    return value


def total_ns(per_operation_ns: float, operations: int | float, harness: str, source: str, where: str, *,
             line: int = 0) -> float:
    """The time of ``operations`` operations of ``per_operation_ns`` each: positive, finite and at
    most ``MAX_SAMPLE_VALUE`` ns (~104 days), else a ``FormatError`` (checked here, before any
    other arithmetic: two finite factors can make an infinite product)."""
    total = _product(per_operation_ns, operations)
    if not 0 < total <= MAX_SAMPLE_VALUE:
        raise FormatError(harness, source, f"{where} gives a time of {total:.6g} ns over {_short(operations)} "
                          "operations: a sample's time must be positive and at most 2**53 - 1 ns", line)
    return total


def metric_total(value: float, operations: int | float, harness: str, source: str, where: str, *,
                 line: int = 0) -> float:
    """A per-operation value times ``operations`` (bytes, allocations): finite, else a ``FormatError``."""
    total = _product(value, operations)
    if not math.isfinite(total):
        raise FormatError(harness, source, f"{where} times {_short(operations)} operations is not a finite "
                          "number", line)
    return total


def _product(a: int | float, b: int | float) -> float:
    """``a * b`` as a float; infinite (or NaN) where it overflows."""
    try:
        return float(a) * float(b)
    except OverflowError:
        return math.inf
