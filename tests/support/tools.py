"""The programs some tests run (actionlint, shellcheck, go, cc) and the cache they share.

``scripts/install-test-deps.sh`` installs them; ``actionlint`` goes into the
cache's ``bin`` (``~/.cache/pairbench-tests/bin``, or ``$PAIRBENCH_TEST_CACHE/bin``).
A missing one fails its test with the command that installs it: it is never
a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL = "scripts/install-test-deps.sh"


def test_cache() -> Path:
    """The directory that keeps what tests build or fetch between sessions."""
    return Path(os.environ.get("PAIRBENCH_TEST_CACHE") or Path.home() / ".cache" / "pairbench-tests")


test_cache.__test__ = False  # a helper, not a test pytest should collect


def without_hypothesis(addopts: str | None) -> str:
    """``PYTEST_ADDOPTS`` for a pytest a test starts: ``addopts`` (the variable's value, if any) with
    hypothesis's plugin left out. The dev extra installs it and it is not under test there: a third
    of the CPU time of each pytest start (0.13 of 0.39 s), and the pytest-benchmark and plugin tests
    start pytest tens of times each."""
    return f"{addopts} -p no:hypothesispytest" if addopts else "-p no:hypothesispytest"


def require_tool(name: str) -> str:
    """The path of program ``name``: on the PATH, else in the cache's ``bin``; a failed test if
    neither has it."""
    found = shutil.which(name) or shutil.which(name, path=str(test_cache() / "bin"))
    if not found:
        pytest.fail(f"{name} is not installed: run {INSTALL}")
    return found


def git(cwd: Path, *args: str, date: str | None = None) -> str:
    """``git ARGS`` in ``cwd`` as a fixed author (every commit at ``date``, ISO 8601, when given);
    its standard output, stripped."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def commit_series(root: Path, count: int, path: str, text, *, date: str | None = None) -> list[str]:
    """A new repository at ``root`` (branch main) of ``count`` commits, commit k writing ``text(k)``
    to ``path`` (and adding whatever else is in ``root``); their full hashes, oldest first."""
    git(root, "init", "-q", "-b", "main")
    commits = []
    for k in range(count):
        (root / path).write_text(text(k))
        git(root, "add", ".", date=date)
        git(root, "commit", "-q", "-m", f"change {k}", date=date)
        commits.append(git(root, "rev-parse", "HEAD"))
    return commits
