"""The links of a paired history in the store: what ``pairbench record`` measured of a commit
against its predecessor or the window's anchor, in interleaved rounds, per benchmark and machine.

A link row holds what the analysis of the record's raw samples said (the effect, its anytime-valid
interval at the level the record used, the p-value of "no change", the metric and the rounds); the
raw samples themselves are the stored result it names (``result_uid``), so nothing measured is lost
and any link can be analysed again. :class:`LinkRows` is the part of ``store.history.Store`` that
reads and writes them (kept here so each module owns one thing).
"""

from __future__ import annotations

from collections.abc import Iterable

from pairbench.environment.fingerprint import Machine
from pairbench.errors import StoreError
from pairbench.frozen import frozen
from pairbench.model import METRICS, BenchmarkKey
from pairbench.store import rows as values
from pairbench.store import schema
from pairbench.store.database import translated_errors

LINK_KINDS = ("predecessor", "anchor")
LINK_METRICS = METRICS  # the one list of what a comparison decides on
RECORD_SOURCE = "record"  # the source of a result ``pairbench record`` stored


@frozen
class Link:
    """What ``record`` measured of commit ``after`` against ``before`` (its predecessor, or the
    window's anchor: ``kind``) for one benchmark, in interleaved rounds: the paired effect in
    percent with its anytime-valid interval at error rate ``level`` and the p-value of "no change",
    on ``metric``; ``result_uid`` is the stored result that holds both sides' raw samples."""

    benchmark_id: int
    result_uid: str
    kind: str  # LINK_KINDS
    before: str
    after: str
    after_time: str | None
    branch: str | None
    commits: int | None  # first-parent commits after ``before`` up to ``after``; None: unknown
    metric: str  # LINK_METRICS
    rounds: int
    level: float
    effect: float | None
    effect_low: float | None
    effect_high: float | None
    pvalue: float
    recorded_at: str
    threshold: float | None = None  # percent: the smallest change that matters, as the record judged it
    alpha: float | None = None  # false steps per commit of the suite the record allowed (``level``: split)


class LinkRows:
    """Links written and read by the history store (mixed into ``store.history.Store``)."""

    def add_links(self, machine: Machine, found: Iterable[tuple[BenchmarkKey, Link]]) -> int:
        """Record what ``record`` measured, one row per benchmark and kind, in one transaction (a
        link stored before is kept once); how many rows were new."""
        found = list(found)
        if not found:
            return 0
        with translated_errors(self.url, "recording the links"), self._write() as conn, conn.begin():
            machine_id = self._machine_id(conn, machine)
            ids = self._benchmark_ids(conn, {key for key, _ in found})
            table = schema.metadata.tables["links"]
            added = 0
            for key, link in found:
                row = values.storable_row({
                    "machine_id": machine_id, "benchmark_id": ids[key], "result_uid": link.result_uid,
                    "kind": link.kind, "before_commit": link.before, "after_commit": link.after,
                    "after_time": link.after_time, "branch": link.branch, "commits": link.commits,
                    "metric": link.metric, "rounds": link.rounds, "level": link.level, "effect": link.effect,
                    "effect_low": link.effect_low, "effect_high": link.effect_high, "pvalue": link.pvalue,
                    "recorded_at": link.recorded_at, "threshold": link.threshold, "alpha": link.alpha})
                inserted = conn.execute(values._insert_ignoring(conn, table).values(**row).returning(table.c.id)).first()
                added += inserted is not None  # a driver's rowcount after ON CONFLICT is not to be trusted
        return added

    def links(self, machine_id: int, benchmark_ids: Iterable[int], branch: str | None = None) -> list[Link]:
        """What ``record`` measured of these benchmarks on ``machine_id`` (of one ``branch`` when
        given), in the order of the later commit's time, then of recording (none in a store of a
        schema before links, read as it is)."""
        if self.version < 3:
            return []
        table = schema.metadata.tables["links"]
        c = table.c
        judged_by = (c.threshold, c.alpha) if self.version >= 4 else ()  # a version 3 store has none
        query = (table.select().with_only_columns(
            c.benchmark_id, c.result_uid, c.kind, c.before_commit, c.after_commit, c.after_time, c.branch,
            c.commits, c.metric, c.rounds, c.level, c.effect, c.effect_low, c.effect_high, c.pvalue,
            c.recorded_at, *judged_by).where(c.machine_id == machine_id, c.benchmark_id.in_(list(benchmark_ids)))
                 .order_by(c.after_time, c.recorded_at, c.id))
        if branch is not None:
            query = query.where(c.branch == values.storable(branch))
        rows = self._rows(query, "reading the links", (values._count, "links.benchmark_id"), (values._text, "links.result_uid"),
                          (_choice(LINK_KINDS), "links.kind"), (values._text, "links.before_commit"),
                          (values._text, "links.after_commit"), (values._optional_text, "links.after_time"),
                          (values._optional_text, "links.branch"), (_optional_count, "links.commits"),
                          (_choice(LINK_METRICS), "links.metric"), (values._count, "links.rounds"),
                          (_probability, "links.level"), (values._optional_number, "links.effect"),
                          (values._optional_number, "links.effect_low"), (values._optional_number, "links.effect_high"),
                          (_probability, "links.pvalue"), (values._text, "links.recorded_at"),
                          *(((_threshold, "links.threshold"), (_optional_probability, "links.alpha"))
                            if judged_by else ()))
        return [Link(*row) for row in rows]

    def link_samples(self, uid: str) -> list[tuple[BenchmarkKey, str, str, object]]:
        """The raw samples a link rests on: every series of the result ``uid`` (a record's: the
        predecessor, the commit and the anchor it measured in the same rounds), as (benchmark,
        side, role, ``model.Samples``). A whole command's series is keyed by its side's name."""
        from sqlalchemy import select

        from pairbench.store import codec

        benchmarks, series, results = (schema.metadata.tables[n] for n in ("benchmarks", "series", "results"))
        query = (select(benchmarks.c.name, benchmarks.c.params, benchmarks.c.unit, series.c.side, series.c.role,
                        series.c.samples)
                 .select_from(series.join(results, results.c.id == series.c.result_id)
                              .join(benchmarks, benchmarks.c.id == series.c.benchmark_id))
                 .where(results.c.uid == uid).order_by(series.c.id))
        rows = self._rows(query, f"reading the samples of {uid[:12]}", (values._text, "benchmarks.name"),
                          (values._text, "benchmarks.params"), (values._text, "benchmarks.unit"),
                          (values._text, "series.side"), (values._text, "series.role"), (values._blob, "series.samples"))
        try:
            return [(values._key(name, params, unit), side, role, codec.decode(blob))
                    for name, params, unit, side, role, blob in rows]
        except ValueError as exc:
            raise StoreError(f"{self.url.shown}: the samples of result {uid[:12]} cannot be read: {exc}") from None

    def link_benchmarks(self, machine_id: int) -> list[values.StoredBenchmark]:
        """The benchmarks with a link on ``machine_id``, by key."""
        from sqlalchemy import exists, select

        if self.version < 3:
            return []
        benchmarks, links = (schema.metadata.tables[n] for n in ("benchmarks", "links"))
        linked = exists(select(links.c.id).where(links.c.benchmark_id == benchmarks.c.id,
                                                 links.c.machine_id == machine_id))
        query = select(benchmarks.c.id, benchmarks.c.name, benchmarks.c.params, benchmarks.c.unit).where(linked)
        rows = self._rows(query, "listing the linked benchmarks", (values._count, "benchmarks.id"),
                          (values._text, "benchmarks.name"), (values._text, "benchmarks.params"), (values._text, "benchmarks.unit"))
        try:
            found = [values.StoredBenchmark(r[0], values._key(r[1], r[2], r[3])) for r in rows]
        except ValueError as exc:
            raise StoreError(f"{self.url.shown}: {exc}; was the store written by another program?") from None
        return sorted(found, key=lambda b: b.key)

    def last_recorded(self, machine_id: int, branch: str | None) -> str | None:
        """The commit of the latest result ``record`` stored on ``machine_id`` for ``branch`` (any
        branch when None): the predecessor of the next record; None when there is none."""
        from sqlalchemy import func, select

        if self.version == 0:
            return None
        results = schema.metadata.tables["results"]
        query = (select(results.c.commit_hash)
                 .where(results.c.machine_id == machine_id, results.c.source == RECORD_SOURCE,
                        results.c.commit_hash.is_not(None))
                 .order_by(func.coalesce(results.c.commit_time, results.c.started_at).desc(),
                           results.c.started_at.desc(), results.c.id.desc()).limit(1))
        if branch is not None:
            query = query.where(results.c.branch == values.storable(branch))
        rows = self._rows(query, "finding the last record", (values._text, "results.commit_hash"))
        return rows[0][0] if rows else None

    def machine_id(self, machine: Machine) -> int | None:
        """The id of ``machine`` in the store, None when it has stored nothing."""
        if self.version == 0:
            return None
        for stored in self.machines():
            if stored.fingerprint == values.storable(machine.fingerprint):
                return stored.id
        return None


def _optional_count(value, name: str) -> int | None:
    return None if value is None else values._count(value, name)


def _threshold(value, name: str) -> float | None:
    number = values._optional_number(value, name)
    if number is not None and not 0.0 <= number < 100.0:
        raise values._refused(value, name, "a threshold in percent, from 0 up to 100")
    return number


def _optional_probability(value, name: str) -> float | None:
    return None if value is None else _probability(value, name)


def _probability(value, name: str) -> float:
    number = values._optional_number(value, name)
    if number is None or not 0.0 <= number <= 1.0:
        raise values._refused(value, name, "a probability")
    return number


def _choice(allowed: tuple[str, ...]):
    def check(value, name: str) -> str:
        if value not in allowed:
            raise values._refused(value, name, f"one of {', '.join(allowed)}")
        return value
    return check


