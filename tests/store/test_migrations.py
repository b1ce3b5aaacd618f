"""The store's schema: a new store and a migrated one have the same tables, and a store of version 1
(before confirmations) keeps its results when this pairbench opens it."""

from __future__ import annotations

import pytest
from history_runs import MACHINE_ENV, result, store_history
from sqlalchemy import create_engine, inspect, text

from pairbench.environment.fingerprint import machine_of
from pairbench.model import BenchmarkKey
from pairbench.store import schema
from pairbench.store.database import parse_url
from pairbench.store.history import Confirmation, Provenance, Store


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    return request.getfixturevalue("postgres_url")


def _tables(url: str) -> dict:
    """Each table's columns (name, type, nullable), its indexes and unique constraints, as the database has them."""
    engine = create_engine(parse_url(url).url)
    found = inspect(engine)
    tables = {name: ([(c["name"], str(c["type"]), c["nullable"]) for c in found.get_columns(name)],
                     sorted((i["name"], tuple(i["column_names"])) for i in found.get_indexes(name)),
                     sorted(tuple(u["column_names"]) for u in found.get_unique_constraints(name)))
              for name in found.get_table_names()}
    engine.dispose()
    return tables


def _migrated_to(url: str, version: int) -> None:
    engine = create_engine(parse_url(url).url)
    with engine.begin() as conn:
        schema.migrate(conn, version)
    engine.dispose()


def test_a_store_migrated_step_by_step_has_the_tables_of_a_new_one(store_url, tmp_path, request):
    _migrated_to(store_url, 1)
    _migrated_to(store_url, schema.CURRENT_VERSION)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}" if store_url.startswith("sqlite") else \
        request.getfixturevalue("postgres_server").database()
    engine = create_engine(parse_url(fresh).url)
    schema.metadata.create_all(engine)
    engine.dispose()
    assert _tables(store_url) == _tables(fresh)
    assert set(_tables(store_url)) == set(schema.metadata.tables)


def test_a_version_1_store_keeps_its_results_and_gains_confirmations(store_url):
    _migrated_to(store_url, 1)
    engine = create_engine(parse_url(store_url).url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_version")).scalar() == 1
        assert not inspect(conn).has_table("confirmations")
    engine.dispose()
    with Store(parse_url(store_url)) as store:  # opened by this pairbench: migrated to the current version
        store_history(store, [{"parse": 1e6}, {"parse": 1.1e6}])
        machine = machine_of(MACHINE_ENV)
        store.add_confirmations(machine, [(BenchmarkKey("parse"), Confirmation(
            0, "a" * 40, "b" * 40, "confirmed", "slower", 10.0, 9.0, 11.0, None, "2026-02-02T00:00:00+00:00"))])
        [stored] = store.machines()
        [benchmark] = store.benchmarks(stored.id)
        assert len(store.series(stored.id, benchmark)) == 2
        [confirmation] = store.confirmations(stored.id, [benchmark.id])
    assert confirmation.status == "confirmed" and confirmation.effect == 10.0


def test_a_version_1_store_with_results_is_migrated_without_losing_them(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    _migrated_to(url, 1)
    # a result written by the version-1 schema, through its own tables
    engine = create_engine(parse_url(url).url)
    v1 = schema.tables_up_to(1)
    run = result({"parse": 1e6}, 0)
    with engine.begin() as conn:
        conn.execute(v1.tables["machines"].insert().values(id=1, fingerprint=machine_of(MACHINE_ENV).fingerprint,
                                                            label="Test CPU", details="{}"))
        conn.execute(v1.tables["benchmarks"].insert().values(id=1, name="parse", params="{}", unit="ns"))
        conn.execute(v1.tables["results"].insert().values(
            id=1, uid="u1", kind="run", state="complete", started_at=run.started_at, finished_at="",
            stored_at="", tool_version="0.3.0", machine_id=1, settings="{}", environment=b"x", notes="[]",
            source="measured"))
        conn.execute(v1.tables["series"].insert().values(
            result_id=1, benchmark_id=1, side="parse", role="", command="parse", n=9, n_failed=0,
            median=1e6, samples=b""))
    engine.dispose()
    with Store(parse_url(url)) as store:
        [machine] = store.machines()
        assert machine.results == 1 and store.series(machine.id, store.benchmarks(machine.id)[0]).median[0] == 1e6
        uid, added = store.add(run, {}, machine_of(MACHINE_ENV), Provenance())
    assert added
