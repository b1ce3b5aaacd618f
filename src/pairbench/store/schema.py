"""The history store's tables, versioned, and the migrations from each version to the next.

Schema history (the ``schema_version`` table holds the version of a store):
    1  (pairbench 0.3) ``machines`` (fingerprint, label, details), ``benchmarks`` (name,
       params, unit), ``results`` (one per run: commit, branch, dirty, machine, settings,
       environment, notes), ``series`` (one per benchmark and side of a result: role,
       summary for queries, raw samples compressed by ``store.codec``).
    2  (pairbench 0.3) ``confirmations``: what ``pairbench confirm`` found of the step
       between two commits, per benchmark and machine.
    3  (pairbench 0.4) ``links``: what ``pairbench record`` measured of a commit against another in
       the same interleaved rounds, per benchmark and machine: its predecessor (kind
       ``predecessor``) or the window's anchor (kind ``anchor``), the metric, the rounds, the paired
       effect with its anytime-valid interval and p-value; the raw samples are the result
       ``result_uid`` (its series), stored beside it.

A store is migrated when it is opened, in one transaction that holds the
store's lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so two
writers that open a new store at once create it once. A store of a newer
version than this pairbench knows is refused, never altered.

Each version's tables are declared once, by the function that adds them, so
the tables of a migrated store and of a new one are the same declarations
(``tests/store/test_migrations.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection


def _version_1(metadata: MetaData) -> list[Table]:
    machines = Table(
        "machines", metadata,
        Column("id", Integer, primary_key=True),
        Column("fingerprint", Text, nullable=False, unique=True),
        Column("label", Text, nullable=False),
        Column("details", Text, nullable=False),  # JSON: what the fingerprint was computed from
    )
    benchmarks = Table(
        "benchmarks", metadata,
        Column("id", Integer, primary_key=True),
        Column("name", Text, nullable=False),
        Column("params", Text, nullable=False),  # JSON object, keys sorted
        Column("unit", Text, nullable=False),
        UniqueConstraint("name", "params", "unit", name="benchmarks_identity"),
    )
    results = Table(
        "results", metadata,
        Column("id", Integer, primary_key=True),
        Column("uid", Text, nullable=False, unique=True),  # content hash: one result is stored once
        Column("kind", Text, nullable=False),
        Column("state", Text, nullable=False),
        Column("started_at", Text, nullable=False),
        Column("finished_at", Text, nullable=False),
        Column("stored_at", Text, nullable=False),
        Column("tool_version", Text, nullable=False),
        Column("machine_id", Integer, ForeignKey("machines.id"), nullable=False),
        Column("commit_hash", Text),
        Column("commit_time", Text),
        Column("branch", Text),
        Column("dirty", Boolean),
        Column("settings", Text, nullable=False),  # JSON, as the result document stores them
        Column("environment", LargeBinary, nullable=False),  # zlib of the JSON metadata
        Column("notes", Text, nullable=False),  # JSON list of typed notes
        Column("source", Text, nullable=False),  # "measured" or the file it was imported from
    )
    Index("results_by_machine", results.c.machine_id, results.c.commit_time, results.c.started_at)
    series = Table(
        "series", metadata,
        Column("id", Integer, primary_key=True),
        Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
        Column("benchmark_id", Integer, ForeignKey("benchmarks.id"), nullable=False),
        Column("side", Text, nullable=False),
        Column("role", Text, nullable=False),  # "", "baseline", "candidate", "self-check"
        Column("command", Text, nullable=False),
        Column("n", Integer, nullable=False),
        Column("n_failed", Integer, nullable=False),
        Column("median", Float),  # the summary, for queries; verdicts come from the samples
        Column("median_low", Float),
        Column("median_high", Float),
        Column("mean", Float),
        Column("samples", LargeBinary, nullable=False),  # store.codec
    )
    Index("series_by_benchmark", series.c.benchmark_id, series.c.result_id)
    Index("series_by_result", series.c.result_id)
    return [machines, benchmarks, results, series]


def _version_2(metadata: MetaData) -> list[Table]:
    confirmations = Table(
        "confirmations", metadata,
        Column("id", Integer, primary_key=True),
        Column("machine_id", Integer, ForeignKey("machines.id"), nullable=False),
        Column("benchmark_id", Integer, ForeignKey("benchmarks.id"), nullable=False),
        Column("before_commit", Text, nullable=False),
        Column("after_commit", Text, nullable=False),
        Column("status", Text, nullable=False),  # confirmed, rejected, inconclusive
        Column("verdict", Text, nullable=False),
        Column("effect", Float),
        Column("effect_low", Float),
        Column("effect_high", Float),
        Column("result_uid", Text),  # the result of the paired re-measurement, stored beside
        Column("confirmed_at", Text, nullable=False),
    )
    Index("confirmations_by_benchmark", confirmations.c.machine_id, confirmations.c.benchmark_id)
    return [confirmations]


def _version_3(metadata: MetaData) -> list[Table]:
    links = Table(
        "links", metadata,
        Column("id", Integer, primary_key=True),
        Column("machine_id", Integer, ForeignKey("machines.id"), nullable=False),
        Column("benchmark_id", Integer, ForeignKey("benchmarks.id"), nullable=False),
        Column("result_uid", Text, nullable=False),  # the result holding both sides' raw samples
        Column("kind", Text, nullable=False),  # "predecessor" or "anchor"
        Column("before_commit", Text, nullable=False),
        Column("after_commit", Text, nullable=False),
        Column("after_time", Text),  # the later commit's committer time: the history's order
        Column("branch", Text),
        Column("commits", Integer),  # first-parent commits after before up to after (1: adjacent)
        Column("metric", Text, nullable=False),  # "wall" or "cpu": never mixed in one chain
        Column("rounds", Integer, nullable=False),
        Column("level", Float, nullable=False),  # the interval's error rate (1 - its confidence)
        Column("effect", Float),  # percent, after against before
        Column("effect_low", Float),
        Column("effect_high", Float),
        Column("pvalue", Float, nullable=False),  # anytime-valid p-value of "no change"
        Column("recorded_at", Text, nullable=False),
        UniqueConstraint("result_uid", "benchmark_id", "kind", name="links_identity"),
    )
    Index("links_by_benchmark", links.c.machine_id, links.c.benchmark_id)
    return [links]


VERSIONS: tuple[Callable[[MetaData], list[Table]], ...] = (_version_1, _version_2, _version_3)
CURRENT_VERSION = len(VERSIONS)


def tables_up_to(version: int) -> MetaData:
    """The tables of a store of ``version`` (0: none): every version's declarations up to it."""
    metadata = MetaData()
    Table("schema_version", metadata, Column("version", Integer, nullable=False))
    for declare in VERSIONS[:version]:
        declare(metadata)
    return metadata


metadata = tables_up_to(CURRENT_VERSION)
"""The tables of a store of the current version (what queries use)."""


def stored_version(conn: Connection) -> int:
    """The version of the store ``conn`` is connected to: 0 for an empty database; ``ValueError``
    when the ``schema_version`` table holds something no pairbench wrote."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    version = conn.execute(select(metadata.tables["schema_version"].c.version)).scalar()
    if version is None:
        return 0
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        shown = repr(version) if len(repr(version)) <= 40 else repr(version)[:37] + "..."
        raise ValueError(f"its schema_version holds {shown}, which no pairbench writes")
    return version


def migrate(conn: Connection, target: int = CURRENT_VERSION) -> int:
    """Bring the store to ``target``, in the caller's transaction; return the version found.

    A store newer than ``target`` is left as it is (the caller refuses it).
    """
    found = stored_version(conn)
    if found >= target:
        return found
    if found == 0:
        tables_up_to(0).tables["schema_version"].create(conn)
    for version in range(found + 1, target + 1):
        metadata_then = tables_up_to(version)
        for table in VERSIONS[version - 1](MetaData()):
            metadata_then.tables[table.name].create(conn)
    versions = tables_up_to(0).tables["schema_version"]
    conn.execute(versions.delete())
    conn.execute(versions.insert().values(version=target))
    return found


def lock_for_migration(conn: Connection) -> None:
    """Serialise migrations between writers: PostgreSQL's transaction-scoped advisory lock (SQLite's
    writers are already serialised by ``BEGIN IMMEDIATE``)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_KEY})


ADVISORY_KEY = 0x70616972  # "pair": the advisory lock pairbench's migrations take
