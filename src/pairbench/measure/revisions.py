"""Git revisions: checked out beside the working tree (``bench --against REV``, ``confirm``), and
the state of a working tree (what the history store records of a result).

:func:`checkout` adds a detached worktree of REV in a temporary directory and
removes it afterwards, so each side's worker imports its own tree. A revision
that does not exist, or a worktree git cannot make, is a ``UsageError`` that
says what git said (control characters are made visible by the CLI).
:func:`tree_state` reads the commit checked out, its time, the branch and
whether tracked files differ from it; :func:`resolve` names a revision's commit.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

from pairbench.errors import UsageError
from pairbench.frozen import frozen
from pairbench.measure import child_environment

_GIT_TIMEOUT_S = 120
_MAX_MESSAGE = 500
WORKTREE_PREFIX = "pairbench-against-"
"""The temporary directories :func:`checkout` makes (``tree`` in each, and its lock)."""
_LOCK = "lock"
_COMMIT_ID = re.compile(r"[0-9a-f]{7,64}")


def toplevel(path: str) -> str | None:
    """The root of the git working tree ``path`` is in, or None outside one (or without git)."""
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    try:
        done = _git(["rev-parse", "--show-toplevel"], cwd=directory)
    except UsageError:
        return None
    return done.stdout.strip() or None


@frozen
class TreeState:
    """A working tree's commit (full hash), its committer time (ISO 8601, UTC), the branch checked
    out (None when detached) and whether tracked files differ from the commit (``dirty``)."""

    commit: str
    commit_time: str
    branch: str | None
    dirty: bool


def tree_state(path: str) -> TreeState | None:
    """The state of the git working tree ``path`` is in; None outside one, before its first commit,
    or without git."""
    root = toplevel(path)
    if root is None:
        return None
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=root).stdout.strip()
        when = commit_time(commit, root)
        branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd=root).stdout.strip()
        changed = _git(["status", "--porcelain", "--untracked-files=no"], cwd=root).stdout.strip()
    except UsageError:
        return None
    return TreeState(commit, when, None if branch in ("", "HEAD") else branch, bool(changed))


def commit_time(commit: str, repository: str) -> str:
    """The committer time of ``commit`` (a full hash) as ISO 8601 in UTC: what orders a history."""
    epoch = _git(["show", "-s", "--format=%ct", commit], cwd=repository).stdout.strip()
    try:
        return _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc).isoformat(timespec="seconds")
    except ValueError:
        raise UsageError(f"git gave no time for commit {commit}") from None


def commits_between(before: str, after: str, repository: str) -> int | None:
    """How many commits lead from ``before`` to ``after`` (``git rev-list --count before..after``:
    1 when ``after`` is ``before``'s child); None when either is not a commit id (they come from a
    store others write) or git does not know them (another repository, a shallow clone)."""
    if not (_COMMIT_ID.fullmatch(before) and _COMMIT_ID.fullmatch(after)):
        return None
    try:
        done = _git(["rev-list", "--count", f"{before}..{after}", "--"], cwd=repository)
        return int(done.stdout.strip())
    except (UsageError, ValueError):
        return None


def resolve(revision: str, repository: str, *, option: str = "--against") -> str:
    """The full hash of the commit ``revision`` names in ``repository``; ``UsageError`` otherwise."""
    if not revision or revision.startswith("-") or any(c.isspace() for c in revision):
        raise UsageError(f"{option} {revision!r} is not a git revision")
    what = f"{option} {revision!r}: no such revision in {repository}"
    # The object first, then its commit: ``REV^{commit}`` would make ``^{commit}`` part of a ``:/message``'s pattern.
    named = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", revision], cwd=repository,
                 what=what).stdout.strip()
    return _git(["rev-parse", "--verify", "--quiet", f"{named}^{{commit}}"], cwd=repository,
                what=f"{option} {revision!r} names no commit in {repository}").stdout.strip()


MAX_LINE = 100_000
"""The most commits ``first_parent_line`` returns: a bisection of more is a usage error."""


def first_parent_line(good: str, bad: str, repository: str) -> list[str]:
    """The commits from ``good`` to ``bad`` (full hashes, both included, oldest first) along
    ``bad``'s first parents; ``UsageError`` when ``good`` is not on that line before ``bad``."""
    if not is_ancestor(good, bad, repository):
        raise UsageError(f"GOOD {good[:10]} is not an ancestor of BAD {bad[:10]} (they are swapped, or on branches "
                         "that parted): bisect GOOD BAD needs GOOD older than BAD on one line of history, e.g. "
                         "`git merge-base GOOD BAD` as GOOD")
    listed = _git(["rev-list", "--first-parent", "--parents", f"--max-count={MAX_LINE + 1}", f"{good}..{bad}", "--"],
                  cwd=repository, what=f"cannot list the commits from {good[:10]} to {bad[:10]}").stdout.split("\n")
    rows = [line.split() for line in listed if line.strip()]
    if not rows:
        raise UsageError(f"GOOD and BAD both name commit {good[:10]}: nothing lies between them")
    if len(rows) > MAX_LINE:
        raise UsageError(f"more than {MAX_LINE} commits lie between {good[:10]} and {bad[:10]}; bisect a shorter range")
    oldest = rows[-1]
    if len(oldest) < 2 or oldest[1] != good:
        raise UsageError(f"{good[:10]} is not on the first-parent line of {bad[:10]} (a merge brought it in): "
                         "give GOOD from that line, e.g. `git merge-base GOOD BAD`")
    return [good, *(row[0] for row in reversed(rows))]


def is_ancestor(older: str, newer: str, repository: str) -> bool:
    """True when ``older`` (a full hash) is ``newer`` or one of its ancestors: no commit of
    ``newer..older``."""
    counted = _git(["rev-list", "--count", f"{newer}..{older}", "--"], cwd=repository,
                   what=f"cannot compare {older[:10]} with {newer[:10]}").stdout.strip()
    return counted == "0"


def tree_of(commit: str, repository: str) -> str:
    """The hash of ``commit``'s tree: equal for two commits whose files are equal."""
    return _git(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"], cwd=repository,
                what=f"no tree for commit {commit[:10]}").stdout.strip()


def commit_subject(commit: str, repository: str, *, limit: int = 200) -> str | None:
    """The first line of ``commit``'s message (at most ``limit`` characters), or None."""
    try:
        text = _git(["show", "-s", "--format=%s", commit, "--"], cwd=repository).stdout
    except UsageError:
        return None
    line = text.split("\n", 1)[0].strip()
    return line[:limit] or None


def common_git_dir(repository: str) -> str:
    """The repository's own git directory (shared by its worktrees), as an absolute path."""
    found = _git(["rev-parse", "--git-common-dir"], cwd=repository).stdout.strip()
    return os.path.normpath(os.path.join(repository, found))


def add_worktree(path: str, commit: str, repository: str) -> None:
    """A detached worktree of ``commit`` at ``path`` (which must not exist), kept until removed."""
    _git(["worktree", "add", "--detach", "--quiet", path, commit], cwd=repository,
         what=f"cannot make a worktree of {commit[:10]} at {path}")


def remove_worktree(path: str, repository: str) -> None:
    """Remove the worktree at ``path`` and whatever is left there; git forgets it."""
    with contextlib.suppress(UsageError):
        _git(["worktree", "remove", "--force", path], cwd=repository)
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(UsageError):
        _git(["worktree", "prune"], cwd=repository)


@contextlib.contextmanager
def checkout(revision: str, repository: str, *, option: str = "--against") -> Iterator[str]:
    """A detached worktree of ``revision`` of the repository at ``repository`` (its path), removed
    when the block ends; ``option`` names the option the revision came from in errors."""
    commit = resolve(revision, repository, option=option)
    prune_abandoned(repository)
    parent = tempfile.mkdtemp(prefix=WORKTREE_PREFIX)
    tree = os.path.join(parent, "tree")
    lock = _held_lock(parent)  # before git lists the worktree: while held, no other run takes it for abandoned
    try:
        _git(["worktree", "add", "--detach", "--quiet", tree, commit], cwd=repository,
             what=f"{option} {revision!r}: cannot make a worktree")
        try:
            yield tree
        finally:
            with contextlib.suppress(UsageError):
                _git(["worktree", "remove", "--force", tree], cwd=repository)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
        os.close(lock)
        with contextlib.suppress(UsageError):
            _git(["worktree", "prune"], cwd=repository)


def prune_abandoned(repository: str) -> None:
    """Remove the worktrees of ``repository`` that a pairbench killed while it held them left behind
    (``kill -9`` runs no clean-up): those whose lock no process holds any more."""
    try:
        listing = _git(["worktree", "list", "--porcelain"], cwd=repository).stdout
    except UsageError:
        return
    for line in listing.split("\n"):
        tree = line.removeprefix("worktree ")
        parent = os.path.dirname(tree)
        if line.startswith("worktree ") and os.path.basename(tree) == "tree" \
                and os.path.basename(parent).startswith(WORKTREE_PREFIX) and _abandoned(parent):
            with contextlib.suppress(UsageError):
                _git(["worktree", "remove", "--force", tree], cwd=repository)
            shutil.rmtree(parent, ignore_errors=True)


def _held_lock(parent: str) -> int:
    """An exclusive lock on ``parent``'s lock file, held until the descriptor is closed (or the process
    ends, however it ends)."""
    fd = os.open(os.path.join(parent, _LOCK), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _abandoned(parent: str) -> bool:
    """Whether the worktree in ``parent`` is no live run's: its lock can be taken. Without a lock file
    (an older pairbench's) it cannot be told, and is left alone."""
    try:
        fd = os.open(os.path.join(parent, _LOCK), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _git(args: list[str], *, cwd: str, what: str = "git failed") -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=_GIT_TIMEOUT_S, stdin=subprocess.DEVNULL, env=child_environment.inherited())
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
