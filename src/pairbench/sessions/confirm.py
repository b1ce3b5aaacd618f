"""``confirm``: two commits built side by side and measured again in paired rounds.

A step the history found between two commits is evidence from separate runs,
at separate times. :class:`Confirmation` checks each revision out into a
temporary git worktree, builds it with the project's ``[confirm] build``
command (its output kept in ``.pairbench/confirm/build-COMMIT.log``), and
runs ``bench`` on the two builds' ``[confirm] bench`` target: interleaved,
randomized paired rounds, one benchmark after another, with the verdicts of
``pairbench bench``. Each benchmark's verdict is a confirmation: a change
(slower or faster, not negligible) confirms, an equivalent or negligible one
rejects, and anything else leaves the step unconfirmed (``inconclusive``).
The CLI records them in the store with the result; nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pairbench.analysis import Analysis
from pairbench.errors import MeasurementError, UsageError
from pairbench.measure import children
from pairbench.measure.revisions import checkout, resolve, toplevel
from pairbench.model import BenchmarkKey
from pairbench.outputs import open_private, private_directory
from pairbench.sessions.commands import Outcome
from pairbench.store.history import Confirmation, utc_now
from pairbench.store.project import Project

LOG_DIR = ".pairbench/confirm"
LOG_TAIL = 5
SHORT = 10


@dataclass(frozen=True)
class Revision:
    """A revision as given (``name``), the commit it names, and its worktree once checked out."""

    name: str
    commit: str
    tree: str = ""


def required(project: Project) -> tuple[str, str]:
    """The project's ``[confirm] build`` and ``bench``; ``UsageError`` saying how to write them."""
    confirm = project.confirm or {}
    missing = [key for key in ("build", "bench") if key not in confirm]
    if missing:
        where = project.file or Path(project.root) / "pairbench.toml"
        raise UsageError(
            f"confirm needs {' and '.join(missing)} in the [confirm] section of {where}: build, the command that "
            "builds a revision (run through sh -c in its worktree), and bench, what `pairbench bench` "
            "measures there (a worker program or Python benchmark files), e.g.\n"
            "  [confirm]\n  build = \"make bench\"\n  bench = \"build/bench\"")
    return confirm["build"], confirm["bench"]


def filter_for(keys: Iterable[BenchmarkKey]) -> str | None:
    """A ``-k`` pattern that keeps the benchmarks named by ``keys`` (whatever their parameters)."""
    names = sorted({key.name for key in keys})
    if not names:
        return None
    return "^(?:" + "|".join(re.escape(name) for name in names) + r")(?:\[.*\])?$"


class ConfirmSession:
    """Check out, build and measure two revisions of ``project`` (see the module docstring)."""

    def __init__(self, project: Project, before: str, after: str):
        self.project = project
        self.build, self.bench = required(project)
        self.repository = toplevel(str(project.root))
        if self.repository is None:
            raise UsageError(f"confirm checks revisions out of git, but {project.root} is in no git repository")
        self.revisions = tuple(Revision(name, resolve(name, self.repository, option="confirm"))
                               for name in (before, after))
        if self.revisions[0].commit == self.revisions[1].commit:
            raise UsageError(f"confirm {before!r} {after!r}: both name commit {self.revisions[0].commit[:SHORT]}; "
                             "a step lies between two different commits (pairbench history names them)")
        self.subdirectory = os.path.relpath(project.root, self.repository)

    @contextlib.contextmanager
    def built(self):
        """Both revisions checked out and built: the two ``Revision`` with their trees."""
        with contextlib.ExitStack() as stack:
            built = []
            for revision in self.revisions:
                tree = stack.enter_context(checkout(revision.commit, self.repository, option="confirm"))
                here = Revision(revision.name, revision.commit,
                                os.path.normpath(os.path.join(tree, self.subdirectory)))
                self._build(here)
                built.append(here)
            yield tuple(built)

    def _build(self, revision: Revision) -> None:
        log, fd = self._log(revision)
        timeout_s = self.project.build_timeout_ns() / 1e9
        with os.fdopen(fd, "wb") as out:
            status = children.run(["sh", "-c", self.build], timeout_s=timeout_s, cwd=revision.tree, stdout=out,
                                  stderr=subprocess.STDOUT)
            why = (f"did not finish within {timeout_s:g} s (build_timeout)" if status is None
                   else None if status == 0 else f"exited {status}")
        if why is not None:
            raise MeasurementError(
                f"revision {revision.name} ({revision.commit[:SHORT]}) does not build: {self.build!r} {why} in "
                f"its worktree; the build log is {log}{_tail(log)}")

    def provenance(self):
        """Where the re-measurement is kept in the history: the later revision's commit (the candidate
        side), with its committer time, never dirty; it joins that commit's point (``history``)."""
        from pairbench.measure.revisions import commit_time
        from pairbench.store.history import Provenance

        after = self.revisions[1].commit
        return Provenance(after, commit_time(after, self.repository), None, False, "confirm")
    def _log(self, revision: Revision) -> tuple[Path, int]:
        """The build log of ``revision``, opened: ``.pairbench/confirm`` in the project, through no
        symbolic link (a checkout's own, which a repository can commit: ``outputs.private_directory``)."""
        try:
            directory = private_directory(self.project.root, LOG_DIR)
            name = f"build-{revision.commit[:SHORT]}.log"
            return directory / name, open_private(directory, name)
        except OSError as exc:
            raise MeasurementError(f"cannot write the build log of revision {revision.name}: "
                                   f"{exc.strerror or exc}") from None

    def targets(self, built: tuple[Revision, Revision]) -> tuple[str, str]:
        """What ``bench`` measures in each tree; ``MeasurementError`` when a build did not make it."""
        paths = []
        for revision in built:
            path = os.path.join(revision.tree, self.bench)
            if not os.path.exists(path.split()[0]):
                raise MeasurementError(f"revision {revision.name} ({revision.commit[:SHORT]}) built, but "
                                       f"{self.bench!r} is not in its worktree; check [confirm] bench")
            paths.append(path)
        return paths[0], paths[1]


def _tail(log: Path) -> str:
    try:
        lines = log.read_bytes()[-4096:].decode("utf-8", "replace").splitlines()[-LOG_TAIL:]
    except OSError:
        return ""
    # control characters in the log are made visible where the error is printed (the CLI)
    return "; it ends:\n" + "\n".join(f"  {line}" for line in lines) if lines else " (empty)"


def confirmations(outcome: Outcome, revisions: tuple[Revision, Revision]) -> list[tuple[BenchmarkKey, Confirmation]]:
    """What each comparison of the paired re-measurement says of the step (module docstring)."""
    analysis: Analysis | None = outcome.analysis
    if analysis is None:
        return []
    from pairbench.store.history import result_uid

    uid, when = result_uid(outcome.run), utc_now()
    found = []
    for c in analysis.real_comparisons:
        effect = c.effect
        found.append((c.benchmark, Confirmation(
            benchmark_id=0, before=revisions[0].commit, after=revisions[1].commit, status=status_of(c.verdict),
            verdict=c.verdict.verdict, effect=effect.estimate if effect else None,
            effect_low=effect.low if effect else None, effect_high=effect.high if effect else None,
            result_uid=uid, confirmed_at=when)))
    return found


def status_of(verdict) -> str:
    """confirmed (a change), rejected (none that matters), or inconclusive."""
    if verdict.verdict in ("slower", "faster"):
        return "rejected" if verdict.negligible else "confirmed"
    return "rejected" if verdict.verdict == "equivalent" else "inconclusive"


def flagged_benchmarks(histories: Iterable, revisions: tuple[Revision, Revision]) -> list[BenchmarkKey]:
    """The benchmarks whose history has a step between the two commits."""
    before, after = (r.commit for r in revisions)
    flagged = []
    for history in histories:
        position: Mapping[str, int] = {}
        for i, point in enumerate(history.points):
            if point.commit is not None and not point.dirty:
                position.setdefault(point.commit, i)
        start, end = position.get(before), position.get(after)
        if any((s.before, s.after) == (before, after) or (start is not None and end is not None and
                                                          start < s.index <= end) for s in history.steps):
            flagged.append(history.benchmark)
    return flagged
