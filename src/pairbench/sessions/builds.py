"""Revisions built to be measured: the project's ``[confirm]`` recipe, one build of a revision in
its worktree (its output kept in a log), what is measured there, and the cache of builds by tree.

The recipe is the ``[confirm]`` section of ``pairbench.toml`` (or ``[tool.pairbench.confirm]``):
``build``, run through ``sh -c`` in the revision's worktree, and what is measured there: ``bench``
(a benchmark program or Python benchmark files, measured by ``pairbench bench``) or ``command`` (a
command, measured by ``pairbench compare``, run in the worktree; ``name`` is its name in the
history). ``confirm`` builds its two revisions in temporary worktrees; ``bisect`` builds in the
:class:`BuildCache`, so that a revision whose tree was built before (in this search or an earlier
one) is not built again. Nothing here prints.

**The build cache.** A build is kept in ``GIT_DIR/pairbench/builds/KEY/`` (``GIT_DIR`` is the
repository's own git directory, ``git rev-parse --git-common-dir``: outside the working tree, gone
with the repository), ``KEY`` being the commit's tree hash and a digest of the build command and
the project's directory in the repository: two commits with the same files share a build; a new
build command builds again. An entry is a detached git worktree (so ``git worktree list`` shows it)
its build's log (``build.log``), and a ``built`` stamp written once the build succeeded; an entry
without one (a build that failed or was interrupted) is made afresh. While a search uses an entry it holds a lock on it. When a search
ends, the least recently used entries beyond ``keep`` (``bisect --keep-builds``, 16 by default) are
removed, never one another search holds. ``rm -rf "$(git rev-parse --git-common-dir)/pairbench"``
then ``git worktree prune`` removes them all.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from pairbench.errors import MeasurementError, UsageError
from pairbench.frozen import frozen
from pairbench.measure import children
from pairbench.measure.harnesses.detect import is_python_target
from pairbench.measure.revisions import add_worktree, common_git_dir, remove_worktree, tree_of
from pairbench.outputs import open_private, private_directory
from pairbench.parsers import parse_settings
from pairbench.settings import Settings
from pairbench.store.project import Project

LOG_TAIL = 5
SHORT = 10
CACHE_DIR = "pairbench/builds"
DEFAULT_KEEP = 16
_STAMP = "built"


@frozen
class Recipe:
    """How a revision is built and what is measured in it (the ``[confirm]`` section)."""

    build: str
    bench: str | None = None
    command: str | None = None
    name: str | None = None  # the command's name in the history (default: the command)

    @property
    def kind(self) -> str:
        """``bench`` or ``compare``: the command that measures it."""
        return "bench" if self.bench is not None else "compare"

    @property
    def label(self) -> str:
        """What the history calls the command's benchmark."""
        return self.name or self.command or ""

    def check_filter(self, pattern: str | None) -> None:
        """A command is one benchmark: -k must find its name (as ``history``'s ``bisect`` gives it)."""
        if self.kind == "compare" and pattern is not None and not re.search(pattern, self.label):
            raise UsageError(f"-k {pattern!r} does not match {self.label!r}, the one benchmark of [confirm] "
                             "command (its name is [confirm] name)")

    def settings(self, sides: tuple[str, ...], options: dict) -> Settings:
        """The settings of measuring this recipe's builds (two; a record's three, or one), from the options as the CLI read them:
        bench's for a bench target, compare's for a command (refusing bench's own options, but -k,
        which must name the command)."""
        if self.kind == "compare":
            given = [key for key in BENCH_ONLY if key != "filter" and options.get(key) is not None]
            if given:
                raise UsageError(f"--{given[0].replace('_', '-')} is for a [confirm] bench target; [confirm] "
                                 "command is one command, measured like pairbench compare")
            self.check_filter(options.get("filter"))
            options = {key: value for key, value in options.items() if key not in BENCH_ONLY}
        return parse_settings(self.kind, sides, options)


BENCH_ONLY = ("filter", "sample_time", "harness", "jobs", "shard", "balance", "suite_time", "repetitions")
"""Options for a bench target: a [confirm] command is one command, measured like compare's."""


def recipe_of(project: Project, command: str = "confirm") -> Recipe:
    """The project's recipe; ``UsageError`` saying what to write when it lacks one."""
    section = dict(project.confirm or {})
    where = project.file or Path(project.root) / "pairbench.toml"
    measured = [key for key in ("bench", "command") if key in section]
    if "build" not in section or len(measured) != 1:
        missing = "build and one of bench and command" if "build" not in section else "one of bench and command"
        raise UsageError(
            f"{command} needs {missing} in the [confirm] section of {where}: build, the command that builds "
            "a revision (run through sh -c in its worktree), and bench, what `pairbench bench` measures there "
            "(a worker program or Python benchmark files), or command, a command `pairbench compare` measures "
            "there (with name, its name in the history), e.g.\n"
            "  [confirm]\n  build = \"make bench\"\n  bench = \"build/bench\"")
    if "name" in section and "command" not in section:
        raise UsageError(f"{where}: [confirm] name names the command; give command too, or remove name")
    return Recipe(section["build"], section.get("bench"), section.get("command"), section.get("name"))


@frozen
class Revision:
    """A revision as given (``name``), the commit it names, and its tree once checked out (the
    project's directory in the worktree)."""

    name: str
    commit: str
    tree: str = ""

    @property
    def short(self) -> str:
        """``name (commit)``, or the commit alone when it was given by its hash."""
        return self.commit[:SHORT] if self.commit.startswith(self.name) else f"{self.name} ({self.commit[:SHORT]})"


def build(recipe: Recipe, revision: Revision, log: tuple[Path, int], timeout_ns: int) -> None:
    """Run the recipe's build in ``revision.tree`` under a keeper (``measure.children``), its output
    in ``log`` (its path, and a descriptor open on it, closed here); ``MeasurementError`` naming the
    revision and quoting the log's end when it fails or times out."""
    path, fd = log
    timeout_s = timeout_ns / 1e9
    with os.fdopen(fd, "wb") as out:
        status = children.run(["sh", "-c", recipe.build], timeout_s=timeout_s, cwd=revision.tree, stdout=out,
                              stderr=subprocess.STDOUT)
    why = (f"did not finish within {timeout_s:g} s (build_timeout)" if status is None
           else None if status == 0 else f"exited {status}")
    if why is not None:
        raise MeasurementError(
            f"revision {revision.name} ({revision.commit[:SHORT]}) does not build: {recipe.build!r} {why} in "
            f"its worktree; the build log is {path}{_tail(path)}")


def _tail(log: Path) -> str:
    try:
        lines = log.read_bytes()[-4096:].decode("utf-8", "replace").splitlines()[-LOG_TAIL:]
    except OSError:
        return ""
    # control characters in the log are made visible where the error is printed (the CLI)
    return "; it ends:\n" + "\n".join(f"  {line}" for line in lines) if lines else " (empty)"


def target_in(recipe: Recipe, revision: Revision) -> str:
    """What is measured in the built ``revision``: its bench target's path (a Python benchmark file or
    directory as it is; a program quoted, with the arguments ``[confirm] bench`` gives it), or the
    command run in its tree; ``MeasurementError`` when the build did not make the bench target. Only
    ``bench`` is split into words, never the tree's path, which may hold spaces."""
    if recipe.command is not None:
        return f"env -C {shlex.quote(revision.tree)} {recipe.command}"
    whole = os.path.join(revision.tree, recipe.bench)
    if is_python_target(whole):
        words = [recipe.bench]
    else:
        try:
            words = shlex.split(recipe.bench)
        except ValueError as exc:
            raise UsageError(f"[confirm] bench {recipe.bench!r} cannot be split into words: {exc}") from None
    program = os.path.join(revision.tree, words[0]) if words else whole
    if not words or not os.path.exists(program):
        raise MeasurementError(f"revision {revision.short} built, but {recipe.bench!r} is not in its worktree; "
                               "check [confirm] bench")
    return whole if is_python_target(whole) else shlex.join([program, *words[1:]])


class BuildCache:
    """Builds of ``recipe`` kept by tree in the repository's git directory (module docstring)."""

    def __init__(self, recipe: Recipe, repository: str, subdirectory: str, timeout_ns: int, *,
                 directory: str | None = None):
        self.recipe, self.repository, self.subdirectory, self.timeout_ns = recipe, repository, subdirectory, timeout_ns
        self.directory = Path(directory or os.path.join(common_git_dir(repository), CACHE_DIR))
        self.reused: list[str] = []  # commits whose build was found in the cache
        self.built_now: list[str] = []  # commits built by this search
        self._held: dict[str, int] = {}  # key -> its lock's descriptor, while this search uses it

    def key(self, commit: str) -> str:
        """The entry of ``commit``'s build: its tree, and a digest of what else decides the build."""
        recipe = hashlib.sha256(f"{self.recipe.build}\0{self.subdirectory}".encode()).hexdigest()[:12]
        return f"{tree_of(commit, self.repository)}-{recipe}"

    def built(self, revision: Revision) -> Revision:
        """``revision`` built (found in the cache, or built now), its ``tree`` the project's
        directory in the build's worktree; locked until :meth:`close`."""
        key = self.key(revision.commit)
        entry = self.directory / key
        self._lock(key)
        worktree = entry / "tree"
        here = Revision(revision.name, revision.commit, os.path.normpath(os.path.join(worktree, self.subdirectory)))
        stamp = entry / _STAMP
        if stamp.exists():
            os.utime(stamp)
            if revision.commit not in self.reused and revision.commit not in self.built_now:
                self.reused.append(revision.commit)
            return here
        remove_worktree(str(worktree), self.repository)
        private_directory(self.directory, key)
        add_worktree(str(worktree), revision.commit, self.repository)
        try:
            build(self.recipe, here, (entry / "build.log", open_private(entry, "build.log")), self.timeout_ns)
            if not os.path.exists(os.path.join(worktree, ".git")):
                raise MeasurementError(f"the build of revision {revision.short} removed its own worktree "
                                       f"({worktree}); check [confirm] build")
        except MeasurementError:
            remove_worktree(str(worktree), self.repository)
            raise
        with os.fdopen(open_private(entry, _STAMP), "w") as written:  # never through a link a build left
            written.write(f"{revision.commit}\n{self.recipe.build}\n")
        self.built_now.append(revision.commit)
        return here

    def _lock(self, key: str) -> None:
        if key in self._held:
            return
        self.directory.parent.mkdir(parents=True, exist_ok=True)  # in the git directory, which no commit holds
        private_directory(self.directory.parent, self.directory.name)
        fd = os.open(self.directory / f"{key}.lock", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # another search building the same tree: wait for it
        self._held[key] = fd

    def close(self, keep: int = DEFAULT_KEEP) -> list[str]:
        """Release this search's entries, then remove the least recently used beyond ``keep`` that
        no other search holds; the keys removed."""
        for fd in self._held.values():
            os.close(fd)
        self._held.clear()
        return self.evict(keep)

    def evict(self, keep: int) -> list[str]:
        entries = sorted(self._entries(), key=lambda pair: pair[1], reverse=True)
        removed = []
        for key, _ in entries[keep:]:
            with self._unless_held(key) as free:
                if free:
                    remove_worktree(str(self.directory / key / "tree"), self.repository)
                    with contextlib.suppress(OSError):
                        for leftover in (self.directory / key).iterdir():
                            leftover.unlink()
                        (self.directory / key).rmdir()
                    removed.append(key)
        return removed

    def _entries(self) -> Iterator[tuple[str, float]]:
        """Every entry and when it was last used (its stamp's time; an entry without one: never)."""
        if not self.directory.is_dir():
            return
        for entry in self.directory.iterdir():
            if entry.is_dir():
                stamp = entry / _STAMP
                yield entry.name, stamp.stat().st_mtime if stamp.exists() else 0.0

    @contextlib.contextmanager
    def _unless_held(self, key: str) -> Iterator[bool]:
        fd = os.open(self.directory / f"{key}.lock", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield True
        finally:
            os.close(fd)
