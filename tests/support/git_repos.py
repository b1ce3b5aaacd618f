"""Real git repositories for tests: commits made with a fixed author, and a fixed time when asked."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path


def git(cwd: Path, *args: str, date: str | None = None) -> str:
    """``git ARGS`` in ``cwd`` as a test author (every commit at ``date``, ISO 8601, when given)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def commit_series(root: Path, count: int, path: str, text: Callable[[int], str], *, date: str | None = None,
                  ) -> list[str]:
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
