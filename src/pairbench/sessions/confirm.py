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
The benchmarks measured are those whose history on this machine has a step between the two
commits (:func:`flagged_filter`), unless -k chose. :func:`measure_builds` measures two builds,
for ``confirm`` and for each comparison of ``bisect``. The CLI prints and records; nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from pairbench.analysis import Analysis
from pairbench.errors import MeasurementError, UsageError
from pairbench.frozen import frozen
from pairbench.measure.revisions import checkout, resolve, toplevel
from pairbench.model import BenchmarkKey, utc_now
from pairbench.outputs import open_private, private_directory
from pairbench.parsers import settings_from_stored
from pairbench.sessions.builds import SHORT, Revision, build, recipe_of, target_in
from pairbench.sessions.commands import ExecutorFactory, Outcome, Session
from pairbench.sessions.result import ProgressFactory
from pairbench.settings import Settings
from pairbench.store.history import Confirmation
from pairbench.store.project import Project

LOG_DIR = ".pairbench/confirm"


@frozen
class Seams:
    """What measures two builds, as the command line's ``App`` gives it: the executors of commands, the
    machine's metadata (read at each measurement), ``bench``'s workers, and the progress display."""

    executor_factory: ExecutorFactory | None
    environment: Callable[[], Mapping]
    workers: object | None = None
    progress: ProgressFactory | None = None


def measure_builds(settings: Settings, seams: Seams, boundary=None, *, anchored: bool = False) -> Outcome:
    """Measure the builds ``settings`` names: ``bench`` on bench targets, ``compare`` on a command;
    ``boundary``: what ``bisect`` decides against, instead of the verdict; ``anchored``: the third
    build is an anchor (``record``), compared with the second in the same rounds."""
    if settings.kind != "bench":
        session = Session(settings, seams.executor_factory, seams.environment(), boundary=boundary,
                          anchored=anchored)
        return session.measure(seams.progress)
    from pairbench.sessions.bench import BenchSession

    return BenchSession(settings, seams.environment(), executor_factory=seams.executor_factory,
                        workers=seams.workers, boundary=boundary, anchored=anchored).measure(seams.progress)


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
        self.recipe = recipe_of(project)
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
                log, fd = self._log(revision)
                build(self.recipe, here, (log, fd), self.project.build_timeout_ns())
                built.append(here)
            yield tuple(built)

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
        """What is measured in each tree; ``MeasurementError`` when a build did not make it."""
        return target_in(self.recipe, built[0]), target_in(self.recipe, built[1])

    def measure(self, settings: Settings, seams: Seams, flagged: str | None = None) -> tuple[Settings, Outcome]:
        """Build both revisions and measure them (``flagged``: the benchmarks with a step, when -k did not
        choose); the settings they were measured with, and the outcome."""
        names = tuple(f"{r.name} ({r.commit[:SHORT]})" if r.name != r.commit else r.commit[:SHORT]
                      for r in self.revisions)
        with self.built() as built:
            settings = bench_settings(settings, self.targets(built), names, flagged)
            return settings, measure_builds(settings, seams)

    def flagged(self, target, environment: Callable[..., Mapping]) -> tuple[str | None, list[BenchmarkKey]]:
        """The -k pattern of the benchmarks whose history on this machine (``environment`` reads its
        metadata) has a step between the two commits, and them; (None, []) when the store knows no
        such machine or history."""
        from pairbench.errors import StoreError
        from pairbench.sessions.history import load_history, this_machine
        from pairbench.sessions.record import open_store

        machine = this_machine(environment, target)

        with open_store(target, read_only=True) as opened:
            stored = next((m for m in opened.machines() if m.fingerprint == machine.fingerprint), None)
            if stored is None:
                return None, []
            try:
                found = load_history(opened, stored, (), None)
            except StoreError:
                return None, []
        keys = flagged_benchmarks(found.histories, self.revisions)
        return filter_for(keys), keys


def confirmations(outcome: Outcome, revisions: tuple[Revision, Revision], *, name: str | None = None,
                  stored: bool = True) -> list[tuple[BenchmarkKey, Confirmation]]:
    """What each comparison of the paired re-measurement says of the step (module docstring).
    ``name``: what the history calls a whole command's benchmark (``[confirm] name``); ``stored``:
    whether the run is in the store too (each confirmation then names it)."""
    analysis: Analysis | None = outcome.analysis
    if analysis is None:
        return []
    from pairbench.store.history import result_uid

    uid, when = result_uid(outcome.run) if stored else None, utc_now()
    found = []
    for c in analysis.real_comparisons:
        effect = c.effect
        key = c.benchmark if name is None or c.benchmark.name != "command" else \
            BenchmarkKey(name, c.benchmark.params, c.benchmark.unit)
        found.append((key, Confirmation(
            benchmark_id=0, before=revisions[0].commit, after=revisions[1].commit, status=status_of(c.verdict),
            verdict=c.verdict.verdict, effect=effect.estimate if effect else None,
            effect_low=effect.low if effect else None, effect_high=effect.high if effect else None,
            result_uid=uid, confirmed_at=when)))
    return found


def keep_confirmations(outcome: Outcome, revisions: tuple[Revision, Revision], recipe, target,
                       ) -> tuple[list[tuple[BenchmarkKey, Confirmation]], str | None]:
    """The :func:`confirmations` of ``outcome`` (named as ``recipe`` names its benchmarks), added to
    ``target``'s store when there are any: them, and what went wrong adding them (None)."""
    from pairbench.errors import StoreError
    from pairbench.sessions.record import machine_for, open_store

    bench = recipe.kind == "bench"
    found = confirmations(outcome, revisions, name=None if bench else recipe.label, stored=bench)
    if found:
        try:
            with open_store(target) as opened:
                opened.add_confirmations(machine_for(outcome.run, target), found)
        except StoreError as exc:
            return found, str(exc)
    return found, None


def status_of(verdict) -> str:
    """confirmed (a change), rejected (none that matters), or inconclusive."""
    if verdict.verdict in ("slower", "faster"):
        return "rejected" if verdict.negligible else "confirmed"
    return "rejected" if verdict.verdict == "equivalent" else "inconclusive"


def bench_settings(settings: Settings, targets: tuple[str, str], names: tuple[str, str],
                   flagged: str | None) -> Settings:
    """``settings`` (from the command line) measuring the two builds' ``targets``, parsed again by
    the same parsers (names and the flagged pattern checked, the seed the first parse drew kept);
    a bench suite keeps the ``flagged`` benchmarks unless -k chose. The outputs are the first
    parse's, checked then."""
    import dataclasses

    stored = settings.stored()
    if settings.workers is not None and flagged and not settings.workers.filter:
        stored["workers"] = {**stored["workers"], "filter": flagged}
    again = settings_from_stored(settings.kind, targets, names, stored)
    return dataclasses.replace(again, outputs=settings.outputs)


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
