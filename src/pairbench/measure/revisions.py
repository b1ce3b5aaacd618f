"""Git revisions checked out beside the working tree, for ``bench --against REV``.

:func:`checkout` adds a detached worktree of REV in a temporary directory and
removes it afterwards, so each side's worker imports its own tree. A revision
that does not exist, or a worktree git cannot make, is a ``UsageError`` that
says what git said (control characters are made visible by the CLI).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

from pairbench.errors import UsageError

_GIT_TIMEOUT_S = 120
_MAX_MESSAGE = 500


def toplevel(path: str) -> str | None:
    """The root of the git working tree ``path`` is in, or None outside one (or without git)."""
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    try:
        done = _git(["rev-parse", "--show-toplevel"], cwd=directory)
    except UsageError:
        return None
    return done.stdout.strip() or None


@contextlib.contextmanager
def checkout(revision: str, repository: str) -> Iterator[str]:
    """A detached worktree of ``revision`` of the repository at ``repository`` (its path), removed
    when the block ends."""
    if not revision or revision.startswith("-") or any(c.isspace() for c in revision):
        raise UsageError(f"--against {revision!r} is not a git revision")
    commit = _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], cwd=repository,
                  what=f"--against {revision!r}: no such revision in {repository}").stdout.strip()
    parent = tempfile.mkdtemp(prefix="pairbench-against-")
    tree = os.path.join(parent, "tree")
    try:
        _git(["worktree", "add", "--detach", "--quiet", tree, commit], cwd=repository,
             what=f"--against {revision!r}: cannot make a worktree")
        try:
            yield tree
        finally:
            with contextlib.suppress(UsageError):
                _git(["worktree", "remove", "--force", tree], cwd=repository)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
        with contextlib.suppress(UsageError):
            _git(["worktree", "prune"], cwd=repository)


def _git(args: list[str], *, cwd: str, what: str = "git failed") -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=_GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UsageError(f"{what}: git is not installed") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{what}: git did not finish within {_GIT_TIMEOUT_S} s") from None
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[:_MAX_MESSAGE]
        raise UsageError(f"{what}" + (f" (git: {said})" if said else ""))
    return done
