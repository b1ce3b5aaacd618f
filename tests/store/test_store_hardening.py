"""The history store against hostile URLs, configs, databases and rows (issue 26: G2, G3, G14, G15,
G20): a password is never shown, a URL or config that cannot be read is a usage or store error
(never exit 70), a database that is not pairbench's is left as it is, reading takes no lock and
changes nothing, and a name that was not UTF-8 is stored instead of lost."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from history_runs import store_history

from pairbench.environment.fingerprint import machine_of
from pairbench.errors import EXIT_RESULT_FILE, EXIT_USAGE
from pairbench.store.database import parse_url
from pairbench.store.history import Store

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "tests" / "report" / "data" / "compare.json"
SECRET = "S3cr3t"


@pytest.fixture(autouse=True)
def no_store_from_outside(monkeypatch, tmp_path):
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.delenv("PAIRBENCH_MACHINE", raising=False)
    monkeypatch.chdir(tmp_path)


def _no_crash(result) -> None:
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


# --------------------------------------------------------------------------- URLs and passwords (G3, G15)


@pytest.mark.parametrize("url", [
    f"postgresql://bench:{SECRET}-P@ss:Tail9@127.0.0.1:5432/bench",  # an @ the user forgot to encode
    f"postgresql://bench:{SECRET}@127.0.0.1:notaport/bench",
    f"postgresql://bench@127.0.0.1:1/bench?password={SECRET}",
    f"postgresql://bench@127.0.0.1:1/bench?sslpassword={SECRET}&password={SECRET}x",
    f"postgresql://host=127.0.0.1 password={SECRET} dbname=x",
    f"host=127.0.0.1 password={SECRET} dbname=x",
    f"mysql://bench:{SECRET}@db/bench?password={SECRET}",
])
@pytest.mark.parametrize("given", ["--store", "PAIRBENCH_STORE"])
def test_a_store_password_is_never_shown_and_a_bad_url_is_a_store_error(monkeypatch, url, given):
    if given == "PAIRBENCH_STORE":
        monkeypatch.setenv("PAIRBENCH_STORE", url)
    for command in (["store", "info"], ["history"], ["run", "--runs", "2", "true"]):
        result = invoke(*command, *(["--store", url] if given == "--store" else []))
        _no_crash(result)
        assert result.code == EXIT_RESULT_FILE, (command, result.err)
        assert SECRET not in result.err + result.out and "Tail9" not in result.err, result.err
        assert not any(Path().iterdir()), "a URL was taken for a file name"


def test_a_query_password_is_hidden_where_the_store_is_named():
    url = parse_url(f"postgresql://bench@db:5432/bench?password={SECRET}&sslmode=disable")
    assert SECRET not in url.shown and "password=***" in url.shown and "sslmode=disable" in url.shown
    assert SECRET in url.url and SECRET not in repr(url)
    assert url.scrubbed(f"connection failed: password {SECRET} rejected") == "connection failed: password *** rejected"


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "postgresql+psycopg2", "postgres+psycopg"])
def test_every_spelling_of_a_postgresql_url_is_a_postgresql_store(scheme):
    url = parse_url(f"{scheme}://u:pw@db:5433/bench")
    assert url.dialect == "postgresql" and url.url == "postgresql+psycopg://u:pw@db:5433/bench"
    result = invoke("store", "info", "--store", f"{scheme}://u:pw@127.0.0.1:1/bench")
    assert result.code == EXIT_RESULT_FILE and "cannot reach the store" in result.err
    _no_crash(result)


def test_a_store_url_from_a_checkout_config_shows_no_terminal_escapes(use_executor, tmp_path):
    use_executor()
    (tmp_path / ".git").mkdir()
    (tmp_path / "pairbench.toml").write_text('[store]\nurl = "\\u001b]0;PWNED\\u0007\\u001b[2Jx.db"\n')
    for command in (["store", "info"], ["run", "--runs", "2", "-q", "sleep 0.1"]):
        result = invoke(*command)
        assert result.code == 0, result.err
        assert "\x1b" not in result.out + result.err and "\\x1b]0;PWNED" in result.out + result.err


# --------------------------------------------------------------------------- configs (G15)


def test_a_config_nested_too_deeply_is_a_usage_error_naming_it(use_executor, tmp_path):
    use_executor()
    (tmp_path / ".git").mkdir()
    (tmp_path / "pairbench.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    for command in (["run", "--runs", "2", "true"], ["store", "info"]):
        result = invoke(*command)
        assert result.code == EXIT_USAGE and "pairbench.toml" in result.err and "nested" in result.err, result.err
        _no_crash(result)


# --------------------------------------------------------------------------- databases (G15, G20)


def _foreign_database(path: Path) -> bytes:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
        conn.execute("INSERT INTO accounts (owner) VALUES ('alice')")
    conn.close()
    return path.read_bytes()


def test_another_programs_database_is_refused_and_left_exactly_as_it_was(use_executor, tmp_path):
    use_executor()
    path = tmp_path / "app.db"
    before = _foreign_database(path)
    for command in (["store", "info"], ["history"], ["run", "--runs", "2", "true"],
                    ["store", "import", str(RESULT)]):
        result = invoke(*command, "--store", str(path))
        assert result.code == EXIT_RESULT_FILE and "another program's database" in result.err, result.err
        assert "accounts" in result.err and "nothing was changed" in result.err
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def _stored(path: Path) -> None:
    with Store.open(str(path)) as store:
        store_history(store, [{"parse": 1e6}, {"parse": 1.1e6}], environment=FIXED_ENVIRONMENT)


def test_reading_the_store_changes_no_file_and_creates_none(tmp_path):
    path = tmp_path / "h.db"
    _stored(path)
    before = path.read_bytes()
    for command in (["store", "info"], ["history"], ["history", "--format", "json"]):
        result = invoke(*command, "--store", str(path))
        assert result.code == 0, result.err
    assert path.read_bytes() == before
    assert {p.name for p in tmp_path.iterdir()} <= {"h.db", "h.db-wal", "h.db-shm"}  # SQLite's own, to read
    missing = tmp_path / "none" / "h.db"
    result = invoke("store", "info", "--store", str(missing))
    assert result.code == 0 and "no results yet" in result.out
    assert not (tmp_path / "none").exists()


def test_reading_the_store_does_not_wait_for_a_writer_in_the_middle_of_its_transaction(tmp_path):
    path = tmp_path / "h.db"
    _stored(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM series")  # not committed: readers see the store as it was
    try:
        url = f"sqlite:///{path}?timeout=0"  # any wait for the lock would fail at once
        info = invoke("store", "info", "--store", url)
        history = invoke("history", "parse", "--store", url)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert info.code == 0 and "2 result(s), 1 benchmark(s)" in info.out, info.err
    assert history.code == 0 and "parse" in history.out, history.err


def _as_unprivileged(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``pairbench ARGS`` run without the privileges that ignore file permissions: as root, with every
    capability dropped (so a file mode 0444 in a directory 0555 cannot be written)."""
    command = [sys.executable, "-m", "pairbench", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root's capabilities"
        command = [setpriv, "--inh-caps=-all", "--bounding-set=-all", *command]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_a_store_the_user_may_only_read_can_be_shown(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    path = directory / "h.db"
    _stored(path)
    fingerprint = machine_of(FIXED_ENVIRONMENT).fingerprint
    assert sorted(p.name for p in directory.iterdir()) == ["h.db"]  # a clean close leaves no -wal, -shm
    path.chmod(0o444)
    directory.chmod(0o555)
    try:
        info = _as_unprivileged(["store", "info", "--store", str(path)], tmp_path)
        history = _as_unprivileged(["history", "parse", "--machine", fingerprint, "--store", str(path)], tmp_path)
        written = _as_unprivileged(["store", "import", str(RESULT), "--store", str(path)], tmp_path)
    finally:
        directory.chmod(0o755)
        path.chmod(0o644)
    assert info.returncode == 0 and ": 2 result(s), 1 benchmark(s)" in info.stdout, info.stderr
    assert history.returncode == 0 and "parse" in history.stdout, history.stderr
    assert written.returncode == EXIT_RESULT_FILE and "internal error" not in written.stderr


@pytest.mark.parametrize(("statement", "problem"), [
    ("UPDATE schema_version SET version = 'abc'", "schema_version holds 'abc'"),
    ("UPDATE schema_version SET version = -5", "schema_version holds -5"),
    ("UPDATE series SET median = 'abc'", "series.median holds 'abc'"),
    ("UPDATE series SET n = 'abc'", "series.n holds 'abc'"),
    ("UPDATE series SET median = 9e999", "series.median holds inf"),
    ("UPDATE machines SET label = x'05'", "machines.label holds b'\\x05'"),
    ("UPDATE results SET commit_hash = x'07'", "results.commit_hash holds b'\\x07'"),
    ("UPDATE benchmarks SET name = x'00ff'", "benchmarks.name"),
])
def test_a_store_row_no_pairbench_wrote_is_a_store_error(tmp_path, statement, problem):
    path = tmp_path / "h.db"
    _stored(path)
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    conn.close()
    results = [invoke("store", "info", "--store", str(path)), invoke("history", "--store", str(path)),
               invoke("history", "--format", "json", "--store", str(path))]
    for result in results:
        _no_crash(result)
        assert result.code in (0, EXIT_RESULT_FILE), result.err
    refused = [r for r in results if r.code]
    assert refused and all(problem in r.err for r in refused), [r.err for r in refused]


def test_a_store_of_an_older_schema_is_read_as_it_is_and_migrated_only_by_a_writer(tmp_path):
    from sqlalchemy import create_engine

    from pairbench.store import schema

    path = tmp_path / "h.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        schema.migrate(conn, target=1)
    engine.dispose()
    with Store.open(str(path), read_only=True) as store:
        assert store.version == 1 and store.machines() == [] and store.confirmations(1, [1]) == []
    with Store.open(str(path)) as store:
        assert store.version == schema.CURRENT_VERSION


@pytest.mark.parametrize("port", ["99999999999999999999", "0", "-1", "１２３"])
def test_a_store_url_with_a_port_no_server_has_is_a_store_error(port):
    result = invoke("store", "info", "--store", f"postgresql://u:{SECRET}@127.0.0.1:{port}/db")
    assert result.code == EXIT_RESULT_FILE and SECRET not in result.err, result.err
    _no_crash(result)


# --------------------------------------------------------------------------- names that were not UTF-8 (G14)


def test_a_name_that_was_not_utf8_is_stored_and_shown_as_its_bytes(use_executor, tmp_path):
    use_executor()
    path = tmp_path / "h.db"
    result = invoke("run", "--runs", "3", "-n", "cmd\udcffname", "--store", str(path), "sleep 0.1")
    assert result.code == 0, result.err
    assert "stored in" in result.err and not (tmp_path / ".pairbench").exists()
    shown = invoke("history", "--store", str(path))
    assert shown.code == 0 and "cmd\\xffname" in shown.out, shown.err
    again = invoke("history", "cmd\udcffname", "--store", str(path))
    assert again.code == 0 and "cmd\\xffname" in again.out, again.err


def test_a_result_file_whose_path_was_not_utf8_is_stored(tmp_path):
    odd = tmp_path / "r\udcff.json"
    odd.write_bytes(RESULT.read_bytes())
    result = invoke("store", "import", str(odd), "--store", str(tmp_path / "h.db"))
    assert result.code == 0 and "1 of 1 file(s)" in result.err, result.err
