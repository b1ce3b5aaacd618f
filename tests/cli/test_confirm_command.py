"""``pairbench confirm``: two commits of a real git repository built in worktrees with the real C
compiler and measured in paired rounds; the confirmation recorded and shown by ``history``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from fakes import ProgramWorkers

from pairbench.environment.fingerprint import machine_of
from pairbench.store.history import Provenance, SeriesSummary, Store

pytestmark = pytest.mark.e2e

SOURCE = """#include "pairbench.h"
PAIRBENCH(work) {{ unsigned s = 0; for (unsigned i = 0; i < {loops}u; i++) s += i * i; pairbench_keep(s); }}
PAIRBENCH(same) {{ unsigned s = 0; for (unsigned i = 0; i < 2000u; i++) s ^= i; pairbench_keep(s); }}
PAIRBENCH_MAIN()
"""
FAST = ("--max-time", "3s", "--sample-time", "200us", "--seed", "7", "-q")
# A step to confirm gets 20 s at most (it decides in 1-3 s): its verdict needs about a dozen blocks of
# fresh workers, and beside two busy loops and the rest of `make test` 3 s once ended inconclusive,
# as the bisect tests' comparisons once did at 8 s. A block is about 64 ms of samples whatever their
# length: 1 ms samples make it 32 rounds, where 200 us made it 160, each journaled and analysed
DECIDING = ("--max-time", "20s", "--sample-time", "1ms", *FAST[4:])
# scripted workers decide after as many blocks as real ones: 4 ms samples make a block 8 rounds
SCRIPTED = ("--max-time", "3s", "--sample-time", "4ms", *FAST[4:])


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A repository of six commits of a C benchmark, ``work`` three times slower from the fourth on,
    and a seventh that does not compile; its history (one result per commit) in the project's store."""
    from pairbench import __file__ as package

    header = Path(package).parent / "worker" / "include"
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pairbench.toml").write_text(
        f'[store]\nurl = "sqlite:///history.db"\n\n[confirm]\nbuild = "cc -O1 -I{header} bench.c -o bench"\n'
        'bench = "bench"\n')
    (tmp_path / ".gitignore").write_text("bench\nhistory.db*\n.pairbench/\n")
    commits = []
    for k in range(6):
        (tmp_path / "bench.c").write_text(f"/* version {k} */\n" + SOURCE.format(loops=6000 if k >= 3 else 2000))
        _git(tmp_path, "add", ".")
        _git(tmp_path, "commit", "-q", "-m", f"version {k}")
        commits.append(_git(tmp_path, "rev-parse", "HEAD"))
    (tmp_path / "bench.c").write_text("this is not C\n")
    _git(tmp_path, "commit", "-q", "-am", "broken")
    commits.append(_git(tmp_path, "rev-parse", "HEAD"))
    _history(tmp_path / "history.db", commits[:6])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    return tmp_path, commits


def _history(path: Path, commits: list[str]) -> None:
    """One stored result of ``work`` per commit: 1 µs, then 3 µs from the fourth commit."""
    from history_runs import result

    with Store.open(str(path)) as store:
        for k, commit in enumerate(commits):
            median = 3000.0 if k >= 3 else 1000.0
            run = result({"work": median * (1 + 0.002 * (k % 3))}, k, environment=FIXED_ENVIRONMENT)
            summaries = {(0, 0): SeriesSummary(9, 0, median, median * 0.99, median * 1.01, median)}
            store.add(run, summaries, machine_of(FIXED_ENVIRONMENT),
                      Provenance(commit, f"2026-02-01T00:0{k}:00+00:00", "main", False))


@pytest.mark.slow
def test_confirm_measures_the_flagged_benchmark_and_history_shows_the_step_confirmed(project):
    root, commits = project
    code, out, _ = invoke("history", "work")
    assert code == 0 and "unconfirmed" in out and f"pairbench confirm {commits[2][:10]} {commits[3][:10]}" in out
    code, out, err = invoke("confirm", commits[2][:10], commits[3][:10], *DECIDING)
    assert code == 0, err
    assert "Steps between these commits in the history: work" in err
    assert "work" in out and "slower" in out and "same" not in out  # only the flagged benchmark
    assert f"work: confirmed (slower) between {commits[2][:10]} and {commits[3][:10]}" in err
    code, out, _ = invoke("history", "work")
    assert "confirmed (slower)" in out and "confirm it:" not in out
    # the re-measurement is kept on the metric --metric auto chose (CPU time, for this CPU-bound fake) and so
    # is a point of the CPU-time history, never mixed into the wall-time points stored before
    assert "work · wall time · 6 commit(s), 6 result(s)" in out and "work · CPU time · 1 commit(s), 1 result(s)" in out
    assert (root / ".pairbench" / "confirm" / f"build-{commits[3][:10]}.log").exists()


def test_confirm_of_an_equal_pair_rejects(project):
    """The builds are real, their workers scripted (``same`` takes as long in both)."""
    _, commits = project
    workers = ProgramWorkers(lambda text: {"work": {"per_iteration_ns": 2000.0}, "same": {"per_iteration_ns": 500.0}},
                             seed=1)
    code, _, err = invoke("confirm", commits[0][:10], commits[1][:10], "-k", "^same$", *SCRIPTED, workers=workers)
    assert code == 0, err
    assert "same: rejected (equivalent)" in err, err


def test_a_revision_that_does_not_build_is_named_with_its_build_log(project):
    root, commits = project
    code, _, err = invoke("confirm", commits[5][:10], commits[6][:10], *FAST)
    log = root / ".pairbench" / "confirm" / f"build-{commits[6][:10]}.log"
    assert code == 3
    assert f"revision {commits[6][:10]} ({commits[6][:10]}) does not build" in err and str(log) in err
    assert "this is not C" in log.read_text() or "error" in log.read_text()


def test_confirm_without_its_config_says_what_to_write(tmp_path, monkeypatch):
    _git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("confirm", "HEAD~1", "HEAD")
    assert code == 2 and "[confirm] section" in err and 'build = "make bench"' in err


def test_confirm_of_one_commit_with_itself_is_a_usage_error(project):
    """The audit's G22: it was measured and recorded an "inconclusive" confirmation of no step."""
    root, commits = project
    code, _, err = invoke("confirm", commits[2], commits[2][:10], *FAST)
    assert code == 2 and "both name commit" in err

def test_confirm_never_writes_its_build_log_through_a_link_committed_in_the_repository(project, tmp_path_factory):
    root, commits = project
    victim = tmp_path_factory.mktemp("outside") / "victim.txt"
    victim.write_text("VICTIM\n")
    logs = root / ".pairbench" / "confirm"
    logs.mkdir(parents=True)
    (logs / f"build-{commits[4][:10]}.log").symlink_to(victim)
    _git(root, "add", "-f", ".pairbench")
    _git(root, "commit", "-q", "-m", "a link where the build log goes")
    code, _, err = invoke("confirm", commits[4][:10], commits[5][:10], *FAST)
    assert code == 3 and "is a symbolic link" in err and "build log" in err, err
    assert victim.read_text() == "VICTIM\n"
