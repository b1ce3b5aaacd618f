"""``pairbench record`` end to end: the commits of a real git repository built in cached worktrees with
the real C compiler, measured by the real executor in a few fixed rounds, and kept as links in SQLite
and in the test PostgreSQL; ``history`` renders them.

Cheap by design: a ``[confirm] command`` recipe of a C program that does nothing, 12 fixed rounds
(the fewest whose sign-test interval exists at the links' level). The assertions are what load
cannot flip: which links exist, their commits, metric, rounds, level and threshold, that the anchor
was a third side in the same rounds (one result holding the three sides, each with every round),
that the raw samples read back, and that history names each link. Whether a link decides a change is
the statistics' part, tested on the pure functions (``tests/analysis/test_links.py``). The tests of a
first record's time budget build for real and measure with the scripted executor, whose virtual
clock spends the budget without the seconds it names."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeExecutor

from pairbench.cli.record import one_side
from pairbench.settings import default
from pairbench.store.history import Store, result_uid
from pairbench.store.resultfile import read_result
from pairbench.units import parse_duration_ns

pytestmark = pytest.mark.e2e

ROUNDS = 12
FIXED = ("--runs", str(ROUNDS), "--seed", "7", "-q", "--anchor-every", "2")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _repository(root: Path, store: str, commits: int = 4) -> list[str]:
    """``commits`` commits of a C program that returns at once (each with its own exit code, so each
    builds a different program)."""
    _git(root, "init", "-q", "-b", "main")
    (root / "pairbench.toml").write_text(f'[store]\nurl = "{store}"\n\n[confirm]\nbuild = "cc -O1 work.c -o work"\n'
                                         'command = "./work"\nname = "work"\n')
    (root / ".gitignore").write_text("work\nhistory.db*\n.pairbench/\n")
    shas = []
    for k in range(commits):
        (root / "work.c").write_text(f"int main(void) {{ return {k} - {k}; }}\n")
        _git(root, "add", ".")
        _git(root, "commit", "-q", "-m", f"version {k}")
        shas.append(_git(root, "rev-parse", "HEAD"))
    return shas


def _recorded(url: str):
    with Store.open(url, read_only=True) as store:
        [machine] = store.machines()
        benchmarks = store.link_benchmarks(machine.id)
        links = store.links(machine.id, [b.id for b in benchmarks])
        samples = {uid: store.link_samples(uid) for uid in {link.result_uid for link in links}}
    return benchmarks, links, samples


def _check_paired_history(commits: list[str], url: str) -> None:
    codes = [invoke("record", c[:10], "--branch", "main", *FIXED) for c in commits]
    assert [r.code for r in codes] == [0] * len(commits), [r.err[-600:] for r in codes]
    assert "First record of branch main" in codes[0].err
    assert f"and anchor {commits[0][:10]}, in the same rounds" in codes[2].err

    benchmarks, links, samples = _recorded(url)
    assert [b.key.name for b in benchmarks] == ["work"]
    chain = [(link.before, link.after) for link in links if link.kind == "predecessor"]
    assert chain == list(zip(commits, commits[1:], strict=False))
    anchored = [(link.before, link.after) for link in links if link.kind == "anchor"]
    assert anchored == [(commits[0], commits[1]), (commits[0], commits[2])]  # every 2nd record of the window
    assert len({link.metric for link in links}) == 1 and links[0].metric in ("wall", "cpu")  # one chain
    assert all(link.rounds == ROUNDS and link.level == 1e-3 and link.alpha == 1e-3 and link.threshold == 1.0
               for link in links)
    assert all(link.effect_low is not None and link.effect_low <= link.effect <= link.effect_high for link in links)

    # the third record measured predecessor, commit and anchor in one session: one result, three sides
    [third] = {link.result_uid for link in links if link.after == commits[2]}
    sides = {side: (role, series) for _, side, role, series in samples[third]}
    assert sides.keys() == {commits[1][:10], "work", commits[0][:10]}
    assert [sides[name][0] for name in (commits[1][:10], "work", commits[0][:10])] == ["baseline", "candidate", "anchor"]
    assert all(len(series.measured()) == ROUNDS for _, series in sides.values())
    assert all(int(series.measured()["wall_ns"].min()) > 0 for _, series in sides.values())

    code, out, _ = invoke("history", "work")
    assert code == 0 and "paired history" in out, out
    assert f"cumulative since anchor {commits[0][:10]}: at {commits[2][:10]}" in out
    for before, after in chain[-3:]:
        assert f"{before[:10]}..{after[:10]}" in out


def test_record_links_each_commit_to_its_predecessor_and_anchor_in_sqlite(tmp_path, monkeypatch):
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    commits = _repository(tmp_path, "sqlite:///history.db")
    _check_paired_history(commits, str(tmp_path / "history.db"))


@pytest.mark.slow
def test_record_keeps_links_in_postgresql(tmp_path, monkeypatch, postgres_url):
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    commits = _repository(tmp_path, postgres_url)
    _check_paired_history(commits, postgres_url)


def _first_record(tmp_path: Path, branch: str, *given: str, executor=None) -> tuple[str, dict, list[int]]:
    """A first record of branch ``branch`` of a one-commit repository: what it said, its result
    document, and the rounds of each side the store holds for it."""
    if not (tmp_path / ".git").exists():
        _repository(tmp_path, "sqlite:///history.db", commits=1)
    document = tmp_path / f"{branch}.json"
    code, _, err = invoke("record", "--branch", branch, "--seed", "7", "-q", "--json", str(document), *given,
                          executor=executor)
    assert code == 0, err[-600:]
    with Store.open(str(tmp_path / "history.db"), read_only=True) as store:
        [machine] = store.machines()
        assert store.link_benchmarks(machine.id) == []  # one side: nothing to link
        assert store.last_recorded(machine.id, branch) == _git(tmp_path, "rev-parse", "HEAD")  # the next's predecessor
        stored = store.link_samples(result_uid(read_result(document)))
    assert [role for _, _, role, _ in stored] == [""]  # a lone side, as run's: the unpaired history's point
    return err, json.loads(document.read_text()), [len(series.measured()) for _, _, _, series in stored]


def test_first_record_of_a_command_stops_at_the_one_side_budget_of_run(tmp_path, monkeypatch):
    """A [confirm] command is measured like compare, whose 60 s budget a lone side would spend whole:
    a first record stops at `pairbench run`'s budget instead, and says so."""
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    err, document, rounds = _first_record(tmp_path, "main", executor=FakeExecutor(default=0.05))
    budget = default("max_time", "run")
    assert "First record of branch main" in err and "measured alone (one side" in err
    assert f"the one-side budget of `pairbench run`, --max-time {budget}" in err
    assert "the next record measures it again as its predecessor and links to it" in err
    sampling = document["settings"]["sampling"]
    assert sampling["max_time_ns"] == parse_duration_ns(budget) < parse_duration_ns(default("max_time", "compare"))
    assert sampling["runs"] is None
    assert document["stopped_because"].startswith("reached the time budget (--max-time 3")
    assert len(rounds) == 1 and rounds[0] >= sampling["min_runs"]
    code, out, _ = invoke("history", "work")  # before any link, the commit's point in the unpaired history
    assert code == 0 and _git(tmp_path, "rev-parse", "--short=10", "HEAD") in out, out


def test_first_record_obeys_a_given_max_time_or_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    err, document, _ = _first_record(tmp_path, "timed", "--max-time", "1500ms", executor=FakeExecutor(default=0.05))
    assert "with --max-time 1500ms as given" in err
    assert document["settings"]["sampling"]["max_time_ns"] == 1_500_000_000
    assert document["stopped_because"] == "reached the time budget (--max-time 1.50 s)"

    err, document, rounds = _first_record(tmp_path, "counted", "--runs", str(ROUNDS))
    assert f"with --runs {ROUNDS} as given" in err
    assert document["stopped_because"] == f"completed the requested {ROUNDS} rounds"
    assert rounds == [ROUNDS]


def test_first_record_of_a_bench_target_keeps_the_one_side_budget_of_bench():
    """A one-side `pairbench bench` spends bench's budget per benchmark, which is a record's default
    already: nothing changes but what it says."""
    options = {"runs": None, "max_time": None, "metric": None}
    kept, said = one_side("bench", options)
    assert kept == options
    assert f"--max-time {default('max_time', 'bench')} per benchmark" in said
