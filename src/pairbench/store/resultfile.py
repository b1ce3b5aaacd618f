"""The result document: a run with its raw samples, versioned JSON, written atomically, read defensively.

Format history (``"format"`` key of the document):
    pairbench.result/1  (pairbench 0.1) one command per variant, samples columnar per variant;
                        options as given; warnings as text; derived summaries and comparisons.
                        Read through ``store.legacy`` (one tested migration).
    pairbench.result/2  (pairbench 0.2) benchmarks (name, params, unit) measured on sides
                        (baseline, candidates, the self-check copy); samples columnar per series
                        (benchmark, side), integer columns plus float ``metrics``; typed
                        ``settings`` (sampling, decision); typed ``notes`` (code, data, subject).

The document also holds what the analysis derived (``summaries``, ``comparisons``,
``analysis_notes``), for other tools; pairbench itself never reads them back:
``show`` and ``report`` always analyse the samples.

Reading never uses pickle or eval; it rejects NaN and infinity, wrong types
(``true`` where an integer belongs), non-positive durations, sample values of
2**53 or more, unequal column lengths, no sides, two sides of one name, a
series of a benchmark or side that does not exist, bad settings, and nesting
too deep to parse, each with one line naming the file and the problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pairbench.errors import ResultFileError, UsageError
from pairbench.model import (
    RUN_STATES,
    SAMPLE_COLUMNS,
    SIDE_LABELS,
    BenchmarkKey,
    Command,
    Run,
    Side,
)
from pairbench.settings import KINDS, Settings, settings_from_stored
from pairbench.store import checks
from pairbench.store.checks import expect, expect_object_list, expect_str_list
from pairbench.store.files import atomic_write_text, dumps, parse_json_text, read_text_file

RESULT_FORMAT = "pairbench.result/2"
LEGACY_FORMAT = "pairbench.result/1"
MAX_SIDES = 1000
MAX_BENCHMARKS = 100_000
DERIVED_KEYS = ("summaries", "comparisons", "analysis_notes", "suite_summary")


# --------------------------------------------------------------------------- writing


def run_header(run: Run) -> dict:
    """Everything of ``run`` but its samples: the journal's header and the document's first part."""
    return {"format": RESULT_FORMAT, **run.metadata()}


def run_to_document(run: Run, derived: Mapping | None = None) -> dict:
    """The JSON-ready document of ``run``: samples columnar per series, then ``derived`` (the
    analysis for other tools: ``summaries``, ``comparisons``, ``analysis_notes``)."""
    document = run_header(run)
    document["series"] = [
        {"benchmark": b, "side": s,
         "samples": {c: samples[c].tolist() for c in SAMPLE_COLUMNS},
         "metrics": {name: values.tolist() for name, values in samples.metrics.items()}}
        for (b, s), samples in sorted(run.samples.items())
    ]
    for key in DERIVED_KEYS:
        if derived and key in derived:
            document[key] = derived[key]
    return document


def write_result(run: Run, path: str | os.PathLike, derived: Mapping | None = None) -> None:
    """Write ``run`` (and ``derived``) to ``path`` atomically: temp file, fsync, rename."""
    atomic_write_text(Path(path), dumps(run_to_document(run, derived)) + "\n")


# --------------------------------------------------------------------------- reading


def read_result(path: str | os.PathLike) -> Run:
    """Read a result document (format /2 or /1) or a journal; ``ResultFileError`` naming the file
    and the problem otherwise.

    Given ``RESULT.json`` that does not exist while ``RESULT.json.partial`` does,
    the journal is read instead (a run that crashed or is still going).
    """
    from pairbench.store import journal

    path = Path(path)
    if not path.exists() and journal.journal_path(path).exists():
        path = journal.journal_path(path)
    text = read_text_file(path)
    if journal.is_journal_text(text):
        return journal.read_journal(path, text)
    from pairbench.store import imports

    if imports.looks_like_go_output(text) and text.lstrip()[:1] not in ("{", "["):
        raise imports.import_first(path, "go")
    document = parse_json_text(path, text)
    found = imports.document_format(document) if isinstance(document, dict) and "format" not in document else None
    if found is not None:
        raise imports.import_first(path, found)  # not "unsupported format None"
    return run_from_document(document, source=str(path))


def run_from_document(document: object, *, source: str = "<document>") -> Run:
    """Validate a parsed document of either format and turn it into a :class:`Run`."""
    doc = expect(document, dict, source, "the document")
    fmt = doc.get("format")
    if fmt == LEGACY_FORMAT:
        from pairbench.store.legacy import run_from_v1

        return run_from_v1(doc, source)
    if fmt != RESULT_FORMAT:
        raise ResultFileError(f"{source}: unsupported format {fmt!r}; this pairbench reads "
                              f"{RESULT_FORMAT!r} and {LEGACY_FORMAT!r}")
    run = run_from_header(doc, source)
    return run.replace(samples=series_of(doc.get("series"), run, source))


def series_of(value, run: Run, source: str) -> dict:
    """The stored series, each of an existing benchmark and side, none twice."""
    samples = {}
    for i, item in enumerate(expect_object_list(value, source, "series")):
        where = f"series[{i}]"
        b = expect(item.get("benchmark"), int, source, f"{where}.benchmark")
        s = expect(item.get("side"), int, source, f"{where}.side")
        if not (0 <= b < len(run.benchmarks) and 0 <= s < len(run.sides)):
            raise ResultFileError(f"{source}: {where} names benchmark {b} and side {s}; the run has "
                                  f"{len(run.benchmarks)} benchmark(s) and {len(run.sides)} side(s)")
        if (b, s) in samples:
            raise ResultFileError(f"{source}: {where} repeats the series of benchmark {b}, side {s}")
        columns = expect(item.get("samples"), dict, source, f"{where}.samples")
        metrics = expect(item.get("metrics", {}), dict, source, f"{where}.metrics")
        samples[(b, s)] = checks.samples_from_columns(columns, metrics, source, where)
    return samples


def run_from_header(doc: dict, source: str) -> Run:
    """A run without samples from a /2 header (the document's or the journal's)."""
    kind = doc.get("kind")
    if kind not in KINDS:
        raise ResultFileError(f"{source}: unknown kind {kind!r}")
    sides = sides_of(doc.get("sides"), source)
    return build_run(doc, source, kind=kind, sides=sides, benchmarks=benchmarks_of(doc.get("benchmarks"), source),
                     settings=stored_settings(kind, sides, expect(doc.get("settings", {}), dict, source,
                                                                  "settings"), source),
                     notes=checks.notes(doc.get("notes", []), source), suite=checks.suite(doc.get("suite"), source))


def build_run(doc: dict, source: str, **parts) -> Run:
    """The run of a header's common fields (tool, times, state, environment) and ``parts``."""
    tool = expect(doc.get("tool", {}), dict, source, "tool")
    state = doc.get("state", "complete")
    if state not in RUN_STATES:
        raise ResultFileError(f"{source}: unknown state {state!r}")
    try:
        return Run(
            tool_version=str(tool.get("version", "")),
            started_at=expect(doc.get("started_at", ""), str, source, "started_at"),
            finished_at=expect(doc.get("finished_at", ""), str, source, "finished_at"),
            state=state,
            stopped_because=expect(doc.get("stopped_because", ""), str, source, "stopped_because"),
            environment=checks.environment(doc.get("environment", {}), source),
            shell_overhead=checks.shell_overhead(doc.get("shell_overhead"), source),
            **parts,
        )
    except ValueError as exc:
        raise ResultFileError(f"{source}: {exc}") from None


def stored_settings(kind: str, sides: tuple[Side, ...], stored: Mapping, source: str) -> Settings:
    """The run's settings, read through the options' own parsers; a bad one names the file.

    The parsers take what a command line gives (text, numbers); a stored value of
    another type that one of them cannot take (``prepare: true``) is a bad file too.
    """
    measured = [side for side in sides if side.label != "self-check"] or list(sides)
    try:
        return settings_from_stored(kind, [s.command.text for s in measured], [s.name for s in measured],
                                    stored)
    except UsageError as exc:
        raise ResultFileError(f"{source}: the stored settings are not valid: {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise ResultFileError(f"{source}: the stored settings are not valid: a value of the wrong type "
                              f"({type(exc).__name__}: {exc})") from None


def sides_of(value, source: str, where: str = "sides") -> tuple[Side, ...]:
    """At least one side (pairbench never measures nothing), at most MAX_SIDES, names distinct."""
    raw = expect(value, list, source, where)
    if not raw:
        raise ResultFileError(f"{source}: {where} is empty; a result holds at least one command")
    if len(raw) > MAX_SIDES:
        raise ResultFileError(f"{source}: {len(raw)} {where} is more than {MAX_SIDES}")
    sides = tuple(_side(item, source, f"{where}[{i}]") for i, item in enumerate(raw))
    seen: set[str] = set()
    for i, side in enumerate(sides):
        if side.name in seen:
            raise ResultFileError(f"{source}: {where}[{i}].name {side.name!r} is the name of an earlier one "
                                  "too; each needs its own name")
        seen.add(side.name)
    return sides


def _side(raw, source: str, where: str) -> Side:
    item = expect(raw, dict, source, where)
    label = expect(item.get("label", ""), str, source, f"{where}.label")
    if label not in SIDE_LABELS:
        raise ResultFileError(f"{source}: {where}.label must be one of {SIDE_LABELS}, got {label!r}")
    return Side(expect(item.get("name"), str, source, f"{where}.name"),
                command_of(item.get("command"), source, f"{where}.command"), label)


def command_of(raw, source: str, where: str) -> Command:
    cmd = expect(raw, dict, source, where)
    argv = expect_str_list(cmd.get("argv"), source, f"{where}.argv")
    return Command(text=expect(cmd.get("text", " ".join(argv)), str, source, f"{where}.text"),
                   argv=tuple(argv), shell=expect(cmd.get("shell", False), bool, source, f"{where}.shell"))


def benchmarks_of(value, source: str) -> tuple[BenchmarkKey, ...]:
    raw = expect(value, list, source, "benchmarks")
    if not raw or len(raw) > MAX_BENCHMARKS:
        raise ResultFileError(f"{source}: benchmarks must hold 1 to {MAX_BENCHMARKS} benchmarks, got {len(raw)}")
    keys = []
    for i, item in enumerate(raw):
        where = f"benchmarks[{i}]"
        item = expect(item, dict, source, where)
        params = expect(item.get("params", {}), dict, source, f"{where}.params")
        if not all(isinstance(v, str) for v in params.values()):
            raise ResultFileError(f"{source}: {where}.params must map names to strings")
        try:
            keys.append(BenchmarkKey(expect(item.get("name"), str, source, f"{where}.name"),
                                     tuple(sorted(params.items())),
                                     expect(item.get("unit", "ns"), str, source, f"{where}.unit")))
        except ValueError as exc:
            raise ResultFileError(f"{source}: {where}: {exc}") from None
    if len(set(keys)) != len(keys):
        raise ResultFileError(f"{source}: benchmarks names one benchmark twice")
    return tuple(keys)
