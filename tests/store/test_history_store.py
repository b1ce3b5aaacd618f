"""The history store on a real SQLite file and a real PostgreSQL server: what a result keeps, once,
per machine, and how the store fails (unreachable, newer, locked, interrupted) without losing it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from history_runs import MACHINE_ENV, OTHER_ENV, commit, commit_hash, result, store_history
from store_runs import stored_run
from tools import commit_series, git

from pairbench.analysis import analyse
from pairbench.environment.fingerprint import machine_of
from pairbench.errors import StoreError
from pairbench.model import SAMPLE_COLUMNS
from pairbench.sessions.record import StoreTarget, record, summaries_of
from pairbench.store import schema
from pairbench.store.database import parse_url
from pairbench.store.history import Provenance, Store
from pairbench.store.project import Project
from pairbench.store.resultfile import read_result

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.mark.e2e
def test_a_result_keeps_its_commit_machine_settings_summaries_and_raw_samples(store_url):
    run = stored_run(n=7)
    provenance = Provenance("a" * 40, "2026-02-01T10:00:00+00:00", "main", True)
    with Store.open(store_url) as store:
        uid, added = store.add(run, summaries_of(run, analyse(run)), machine_of(MACHINE_ENV), provenance)
        [machine] = store.machines()
        [benchmark] = store.benchmarks(machine.id)
        series = store.series(machine.id, benchmark)
        samples = store.samples(uid, benchmark)
    assert added and machine.label == "Test CPU · 2 CPUs · x86_64" and machine.results == 1
    assert benchmark.key.label == "b"  # the candidate; the baseline is another build, kept but not shown
    assert (series.commit, series.branch, series.dirty) == (("a" * 40,), ("main",), (True,))
    assert series.median[0] == pytest.approx(2_003) and series.n.tolist() == [7]
    for column in SAMPLE_COLUMNS:
        assert np.array_equal(samples["b"][column], run.samples[(0, 1)][column])


@pytest.mark.e2e
def test_the_settings_and_environment_of_a_result_are_kept_as_its_document_holds_them(store_url):
    from sqlalchemy import create_engine, text

    run = stored_run()
    with Store.open(store_url) as store:
        store.add(run, {}, machine_of(MACHINE_ENV), Provenance())
    engine = create_engine(parse_url(store_url).url)
    with engine.connect() as conn:
        settings, state, source = conn.execute(text("SELECT settings, state, source FROM results")).one()
    engine.dispose()
    assert json.loads(settings) == run.settings.stored() and (state, source) == ("complete", "measured")


@pytest.mark.e2e
def test_a_result_stored_twice_is_kept_once(store_url):
    run = stored_run()
    with Store.open(store_url) as store:
        first = store.add(run, {}, machine_of(MACHINE_ENV), Provenance())
        second = store.add(run, {}, machine_of(MACHINE_ENV), Provenance())
        [machine] = store.machines()
    assert first[0] == second[0] and (first[1], second[1]) == (True, False) and machine.results == 1


def test_results_of_other_machines_are_kept_apart(tmp_path):
    with Store.open(f"sqlite:///{tmp_path / 'h.db'}") as store:
        store_history(store, [{"parse": 1e6}] * 3)
        store_history(store, [{"parse": 2e6}] * 2, environment=OTHER_ENV, seed=1)
        machines = {m.label.split(" ·")[0]: m for m in store.machines()}
        medians = {name: store.series(m.id, store.benchmarks(m.id)[0]).median for name, m in machines.items()}
    assert sorted(machines) == ["Other CPU", "Test CPU"]
    assert medians["Test CPU"].size == 3 and np.all(np.abs(medians["Test CPU"] / 1e6 - 1) < 0.01)
    assert medians["Other CPU"].size == 2 and np.all(np.abs(medians["Other CPU"] / 2e6 - 1) < 0.01)


def test_a_history_is_in_commit_order_whatever_the_order_results_arrived(tmp_path):
    with Store.open(f"sqlite:///{tmp_path / 'h.db'}") as store:
        for k in (2, 0, 1):
            run = result({"parse": 1e6 * (1 + k)}, k)
            store.add(run, summaries_of(run, analyse(run)), machine_of(MACHINE_ENV), commit(k))
        [machine] = store.machines()
        series = store.series(machine.id, store.benchmarks(machine.id)[0])
    assert series.commit == tuple(commit_hash(k) for k in range(3))
    assert np.allclose(series.median / 1e6, [1, 2, 3], rtol=0.01)


@pytest.mark.e2e
def test_a_commit_confirm_measured_again_is_one_point_of_its_history(store_url, tmp_path):
    """Four commits of a real repository, each measured once from its checkout, then ``confirm``'s
    re-measurement of the third recorded as confirm records it: four points, the third of two results."""
    from pairbench.analysis.history import points_of
    from pairbench.sessions.confirm import ConfirmSession
    from pairbench.sessions.record import provenance_here
    from pairbench.store.project import find_project

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pairbench.toml").write_text('[confirm]\nbuild = "true"\nbench = "bench"\n')
    # one committer time for every commit, as a script that commits quickly makes them
    commits = commit_series(repo, 4, "lib.c", lambda k: f"/* version {k} */\n", date="2026-02-01T00:00:00Z")
    project = find_project(repo)
    target = StoreTarget(parse_url(store_url), None, project)
    for k, sha in enumerate(commits):
        git(repo, "checkout", "-q", sha)
        run = result({"mix": 1000.0 * (1.1 if k >= 2 else 1.0)}, k)
        assert record(run, analyse(run), target, result_path=None, provenance=provenance_here(directory=str(repo))).added
    again = result({"mix": 1120.0}, 99)  # measured last, of the third commit
    provenance = ConfirmSession(project, commits[1], commits[2]).provenance()
    assert record(again, analyse(again), target, result_path=None, provenance=provenance).added
    with Store.open(store_url) as store:
        [machine] = store.machines()
        points = points_of(store.series(machine.id, store.benchmarks(machine.id)[0]))
    assert [p.commit for p in points] == commits
    assert [p.results for p in points] == [1, 1, 2, 1]
    assert points[2].median == pytest.approx(1105, rel=0.01)


def test_a_machine_named_by_the_user_is_one_machine_whatever_its_hardware():
    assert machine_of(MACHINE_ENV, "ci-large").fingerprint == machine_of(OTHER_ENV, "ci-large").fingerprint
    assert machine_of(MACHINE_ENV).fingerprint != machine_of(OTHER_ENV).fingerprint
    assert machine_of({**MACHINE_ENV, "host": "runner-123"}) == machine_of({**MACHINE_ENV, "host": "runner-9"})


# --------------------------------------------------------------------------- failures


def test_a_store_that_cannot_be_reached_is_named_without_its_password():
    with pytest.raises(StoreError) as caught:
        Store.open("postgresql://bench:s3cret@127.0.0.1:1/history")
    message = str(caught.value)
    assert "cannot reach the store" in message and "127.0.0.1:1/history" in message
    assert "s3cret" not in message and "***" in message


@pytest.mark.parametrize("url", ["mysql://u@h/db", "sqlite://", "sqlite:///:memory:", "   "])
def test_a_store_url_of_no_file_or_other_database_is_refused(url):
    with pytest.raises(StoreError, match="SQLite or PostgreSQL|in memory|empty"):
        parse_url(url)


@pytest.mark.e2e
def test_a_store_of_a_newer_schema_is_refused_and_left_as_it_is(store_url):
    from sqlalchemy import create_engine, text

    Store.open(store_url).close()
    engine = create_engine(parse_url(store_url).url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": schema.CURRENT_VERSION + 1})
    with pytest.raises(StoreError, match=rf"schema version {schema.CURRENT_VERSION + 1}, newer.*upgrade pairbench"):
        Store.open(store_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_version")).scalar() == schema.CURRENT_VERSION + 1
    engine.dispose()


def test_a_locked_sqlite_store_is_refused_after_its_busy_timeout_and_the_result_is_kept(tmp_path):
    path = tmp_path / "h.db"
    Store.open(f"sqlite:///{path}").close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer, in the middle of its transaction
    run = stored_run()
    target = StoreTarget(parse_url(f"sqlite:///{path}?timeout=0.2"), None, Project(tmp_path))
    try:
        recorded = record(run, analyse(run), target, result_path=None, provenance=Provenance())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "is locked by another process (waited 0.2 s)" in str(recorded.error)
    kept = Path(recorded.kept_in)
    assert kept.parent == tmp_path / ".pairbench" / "unstored"
    assert read_result(kept).samples[(0, 1)].columns["wall_ns"].tolist() == [2000, 2001, 2002, 2003, 2004]


def test_a_result_that_could_not_be_stored_is_pointed_to_in_its_result_file(tmp_path):
    run = stored_run()
    target = StoreTarget(parse_url("postgresql://u@127.0.0.1:1/h"), None, Project(tmp_path))
    recorded = record(run, analyse(run), target, result_path="r.json", provenance=Provenance())
    assert recorded.error is not None and recorded.kept_in == "r.json"


INTERRUPTED_WRITER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, sys.argv[2])
    from history_runs import MACHINE_ENV
    from store_runs import stored_run
    import pairbench.store.history as history
    from pairbench.environment.fingerprint import machine_of

    def killed(*args, **kwargs):  # the result's row is written, its series are not: die here
        os.kill(os.getpid(), signal.SIGKILL)

    history._series_row = killed
    with history.Store.open(sys.argv[1]) as store:
        store.add(stored_run(), {}, machine_of(MACHINE_ENV), history.Provenance())
""")


@pytest.mark.e2e
def test_a_write_killed_mid_transaction_leaves_nothing_of_its_result(store_url):
    Store.open(store_url).close()
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_WRITER, store_url, str(SUPPORT)],
                          capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL
    with Store.open(store_url) as store:
        assert store.machines() == [] or all(m.results == 0 for m in store.machines())
        run = stored_run()
        assert store.add(run, {}, machine_of(MACHINE_ENV), Provenance())[1]  # the store still works
        [machine] = store.machines()
        assert machine.results == 1 and len(store.series(machine.id, store.benchmarks(machine.id)[0])) == 1


CONCURRENT_WRITERS = textwrap.dedent("""
    import os, sys, traceback
    sys.path.insert(0, sys.argv[2])
    from history_runs import MACHINE_ENV, result
    from pairbench.environment.fingerprint import machine_of
    from pairbench.store.history import Provenance, Store

    def write(writer, count):
        with Store.open(sys.argv[1]) as store:
            for k in range(count):
                # every writer makes the shared benchmark and one of its own: both race on creation
                run = result({"shared": 1e6, f"own-{writer}": 2e6}, 1000 * writer + k, seed=writer)
                store.add(run, {}, machine_of(MACHINE_ENV), Provenance(f"{writer:020x}{k:020x}"))

    # the writers are processes forked once the modules are loaded (nothing of the store is open yet):
    # each opens its own connection, and all start at once, where eight interpreters importing
    # SQLAlchemy and numpy cost 3.4 s of CPU and started the race over 0.4 s
    writers, count = int(sys.argv[3]), int(sys.argv[4])
    children = []
    for w in range(writers):
        pid = os.fork()
        if pid == 0:
            try:
                write(w, count)
                code = 0
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        children.append(pid)
    failed = [w for w, pid in enumerate(children) if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
    sys.exit(f"writers {failed} failed" if failed else 0)
""")


@pytest.mark.slow
@pytest.mark.e2e
def test_eight_concurrent_writers_to_a_new_store_lose_nothing(store_url):
    writers, each = 8, 6
    done = subprocess.run([sys.executable, "-c", CONCURRENT_WRITERS, store_url, str(SUPPORT), str(writers), str(each)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    with Store.open(store_url) as store:
        [machine] = store.machines()
        benchmarks = {b.key.label: b for b in store.benchmarks(machine.id)}
        assert machine.results == writers * each
        assert sorted(benchmarks) == sorted(["shared", *(f"own-{w}" for w in range(writers))])
        assert len(store.series(machine.id, benchmarks["shared"])) == writers * each
        assert all(len(store.series(machine.id, benchmarks[f"own-{w}"])) == each for w in range(writers))


def test_a_benchmark_row_another_program_wrote_wrongly_is_a_store_error(tmp_path):
    path = tmp_path / "h.db"
    with Store.open(str(path)) as store:
        store_history(store, [{"parse": 1e6}])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE benchmarks SET params = '[1, 2'")
    with Store.open(str(path)) as store, pytest.raises(StoreError, match="'parse' is stored wrongly"):
        store.benchmarks(store.machines()[0].id)


def test_sqlite_stores_are_in_wal_mode_which_lets_readers_go_on_while_one_writes(tmp_path):
    path = tmp_path / "h.db"
    Store.open(str(path)).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_relative_sqlite_path_is_relative_to_the_base_given(tmp_path):
    assert parse_url("sqlite:///.pairbench/history.db", base=tmp_path).sqlite_path == \
        tmp_path / ".pairbench" / "history.db"
    assert parse_url("results.db", base=tmp_path).sqlite_path == tmp_path / "results.db"
    assert parse_url(f"sqlite:///{tmp_path}/h.db?timeout=2.5").busy_timeout_s == 2.5
    assert os.path.isabs(str(parse_url("h.db").sqlite_path))


def test_points_of_two_metrics_are_two_histories_never_one(tmp_path):
    """A benchmark recorded with --metric wall and then --metric cpu: history shows one history per
    metric, each with its own points, and says which."""
    from history_runs import commit
    from runs import make_run, series, side

    from pairbench.analysis import analyse
    from pairbench.environment.fingerprint import machine_of
    from pairbench.sessions.history import load_history
    from pairbench.sessions.record import summaries_of

    url = f"sqlite:///{tmp_path / 'h.db'}"
    with Store.open(url) as store:
        for k, metric in enumerate(["wall", "wall", "cpu", "cpu", "cpu"]):
            samples = series([2000 + k] * 9, user_ns=[1000 + k] * 9, sys_ns=[0] * 9)
            run = make_run("run", [side("work")], {(0, 0): samples}, runs=9, metric=metric,
                           environment={"cpu_model": "Test CPU", "machine": "x86_64"})
            run = run.replace(started_at=f"2026-01-01T00:00:0{k}+00:00")
            store.add(run, summaries_of(run, analyse(run)), machine_of(run.environment), commit(k))
    with Store.open(url, read_only=True) as store:
        [machine] = store.machines()
        found = load_history(store, machine, (), None)
    by_metric = {h.metric: h for h in found.histories}
    assert sorted(by_metric) == ["cpu", "wall"]
    assert [p.median for p in by_metric["wall"].points] == [2000.0, 2001.0]
    assert [p.median for p in by_metric["cpu"].points] == [1002.0, 1003.0, 1004.0]
