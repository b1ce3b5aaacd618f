"""Results other tools saved, read into pairbench runs (``pairbench convert``).

====================  ==============================================================
``hyperfine``         ``--export-json`` (each command a side, each run a sample)
``gbench``            Google Benchmark JSON (each repetition of a benchmark a sample)
``go``                ``go test -bench`` text, with ``-count N`` (each line a sample)
``pytest-benchmark``  ``--benchmark-json`` or ``--benchmark-save`` (each round a sample;
                      a saved file needs ``--benchmark-save-data``)
``criterion``         ``target/criterion`` (or one benchmark's directory): each of
                      criterion's samples (``new/sample.json``) a sample
====================  ==============================================================

The format is recognised from the content (``--format`` names it). The run is
of kind ``import``: one side per command (hyperfine) or one side named after
the file, benchmarks as the tool named them, samples unpaired (``pair`` -1: the
tool ran them one after another, never interleaved), and the tool's metadata
(machine, library, date) in ``environment.import``, with ``recorded``: the
resource columns (CPU times, max RSS, context switches) the tool measured,
so that the others are shown as "—", not as measured zeros. hyperfine records
each command's mean user and system time only: every sample carries that mean. ``show``, ``report`` and
``diff`` read it like any result. Files are read as every result is
(``store.files``: regular files, bounded size, strict JSON); a file in no
format pairbench knows, or cut short, is a ``ResultFileError`` naming it.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from array import array
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pairbench.command import STATUS_BENCHMARK_ERROR
from pairbench.errors import ResultFileError, UsageError
from pairbench.harness_registry import IMPORT_FORMATS, words
from pairbench.limits import MAX_BENCHMARKS, MAX_SAMPLE_VALUE, MAX_SIDES
from pairbench.measure.harnesses import criterion, gbench, gotest, hyperfine, pytest_benchmark
from pairbench.measure.harnesses.base import FormatError
from pairbench.model import (
    PRIMARY_METRIC,
    SAMPLE_COLUMNS,
    BenchmarkKey,
    Command,
    Run,
    Samples,
    Side,
)
from pairbench.notes import Note, Subject
from pairbench.parsers import parse_settings
from pairbench.store.files import MAX_FILE_BYTES, parse_json_text, read_lines, read_text_file

_GO_LINE = re.compile(r"^Benchmark\S*\s+\d+\s+\S+\s+ns/op", re.MULTILINE)  # enough to name the format
CRITERION_FILES = ("estimates.json", "sample.json", "benchmark.json", "tukey.json")


class _Series:
    """One series' columns as they are read: arrays of 8-byte numbers, never a Python object per
    sample (an import's memory is a small multiple of its samples, whatever the tool's format)."""

    def __init__(self):
        self.wall_ns, self.iterations, self.status, self.max_rss_kib, self.user_ns, self.sys_ns, self.seq = (
            array("q") for _ in range(7))
        self.metrics: dict[str, array] = {}

    def __len__(self) -> int:
        return len(self.wall_ns)

    def add_metrics(self, metrics: Mapping[str, float]) -> None:
        """As ``model.append_metrics``: a metric this sample lacks is 0 for it, a new one 0 before it."""
        before = len(self) - 1
        for name in metrics:
            if name not in self.metrics:
                self.metrics[name] = array("d", bytes(8 * before))
        for name, column in self.metrics.items():
            column.append(metrics.get(name, 0.0))

    def samples(self) -> Samples:
        n = len(self)
        given = {"wall_ns": self.wall_ns, "iterations": self.iterations, "status": self.status,
                 "max_rss_kib": self.max_rss_kib, "user_ns": self.user_ns, "sys_ns": self.sys_ns, "seq": self.seq}
        columns = {name: np.frombuffer(given[name], dtype=np.int64).copy() if name in given
                   else np.full(n, -1, dtype=np.int64) if name == "pair" else np.zeros(n, dtype=np.int64)
                   for name in SAMPLE_COLUMNS}  # zeros are never touched: the kernel's zero pages
        return Samples(columns, {name: np.frombuffer(values, dtype=np.float64).copy()
                                 for name, values in self.metrics.items()})


class _Built:
    """A run being built from ``path``: its sides, benchmarks, and each series' columns."""

    def __init__(self, path: Path, sides: list[Side]):
        if len(sides) > MAX_SIDES:
            raise ResultFileError(f"{path}: holds {len(sides)} commands; a result holds at most {MAX_SIDES}")
        self.path, self.sides = path, sides
        self.keys: dict[BenchmarkKey, int] = {}  # in the order first seen
        self.series: dict[tuple[int, int], _Series] = {}
        self._by_name: dict[str, int] = {}
        self.seq = 0

    def key(self, name: str) -> int:
        found = self._by_name.get(name)
        if found is not None:
            return found
        if len(self.keys) >= MAX_BENCHMARKS:
            raise ResultFileError(f"{self.path}: holds more than {MAX_BENCHMARKS:,} benchmarks, the most a result "
                                  "holds")
        self._by_name[name] = self.keys.setdefault(BenchmarkKey(name), len(self.keys))
        return self._by_name[name]

    def add(self, b: int, s: int, total_ns: float, *, iterations: float = 1, status: int = 0, max_rss_kib: int = 0,
            user_ns: int = 0, sys_ns: int = 0, metrics: Mapping[str, float] | None = None) -> None:
        """One sample of benchmark ``b`` on side ``s``: ``total_ns`` over its ``iterations`` (a
        time below 1 ns is kept as 1 ns), each value within what a result holds (``limits``)."""
        if self.seq >= MAX_IMPORT_SAMPLES:
            raise ResultFileError(f"{self.path}: holds more than {MAX_IMPORT_SAMPLES:,} samples, more than a result "
                                  f"file holds ({MAX_FILE_BYTES // 2**20} MiB); import a part of it")
        try:
            values = (max(1, round(_bounded(total_ns, "a time (ns)", 0))),
                      round(_bounded(iterations, "an iteration count", 1)),
                      round(_bounded(status, "an exit status", -MAX_SAMPLE_VALUE)),
                      round(_bounded(max_rss_kib, "a peak memory (KiB)", 0)),
                      round(_bounded(user_ns, "a user CPU time (ns)", 0)),
                      round(_bounded(sys_ns, "a system CPU time (ns)", 0)))
        except ValueError as exc:
            name = next(key.label for key, index in self.keys.items() if index == b)
            raise ResultFileError(f"{self.path}: {name!r}: {exc}") from None
        series = self.series.get((b, s))
        if series is None:
            series = self.series[(b, s)] = _Series()
        for column, value in zip((series.wall_ns, series.iterations, series.status, series.max_rss_kib,
                                  series.user_ns, series.sys_ns), values, strict=True):
            column.append(value)
        series.seq.append(self.seq)
        self.seq += 1
        if metrics or series.metrics:
            series.add_metrics(metrics or {})


MAX_IMPORT_SAMPLES = MAX_FILE_BYTES // 68  # at the 68 bytes a sample takes in a result document


def _bounded(value: float, what: str, low: float) -> float:
    """``value`` if it is a number in [``low``, ``MAX_SAMPLE_VALUE``] (what a result keeps), else a
    ``ValueError`` saying so: a number no result file can hold is not imported."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= MAX_SAMPLE_VALUE:
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)[:30]
        raise ValueError(f"{what} of {shown} lies outside [{low:g}, 2**53 - 1], what a pairbench result holds")
    return value


def read_import(path: str, fmt: str | None = None) -> Run:
    """The run of another tool's saved result at ``path`` (``fmt``: one of ``harness_registry.IMPORT_FORMATS``,
    else recognised from the content). Go text is read a line at a time; the others' JSON whole (as
    every result is: ``store.files``)."""
    if fmt is not None and fmt not in IMPORT_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(IMPORT_FORMATS)}, got {fmt!r}")
    target = Path(path)
    if fmt == criterion.NAME or (fmt is None and (target.is_dir() or target.name in CRITERION_FILES)):
        return _criterion(target)
    try:
        if fmt == gotest.NAME or (fmt is None and not _looks_like_json(target)):
            return _go(target, fmt is None)
        document = parse_json_text(target, read_text_file(target))
        return READERS[fmt or _recognised(target, document)](target, document)
    except FormatError as exc:
        raise ResultFileError(f"{exc}") from None


def _looks_like_json(path: Path) -> bool:
    """Whether the file ``path`` starts (after blanks) as a JSON document does."""
    for line in read_lines(path):
        if line.strip():
            return line.lstrip()[:1] in ("{", "[")
    raise ResultFileError(f"{path}: the file is empty")


def _recognised(path: Path, document) -> str:
    """The format of the JSON ``document`` read from ``path``."""
    found = document_format(document)
    if found is None:
        raise ResultFileError(f"{path}: a JSON document of no format pairbench imports ({_KNOWN}); name "
                              "the format with --format, or check that the file is complete")
    return found


def document_format(document) -> str | None:
    """The tool whose JSON export ``document`` is (``hyperfine``, ``gbench``, ``pytest-benchmark``),
    or None."""
    if not isinstance(document, dict):
        return None
    results, benchmarks = document.get("results"), document.get("benchmarks")
    if isinstance(results, list) and any(isinstance(r, dict) and "command" in r for r in results):
        return hyperfine.NAME
    if isinstance(benchmarks, list) and "context" in document:
        return gbench.NAME
    if isinstance(benchmarks, list) and "machine_info" in document:
        return pytest_benchmark.NAME
    return None


def looks_like_go_output(text: str) -> bool:
    """Whether ``text`` holds ``go test -bench`` result lines."""
    return bool(_GO_LINE.search(text))


def import_first(path, fmt: str) -> ResultFileError:
    """The error for another tool's file given where a pairbench result is read: import it first."""
    import shlex

    name = Path(path).name
    converted = (name.rsplit(".", 1)[0] if "." in name else name) + ".pb.json"
    return ResultFileError(f"{path}: this is {words(fmt)}'s own result, not a pairbench result: run "
                           f"`pairbench convert --json {shlex.quote(converted)} {shlex.quote(str(path))}` first, "
                           f"then give {shlex.quote(converted)}")


_KNOWN = ("hyperfine --export-json, Google Benchmark JSON, go test -bench text, pytest-benchmark JSON, "
          "or a criterion target/criterion directory")


# --------------------------------------------------------------------------- formats


def _hyperfine(path: Path, document) -> Run:
    results = hyperfine.parse_document(document, str(path))
    names = _distinct([r.command + (" [" + ",".join(f"{k}={v}" for k, v in r.parameters.items()) + "]"
                                    if r.parameters else "") for r in results])
    built = _Built(path, [Side(name, Command(r.command, (r.command,))) for name, r in zip(names, results, strict=True)])
    b = built.key("command")
    for s, r in enumerate(results):
        rss = r.max_rss_kib or (0,) * len(r.times_ns)
        for wall, code, kib in zip(r.times_ns, r.exit_codes, rss, strict=True):
            built.add(b, s, wall, status=code, max_rss_kib=kib, user_ns=r.user_ns or 0, sys_ns=r.sys_ns or 0)
    zeros = tuple(Note("import-zero-times", {"count": r.zero_runs, "tool": hyperfine.NAME},
                       Subject(benchmark="command", side=name)) for name, r in zip(names, results, strict=True)
                  if r.zero_runs)
    recorded = [column for column, kept in (("user_ns", all(r.user_ns is not None for r in results)),
                                            ("sys_ns", all(r.sys_ns is not None for r in results)),
                                            ("max_rss_kib", all(r.max_rss_kib is not None for r in results)))
                if kept]
    return _run(built, path, hyperfine.NAME, {}, zeros, recorded)


def _gbench(path: Path, document) -> Run:
    report = gbench.parse_document(document, str(path))
    if not report.results:
        raise ResultFileError(f"{path}: the Google Benchmark report holds no benchmark results")
    executable = str(report.context.get("executable") or path.name)
    built = _Built(path, [Side(executable, Command(executable, (executable,)))])
    for result in report.results:
        b = built.key(result.name)
        if result.error:
            built.add(b, 0, 1, status=STATUS_BENCHMARK_ERROR, metrics={PRIMARY_METRIC: 0.0})
            continue
        built.add(b, 0, result.total_ns, iterations=result.iterations,
                  metrics={**result.metrics, PRIMARY_METRIC: result.total_ns})
    return _run(built, path, gbench.NAME, _plain(report.context))


def _go(path: Path, recognising: bool) -> Run:
    """Go benchmark text, read a line at a time (``recognising``: no format was named, so a file
    without a benchmark line is no result pairbench imports)."""
    text = gotest.GoText(str(path))
    built: _Built | None = None
    packages: set[str] = set()  # a name is qualified by its package only when there are several
    for result, config in text.results(read_lines(path)):
        if built is None:
            built = _Built(path, [Side(path.name, Command(path.name, (path.name,)))])
        package = config.get("pkg", "")
        packages.add(package)
        b = built.key(f"{package}\0{result.name}")
        built.add(b, 0, result.total_ns, iterations=result.iterations,
                  metrics={**result.metrics, PRIMARY_METRIC: result.total_ns})
    if built is None:
        if recognising:
            raise ResultFileError(f"{path}: not a result pairbench can import ({_KNOWN}); name the format with "
                                  "--format if it is one of them")
        raise ResultFileError(f"{path}: no benchmark lines (BenchmarkX-8  N  V ns/op) in the go test output")
    one = len(packages) == 1 and "" not in packages
    built.keys = {BenchmarkKey(_go_label(key.name, one)): b for key, b in built.keys.items()}
    if one:
        name = next(iter(packages))
        built.sides = [Side(name, Command(name, (name,)))]
    return _run(built, path, gotest.NAME, text.config)


def _go_label(key: str, one_package: bool) -> str:
    package, _, name = key.partition("\0")
    return name if one_package else f"{package}.{name}"


def _pytest(path: Path, document) -> Run:
    report = pytest_benchmark.parse_document(document, str(path))
    if not report.results:  # pytest-benchmark writes this when every benchmark was skipped or deselected
        raise ResultFileError(f"{path}: the pytest-benchmark report holds no benchmark results (were they all "
                              "skipped or deselected?)")
    built = _Built(path, [Side(path.name, Command(path.name, (path.name,)))])
    for result, rounds in zip(report.results, report.rounds, strict=True):
        if not rounds:
            raise ResultFileError(f"{path}: {result.name!r} has no per-round times (stats.data): the file was "
                                  "saved without --benchmark-save-data; save it with that option, or write "
                                  "it with --benchmark-json")
        per_round = result.metrics.get("rounds", 1)
        per_round = int(per_round) if 1 <= per_round <= MAX_SAMPLE_VALUE else 1
        iterations = max(1, min(result.iterations // per_round, MAX_SAMPLE_VALUE))
        b = built.key(result.name)
        for seconds in rounds:
            total = seconds * 1e9 * iterations
            built.add(b, 0, total, iterations=iterations, metrics={PRIMARY_METRIC: total})
    return _run(built, path, pytest_benchmark.NAME, {"machine_info": _plain(report.machine), "version": report.version,
                                                   "datetime": _plain(document.get("datetime"))})


def _criterion(path: Path) -> Run:
    root = path.parent if path.name in CRITERION_FILES else path
    try:
        saved = criterion.saved_benchmarks(root)
        if not saved:
            raise ResultFileError(f"{path}: no criterion result in it (no new/benchmark.json below it); give "
                                  "target/criterion or one benchmark's directory")
        built = _Built(root, [Side(root.name, Command(str(root), (str(root),)))])
        for new in saved:
            name = criterion.read_one(new).name
            iters, times = criterion.sample_arrays(new / "sample.json")
            b = built.key(name)
            for n, t in zip(iters, times, strict=True):
                built.add(b, 0, t, iterations=max(1.0, n), metrics={PRIMARY_METRIC: t})
    except FormatError as exc:
        raise ResultFileError(str(exc)) from None
    return _run(built, root, criterion.NAME, {})


# --------------------------------------------------------------------------- the run


READERS = {hyperfine.NAME: _hyperfine, gbench.NAME: _gbench, pytest_benchmark.NAME: _pytest}
"""The readers of each import format's JSON document; go's text and criterion's directories are read
apart (:func:`read_import`). Every ``harness_registry.IMPORT_FORMATS`` is one of these or those."""


def _run(built: _Built, path: Path, fmt: str, metadata, notes: tuple[Note, ...] = (),
         recorded: list[str] | None = None) -> Run:
    """The imported run; ``recorded`` names the resource columns the tool measured (none unless
    given: the others are shown as unknown, not as zeros)."""
    names = tuple(side.name for side in built.sides)
    try:
        settings = parse_settings("import", names, {"names": names, "seed": 0})
    except UsageError as exc:
        raise ResultFileError(f"{path}: cannot be imported: {exc}") from None
    samples = {series: columns.samples() for series, columns in built.series.items()}
    imported = {"format": fmt, "tool": words(fmt), "source": os.path.abspath(path), "metadata": metadata,
                "recorded": list(recorded or [])}
    return Run.imported(settings, tuple(built.sides), tuple(built.keys), samples, tool=words(fmt),
                        measured_at=_measured_at(path, metadata), source=imported, notes=notes)


def _measured_at(path: Path, metadata) -> str:
    """When the tool measured, as well as the file tells: its own date (Google Benchmark's
    ``context.date``, pytest-benchmark's ``datetime``), else the file's modification time."""
    stated = metadata.get("date") or metadata.get("datetime") if isinstance(metadata, dict) else None
    if isinstance(stated, str):
        try:
            moment = _dt.datetime.fromisoformat(stated.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=_dt.timezone.utc)
            return moment.astimezone(_dt.timezone.utc).isoformat(timespec="seconds")
        except (ValueError, OverflowError):  # not a date, or one whose offset leaves the calendar
            pass
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = _dt.datetime.now(_dt.timezone.utc).timestamp()
    return _dt.datetime.fromtimestamp(stamp, _dt.timezone.utc).isoformat(timespec="seconds")


def _distinct(names: list[str]) -> list[str]:
    """``names``, a repeated one numbered ("a (2)"), never as a name already taken ("a", "a", "a (2)"
    gives "a", "a (3)", "a (2)")."""
    taken, out = set(names), []
    for name in names:
        unique, k = name, 1
        while unique in out or (unique != name and unique in taken):
            k += 1
            unique = f"{name} ({k})"
        out.append(unique)
    return out


def _plain(value, depth: int = 0):
    """``value`` with only JSON scalars, lists and objects, at most 6 levels deep (tool metadata)."""
    if depth > 6:
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value[:200]]
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
