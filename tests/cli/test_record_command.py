"""``pairbench record``: the commits of a real git repository built in cached worktrees with the real
C compiler, each measured against its predecessor in paired rounds and kept as links; ``history``
shows the paired history. Kept cheap: a few fixed small rounds, asserting what load cannot flip (a
3x step, the links' commits and counts), never a wall-clock window."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.store.history import Store

pytestmark = pytest.mark.e2e

SOURCE = """#include "pairbench.h"
PAIRBENCH(work) {{ unsigned s = 0; for (unsigned i = 0; i < {loops}u; i++) s += i * i; pairbench_keep(s); }}
PAIRBENCH_MAIN()
"""
# Every link is a 3x step, which a paired comparison decides in 1-3 s (as confirm's and bisect's tests
# find): 20 s is the ceiling that two busy loops beside the rest of the suite cannot reach, not the cost
FAST = ("--max-time", "20s", "--sample-time", "200us", "--seed", "7", "-q")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _repository(root: Path, store: str) -> list[str]:
    """Three commits of a C benchmark, ``work`` three times slower at each."""
    from pairbench import __file__ as package

    header = Path(package).parent / "worker" / "include"
    _git(root, "init", "-q", "-b", "main")
    (root / "pairbench.toml").write_text(
        f'[store]\nurl = "{store}"\n\n[confirm]\nbuild = "cc -O1 -I{header} bench.c -o bench"\nbench = "bench"\n')
    (root / ".gitignore").write_text("bench\nhistory.db*\n.pairbench/\n")
    commits = []
    for k in range(3):
        (root / "bench.c").write_text(SOURCE.format(loops=2000 * 3**k))
        _git(root, "add", ".")
        _git(root, "commit", "-q", "-m", f"version {k}")
        commits.append(_git(root, "rev-parse", "HEAD"))
    return commits


def _record_each(commits: list[str]) -> list[tuple[int, str]]:
    return [invoke("record", c[:10], "--branch", "main", *FAST)[::2] for c in commits]


def _links(url: str):
    with Store.open(url, read_only=True) as store:
        [machine] = store.machines()
        return store.links(machine.id, [b.id for b in store.link_benchmarks(machine.id)])


def _check_paired_history(commits: list[str], url: str) -> None:
    recorded = _record_each(commits)
    assert [code for code, _ in recorded] == [0] * 3, recorded
    assert "First record of branch main" in recorded[0][1]
    links = _links(url)
    chain = [(link.before, link.after) for link in links if link.kind == "predecessor"]
    assert chain == list(zip(commits, commits[1:], strict=False))
    assert {link.metric for link in links} <= {"wall", "cpu"} and all(link.level == 1e-3 for link in links)
    assert all(link.effect_low > 50.0 for link in links if link.kind == "predecessor")  # far above the threshold
    anchor = [(link.before, link.after) for link in links if link.kind == "anchor"]
    assert anchor[0] == (commits[0], commits[1])  # the window's anchor: the first recorded commit
    code, out, _ = invoke("history", "work")
    assert code == 0 and "paired history" in out and out.count("step at") == 2
    assert f"step at {commits[0][:10]}..{commits[1][:10]}" in out and f"{commits[1][:10]}..{commits[2][:10]}" in out


@pytest.mark.slow
def test_record_links_each_commit_to_its_predecessor_and_history_names_the_step(tmp_path, monkeypatch):
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
