"""Results other tools saved, read into pairbench runs (``pairbench import``).

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
from dataclasses import dataclass, field
from pathlib import Path

from pairbench import __version__
from pairbench.command import STATUS_BENCHMARK_ERROR
from pairbench.errors import ResultFileError, UsageError
from pairbench.measure.harnesses import criterion, gbench, gotest, hyperfine, pytest_benchmark
from pairbench.measure.harnesses.base import FormatError, harness_words
from pairbench.model import (
    PRIMARY_METRIC,
    BenchmarkKey,
    Command,
    Run,
    Sample,
    Samples,
    Side,
    append_metrics,
)
from pairbench.settings import parse_settings
from pairbench.store.files import parse_json_text, read_text_file

FORMATS = ("hyperfine", "gbench", "go", "pytest-benchmark", "criterion")
_GO_LINE = re.compile(r"^Benchmark\S*\s+\d+\s+\S+\s+ns/op", re.MULTILINE)
CRITERION_FILES = ("estimates.json", "sample.json", "benchmark.json", "tukey.json")


@dataclass
class _Built:
    """A run being built: its sides, benchmarks, and each series' samples and metrics."""

    sides: list[Side]
    keys: dict[BenchmarkKey, int] = field(default_factory=dict)  # in the order first seen
    rows: dict[tuple[int, int], list[Sample]] = field(default_factory=dict)
    metrics: dict[tuple[int, int], dict[str, list[float]]] = field(default_factory=dict)
    seq: int = 0

    def key(self, name: str) -> int:
        return self.keys.setdefault(BenchmarkKey(name), len(self.keys))

    def add(self, b: int, s: int, sample: Sample, metrics: dict[str, float] | None = None) -> None:
        series = (b, s)
        rows = self.rows.setdefault(series, [])
        rows.append(Sample(**{**sample.__dict__, "seq": self.seq}))
        self.seq += 1
        if metrics or series in self.metrics:
            append_metrics(self.metrics.setdefault(series, {}), len(rows) - 1, metrics or {})


def read_import(path: str, fmt: str | None = None) -> Run:
    """The run of another tool's saved result at ``path`` (``fmt``: one of ``FORMATS``, else
    recognised from the content)."""
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    target = Path(path)
    if fmt == "criterion" or (fmt is None and (target.is_dir() or target.name in CRITERION_FILES)):
        return _criterion(target)
    text = read_text_file(target)
    chosen = fmt or _recognised(target, text)
    try:
        if chosen == "go":
            return _go(target, text)
        document = parse_json_text(target, text)
        return {"hyperfine": _hyperfine, "gbench": _gbench, "pytest-benchmark": _pytest}[chosen](target, document)
    except FormatError as exc:
        raise ResultFileError(f"{exc}") from None


def _recognised(path: Path, text: str) -> str:
    if not text.strip():
        raise ResultFileError(f"{path}: the file is empty")
    head = text.lstrip()[:1]
    if head in ("{", "["):
        found = document_format(parse_json_text(path, text))
        if found is None:
            raise ResultFileError(f"{path}: a JSON document of no format pairbench imports ({_KNOWN}); name "
                                  "the format with --format, or check that the file is complete")
        return found
    if _GO_LINE.search(text):
        return "go"
    raise ResultFileError(f"{path}: not a result pairbench can import ({_KNOWN}); name the format with "
                          "--format if it is one of them")


def document_format(document) -> str | None:
    """The tool whose JSON export ``document`` is (``hyperfine``, ``gbench``, ``pytest-benchmark``),
    or None."""
    if not isinstance(document, dict):
        return None
    results, benchmarks = document.get("results"), document.get("benchmarks")
    if isinstance(results, list) and any(isinstance(r, dict) and "command" in r for r in results):
        return "hyperfine"
    if isinstance(benchmarks, list) and "context" in document:
        return "gbench"
    if isinstance(benchmarks, list) and "machine_info" in document:
        return "pytest-benchmark"
    return None


def looks_like_go_output(text: str) -> bool:
    """Whether ``text`` holds ``go test -bench`` result lines."""
    return bool(_GO_LINE.search(text))


def import_first(path, fmt: str) -> ResultFileError:
    """The error for another tool's file given where a pairbench result is read: import it first."""
    import shlex

    name = Path(path).name
    converted = (name.rsplit(".", 1)[0] if "." in name else name) + ".pb.json"
    return ResultFileError(f"{path}: this is {harness_words(fmt)}'s own result, not a pairbench result: run "
                           f"`pairbench import --json {shlex.quote(converted)} {shlex.quote(str(path))}` first, "
                           f"then give {shlex.quote(converted)}")


_KNOWN = ("hyperfine --export-json, Google Benchmark JSON, go test -bench text, pytest-benchmark JSON, "
          "or a criterion target/criterion directory")


# --------------------------------------------------------------------------- formats


def _hyperfine(path: Path, document) -> Run:
    results = hyperfine.parse_document(document, str(path))
    names = _distinct([r.command + (" [" + ",".join(f"{k}={v}" for k, v in r.parameters.items()) + "]"
                                    if r.parameters else "") for r in results])
    built = _Built([Side(name, Command(r.command, (r.command,))) for name, r in zip(names, results, strict=True)])
    b = built.key("command")
    for s, r in enumerate(results):
        rss = r.max_rss_kib or (0,) * len(r.times_ns)
        for wall, code, kib in zip(r.times_ns, r.exit_codes, rss, strict=True):
            built.add(b, s, Sample(wall_ns=wall, status=code, max_rss_kib=kib, user_ns=r.user_ns or 0,
                                   sys_ns=r.sys_ns or 0))
    recorded = [column for column, kept in (("user_ns", all(r.user_ns is not None for r in results)),
                                            ("sys_ns", all(r.sys_ns is not None for r in results)),
                                            ("max_rss_kib", all(r.max_rss_kib is not None for r in results)))
                if kept]
    return _run(built, path, "hyperfine", {}, recorded)


def _gbench(path: Path, document) -> Run:
    report = gbench.parse_document(document, str(path))
    if not report.results:
        raise ResultFileError(f"{path}: the Google Benchmark report holds no benchmark results")
    executable = str(report.context.get("executable") or path.name)
    built = _Built([Side(executable, Command(executable, (executable,)))])
    for result in report.results:
        b = built.key(result.name)
        if result.error:
            built.add(b, 0, Sample(wall_ns=1, status=STATUS_BENCHMARK_ERROR), {PRIMARY_METRIC: 0.0})
            continue
        built.add(b, 0, Sample(wall_ns=max(1, round(result.total_ns)), iterations=result.iterations),
                  {PRIMARY_METRIC: result.total_ns, **result.metrics})
    return _run(built, path, "gbench", _plain(report.context))


def _go(path: Path, text: str) -> Run:
    report = gotest.parse_text(text, str(path))
    if not report.results:
        raise ResultFileError(f"{path}: no benchmark lines (BenchmarkX-8  N  V ns/op) in the go test output")
    packages = {config.get("pkg", "") for config in report.configs}
    name = next(iter(packages)) if len(packages) == 1 and "" not in packages else path.name
    built = _Built([Side(name, Command(name, (name,)))])
    for result, config in zip(report.results, report.configs, strict=True):
        label = result.name if len(packages) == 1 else f"{config.get('pkg', '')}.{result.name}"
        built.add(built.key(label), 0, Sample(wall_ns=max(1, round(result.total_ns)), iterations=result.iterations),
                  {PRIMARY_METRIC: result.total_ns, **result.metrics})
    return _run(built, path, "go", report.config)


def _pytest(path: Path, document) -> Run:
    report = pytest_benchmark.parse_document(document, str(path))
    built = _Built([Side(path.name, Command(path.name, (path.name,)))])
    for result, rounds in zip(report.results, report.rounds, strict=True):
        if not rounds:
            raise ResultFileError(f"{path}: {result.name!r} has no per-round times (stats.data): the file was "
                                  "saved without --benchmark-save-data; save it with that option, or write "
                                  "it with --benchmark-json")
        iterations = max(1, result.iterations // max(1, int(result.metrics.get("rounds", 1))))
        b = built.key(result.name)
        for seconds in rounds:
            total = seconds * 1e9 * iterations
            built.add(b, 0, Sample(wall_ns=max(1, round(total)), iterations=iterations), {PRIMARY_METRIC: total})
    return _run(built, path, "pytest-benchmark", {"machine_info": _plain(report.machine), "version": report.version,
                                                   "datetime": _plain(document.get("datetime"))})


def _criterion(path: Path) -> Run:
    root = path.parent if path.name in CRITERION_FILES else path
    try:
        saved = criterion.saved_benchmarks(root)
        if not saved:
            raise ResultFileError(f"{path}: no criterion result in it (no new/benchmark.json below it); give "
                                  "target/criterion or one benchmark's directory")
        built = _Built([Side(root.name, Command(str(root), (str(root),)))])
        for one in saved:
            name = criterion.read_one(one.directory).name
            iters, times = criterion.sample_arrays(one.directory / "sample.json")
            b = built.key(name)
            for n, t in zip(iters, times, strict=True):
                built.add(b, 0, Sample(wall_ns=max(1, round(t)), iterations=max(1, round(n))), {PRIMARY_METRIC: t})
    except FormatError as exc:
        raise ResultFileError(str(exc)) from None
    return _run(built, root, "criterion", {})


# --------------------------------------------------------------------------- the run


def _run(built: _Built, path: Path, fmt: str, metadata, recorded: list[str] | None = None) -> Run:
    """The imported run; ``recorded`` names the resource columns the tool measured (none unless
    given: the others are shown as unknown, not as zeros)."""
    names = tuple(side.name for side in built.sides)
    settings = parse_settings("import", names, {"names": names, "seed": 0})
    samples = {series: Samples.from_rows(rows, built.metrics.get(series, {})) for series, rows in built.rows.items()}
    imported = {"format": fmt, "tool": harness_words(fmt), "source": os.path.abspath(path), "metadata": metadata,
                "recorded": list(recorded or [])}
    when = _measured_at(path, metadata)
    return Run(kind="import", sides=tuple(built.sides), settings=settings, tool_version=__version__,
               started_at=when, finished_at=when, benchmarks=tuple(built.keys), samples=samples, state="complete",
               stopped_because=f"imported from {harness_words(fmt)}", environment={"import": imported})


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
        except ValueError:
            pass
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = _dt.datetime.now(_dt.timezone.utc).timestamp()
    return _dt.datetime.fromtimestamp(stamp, _dt.timezone.utc).isoformat(timespec="seconds")


def _distinct(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
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
