"""Checks of a parsed document's parts, each failure a ``ResultFileError`` naming file and place.

Shared by the readers of every format (``resultfile``, ``legacy``, ``journal``):
the shape of values (``expect``), sample columns (integers, exact, in range),
metric columns (finite floats), and the metadata analysis relies on
(``environment.executor``, ``shell_overhead``, notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pairbench.command import ExecutorInfo
from pairbench.environment.activity import without_process_details
from pairbench.environment.stored import is_int
from pairbench.errors import ResultFileError
from pairbench.harness_registry import PAIRBENCH
from pairbench.limits import MAX_SAMPLE_VALUE, MAX_SHARDS
from pairbench.model import SAMPLE_COLUMNS, Sample, Samples, ShellOverhead, SuiteInfo
from pairbench.notes import CODES, Note, Subject

if TYPE_CHECKING:  # numpy loads when columns are read or checked: a journal's writer needs none of it
    import numpy as np

MAX_SAMPLES_PER_SERIES = 50_000_000
BOUND_TEXT = "the limit of 2**53 - 1 (as nanoseconds, ~104 days)"
NON_NEGATIVE = ("user_ns", "sys_ns", "max_rss_kib", "voluntary_cs", "involuntary_cs", "start_ns", "seq",
                "slot")
MAX_NOTES = 10_000

_KIND_WORDS = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer"}


def expect(value, kind, source: str, where: str):
    """``value`` if it is a ``kind`` (an int is never a bool); else a ResultFileError."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = _KIND_WORDS.get(kind, kind.__name__)
        raise ResultFileError(f"{source}: {where} must be {expected}, got {type(value).__name__}")
    return value


def expect_object_list(value, source: str, where: str) -> list[dict]:
    items = expect(value, list, source, where)
    for i, item in enumerate(items):
        expect(item, dict, source, f"{where}[{i}]")
    return items


def expect_str_list(value, source: str, where: str) -> list[str]:
    items = expect(value, list, source, where)
    if not all(isinstance(x, str) for x in items):
        raise ResultFileError(f"{source}: {where} must be a list of strings")
    return items


def expect_duration(value, source: str, where: str) -> float:
    """A finite number of nanoseconds in [0, 2**53)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResultFileError(f"{source}: {where} must be a number of nanoseconds, got {type(value).__name__}")
    if not 0 <= value <= MAX_SAMPLE_VALUE:
        raise ResultFileError(f"{source}: {where} must lie in [0, 2**53) nanoseconds, got {value!r}")
    return value


# --------------------------------------------------------------------------- samples


def samples_from_columns(columns: Mapping, metrics: Mapping, source: str, where: str) -> Samples:
    """A series' samples from its stored columns (every ``SAMPLE_COLUMNS`` one) and metrics."""
    arrays = {}
    for name in SAMPLE_COLUMNS:
        if name not in columns:
            raise ResultFileError(f"{source}: {where} lacks the column {name!r}")
        raw = _bounded_list(columns[name], source, f"{where}.{name}")
        arrays[name] = _integer_column(raw, source, f"{where}.{name}")
    floats = {str(name): _float_column(_bounded_list(raw, source, f"{where}.metrics[{name!r}]"), source,
                                       f"{where}.metrics[{name!r}]")  # !r: a name shows no control character
              for name, raw in metrics.items()}
    check_samples(arrays, floats, source, where)
    return Samples(arrays, floats)


def check_samples(columns: Mapping[str, np.ndarray], metrics: Mapping[str, np.ndarray], source: str,
                  where: str) -> None:
    """A series' integer ``columns`` and float ``metrics`` as a result may hold them (the readers'
    rule, and what a writer checks before writing): equal lengths, at most ``MAX_SAMPLES_PER_SERIES``,
    finite metrics, and sample values within :func:`check_sample_values`."""
    import numpy as np

    lengths = {len(a) for a in (*columns.values(), *metrics.values())}
    if len(lengths) > 1:
        raise ResultFileError(f"{source}: {where} columns have different lengths {sorted(lengths)}")
    if lengths and max(lengths) > MAX_SAMPLES_PER_SERIES:
        raise ResultFileError(f"{source}: {where} holds {max(lengths)} samples, more than {MAX_SAMPLES_PER_SERIES}")
    for name, values in metrics.items():
        if values.size and not np.all(np.isfinite(values)):
            raise ResultFileError(f"{source}: {where}.metrics[{name!r}] must hold finite numbers")
    check_sample_values(columns, source, where)


def _bounded_list(raw, source: str, where: str) -> list:
    raw = expect(raw, list, source, where)
    if len(raw) > MAX_SAMPLES_PER_SERIES:
        raise ResultFileError(f"{source}: {where} holds {len(raw)} values, more than {MAX_SAMPLES_PER_SERIES}")
    return raw


def _integer_column(raw: list, source: str, where: str) -> np.ndarray:
    """``raw`` as int64; numpy would read ``true`` as 1, so booleans are refused first. O(n)."""
    import numpy as np

    if not raw:
        return np.zeros(0, dtype=np.int64)
    try:
        arr = np.array(raw)
    except (ValueError, OverflowError):
        arr = np.array([], dtype=object)
    if arr.dtype.kind not in "iu" or arr.ndim != 1 or bool in set(map(type, raw)):
        raise ResultFileError(f"{source}: {where} must be a list of integers")
    if arr.dtype.kind == "u" and arr.max() > MAX_SAMPLE_VALUE:
        index = int(np.argmax(arr))
        raise ResultFileError(f"{source}: {where}[{index}] is {int(arr[index])}, beyond {BOUND_TEXT}")
    return arr.astype(np.int64)


def _float_column(raw: list, source: str, where: str) -> np.ndarray:
    """``raw`` as float64: numbers only (no bools); :func:`check_samples` checks they are finite."""
    import numpy as np

    if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in raw):
        raise ResultFileError(f"{source}: {where} must be a list of numbers")
    try:
        return np.asarray(raw, dtype=np.float64)
    except OverflowError:  # an integer beyond the largest float
        raise ResultFileError(f"{source}: {where} must hold finite numbers") from None


def sample_row(values: list, where: str) -> Sample:
    """A journal line's sample columns, in ``SAMPLE_COLUMNS`` order, each an integer in range."""
    if len(values) != len(SAMPLE_COLUMNS) or not all(is_int(x) for x in values):
        raise ResultFileError(f"{where}: a sample must be {len(SAMPLE_COLUMNS)} integers")
    for name, value in zip(SAMPLE_COLUMNS, values, strict=True):
        if not -MAX_SAMPLE_VALUE <= value <= MAX_SAMPLE_VALUE:
            raise ResultFileError(f"{where}: {name} is {value}, beyond {BOUND_TEXT}")
    return Sample(*values)


def check_sample_values(arrays: Mapping[str, np.ndarray], source: str, where: str) -> None:
    """Durations positive, counts non-negative, iterations at least 1, warmup 0 or 1, every value
    within ±(2**53 - 1)."""
    import numpy as np

    for name, col in arrays.items():
        if col.size and (col.max() > MAX_SAMPLE_VALUE or col.min() < -MAX_SAMPLE_VALUE):
            index = int(np.argmax(np.abs(col.astype(np.float64))))
            raise ResultFileError(f"{source}: {where}.{name}[{index}] is {int(col[index])}, beyond {BOUND_TEXT}")
    wall = arrays["wall_ns"]
    if wall.size and wall.min() <= 0:
        index = int(np.argmin(wall))
        raise ResultFileError(
            f"{source}: {where}.wall_ns[{index}] is {int(wall[index])}: durations must be positive")
    for name in NON_NEGATIVE:
        col = arrays[name]
        if col.size and col.min() < 0:
            index = int(np.argmin(col))
            raise ResultFileError(f"{source}: {where}.{name}[{index}] is negative ({int(col[index])})")
    iterations = arrays["iterations"]
    if iterations.size and iterations.min() < 1:
        index = int(np.argmin(iterations))
        raise ResultFileError(f"{source}: {where}.iterations[{index}] is {int(iterations[index])}: "
                              "a sample holds at least 1 operation")
    warm = arrays["warmup"]
    if warm.size and not np.all((warm == 0) | (warm == 1)):
        raise ResultFileError(f"{source}: {where}.warmup must hold only 0 and 1")


# --------------------------------------------------------------------------- metadata


def environment(value, source: str) -> tuple[dict, ExecutorInfo | None]:
    """The ``environment`` object, and the executor record it holds (``executor``), read once here.

    Busy processes are kept as a result keeps them, a name and a CPU share
    (``environment.activity.without_process_details``): the PIDs and command
    lines pairbench 0.2.0 and earlier stored are not shown again.
    """
    env = dict(without_process_details(expect(value, dict, source, "environment")))
    return env, executor(env.pop("executor"), source) if "executor" in env else None


def executor(value, source: str) -> ExecutorInfo:
    """``environment.executor``: an object with a ``kind``, a non-negative integer (or null: unknown)
    ``rss_floor_kib``, since analysis compares RSS to it, and text (when present: results written
    before the native spawner lack them) in ``spawner``, ``peak_memory`` and ``peak_memory_reason``,
    which say how max RSS was measured, and ``containment`` and ``containment_reason``, how what a
    command left running was ended."""
    record = expect(value, dict, source, "environment.executor")
    floor = record.get("rss_floor_kib")
    if floor is not None and expect(floor, int, source, "environment.executor.rss_floor_kib") < 0:
        raise ResultFileError(f"{source}: environment.executor.rss_floor_kib must be non-negative, got {floor}")
    text = {key: expect(record[key], str, source, f"environment.executor.{key}")
            for key in ("spawner", "peak_memory", "peak_memory_reason", "containment", "containment_reason")
            if key in record}
    return ExecutorInfo(str(record.get("kind", "")), floor, **text)


def suite(value, source: str) -> SuiteInfo | None:
    """A bench run's ``suite``: null, or an object with ``benchmarks`` (the suite's comparisons, at
    least 1), a ``digest`` string, ``shard`` null or [K, N] with 1 <= K <= N <= ``MAX_SHARDS`` (as
    ``--shard`` takes it: ``merge`` counts the shards it needs), the ``harness``, and for a merged
    run the shards it ``merged`` and where they ran (``shards``)."""
    if value is None:
        return None
    record = expect(value, dict, source, "suite")
    if expect(record.get("benchmarks"), int, source, "suite.benchmarks") < 1:
        raise ResultFileError(f"{source}: suite.benchmarks must be at least 1, got {record['benchmarks']}")
    shard = record.get("shard")
    if shard is not None and not (isinstance(shard, list) and len(shard) == 2 and all(is_int(x) for x in shard)
                                  and 1 <= shard[0] <= shard[1] <= MAX_SHARDS):
        shown = repr(shard) if len(repr(shard)) <= 60 else repr(shard)[:57] + "..."
        raise ResultFileError(f"{source}: suite.shard must be null or [K, N] with 1 <= K <= N <= {MAX_SHARDS}, "
                              f"got {shown}")
    merged = record.get("merged")
    if merged is not None and not (isinstance(merged, list) and all(is_int(x) for x in merged)):
        shown = repr(merged) if len(repr(merged)) <= 60 else repr(merged)[:57] + "..."
        raise ResultFileError(f"{source}: suite.merged must be a list of shard numbers, got {shown}")
    return SuiteInfo(record["benchmarks"], expect(record.get("digest"), str, source, "suite.digest"),
                     tuple(shard) if shard else None, expect(record.get("harness", PAIRBENCH), str, source,
                                                             "suite.harness"),
                     tuple(merged) if merged is not None else None,
                     tuple(expect_object_list(record.get("shards", []), source, "suite.shards")) if merged else None)


def shell_overhead(value, source: str) -> ShellOverhead | None:
    """The shell's start-up cost (``--shell``): null, or an object with ``median_ns`` and ``min_ns``
    (finite, non-negative, below 2**53), ``n`` (a non-negative integer) and the ``shell`` (sh when
    absent: pairbench 0.2 ran sh)."""
    if value is None:
        return None
    overhead = expect(value, dict, source, "shell_overhead")
    median_ns, min_ns = (expect_duration(overhead.get(key), source, f"shell_overhead.{key}")
                         for key in ("median_ns", "min_ns"))
    if expect(overhead.get("n"), int, source, "shell_overhead.n") < 0:
        raise ResultFileError(f"{source}: shell_overhead.n must be non-negative, got {overhead['n']}")
    return ShellOverhead(median_ns, min_ns, overhead["n"],
                         expect(overhead.get("shell") or "sh", str, source, "shell_overhead.shell"))


def notes(value, source: str) -> tuple[Note, ...]:
    """Stored notes: objects with a ``code``, a ``data`` object and an optional ``subject``.

    A code this version does not know (a newer pairbench wrote it) is kept as
    a ``recorded`` note holding its code and data, so nothing is dropped.
    """
    items = expect_object_list(value, source, "notes")
    if len(items) > MAX_NOTES:
        raise ResultFileError(f"{source}: {len(items)} notes is more than {MAX_NOTES}")
    return tuple(_note(item, source, f"notes[{i}]") for i, item in enumerate(items))


def _note(item: dict, source: str, where: str) -> Note:
    code = expect(item.get("code"), str, source, f"{where}.code")
    data = expect(item.get("data", {}), dict, source, f"{where}.data")
    subject = expect(item.get("subject", {}), dict, source, f"{where}.subject")
    parts = {key: expect(subject.get(key, ""), str, source, f"{where}.subject.{key}")
             for key in ("benchmark", "side", "baseline")}
    if code not in CODES:
        return Note("recorded", {"text": f"{code}: {data}"}, Subject(**parts))
    return Note(code, data, Subject(**parts))
