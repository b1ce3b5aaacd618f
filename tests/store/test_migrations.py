"""The store's schema: a new store and a migrated one have the same tables, and a store of version 1
(before confirmations) keeps its results when this pairbench opens it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from history_runs import MACHINE_ENV, result, store_history
from sqlalchemy import create_engine, inspect, text

from pairbench.environment.fingerprint import machine_of
from pairbench.model import BenchmarkKey
from pairbench.store import schema
from pairbench.store.database import parse_url
from pairbench.store.history import Confirmation, Link, Provenance, Store


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


@pytest.mark.e2e
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


@pytest.mark.e2e
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


def _link(before: str, after: str, uid: str, *, kind: str = "predecessor", effect: float = 2.0) -> Link:
    return Link(0, uid, kind, before, after, "2026-02-02T00:00:00+00:00", "main", 1, "cpu", 40, 5e-5,
                effect, effect - 0.5, effect + 0.5, 1e-6, "2026-02-02T00:00:01+00:00")


@pytest.mark.e2e
def test_a_version_2_store_keeps_its_confirmations_and_gains_links(store_url):
    _migrated_to(store_url, 2)
    machine = machine_of(MACHINE_ENV)
    with Store(parse_url(store_url)) as store:  # migrated to the current version on opening
        store_history(store, [{"parse": 1e6}, {"parse": 1.1e6}])
        [stored] = store.machines()
        [benchmark] = store.benchmarks(stored.id)
        uid = store.series(stored.id, benchmark).result_uid[1]
        added = store.add_links(machine, [(BenchmarkKey("parse"), _link("a" * 40, "b" * 40, uid)),
                                          (BenchmarkKey("parse"), _link("0" * 40, "b" * 40, uid, kind="anchor"))])
        again = store.add_links(machine, [(BenchmarkKey("parse"), _link("a" * 40, "b" * 40, uid))])
        links = store.links(stored.id, [benchmark.id])
        assert store.link_benchmarks(stored.id) == [benchmark]
    assert (added, again) == (2, 0)  # a link stored twice is kept once
    assert [(link.kind, link.metric, link.effect_low, link.result_uid) for link in links] == [
        ("predecessor", "cpu", 1.5, uid), ("anchor", "cpu", 1.5, uid)]


def test_a_store_read_only_before_links_reads_none(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    _migrated_to(url, 2)
    with Store(parse_url(url), read_only=True) as store:
        assert store.version == 2 and store.links(1, [1]) == [] and store.link_benchmarks(1) == []


def test_a_link_of_a_kind_no_pairbench_writes_is_refused_on_reading(tmp_path):
    from pairbench.errors import StoreError

    url = f"sqlite:///{tmp_path / 'h.db'}"
    with Store(parse_url(url)) as store:
        store_history(store, [{"parse": 1e6}])
        [stored] = store.machines()
        [benchmark] = store.benchmarks(stored.id)
        store.add_links(machine_of(MACHINE_ENV), [(BenchmarkKey("parse"), _link("a" * 40, "b" * 40, "u"))])
    engine = create_engine(parse_url(url).url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE links SET kind = 'sideways'"))
    engine.dispose()
    with Store(parse_url(url)) as store, pytest.raises(StoreError, match="links.kind holds 'sideways'"):
        store.links(stored.id, [benchmark.id])


@pytest.mark.e2e
def test_a_version_3_store_keeps_its_links_and_series_and_reads_them_as_judged_by_default(store_url):
    """Version 4 adds the threshold and rate of each link and the metric of each series: the rows of
    a version 3 store have none, and are read as wall-time points and links judged by the reader's
    threshold."""
    _migrated_to(store_url, 3)
    engine = create_engine(parse_url(store_url).url)
    v3 = schema.tables_up_to(3).tables
    with engine.begin() as conn:
        machine = conn.execute(v3["machines"].insert().values(fingerprint="f", label="m", details="{}")
                               .returning(v3["machines"].c.id)).scalar()
        bench = conn.execute(v3["benchmarks"].insert().values(name="parse", params="{}", unit="ns")
                             .returning(v3["benchmarks"].c.id)).scalar()
        conn.execute(v3["links"].insert().values(
            machine_id=machine, benchmark_id=bench, result_uid="u", kind="predecessor", before_commit="a" * 40,
            after_commit="b" * 40, metric="cpu", rounds=40, level=5e-5, effect=2.0, effect_low=1.5,
            effect_high=2.5, pvalue=1e-6, recorded_at="2026-02-02T00:00:01+00:00"))
    engine.dispose()
    with Store(parse_url(store_url)) as store:
        assert store.version == schema.CURRENT_VERSION == 4
        [link] = store.links(machine, [bench])
    assert (link.effect_low, link.threshold, link.alpha) == (1.5, None, None)
    again = _link("a" * 40, "c" * 40, "v")
    with Store(parse_url(store_url)) as store:
        store.add_links(machine_of(MACHINE_ENV), [(BenchmarkKey("parse"), replace(again, threshold=2.0, alpha=1e-3))])
        found = store.links(store.machine_id(machine_of(MACHINE_ENV)), [bench])
    assert [(x.threshold, x.alpha) for x in found] == [(2.0, 1e-3)]
