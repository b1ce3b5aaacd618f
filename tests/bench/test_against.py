"""``--against REV`` (and ``confirm``): the revision's worktree, whatever happens to the run that made it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pairbench.measure.revisions import checkout, prune_abandoned

pytestmark = pytest.mark.e2e

HOLD = """import sys, time
from pairbench.measure.revisions import checkout
with checkout("HEAD", sys.argv[1]) as tree:
    print(tree, flush=True)
    time.sleep(600)
"""


@pytest.fixture
def repository(tmp_path) -> str:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    (tmp_path / "bench_x.py").write_text("import pairbench\n\n@pairbench.benchmark\ndef x():\n    pass\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    return str(tmp_path)


def worktrees(repository: str) -> list[str]:
    listing = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repository, capture_output=True,
                             text=True, check=True).stdout
    return [line.removeprefix("worktree ") for line in listing.split("\n") if line.startswith("worktree ")]


def test_a_worktree_left_by_a_killed_run_is_removed_by_the_next_and_a_live_ones_is_kept(repository):
    """The audit's G22: after ``kill -9`` during ``--against``, the worktree stayed, and later runs did not
    prune it (its directory still existed)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, repository], stdout=subprocess.PIPE, text=True)
    try:
        tree = holder.stdout.readline().strip()
        prune_abandoned(repository)
        assert os.path.isdir(tree) and tree in worktrees(repository)  # its run is alive: kept
    finally:
        holder.kill()  # SIGKILL: no clean-up runs
        holder.wait()
        holder.stdout.close()
    assert os.path.isdir(tree)
    with checkout("HEAD", repository) as other:
        assert os.path.isdir(other)
    assert not os.path.exists(tree) and worktrees(repository) == [repository]
