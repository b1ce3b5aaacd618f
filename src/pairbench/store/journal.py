"""The journal: samples written as they arrive, so a crash loses at most the line being written.

While a run is in progress its samples are appended to ``RESULT.partial``: a
header line holding the run without samples (``pairbench.journal/2``: the
result document's header), then one line per sample,
``{"b": benchmark, "s": side, "v": [the 13 columns], "m": {metric: value}}``
(``m`` only when there are metrics), flushed as they arrive and fsynced at
least every second. At the end the result document is written atomically
and the journal removed; a crash leaves the journal, which ``read_result``
reads like a document (state ``interrupted``). Journals of format /1 read too.

Starting a journal never overwrites one: an existing ``RESULT.partial`` holds
the samples of a run that did not finish, and is refused rather than truncated.
A run holds an exclusive ``flock`` on its journal while it writes it, so a second
run with the same result path is told that another run is live (not that the
file is left over), and it removes the journal only if the path still names the
file it created (same device and inode): never another run's. A run killed after
it wrote its result document to a hidden temporary file but before renaming it
leaves that complete document beside the journal; refusing the path, and
reading the journal, say where it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path

from pairbench.errors import ResultFileError
from pairbench.measure.sampler import Measured, Sink
from pairbench.model import SAMPLE_COLUMNS, Run, Sample, Samples, append_metrics
from pairbench.notes import Note
from pairbench.outputs import JOURNAL_SUFFIX, is_live_journal
from pairbench.store import checks, legacy
from pairbench.store.document import RESULT_FORMAT, run_from_header, run_header
from pairbench.store.files import (
    dumps,
    finite_float,
    leftover_writes,
    parse_json_text,
    read_text_file,
    reject_constant,
    unique_keys,
)

JOURNAL_FORMAT = "pairbench.journal/2"
LEGACY_JOURNAL_FORMAT = "pairbench.journal/1"
FSYNC_INTERVAL_S = 1.0


def journal_path(path: str | os.PathLike) -> Path:
    """The journal that accompanies result ``path`` while a run is in progress."""
    return Path(str(path) + JOURNAL_SUFFIX)


def is_journal_text(text: str) -> bool:
    """Whether ``text`` is a journal (its first line is the journal header), not a document."""
    return '"journal"' in text.split("\n", 1)[0][:200]


class Journal(Sink):
    """Appends each sample to ``RESULT.partial`` as it arrives (a sink of the sampler).

    OS errors pass through as ``OSError``; the session says what they mean.
    """

    def __init__(self, path: str | os.PathLike, run: Run):
        self.path = journal_path(path)
        self.written = 0  # samples appended so far
        try:
            # "x": never truncate the journal of an earlier run that did not finish
            self._handle = open(self.path, "x", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except FileExistsError:
            raise ResultFileError(_occupied(self.path, Path(path))) from None
        except OSError as exc:
            raise ResultFileError(f"{self.path}: cannot write the journal ({exc.strerror})") from None
        created = os.fstat(self._handle.fileno())
        self._identity = (created.st_dev, created.st_ino)
        with contextlib.suppress(OSError):  # a file system without locks: no liveness to tell
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            self._write_line({"journal": JOURNAL_FORMAT, "run": run_header(run)})
            self._sync()
        except (ValueError, TypeError, OSError) as exc:
            self._discard()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ResultFileError(f"{self.path}: cannot write the journal ({reason})") from None

    def _discard(self) -> None:
        """Remove and close a journal that holds no sample yet (its header could not be written)."""
        with contextlib.suppress(OSError):
            self._remove_if_ours()
        with contextlib.suppress(OSError):
            self._handle.close()

    def is_in_place(self) -> bool:
        """True if the journal's path still names the file this run created (not removed, not
        replaced by another run's)."""
        try:
            now = os.lstat(self.path)
        except OSError:
            return False
        return (now.st_dev, now.st_ino) == self._identity

    def _remove_if_ours(self) -> None:
        if self.is_in_place():
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def on_sample(self, measured: Measured) -> None:
        """Record one sample."""
        record = {"b": measured.benchmark, "s": measured.side,
                  "v": [getattr(measured.sample, c) for c in SAMPLE_COLUMNS]}
        if measured.metrics:
            record["m"] = dict(measured.metrics)
        self._write_line(record)
        self.written += 1
        if time.monotonic() - self._last_sync >= FSYNC_INTERVAL_S:
            self._sync()

    def close(self, *, remove: bool) -> None:
        """Close the journal; ``remove`` it once the final document is safely written (only if its
        path still names the file this run created). An ``OSError`` of the last sync passes
        through, after the journal is closed (and removed)."""
        if self._handle.closed:
            return
        try:
            self._sync()
        finally:
            if remove:  # while the lock is held: no other run can have taken the path over
                self._remove_if_ours()
            self._handle.close()

    def _write_line(self, record: dict) -> None:
        self._handle.write(dumps(record) + "\n")
        self._handle.flush()

    def _sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._last_sync = time.monotonic()


def _occupied(path: Path, result: Path) -> str:
    """Why the journal ``path`` of ``result`` cannot be started: another run writes it, or it holds
    the samples of a run that did not finish (and perhaps that run's complete document)."""
    if is_live_journal(path):
        return (f"{path}: another pairbench run is writing it now (its journal for {result}); "
                "wait for that run to end, or choose another --json path")
    document = complete_leftover(result)
    if document is not None:
        return (f"{path}: holds the samples of a run that did not finish, and {document} holds its "
                f"complete result document (the run was killed just before renaming it): rename it "
                f"to {result} and remove the journal, or choose another --json path")
    return (f"{path}: holds the samples of a run that did not finish; read it with "
            f"`pairbench show {path}`, then remove it or choose another --json path")


def complete_leftover(result: str | os.PathLike) -> Path | None:
    """The hidden temporary file beside ``result`` that holds a complete result document (what a
    run killed just before its final rename leaves), or None."""
    for candidate in leftover_writes(result):
        try:
            document = parse_json_text(candidate, read_text_file(candidate))
        except ResultFileError:
            continue
        if isinstance(document, dict) and document.get("format") == RESULT_FORMAT:
            return candidate
    return None


# --------------------------------------------------------------------------- reading


def read_journal(path: Path, text: str) -> Run:
    """The run a journal holds: its header and every complete sample line (state ``interrupted``).

    A last line cut short by a crash is dropped with a ``journal-cut-short`` note;
    any other malformed line is a ``ResultFileError``.
    """
    lines = text.split("\n")
    header = checks.expect(parse_json_text(path, lines[0]), dict, str(path), "journal header")
    run_raw = checks.expect(header.get("run"), dict, str(path), "journal header run")
    fmt = header.get("journal")
    if fmt == JOURNAL_FORMAT:
        run, read_line = run_from_header(run_raw, str(path)), _sample_v2
    elif fmt == LEGACY_JOURNAL_FORMAT:
        run, read_line = legacy.header_from_v1(run_raw, str(path)), legacy.journal_sample_v1
    else:
        raise ResultFileError(f"{path}: unsupported journal format {fmt!r}")
    rows: dict[tuple[int, int], list[Sample]] = {}
    metrics: dict[tuple[int, int], dict[str, list[float]]] = {}
    notes = list(run.notes)
    body = lines[1:]
    while body and not body[-1].strip():
        body.pop()
    for number, line in enumerate(body, start=2):
        record = _parse_line(line, path, number, last=number == len(body) + 1)
        if record is None:
            notes.append(Note("journal-cut-short", {"recovered": number - 2}))
            break
        series, sample, values = read_line(checks.expect(record, dict, str(path), f"line {number}"),
                                           (len(run.benchmarks), len(run.sides)), path, number)
        rows.setdefault(series, []).append(sample)
        if values or series in metrics:
            append_metrics(metrics.setdefault(series, {}), len(rows[series]) - 1, values)
    samples = {series: _series(series_rows, metrics.get(series, {}), path)
               for series, series_rows in rows.items()}
    result = Path(str(path).removesuffix(JOURNAL_SUFFIX))
    document = complete_leftover(result) if str(path).endswith(JOURNAL_SUFFIX) else None
    if document is not None:
        notes.append(Note("unrenamed-result", {"path": str(document), "result": str(result)}))
    state = "interrupted" if run.state == "running" else run.state
    return run.replace(samples=samples, notes=tuple(notes), state=state,
                       stopped_because=run.stopped_because or "the run did not finish")


def _parse_line(line: str, path: Path, number: int, *, last: bool) -> object | None:
    """A journal line's JSON; None for a last line cut short, ResultFileError for any other bad one."""
    try:
        return json.loads(line, parse_constant=reject_constant, parse_float=finite_float,
                          object_pairs_hook=unique_keys)
    except RecursionError:
        raise ResultFileError(f"{path}:{number}: nested too deeply to be a journal line") from None
    except json.JSONDecodeError:
        if last:
            return None
        raise ResultFileError(f"{path}:{number}: malformed journal line") from None
    except ValueError as exc:  # a number no float holds, NaN, a key given twice: not a crash's work
        raise ResultFileError(f"{path}:{number}: {exc}") from None


def _sample_v2(record: dict, shape: tuple[int, int], path: Path, number: int):
    """One /2 journal line -> ((benchmark, side), sample, metrics)."""
    b, s, values = record.get("b"), record.get("s"), record.get("v")
    if not (checks.is_int(b) and checks.is_int(s) and isinstance(values, list)):
        raise ResultFileError(f"{path}:{number}: a journal line must be {{\"b\": int, \"s\": int, \"v\": [...]}}")
    if not (0 <= b < shape[0] and 0 <= s < shape[1]):
        raise ResultFileError(f"{path}:{number}: benchmark {b} or side {s} out of range")
    raw_metrics = record.get("m", {})
    if not isinstance(raw_metrics, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw_metrics.values()):
        raise ResultFileError(f"{path}:{number}: \"m\" must map metric names to numbers")
    return (b, s), checks.sample_row(values, f"{path}:{number}"), {str(k): float(v) for k, v in raw_metrics.items()}


def _series(rows: list[Sample], metrics: dict[str, list[float]], path: Path) -> Samples:
    samples = Samples.from_rows(rows, metrics)
    checks.check_sample_values(dict(samples.columns), str(path), "the journal's samples")
    return samples
