"""The history store: every result kept, per machine and benchmark, with the commit it measured.

:class:`Store` writes one result per transaction (its machine, its
benchmarks, the result and every series, or nothing: an interrupted write
leaves no trace) and reads back what ``history`` and ``confirm`` need. A
result is identified by a hash of its content (:func:`result_uid`), so storing
it twice (measured, then imported from its file) keeps it once.

What a series is in the history: a benchmark's identity is its key, except
that a whole command (the key ``command``) is known by the side's name, so
``pairbench run --name parse './parse big.json'`` makes the series ``parse``.
The series of a benchmark follows what a result measured *at its commit*:
every command of ``run``, the one worker of ``bench``, and the candidates of
``compare`` and two-worker ``bench`` (a baseline is another build, of an
unknown commit; it is stored with its role, not shown in the history).

The summary stored with a series (median and its interval, n) serves queries;
whatever is shown as a verdict is computed again from the raw samples.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Mapping

import numpy as np

from pairbench.environment.fingerprint import Machine
from pairbench.errors import StoreError
from pairbench.frozen import frozen
from pairbench.model import METRICS, SAMPLE_COLUMNS, BenchmarkKey, Run, Samples, utc_now
from pairbench.parsers import LEGACY_METRIC
from pairbench.store import codec, schema
from pairbench.store.database import StoreUrl, create_engine, parse_url, translated_errors
from pairbench.store.links import LINK_KINDS, LINK_METRICS, RECORD_SOURCE, Link, LinkRows  # noqa: F401
from pairbench.store.rows import (  # noqa: F401  (storable and StoredBenchmark are read from here too)
    CONFIRMATION_STATES,
    StoredBenchmark,
    _benchmark_row,
    _blob,
    _count,
    _insert_ignoring,
    _key,
    _optional_flag,
    _optional_number,
    _optional_text,
    _status,
    _StoredValueError,
    _text,
    storable,
    storable_row,
)

HISTORY_ROLES = ("", "candidate")


@frozen
class SeriesSummary:
    """What the analysis said of one series, kept for queries: counts, the median with its
    interval and the mean, per operation in the benchmark's unit (None where undefined)."""

    n: int
    n_failed: int = 0
    median: float | None = None
    median_low: float | None = None
    median_high: float | None = None
    mean: float | None = None
    metric: str | None = None  # what the median is of (``model.METRICS``); None: wall time


@frozen
class Provenance:
    """Where a result came from: the commit measured (None when unknown), its committer time, the
    branch, whether the tree was dirty, and ``source`` ("measured" or the file imported)."""

    commit: str | None = None
    commit_time: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    source: str = "measured"


@frozen
class StoredMachine:
    id: int
    fingerprint: str
    label: str
    results: int


@frozen
class Series:
    """One benchmark's history on one machine, in commit order (the commit's time, then the
    result's start): one point per result, as columns."""

    benchmark: StoredBenchmark
    result_uid: tuple[str, ...]
    commit: tuple[str | None, ...]
    commit_time: tuple[str | None, ...]
    branch: tuple[str | None, ...]
    dirty: tuple[bool | None, ...]
    started_at: tuple[str, ...]
    median: np.ndarray  # float64; NaN where a result had no successful sample
    median_low: np.ndarray
    median_high: np.ndarray
    n: np.ndarray  # int64
    metric: tuple[str, ...] = ()  # what each median is of (wall for a result stored before metrics were kept)

    def of_metric(self, metric: str) -> Series:
        """The points of this series kept on ``metric``."""
        rows = [i for i, m in enumerate(self.metric) if m == metric]
        return Series(self.benchmark, *(tuple(column[i] for i in rows) for column in (
            self.result_uid, self.commit, self.commit_time, self.branch, self.dirty, self.started_at)),
            self.median[rows], self.median_low[rows], self.median_high[rows], self.n[rows], (metric,) * len(rows))

    def metrics(self) -> list[str]:
        """The metrics of its points, in the order of ``model.METRICS`` (then any other)."""
        found = set(self.metric)
        return [m for m in METRICS if m in found] + sorted(found - set(METRICS))

    def __len__(self) -> int:
        return len(self.result_uid)


@frozen
class Confirmation:
    """What ``confirm`` found of the step from ``before`` to ``after`` for one benchmark."""

    benchmark_id: int
    before: str
    after: str
    status: str  # CONFIRMATION_STATES
    verdict: str
    effect: float | None
    effect_low: float | None
    effect_high: float | None
    result_uid: str | None
    confirmed_at: str


def history_key(run: Run, benchmark: int, side: int) -> BenchmarkKey:
    """The benchmark a series is in the history: its key, a whole command known by its side's name."""
    key = run.benchmarks[benchmark]
    if key.name == "command":
        return BenchmarkKey(run.sides[side].name, key.params, key.unit)
    return key


def result_uid(run: Run) -> str:
    """A hash of what identifies a result: its kind, times, sides, benchmarks and every sample."""
    digest = hashlib.sha256()
    header = {"kind": run.kind, "started_at": run.started_at, "finished_at": run.finished_at,
              "sides": [(s.name, s.label, s.command.text) for s in run.sides],
              "benchmarks": [k.to_dict() for k in run.benchmarks]}
    digest.update(json.dumps(header, sort_keys=True).encode())
    for (b, s), samples in sorted(run.samples.items()):
        digest.update(f"|{b},{s},{len(samples)}|".encode())
        for column in SAMPLE_COLUMNS:
            digest.update(np.ascontiguousarray(samples.columns[column], dtype="<i8").tobytes())
        for name in sorted(samples.metrics):
            digest.update(name.encode() + np.ascontiguousarray(samples.metrics[name], dtype="<f8").tobytes())
    return digest.hexdigest()[:32]


class Store(LinkRows):
    """An open history store (see the module docstring); close it, or use it as a context manager.

    Opened ``read_only`` (``history``, ``store info``) it is neither migrated nor locked nor
    changed: a SQLite file that does not exist is not created (the store is empty), and one of an
    older schema is read as it is (``version``).
    """

    def __init__(self, url: StoreUrl, *, read_only: bool = False):
        self.url = url
        self.version = 0  # the schema version of what is stored; 0: nothing yet
        self._engine = None
        if read_only and url.sqlite_path is not None and not os.path.lexists(url.sqlite_path):
            return
        self._engine = create_engine(url, read_only=read_only)
        try:
            with translated_errors(url, "opening the store"):
                self.version = self._read_version() if read_only else self._open()
        except BaseException:
            self._engine.dispose()
            raise

    @classmethod
    def open(cls, text: str, *, base=None, read_only: bool = False) -> Store:
        return cls(parse_url(text, base=base), read_only=read_only)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    def _write(self):
        """A connection whose transaction takes the store's write lock (SQLite: BEGIN IMMEDIATE)."""
        return self._engine.connect().execution_options(pairbench_write=True)

    def _open(self) -> int:
        """Migrate the store to this pairbench's schema, under its write lock; the version now."""
        with self._write() as conn, conn.begin():
            schema.lock_for_migration(conn)
            self._known_version(conn)
            schema.migrate(conn)
        return schema.CURRENT_VERSION

    def _read_version(self) -> int:
        with self._engine.connect() as conn:
            return self._known_version(conn)

    def _known_version(self, conn) -> int:
        """The store's schema version, if this pairbench can read it (``StoreError`` otherwise)."""
        try:
            found = schema.stored_version(conn)
        except ValueError as exc:
            raise StoreError(f"{self.url.shown}: {exc}; was it written by another program? Nothing was "
                             "changed") from None
        if found > schema.CURRENT_VERSION:
            raise StoreError(
                f"{self.url.shown} is a store of schema version {found}, newer than this pairbench "
                f"knows ({schema.CURRENT_VERSION}); upgrade pairbench to "
                "use it. Nothing was changed")
        return found

    # ------------------------------------------------------------------ writing

    def add(self, run: Run, summaries: Mapping[tuple[int, int], SeriesSummary], machine: Machine,
            provenance: Provenance) -> tuple[str, bool]:
        """Store ``run`` in one transaction; return its uid and whether it was new (a result stored
        before is kept once)."""
        uid = result_uid(run)
        with translated_errors(self.url, f"storing the result {uid[:12]}"), self._write() as conn, \
                conn.begin():
            machine_id = self._machine_id(conn, machine)
            result_id = self._insert_result(conn, run, uid, machine_id, provenance)
            if result_id is None:
                return uid, False
            keys = {(b, s): history_key(run, b, s) for b, s in run.samples}
            ids = self._benchmark_ids(conn, set(keys.values()))
            rows = [_series_row(run, b, s, result_id, ids[keys[b, s]], summaries.get((b, s)))
                    for (b, s) in sorted(run.samples)]
            if rows:
                conn.execute(schema.metadata.tables["series"].insert(), [storable_row(r) for r in rows])
        return uid, True

    def add_confirmations(self, machine: Machine, found: Iterable[tuple[BenchmarkKey, Confirmation]]) -> None:
        """Record what ``confirm`` found, one row per benchmark, in one transaction."""
        found = list(found)
        with translated_errors(self.url, "recording the confirmation"), self._write() as conn, conn.begin():
            machine_id = self._machine_id(conn, machine)
            ids = self._benchmark_ids(conn, {key for key, _ in found})
            table = schema.metadata.tables["confirmations"]
            conn.execute(table.insert(), [storable_row({
                "machine_id": machine_id, "benchmark_id": ids[key], "before_commit": c.before,
                "after_commit": c.after, "status": c.status, "verdict": c.verdict, "effect": c.effect,
                "effect_low": c.effect_low, "effect_high": c.effect_high, "result_uid": c.result_uid,
                "confirmed_at": c.confirmed_at}) for key, c in found])

    def _machine_id(self, conn, machine: Machine) -> int:
        table = schema.metadata.tables["machines"]
        conn.execute(_insert_ignoring(conn, table).values(**storable_row({
            "fingerprint": machine.fingerprint, "label": machine.label,
            "details": json.dumps(dict(machine.details), sort_keys=True)})))
        return conn.execute(table.select().with_only_columns(table.c.id)
                            .where(table.c.fingerprint == storable(machine.fingerprint))).scalar_one()

    def _insert_result(self, conn, run: Run, uid: str, machine_id: int, provenance: Provenance) -> int | None:
        table = schema.metadata.tables["results"]
        metadata = run.metadata()
        row = {"uid": uid, "kind": run.kind, "state": run.state, "started_at": run.started_at,
               "finished_at": run.finished_at, "stored_at": utc_now(), "tool_version": run.tool_version,
               "machine_id": machine_id, "commit_hash": provenance.commit, "commit_time": provenance.commit_time,
               "branch": provenance.branch, "dirty": provenance.dirty,
               "settings": json.dumps(metadata["settings"], sort_keys=True),
               "environment": zlib.compress(json.dumps(metadata["environment"], sort_keys=True).encode()),
               "notes": json.dumps(metadata["notes"]), "source": provenance.source}
        inserted = conn.execute(_insert_ignoring(conn, table).values(**storable_row(row))
                                .returning(table.c.id)).first()
        return inserted[0] if inserted else None

    def _benchmark_ids(self, conn, keys: set[BenchmarkKey]) -> dict[BenchmarkKey, int]:
        """Each benchmark's id, those the store does not know yet added (another writer may add one
        at the same moment: the insert ignores it, and the second look finds it)."""
        identity = {key: tuple(_benchmark_row(key).values()) for key in keys}
        found = self._known_benchmarks(conn, keys)
        missing = [dict(zip(("name", "params", "unit"), identity[key], strict=True))
                   for key in sorted(keys) if identity[key] not in found]
        if missing:
            conn.execute(_insert_ignoring(conn, schema.metadata.tables["benchmarks"]), missing)
            found = self._known_benchmarks(conn, keys)
        return {key: found[identity[key]] for key in keys}

    def _known_benchmarks(self, conn, keys: set[BenchmarkKey]) -> dict[tuple, int]:
        table = schema.metadata.tables["benchmarks"]
        rows = conn.execute(table.select().where(table.c.name.in_({storable(key.name) for key in keys}))).all()
        return {(r.name, r.params, r.unit): r.id for r in rows}

    # ------------------------------------------------------------------ reading

    def machines(self) -> list[StoredMachine]:
        """Every machine with the number of results measured on it, most results first."""
        from sqlalchemy import func, select

        if self.version == 0:
            return []
        machines, results = (schema.metadata.tables[name] for name in ("machines", "results"))
        query = (select(machines.c.id, machines.c.fingerprint, machines.c.label, func.count(results.c.id))
                 .select_from(machines.outerjoin(results, results.c.machine_id == machines.c.id))
                 .group_by(machines.c.id, machines.c.fingerprint, machines.c.label))
        rows = self._rows(query, "listing the machines", (_count, "machines.id"), (_text, "machines.fingerprint"),
                          (_text, "machines.label"), (_count, "the results of a machine"))
        return sorted((StoredMachine(*row) for row in rows), key=lambda m: (-m.results, m.id))

    def benchmarks(self, machine_id: int) -> list[StoredBenchmark]:
        """The benchmarks with a series in the history of ``machine_id``, by key. Each is looked for
        through its own series (an index), never by counting a million rows."""
        from sqlalchemy import exists, select

        benchmarks, series, results = (schema.metadata.tables[n] for n in ("benchmarks", "series", "results"))
        measured_here = exists(select(series.c.id).select_from(
            series.join(results, results.c.id == series.c.result_id)).where(
            series.c.benchmark_id == benchmarks.c.id, results.c.machine_id == machine_id,
            series.c.role.in_(HISTORY_ROLES)))
        query = select(benchmarks.c.id, benchmarks.c.name, benchmarks.c.params, benchmarks.c.unit).where(
            measured_here)
        rows = self._rows(query, "listing the benchmarks", (_count, "benchmarks.id"), (_text, "benchmarks.name"),
                          (_text, "benchmarks.params"), (_text, "benchmarks.unit"))
        try:
            found = [StoredBenchmark(r[0], _key(r[1], r[2], r[3])) for r in rows]
        except ValueError as exc:
            raise StoreError(f"{self.url.shown}: {exc}; was the store written by another program?") from None
        return sorted(found, key=lambda b: b.key)

    def series(self, machine_id: int, benchmark: StoredBenchmark, branch: str | None = None) -> Series:
        """The history of ``benchmark`` on ``machine_id`` (see :class:`Series`), of one ``branch``
        when given."""
        from sqlalchemy import func, select

        series, results = (schema.metadata.tables[n] for n in ("series", "results"))
        order = func.coalesce(results.c.commit_time, results.c.started_at)
        query = (select(results.c.uid, results.c.commit_hash, results.c.commit_time, results.c.branch,
                        results.c.dirty, results.c.started_at, series.c.median, series.c.median_low,
                        series.c.median_high, series.c.n, *((series.c.metric,) if self.version >= 4 else ()))
                 .select_from(series.join(results, results.c.id == series.c.result_id))
                 .where(series.c.benchmark_id == benchmark.id, results.c.machine_id == machine_id,
                        series.c.role.in_(HISTORY_ROLES))
                 .order_by(order, results.c.started_at, results.c.id, series.c.id))
        if branch is not None:
            query = query.where(results.c.branch == storable(branch))
        rows = self._rows(query, f"reading the history of {benchmark.key.label}", (_text, "results.uid"),
                          (_optional_text, "results.commit_hash"), (_optional_text, "results.commit_time"),
                          (_optional_text, "results.branch"), (_optional_flag, "results.dirty"),
                          (_text, "results.started_at"), (_optional_number, "series.median"),
                          (_optional_number, "series.median_low"), (_optional_number, "series.median_high"),
                          (_count, "series.n"), *(((_optional_text, "series.metric"),) if self.version >= 4 else ()))
        columns = list(zip(*rows, strict=True)) if rows else [()] * 11
        metrics = tuple(m or LEGACY_METRIC for m in columns[10]) if len(columns) > 10 else (LEGACY_METRIC,) * len(rows)

        def floats(values) -> np.ndarray:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        return Series(benchmark, *(tuple(c) for c in columns[:6]), floats(columns[6]), floats(columns[7]),
                      floats(columns[8]), np.array(columns[9], dtype=np.int64), metrics)

    def confirmations(self, machine_id: int, benchmark_ids: Iterable[int]) -> list[Confirmation]:
        """What ``confirm`` recorded for these benchmarks on ``machine_id``, oldest first (none in a
        store of a schema before confirmations, read as it is)."""
        if self.version < 2:
            return []
        table = schema.metadata.tables["confirmations"]
        query = (table.select().with_only_columns(
            table.c.benchmark_id, table.c.before_commit, table.c.after_commit, table.c.status, table.c.verdict,
            table.c.effect, table.c.effect_low, table.c.effect_high, table.c.result_uid, table.c.confirmed_at)
                 .where(table.c.machine_id == machine_id, table.c.benchmark_id.in_(list(benchmark_ids)))
                 .order_by(table.c.confirmed_at, table.c.id))
        rows = self._rows(query, "reading the confirmations", (_count, "confirmations.benchmark_id"),
                          (_text, "confirmations.before_commit"), (_text, "confirmations.after_commit"),
                          (_status, "confirmations.status"), (_text, "confirmations.verdict"),
                          (_optional_number, "confirmations.effect"), (_optional_number, "confirmations.effect_low"),
                          (_optional_number, "confirmations.effect_high"),
                          (_optional_text, "confirmations.result_uid"), (_text, "confirmations.confirmed_at"))
        return [Confirmation(*row) for row in rows]

    def samples(self, uid: str, benchmark: StoredBenchmark) -> dict[str, Samples]:
        """The raw samples of ``benchmark`` in the result ``uid``, by side."""
        series, results = (schema.metadata.tables[n] for n in ("series", "results"))
        query = (series.select().with_only_columns(series.c.side, series.c.samples)
                 .select_from(series.join(results, results.c.id == series.c.result_id))
                 .where(results.c.uid == uid, series.c.benchmark_id == benchmark.id))
        rows = self._rows(query, f"reading the samples of {uid[:12]}", (_text, "series.side"),
                          (_blob, "series.samples"))
        try:
            return {side: codec.decode(blob) for side, blob in rows}
        except ValueError as exc:
            raise StoreError(f"{self.url.shown}: the samples of {benchmark.key.label} in result {uid[:12]} "
                             f"cannot be read: {exc}") from None

    def _rows(self, query, doing: str, *columns: tuple) -> list[tuple]:
        """The rows ``query`` reads, each value checked by its column's (check, name) in ``columns``:
        a value pairbench never writes (text where a number belongs, a negative count, an infinite
        median) is a ``StoreError`` naming the column, not a crash further on."""
        try:
            with translated_errors(self.url, doing), self._engine.connect() as conn:
                rows = conn.execute(query).all()  # a driver's conversion may fail (TypeError: text as a blob)
            return [tuple(check(value, name) for (check, name), value in zip(columns, row, strict=True))
                    for row in rows]
        except _StoredValueError as exc:
            raise StoreError(f"{self.url.shown}: {exc}, which pairbench never writes there; was the store "
                             "written by another program?") from None
        except (TypeError, ValueError) as exc:  # the driver could not convert a value to its column's type
            raise StoreError(f"{self.url.shown}: a row read while {doing} holds a value of the wrong type "
                             f"({exc}); was the store written by another program?") from None


def _series_row(run: Run, b: int, s: int, result_id: int, benchmark_id: int,
                summary: SeriesSummary | None) -> dict:
    samples = run.samples[(b, s)]
    side = run.sides[s]
    summary = summary or SeriesSummary(n=0)
    return {"result_id": result_id, "benchmark_id": benchmark_id, "side": side.name, "role": side.label,
            "command": side.command.text, "n": summary.n, "n_failed": summary.n_failed,
            "median": summary.median, "median_low": summary.median_low, "median_high": summary.median_high,
            "mean": summary.mean, "metric": summary.metric, "samples": codec.encode(samples)}
