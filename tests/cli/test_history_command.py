"""``pairbench history``, ``store import`` and ``--store``: results kept with their commits, shown as
trends with their change points, in every format; and the errors users meet."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from fakes import FakeExecutor
from golden import assert_golden
from history_runs import commit_hash, store_history

from pairbench.environment.fingerprint import machine_of
from pairbench.model import BenchmarkKey
from pairbench.store.history import Confirmation, Store

GOLDEN = Path(__file__).resolve().parent / "golden"


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-02-01T10:00:00Z",
           "GIT_COMMITTER_DATE": "2026-02-01T10:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A git repository with one commit on main, as the working directory."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "app.txt").write_text("1\n")
    _git(tmp_path, "add", "app.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.delenv("PAIRBENCH_MACHINE", raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A store with 50 commits of two benchmarks on the fixed machine: parse 10% slower from commit 30
    (read, never written, by the tests that use it)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('stored') / 'history.db'}"
    medians = [{"parse": 1e6 * (1.1 if k >= 30 else 1.0) * (1 + 0.004 * ((k * 7) % 5 - 2)),
                "sort": 2.5e5 * (1 + 0.004 * ((k * 3) % 5 - 2))} for k in range(50)]
    with Store.open(url) as store:
        store_history(store, medians, environment=FIXED_ENVIRONMENT)
    return url


def test_history_shows_each_benchmark_its_steps_and_the_change_points(stored):
    code, out, err = invoke("history", "--store", stored)
    assert code == 0, err
    assert_golden(GOLDEN / "history.txt", out)


def test_history_as_json_lists_the_change_points_with_their_commits(stored):
    code, out, _ = invoke("history", "--store", stored, "--format", "json")
    document = json.loads(out)
    [change] = document["change_points"]
    assert document["format"] == "pairbench.history/1"
    assert (change["before"], change["after"]) == (commit_hash(29), commit_hash(30))
    [step] = change["benchmarks"]
    assert step["benchmark"] == "parse" and step["low_pct"] < 10 < step["high_pct"] and step["status"] == "unconfirmed"
    parse = next(b for b in document["benchmarks"] if b["label"] == "parse")
    assert len(parse["points"]) == 50 and parse["points"][0]["commit"] == commit_hash(0)


def test_history_as_markdown_csv_and_html(stored, tmp_path):
    code, out, _ = invoke("history", "--store", stored, "--format", "markdown")
    assert code == 0
    assert_golden(GOLDEN / "history.md", out)
    code, out, _ = invoke("history", "--store", stored, "parse", "--format", "csv")
    rows = out.splitlines()
    assert rows[0].startswith("benchmark,unit,commit,") and len(rows) == 51
    assert rows[31].split(",")[11:16] == ["1", *rows[31].split(",")[12:15], "unconfirmed"]
    code, _, err = invoke("history", "--store", stored, "-o", str(tmp_path / "h.html"))
    page = (tmp_path / "h.html").read_text()
    assert code == 0 and "Report written to" in err
    assert "default-src &#39;none&#39;" in page and '"trend-0"' in page and "1: +10.0%" in page


def test_history_of_a_benchmark_with_no_data_here_names_what_there_is(stored):
    code, _, err = invoke("history", "--store", stored, "parsing")
    assert code == 4
    assert "no results of benchmark 'parsing' on machine Example CPU" in err and "it has: parse, sort" in err


def test_history_of_another_machine_is_asked_for_by_name_or_fingerprint(stored):
    code, _, err = invoke("history", "--store", stored, environment={**FIXED_ENVIRONMENT, "cpu_model": "Other"})
    assert code == 4 and "has no results of this machine" in err and "Example CPU" in err
    fingerprint = err.split("it has: ")[1].split(" ")[0]
    code, out, _ = invoke("history", "--store", stored, "--machine", fingerprint[:6], "sort",
                          environment={**FIXED_ENVIRONMENT, "cpu_model": "Other"})
    assert code == 0 and out.startswith("pairbench history · 1 benchmark(s)")


def test_history_of_one_branch_leaves_the_others_out(stored):
    code, out, _ = invoke("history", "--store", stored, "sort", "--branch", "main")
    assert code == 0 and "sort · wall time · 50 commit(s)" in out
    code, out, _ = invoke("history", "--store", stored, "sort", "--branch", "feature")
    assert code == 0 and "sort ·" not in out and "No change points." in out


def test_history_of_an_empty_store_says_so(tmp_path):
    code, out, _ = invoke("history", "--store", str(tmp_path / "new.db"))
    assert code == 0 and out.startswith("No results yet in ") and "--machine" not in out
    assert not (tmp_path / "new.db").exists()  # reading created nothing


@pytest.mark.e2e
def test_history_in_a_new_project_whose_store_does_not_exist_says_no_results_yet(repository):
    (repository / "pairbench.toml").write_text('[store]\nurl = "sqlite:///.pairbench/history.db"\n')
    code, out, err = invoke("history")
    assert (code, err) == (0, "") and "No results yet in sqlite:///" in out and "Give --machine" not in out
    code, out, err = invoke("history", "--format", "json")
    assert code == 0 and json.loads(out)["benchmarks"] == [] and "No results yet" in err  # an empty history


# --------------------------------------------------------------------------- --store on run and compare


def _open_series(url: str):
    with Store.open(url) as store:
        [machine] = store.machines()
        return {b.key.label: store.series(machine.id, b) for b in store.benchmarks(machine.id)}


@pytest.mark.e2e
def test_run_with_a_store_keeps_the_result_with_its_commit_branch_and_dirtiness(repository, use_executor):
    use_executor(FakeExecutor())
    head = _git(repository, "rev-parse", "HEAD")
    code, _, err = invoke("run", "--runs", "5", "--store", "h.db", "--name", "nap", "sleep 0.1")
    assert code == 0 and "stored in sqlite:///" in err
    (repository / "app.txt").write_text("2\n")
    use_executor(FakeExecutor())  # an executor serves one session
    invoke("run", "--runs", "5", "--store", "h.db", "--name", "nap", "sleep 0.2")
    series = _open_series(str(repository / "h.db"))["nap"]
    assert series.commit == (head, head) and series.branch == ("main", "main") and series.dirty == (False, True)
    assert series.commit_time == ("2026-02-01T10:00:00+00:00",) * 2
    assert series.median.tolist() == [1e8, 2e8]


@pytest.mark.e2e
def test_compare_keeps_the_candidates_in_the_history_and_the_baseline_beside(repository, use_executor):
    use_executor(FakeExecutor())
    code, _, _ = invoke("compare", "--runs", "6", "--store", "h.db", "-n", "old", "-n", "new", "sleep 0.1",
                        "sleep 0.2")
    assert code == 0 and sorted(_open_series(str(repository / "h.db"))) == ["new"]


@pytest.mark.e2e
def test_the_project_config_turns_storing_on_and_no_store_turns_it_off(repository, use_executor):
    use_executor(FakeExecutor())
    (repository / "pairbench.toml").write_text('[store]\nurl = "sqlite:///.pairbench/history.db"\n')
    (repository / "sub").mkdir()
    os.chdir(repository / "sub")  # a relative URL is the project's, wherever pairbench runs in it
    code, _, err = invoke("run", "--runs", "5", "sleep 0.1")
    assert code == 0 and f"stored in sqlite:///{repository / '.pairbench' / 'history.db'}" in err
    use_executor(FakeExecutor())
    code, _, err = invoke("run", "--runs", "5", "--no-store", "sleep 0.1")
    assert code == 0 and "stored" not in err
    assert len(_open_series(str(repository / ".pairbench" / "history.db"))["sleep 0.1"]) == 1


@pytest.mark.e2e
def test_a_pyproject_tool_table_configures_the_store(repository, use_executor, monkeypatch):
    use_executor(FakeExecutor())
    (repository / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.pairbench.store]\nurl = "h.db"\n'
                                               'machine = "laptop"\n')
    code, _, err = invoke("run", "--runs", "5", "sleep 0.1")
    assert code == 0 and f"stored in sqlite:///{repository / 'h.db'}" in err
    with Store.open(str(repository / "h.db")) as store:
        assert [m.label for m in store.machines()] == ["laptop"]
    monkeypatch.setenv("PAIRBENCH_STORE", "other.db")  # the environment wins over the config
    use_executor(FakeExecutor())
    invoke("run", "--runs", "5", "sleep 0.1")
    assert (repository / "other.db").exists()


@pytest.mark.e2e
@pytest.mark.parametrize(("config", "message"), [
    ("[store]\nurl = 3\n", "[store] url must be a non-empty string"),
    ("[store]\npath = 'x'\n", "unknown key 'path' in [store]"),
    ("[stor]\n", "unknown section [stor]"),
    ("[store\n", "not valid TOML"),
])
def test_a_bad_project_config_is_refused_naming_the_file(repository, use_executor, config, message):
    fake = use_executor(FakeExecutor())
    (repository / "pairbench.toml").write_text(config)
    code, _, err = invoke("run", "--runs", "5", "sleep 0.1")
    assert code == 2 and message in err and "pairbench.toml" in err and not fake.calls


@pytest.mark.e2e
def test_a_store_that_cannot_be_reached_fails_before_anything_is_measured(repository, use_executor):
    fake = use_executor(FakeExecutor())
    code, _, err = invoke("run", "--runs", "5", "--store", "postgresql://bench:pw@127.0.0.1:1/h", "sleep 0.1")
    assert code == 4 and "cannot reach the store postgresql+psycopg://bench:***@127.0.0.1:1/h" in err
    assert not fake.calls


@pytest.mark.e2e
def test_store_and_no_store_together_are_a_usage_error(repository):
    code, _, err = invoke("run", "--store", "h.db", "--no-store", "sleep 0.1")
    assert code == 2 and "contradict" in err


# --------------------------------------------------------------------------- store import


@pytest.mark.e2e
def test_store_import_keeps_good_files_names_bad_ones_and_keeps_each_result_once(repository, use_executor):
    for k in (1, 2):
        use_executor(FakeExecutor())
        invoke("run", "--runs", "5", "--json", f"r{k}.json", "--name", "nap", f"sleep 0.{k}")
    (repository / "bad.json").write_text('{"format": "hyperfine"}')
    code, _, err = invoke("store", "import", "r1.json", "bad.json", "r2.json", "--store", "h.db",
                          "--commit", "HEAD", "--branch", "main")
    assert code == 4
    assert "bad.json: unsupported format 'hyperfine'" in err and "; not stored" in err
    assert "2 of 3 file(s) in sqlite:///" in err
    series = _open_series(str(repository / "h.db"))["nap"]
    assert series.median.tolist() == [1e8, 2e8] and series.commit == (_git(repository, "rev-parse", "HEAD"),) * 2
    code, _, err = invoke("store", "import", "r1.json", "--store", "h.db")
    assert code == 0 and "was stored before" in err
    code, out, _ = invoke("store", "info", "--store", "h.db")
    assert code == 0 and "Example CPU @ 3.0GHz · 2 CPUs · x86_64: 2 result(s), 1 benchmark(s)" in out


@pytest.mark.e2e
def test_store_import_of_a_revision_that_does_not_exist_is_a_usage_error(repository, use_executor):
    use_executor(FakeExecutor())
    invoke("run", "--runs", "5", "--json", "r.json", "sleep 0.1")
    code, _, err = invoke("store", "import", "r.json", "--store", "h.db", "--commit", "nope")
    assert code == 2 and "--commit 'nope': no such revision" in err


# history in a fresh interpreter: which statistics it loads (the time is in benchmarks/history_store.py)
HISTORY_FORMATS = ("text", "markdown", "json")
HISTORY_LOADS = """
import io, json, sys
from pairbench.cli import main
said = {}
for fmt in sys.argv[1].split(","):  # in turn: a format that loaded scipy.stats is the first seen with it
    out = io.StringIO()
    code = main([*sys.argv[2:], "--format", fmt], stdout=out, stderr=io.StringIO())
    said[fmt] = {"code": code, "shown": "parse" in out.getvalue(), "scipy_stats": "scipy.stats" in sys.modules}
print(json.dumps(said))
"""


@pytest.mark.e2e
def test_history_loads_no_scipy_stats_which_would_be_most_of_its_time(stored):
    # scipy.stats costs ~0.6 s to import; the history of 10,000 commits ~0.3 s of work. The formats
    # are shown one after the other in one process (one start-up, not one each).
    from pairbench.environment.fingerprint import machine_of

    machine = machine_of(FIXED_ENVIRONMENT).fingerprint
    done = subprocess.run([sys.executable, "-c", HISTORY_LOADS, ",".join(HISTORY_FORMATS), "history", "--store",
                           stored, "--machine", machine], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {fmt: {"code": 0, "shown": True, "scipy_stats": False} for fmt in HISTORY_FORMATS}


def _commit_series(root: Path, count: int) -> list[str]:
    """``count`` commits on main in ``root`` (a repository made if there is none), commit k writing
    "k" to app.txt, all at 2026-02-01T10:00:00Z; their hashes, oldest first. ``tools.commit_series``
    makes the same with three git calls a commit (0.9 s of CPU for 100); here one ``git fast-import``."""
    _git(root, "init", "-q", "-b", "main")
    tip = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/main"], cwd=root, capture_output=True,
                         text=True, check=False).stdout.strip()
    who = f"t <t@example.com> {int(datetime(2026, 2, 1, 10, tzinfo=timezone.utc).timestamp())} +0000"
    stream = []
    for k in range(count):
        message, text = f"change {k}", f"{k}\n"
        parent = f"from {tip}\n" if k == 0 and tip else ""
        stream.append(f"commit refs/heads/main\nauthor {who}\ncommitter {who}\ndata {len(message)}\n{message}\n"
                      f"{parent}M 100644 inline app.txt\ndata {len(text)}\n{text}\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(stream), text=True, check=True)
    _git(root, "reset", "-q", "--hard", "main")
    return _git(root, "rev-list", "--reverse", f"--max-count={count}", "main").split()


def _measured(root: Path, name: str, every: int) -> list[str]:
    """40 commits of a repository, results stored of every ``every``-th (as CI that measures every
    fifth commit keeps them): ``name`` 10% slower from commit 22 on."""
    from history_runs import result

    from pairbench.environment.fingerprint import machine_of
    from pairbench.store.history import Provenance, SeriesSummary

    commits = _commit_series(root, 40)
    with Store.open(str(root / "history.db")) as store:
        for k in range(0, 40, every):
            median = 1e6 * (1.1 if k >= 22 else 1.0) * (1 + 0.002 * ((k * 7) % 5 - 2))
            run = result({name: median}, k, environment=FIXED_ENVIRONMENT)
            store.add(run, {(0, 0): SeriesSummary(9, 0, median, median * 0.99, median * 1.01, median)},
                      machine_of(FIXED_ENVIRONMENT), Provenance(commits[k], f"2026-02-01T10:{k:02d}:00+00:00",
                                                                "main", False))
    return commits


@pytest.mark.e2e
def test_a_step_over_several_commits_prints_the_bisect_command_that_finds_its_commit(repository):
    commits = _measured(repository, "sort[n=64]", every=5)
    code, out, err = invoke("history", "--store", str(repository / "history.db"))
    assert code == 0, err
    bisect = f"pairbench bisect {commits[20][:10]} {commits[25][:10]} -k '^sort\\[n=64\\]$'"
    assert f"find its commit among 5: {bisect}" in out
    code, out, _ = invoke("history", "--store", str(repository / "history.db"), "--format", "json")
    [step] = json.loads(out)["change_points"][0]["benchmarks"]
    assert step["bisect"] == {"good": commits[20], "bad": commits[25], "filter": "^sort\\[n=64\\]$", "commits": 5,
                              "command": f"pairbench bisect {commits[20]} {commits[25]} -k '^sort\\[n=64\\]$'"}
    code, out, _ = invoke("history", "--store", str(repository / "history.db"), "--format", "markdown")
    assert bisect in out


@pytest.mark.e2e
def test_a_step_at_the_next_commit_has_no_bisect_command(repository):
    commits = _measured(repository, "parse", every=1)
    code, out, _ = invoke("history", "--store", str(repository / "history.db"), "--format", "json")
    [step] = json.loads(out)["change_points"][0]["benchmarks"]
    assert code == 0 and (step["before"], step["after"]) == (commits[21], commits[22]) and step["bisect"] is None


@pytest.mark.e2e
def test_a_step_between_commits_git_does_not_know_has_no_bisect_command(repository):
    with Store.open(str(repository / "history.db")) as opened:
        store_history(opened, [{"parse": 1e6 * (1.1 if k >= 10 else 1.0)} for k in range(20)],
                      environment=FIXED_ENVIRONMENT)  # made-up commits
    code, out, _ = invoke("history", "--store", str(repository / "history.db"), "--format", "json")
    [step] = json.loads(out)["change_points"][0]["benchmarks"]
    assert code == 0 and step["bisect"] is None


def test_a_slow_drift_is_shown_as_a_drift_in_every_format(tmp_path):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    with Store.open(url) as store:
        store_history(store, [{"parse": 1e6 * 1.08 ** (k / 79) * (1 + 0.002 * ((k * 7) % 5 - 2))} for k in range(80)],
                      environment=FIXED_ENVIRONMENT)
    code, out, err = invoke("history", "--store", url)
    assert code == 0, err
    shown = re.search(rf"drift over {commit_hash(0)[:10]}\.\.{commit_hash(79)[:10]} \(80 commits\): \+([0-9.]+)%", out)
    assert shown and 7.5 < float(shown.group(1)) < 8.5
    assert "No change points." in out
    document = json.loads(invoke("history", "--store", url, "--format", "json")[1])
    [drift] = document["benchmarks"][0]["drifts"]
    assert (drift["first"], drift["last"], drift["commits"]) == (commit_hash(0), commit_hash(79), 80)
    assert drift["low_pct"] < 8.0 < drift["high_pct"] and document["benchmarks"][0]["steps"] == []
    assert "- parse: drift over" in invoke("history", "--store", url, "--format", "markdown")[1]


@pytest.fixture(scope="module")
def stored_with_an_option_like_name(tmp_path_factory):
    """A store whose benchmarks include one named like an option of ``history``, as a pull request
    can name one (issue 26, G5)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('option-like') / 'history.db'}"
    with Store.open(url) as store:
        store_history(store, [{"--output=injected.md": 1e6, "ok": 2e6}] * 4, environment=FIXED_ENVIRONMENT)
    return url


def test_history_takes_a_name_after_double_dash_as_a_name_and_writes_no_file(
        stored_with_an_option_like_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("history", "--store", stored_with_an_option_like_name, "--format", "markdown",
                            "--", "--output=injected.md", "ok")
    assert code == 0, err
    assert "--output=injected.md" in out and "ok" in out
    assert list(tmp_path.iterdir()) == []


def test_history_of_an_unknown_option_like_name_after_double_dash_writes_no_file(
        stored_with_an_option_like_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("history", "--store", stored_with_an_option_like_name, "--", "--output=x")
    assert code == 4 and "no results of benchmark '--output=x'" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_a_step_whose_place_is_unsure_offers_confirm_and_bisect_over_the_commits_it_may_lie_between(repository):
    """100 commits, each measured, under AR(1) noise of phi 0.5 and SD 3% with a 9% step at commit 50
    (seed 338): the step is placed at 51, and the span that holds 95% of its place's posterior is
    commits 50..55, so confirm and bisect are offered from commit 49 to 55 (one step beats a ramp
    there by the Bayes evidence, so it is one step, not a change that may be spread)."""
    from history_runs import result
    from scipy.signal import lfilter

    from pairbench.environment.fingerprint import machine_of
    from pairbench.store.history import Provenance, SeriesSummary

    e = np.random.default_rng(338).standard_normal(400)
    logs = 0.03 * np.sqrt(0.75) * lfilter([1.0], [1.0, -0.5], e)[300:] + np.where(np.arange(100) >= 50, 0.09, 0.0)
    commits = _commit_series(repository, 100)
    with Store.open(str(repository / "history.db")) as store:
        for k, median in enumerate(1e6 * np.exp(logs)):
            store.add(result({"parse": float(median)}, k, environment=FIXED_ENVIRONMENT),
                      {(0, 0): SeriesSummary(9, 0, median, median * 0.99, median * 1.01, median)},
                      machine_of(FIXED_ENVIRONMENT), Provenance(commits[k], f"2026-02-01T{10 + k // 60:02d}:"
                                                                f"{k % 60:02d}:00+00:00", "main", False))
    code, out, err = invoke("history", "--store", str(repository / "history.db"))
    assert code == 0, err
    good, bad = commits[49][:10], commits[55][:10]
    assert f"95% between {good}..{bad} (6 points)" in out
    assert f"confirm it: pairbench confirm {good} {bad}" in out
    assert f"find its commit among 6: pairbench bisect {good} {bad} -k '^parse$'" in out


def test_a_commit_bisect_named_is_shown_in_the_history_text_and_its_chart(tmp_path):
    # R11: after bisect named a commit, history showed neither a step nor a mark of it
    url = f"sqlite:///{tmp_path / 'history.db'}"
    medians = [{"parse": 1e6 * (1 + 0.004 * ((k * 7) % 5 - 2))} for k in range(24)]
    with Store.open(url) as store:
        store_history(store, medians, environment=FIXED_ENVIRONMENT)
        store.add_confirmations(machine_of(FIXED_ENVIRONMENT), [(BenchmarkKey("parse"), Confirmation(
            0, commit_hash(17), commit_hash(18), "confirmed", "slower", 6.7, 4.2, 9.6, None,
            "2026-03-01T00:00:00+00:00"))])
    code, out, err = invoke("history", "--store", url)
    assert code == 0, err
    assert (f"found by a paired comparison (bisect, confirm): {commit_hash(18)[:10]} is slower than "
            f"{commit_hash(17)[:10]} before it, +6.7% [+4.2%, +9.6%]") in out
    code, _, err = invoke("history", "--store", url, "-o", str(tmp_path / "h.html"))
    page = (tmp_path / "h.html").read_text()
    assert code == 0 and f"{commit_hash(18)[:10]} slower +6.7% (paired)" in page and "Purple dash-dot" in page
    document = json.loads(invoke("history", "--store", url, "--format", "json").out)
    assert [f["after"] for f in document["benchmarks"][0]["found"]] == [commit_hash(18)]
