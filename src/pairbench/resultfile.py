"""The result document and its journal: versioned JSON, written crash-safely, read defensively.

Format history (``"format"`` key of the document):
    pairbench.result/1  (pairbench 0.1) samples stored columnar per variant; environment,
                        options, exact argv; derived ``summaries`` and ``comparisons``.

While a run is in progress its samples are appended to a journal, ``RESULT.partial``
(JSON lines: a header line holding the run without samples, then one line per
sample, flushed as they arrive and fsynced at least every second). At the end the
document goes to a temporary file in the same directory, is fsynced and renamed
over the target, and the journal is removed. A crash leaves the journal, which
:func:`read_result` reads like a document (state ``interrupted``).

Reading never uses pickle or eval; it rejects NaN and infinity, wrong types
(``true`` where an integer belongs), non-positive durations, sample values of
2**53 or more (a duration of ~104 days; every stored value is exact as a float),
unequal column lengths, an empty variant list, two variants of one name, a
malformed ``environment.executor`` or ``shell_overhead``, ``summaries`` and
``comparisons`` that are not lists of objects, nesting too deep to parse and
oversized input, each with one line naming the file and the problem.

Starting a journal never overwrites one: an existing ``RESULT.partial`` holds the
samples of a run that did not finish, and is refused rather than truncated.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pairbench.errors import ResultFileError
from pairbench.model import SAMPLE_COLUMNS, Command, Run, Sample, Samples, Variant

RESULT_FORMAT = "pairbench.result/1"
JOURNAL_FORMAT = "pairbench.journal/1"
JOURNAL_SUFFIX = ".partial"

MAX_FILE_BYTES = 2 * 1024**3  # refuse to parse anything larger
MAX_SAMPLES_PER_VARIANT = 50_000_000
MAX_VARIANTS = 1000
MAX_SAMPLE_VALUE = 2**53 - 1  # |value| of any sample column; as ns, ~104 days; exact as a float
FSYNC_INTERVAL_S = 1.0

_NON_NEGATIVE = ("user_ns", "sys_ns", "max_rss_kib", "voluntary_cs", "involuntary_cs", "start_ns",
                 "seq", "slot", "iterations")


def journal_path(path: str | os.PathLike) -> Path:
    """The journal that accompanies result ``path`` while a run is in progress."""
    return Path(str(path) + JOURNAL_SUFFIX)


# --------------------------------------------------------------------------- writing


def run_to_document(run: Run) -> dict:
    """The JSON-ready document of ``run``, samples columnar."""
    header = run_header(run)
    header["variants"] = [
        {**_variant_header(v), "samples": {c: v.samples[c].tolist() for c in SAMPLE_COLUMNS}}
        for v in run.variants
    ]
    return header


def write_result(run: Run, path: str | os.PathLike) -> None:
    """Write ``run`` to ``path`` atomically: temp file, fsync, rename, fsync the directory."""
    text = json.dumps(run_to_document(run), allow_nan=False, separators=(",", ":"))
    atomic_write_text(Path(path), text + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never half.

    A symbolic link is written through: its target is replaced (the temporary
    file lies beside the target, so the rename never crosses file systems) and
    the link stays a link.
    """
    target = Path(path).resolve()
    directory = target.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_current_umask())  # mkstemp makes 0600; give the usual mode
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)


class Journal:
    """Appends samples to ``RESULT.partial`` as they arrive, so a crash loses at most a line."""

    def __init__(self, path: str | os.PathLike, run: Run):
        self.path = journal_path(path)
        try:
            # "x": never truncate the journal of an earlier run that did not finish
            self._handle = open(self.path, "x", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except FileExistsError:
            raise ResultFileError(
                f"{self.path}: holds the samples of a run that did not finish; read it with "
                f"`pairbench show {self.path}`, then remove it or choose another --json path"
            ) from None
        except OSError as exc:
            raise ResultFileError(f"{self.path}: cannot write the journal ({exc.strerror})") from None
        header = {"journal": JOURNAL_FORMAT, "run": run_header(run)}
        header["run"]["variants"] = [_variant_header(v) for v in run.variants]
        try:
            self._write_line(header)
            self._sync()
        except (ValueError, TypeError, OSError) as exc:
            self._discard()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ResultFileError(f"{self.path}: cannot write the journal ({reason})") from None

    def _discard(self) -> None:
        """Close and remove a journal that holds no sample yet (its header could not be written)."""
        with contextlib.suppress(OSError):
            self._handle.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def append(self, variant_index: int, sample: Sample) -> None:
        """Record one sample of variant ``variant_index``."""
        row = [getattr(sample, c) for c in SAMPLE_COLUMNS]
        self._write_line({"v": variant_index, "s": row})
        if time.monotonic() - self._last_sync >= FSYNC_INTERVAL_S:
            self._sync()

    def close(self, *, remove: bool) -> None:
        """Close the journal; ``remove`` it once the final document is safely written."""
        if self._handle.closed:
            return
        self._sync()
        self._handle.close()
        if remove:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def _write_line(self, record: dict) -> None:
        self._handle.write(json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n")
        self._handle.flush()

    def _sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._last_sync = time.monotonic()


def run_header(run: Run) -> dict:
    """The document's fields other than the variants: format, metadata, derived records."""
    return {
        "format": RESULT_FORMAT,
        "kind": run.kind,
        "tool": {"name": "pairbench", "version": run.tool_version},
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "state": run.state,
        "stopped_because": run.stopped_because,
        "environment": dict(run.environment),
        "options": dict(run.options),
        "shell_overhead": dict(run.shell_overhead) if run.shell_overhead else None,
        "warnings": list(run.warnings),
        "summaries": [dict(s) for s in run.summaries],
        "comparisons": [dict(c) for c in run.comparisons],
    }


def _variant_header(variant: Variant) -> dict:
    return {"name": variant.name, "label": variant.label, "command": variant.command.to_dict()}


# --------------------------------------------------------------------------- reading


def read_result(path: str | os.PathLike) -> Run:
    """Read a result document or a journal; raise ``ResultFileError`` naming the file and the problem.

    Given ``RESULT.json`` that does not exist while ``RESULT.json.partial`` does,
    the journal is read instead (a run that crashed or is still going).
    """
    path = Path(path)
    if not path.exists() and journal_path(path).exists():
        path = journal_path(path)
    text = read_text_file(path)
    if is_journal_text(text):
        return _run_from_journal(path, text)
    document = parse_json_text(path, text)
    return run_from_document(document, source=str(path))


def is_journal_text(text: str) -> bool:
    """Whether ``text`` is a journal (its first line is the journal header), not a document."""
    return '"journal"' in text.split("\n", 1)[0][:200]


def run_from_document(document: object, *, source: str = "<document>") -> Run:
    """Validate a parsed document and turn it into a :class:`Run`."""
    doc = _expect(document, dict, source, "the document")
    fmt = doc.get("format")
    if fmt != RESULT_FORMAT:
        raise ResultFileError(
            f"{source}: unsupported format {fmt!r}; this pairbench reads {RESULT_FORMAT!r}"
        )
    variants_raw = _expect_variant_list(doc.get("variants"), source)
    variants = tuple(
        _variant_from_dict(v, source, i, samples=_samples_from_columns(
            _expect(_expect(v, dict, source, f"variants[{i}]").get("samples"), dict, source,
                    f"variants[{i}].samples"), source, f"variants[{i}].samples"))
        for i, v in enumerate(variants_raw)
    )
    return _run_from_header(doc, variants, source)


def _expect_variant_list(value, source: str) -> list:
    """The raw variant list: at least one (pairbench never measures zero commands), at most MAX_VARIANTS."""
    variants_raw = _expect(value, list, source, "variants")
    if not variants_raw:
        raise ResultFileError(f"{source}: variants is empty; a result holds at least one command")
    if len(variants_raw) > MAX_VARIANTS:
        raise ResultFileError(f"{source}: {len(variants_raw)} variants is more than {MAX_VARIANTS}")
    return variants_raw


def _run_from_header(doc: dict, variants: tuple[Variant, ...], source: str) -> Run:
    _refuse_repeated_names(variants, source)
    tool = _expect(doc.get("tool", {}), dict, source, "tool")
    state = doc.get("state", "complete")
    if state not in ("complete", "interrupted", "failed", "running"):
        raise ResultFileError(f"{source}: unknown state {state!r}")
    kind = doc.get("kind", "run")
    if kind not in ("run", "compare"):
        raise ResultFileError(f"{source}: unknown kind {kind!r}")
    try:
        return Run(
            kind=kind,
            variants=variants,
            tool_version=str(tool.get("version", "")),
            started_at=_expect(doc.get("started_at", ""), str, source, "started_at"),
            finished_at=_expect(doc.get("finished_at", ""), str, source, "finished_at"),
            state=state,
            stopped_because=_expect(doc.get("stopped_because", ""), str, source, "stopped_because"),
            environment=_environment(doc.get("environment", {}), source),
            options=_expect(doc.get("options", {}), dict, source, "options"),
            shell_overhead=_shell_overhead(doc.get("shell_overhead"), source),
            warnings=tuple(_expect_str_list(doc.get("warnings", []), source, "warnings")),
            summaries=tuple(_expect_object_list(doc.get("summaries", []), source, "summaries")),
            comparisons=tuple(_expect_object_list(doc.get("comparisons", []), source, "comparisons")),
        )
    except ValueError as exc:
        raise ResultFileError(f"{source}: {exc}") from None


def _refuse_repeated_names(variants: tuple[Variant, ...], source: str) -> None:
    """Reports look variants up by name, so no two may share one."""
    seen: set[str] = set()
    for i, variant in enumerate(variants):
        if variant.name in seen:
            raise ResultFileError(
                f"{source}: variants[{i}].name {variant.name!r} is the name of an earlier variant too; "
                "each variant needs its own name"
            )
        seen.add(variant.name)


def _shell_overhead(value, source: str) -> dict | None:
    """The shell's start-up cost (``--shell``): null, or an object with ``median_ns`` and ``min_ns``
    (finite, non-negative, below 2**53) and ``n`` (a non-negative integer)."""
    if value is None:
        return None
    overhead = _expect(value, dict, source, "shell_overhead")
    for key in ("median_ns", "min_ns"):
        _expect_duration(overhead.get(key), source, f"shell_overhead.{key}")
    if _expect(overhead.get("n"), int, source, "shell_overhead.n") < 0:
        raise ResultFileError(f"{source}: shell_overhead.n must be non-negative, got {overhead['n']}")
    return overhead


def _expect_duration(value, source: str, where: str) -> float:
    """A finite number of nanoseconds in [0, 2**53)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResultFileError(f"{source}: {where} must be a number of nanoseconds, got {type(value).__name__}")
    if not 0 <= value <= MAX_SAMPLE_VALUE:
        raise ResultFileError(f"{source}: {where} must lie in [0, 2**53) nanoseconds, got {value!r}")
    return value


def _environment(value, source: str) -> dict:
    """The ``environment`` object; its ``executor``, when present, must be an object with a
    non-negative integer (or null: unknown) ``rss_floor_kib``, since analysis compares RSS to it."""
    environment = _expect(value, dict, source, "environment")
    if "executor" in environment:
        executor = _expect(environment["executor"], dict, source, "environment.executor")
        floor = executor.get("rss_floor_kib")
        if floor is not None:
            got = _expect(floor, int, source, "environment.executor.rss_floor_kib")
            if got < 0:
                raise ResultFileError(
                    f"{source}: environment.executor.rss_floor_kib must be non-negative, got {got}"
                )
    return environment


def _variant_from_dict(raw: object, source: str, index: int, *, samples: Samples) -> Variant:
    where = f"variants[{index}]"
    v = _expect(raw, dict, source, where)
    name = _expect(v.get("name"), str, source, f"{where}.name")
    cmd = _expect(v.get("command"), dict, source, f"{where}.command")
    argv = _expect_str_list(cmd.get("argv"), source, f"{where}.command.argv")
    command = Command(
        text=_expect(cmd.get("text", " ".join(argv)), str, source, f"{where}.command.text"),
        argv=tuple(argv),
        shell=bool(_expect(cmd.get("shell", False), bool, source, f"{where}.command.shell")),
    )
    label = _expect(v.get("label", ""), str, source, f"{where}.label")
    return Variant(name=name, command=command, label=label, samples=samples)


def _samples_from_columns(columns: Mapping, source: str, where: str) -> Samples:
    arrays = {}
    for name in SAMPLE_COLUMNS:
        if name not in columns:
            raise ResultFileError(f"{source}: {where} lacks the column {name!r}")
        raw = _expect(columns[name], list, source, f"{where}.{name}")
        if len(raw) > MAX_SAMPLES_PER_VARIANT:
            raise ResultFileError(
                f"{source}: {where}.{name} holds {len(raw)} values, more than {MAX_SAMPLES_PER_VARIANT}"
            )
        arrays[name] = _integer_column(raw, source, f"{where}.{name}")
    lengths = {len(a) for a in arrays.values()}
    if len(lengths) > 1:
        raise ResultFileError(f"{source}: {where} columns have different lengths {sorted(lengths)}")
    _check_sample_values(arrays, source, where)
    return Samples(arrays)


def _integer_column(raw: list, source: str, where: str) -> np.ndarray:
    """``raw`` as int64; numpy would read ``true`` as 1, so booleans are refused first. O(n)."""
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
        raise ResultFileError(f"{source}: {where}[{index}] is {int(arr[index])}, beyond {_BOUND_TEXT}")
    return arr.astype(np.int64)


_BOUND_TEXT = "the limit of 2**53 - 1 (as nanoseconds, ~104 days)"


def _check_sample_values(arrays: dict, source: str, where: str) -> None:
    """Durations positive, counts non-negative, warmup 0 or 1, every value within ±(2**53 - 1)."""
    for name, col in arrays.items():
        if col.size and (col.max() > MAX_SAMPLE_VALUE or col.min() < -MAX_SAMPLE_VALUE):
            index = int(np.argmax(np.abs(col.astype(np.float64))))
            raise ResultFileError(f"{source}: {where}.{name}[{index}] is {int(col[index])}, "
                                  f"beyond {_BOUND_TEXT}")
    wall = arrays["wall_ns"]
    if wall.size and wall.min() <= 0:
        index = int(np.argmin(wall))
        raise ResultFileError(
            f"{source}: {where}.wall_ns[{index}] is {int(wall[index])}: durations must be positive"
        )
    for name in _NON_NEGATIVE:
        col = arrays[name]
        if col.size and col.min() < 0:
            index = int(np.argmin(col))
            raise ResultFileError(f"{source}: {where}.{name}[{index}] is negative ({int(col[index])})")
    warm = arrays["warmup"]
    if warm.size and not np.all((warm == 0) | (warm == 1)):
        raise ResultFileError(f"{source}: {where}.warmup must hold only 0 and 1")


def _run_from_journal(path: Path, text: str) -> Run:
    lines = text.split("\n")
    header = parse_json_text(path, lines[0])
    run_raw = _expect(_expect(header, dict, str(path), "journal header").get("run"), dict, str(path),
                      "journal header run")
    if header.get("journal") != JOURNAL_FORMAT:
        raise ResultFileError(f"{path}: unsupported journal format {header.get('journal')!r}")
    variants_raw = _expect_variant_list(run_raw.get("variants"), str(path))
    rows: list[list[Sample]] = [[] for _ in variants_raw]
    warnings = list(_expect_str_list(run_raw.get("warnings", []), str(path), "warnings"))
    body = lines[1:]
    while body and not body[-1].strip():
        body.pop()
    for number, line in enumerate(body, start=2):
        try:
            record = json.loads(line, parse_constant=_reject_constant)
        except RecursionError:
            raise ResultFileError(f"{path}:{number}: nested too deeply to be a journal line") from None
        except ValueError:
            if number == len(body) + 1:  # a crash cut the last line short: keep the rest
                warnings.append(f"the journal's last line was cut short; {number - 2} samples recovered")
                break
            raise ResultFileError(f"{path}:{number}: malformed journal line") from None
        rows_index, sample = _journal_sample(record, len(rows), path, number)
        rows[rows_index].append(sample)
    variants = []
    for i, raw in enumerate(variants_raw):
        samples = Samples.from_rows(rows[i])
        _check_sample_values(dict(samples.columns), str(path), f"variants[{i}].samples")
        variants.append(_variant_from_dict(raw, str(path), i, samples=samples))
    run_raw = {**run_raw, "format": RESULT_FORMAT, "warnings": warnings}
    run = _run_from_header(run_raw, tuple(variants), str(path))
    state = "interrupted" if run.state == "running" else run.state
    return run.replace(state=state, stopped_because=run.stopped_because or "the run did not finish")


def _journal_sample(record: object, n_variants: int, path: Path, number: int) -> tuple[int, Sample]:
    if not isinstance(record, dict) or not _is_int(record.get("v")) or not isinstance(record.get("s"), list):
        raise ResultFileError(f"{path}:{number}: a journal line must be {{\"v\": int, \"s\": [...]}}")
    index, values = record["v"], record["s"]
    if not 0 <= index < n_variants:
        raise ResultFileError(f"{path}:{number}: variant index {index} out of range")
    if len(values) != len(SAMPLE_COLUMNS) or not all(_is_int(x) for x in values):
        raise ResultFileError(f"{path}:{number}: a sample must be {len(SAMPLE_COLUMNS)} integers")
    for name, value in zip(SAMPLE_COLUMNS, values, strict=True):
        if not -MAX_SAMPLE_VALUE <= value <= MAX_SAMPLE_VALUE:
            raise ResultFileError(f"{path}:{number}: {name} is {value}, beyond {_BOUND_TEXT}")
    return index, Sample(*values)


def _is_int(value) -> bool:
    """An integer, and not ``true`` or ``false`` (which Python counts as 1 and 0)."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_text_file(path: Path) -> str:
    """The text of a result or metadata file; ResultFileError naming the file and the problem."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ResultFileError(f"{path}: {size} bytes is larger than the {MAX_FILE_BYTES}-byte limit")
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ResultFileError(f"{path}: not a pairbench result (not UTF-8 text)") from None
    except IsADirectoryError:
        raise ResultFileError(f"{path}: is a directory, not a result file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror})") from None


def parse_json_text(path: Path, text: str) -> object:
    """The JSON value of ``text`` read from ``path``, no NaN or Infinity; ResultFileError otherwise."""
    if not text.strip():
        raise ResultFileError(f"{path}: the file is empty")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ResultFileError(f"{path}: nested too deeply to be a pairbench result") from None
    except json.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise ResultFileError(
            f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except ValueError as exc:
        raise ResultFileError(f"{path}: {exc}") from None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed in a result file (non-finite number)")


def _expect(value, kind, source: str, where: str):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {dict: "an object", list: "a list", str: "a string", bool: "true or false",
                    int: "an integer"}.get(
            kind, kind.__name__
        )
        raise ResultFileError(f"{source}: {where} must be {expected}, got {type(value).__name__}")
    return value


def _expect_object_list(value, source: str, where: str) -> list[dict]:
    items = _expect(value, list, source, where)
    for i, item in enumerate(items):
        _expect(item, dict, source, f"{where}[{i}]")
    return items


def _expect_str_list(value, source: str, where: str) -> list[str]:
    items = _expect(value, list, source, where)
    if not all(isinstance(x, str) for x in items):
        raise ResultFileError(f"{source}: {where} must be a list of strings")
    return items
