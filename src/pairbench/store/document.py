"""The result document's header: the run without its samples, as format /2 stores it.

The document (``store.resultfile``), the journal (``store.journal``, whose first
line is this header) and the /1 migration (``store.legacy``) all read a run's
sides, benchmarks, settings and metadata through these functions, so that each
field is checked in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.errors import ResultFileError, UsageError
from pairbench.limits import MAX_BENCHMARKS, MAX_SIDES
from pairbench.model import (
    RUN_STATES,
    SIDE_LABELS,
    BenchmarkKey,
    Command,
    Run,
    Side,
)
from pairbench.parsers import settings_from_stored
from pairbench.settings import KINDS, Settings
from pairbench.store import checks
from pairbench.store.checks import expect, expect_object_list, expect_str_list

RESULT_FORMAT = "pairbench.result/2"
LEGACY_FORMAT = "pairbench.result/1"


def run_header(run: Run) -> dict:
    """Everything of ``run`` but its samples: the journal's header and the document's first part."""
    return {"format": RESULT_FORMAT, **run.metadata()}


def series_of(value, run: Run, source: str) -> dict:
    """The stored series, each of an existing benchmark and side, none twice."""
    samples = {}
    for i, item in enumerate(expect_object_list(value, source, "series")):
        where = f"series[{i}]"
        b = expect(item.get("benchmark"), int, source, f"{where}.benchmark")
        s = expect(item.get("side"), int, source, f"{where}.side")
        check_series_key(b, s, run, source, where)
        if (b, s) in samples:
            raise ResultFileError(f"{source}: {where} repeats the series of benchmark {b}, side {s}")
        columns = expect(item.get("samples"), dict, source, f"{where}.samples")
        metrics = expect(item.get("metrics", {}), dict, source, f"{where}.metrics")
        samples[(b, s)] = checks.samples_from_columns(columns, metrics, source, where)
    return samples


def check_series_key(b: int, s: int, run: Run, source: str, where: str) -> None:
    """Refuse (``ResultFileError``) a series of a benchmark ``b`` or a side ``s`` that ``run`` lacks."""
    if not (0 <= b < len(run.benchmarks) and 0 <= s < len(run.sides)):
        raise ResultFileError(f"{source}: {where} names benchmark {b} and side {s}; the run has "
                              f"{len(run.benchmarks)} benchmark(s) and {len(run.sides)} side(s)")


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
    environment, executor = checks.environment(doc.get("environment", {}), source)
    try:
        return Run(
            tool_version=str(tool.get("version", "")),
            started_at=expect(doc.get("started_at", ""), str, source, "started_at"),
            finished_at=expect(doc.get("finished_at", ""), str, source, "finished_at"),
            state=state,
            stopped_because=expect(doc.get("stopped_because", ""), str, source, "stopped_because"),
            environment=environment, executor=executor,
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
