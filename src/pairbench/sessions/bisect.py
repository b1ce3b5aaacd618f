"""``bisect``: the commit that made a benchmark slower, found by paired comparisons of built revisions.

:class:`BisectSession` lists the commits from GOOD to BAD along BAD's first parents
(``measure.revisions.first_parent_line``), asks the search (``analysis.bisection``) which two to
compare, builds them in the build cache (``sessions.builds``: a tree built once is not built
again), and measures them (``confirm.measure_builds``): ``pairbench bench`` on the ``[confirm]
bench`` target, or ``pairbench compare`` on the ``[confirm] command``, in paired, interleaved rounds
that stop as soon as the interval lies on one side of the comparison's boundary. Each comparison's
result is written to ``.pairbench/bisect/`` in the project (journaled while it runs) and, with a
history store, stored like ``confirm``'s (the later commit's measurement; a command's results are
not, only its confirmations) with each benchmark's verdict as a confirmation. A middle commit that
does not build, whose benchmark fails or is not there, is skipped (as ``git bisect skip``); GOOD's
and BAD's must work. The budget (``budget_ns``) covers the whole search, builds included: a
comparison gets at most what is left, and none starts with less than ``MIN_COMPARISON_NS`` left.
Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pairbench.analysis.bisection import Answer, Pair, Search, Trial, effects_of
from pairbench.analysis.criteria import Boundary
from pairbench.analysis.history import bisect_filter
from pairbench.errors import (
    MeasurementError,
    NothingToMeasure,
    Terminated,
    UsageError,
)
from pairbench.frozen import frozen
from pairbench.measure.revisions import (
    commit_subject,
    commit_time,
    first_parent_line,
    resolve,
    toplevel,
)
from pairbench.model import BenchmarkKey
from pairbench.outputs import check_private_directory, private_directory
from pairbench.parsers import settings_from_stored
from pairbench.sessions.builds import (
    DEFAULT_KEEP,
    SHORT,
    BuildCache,
    Recipe,
    Revision,
    recipe_of,
    target_in,
)
from pairbench.sessions.commands import Outcome
from pairbench.sessions.confirm import Seams, measure_builds
from pairbench.settings import ALPHA_RANGE, Settings
from pairbench.store.project import Project

RESULTS_DIR = ".pairbench/bisect"
MIN_COMPARISON_NS = 2 * 10**9
"""The least budget a comparison is started with: less could not decide anything."""

Measure = Callable[[Settings, "Boundary | Mapping[str, Boundary]", Pair], Outcome]


@frozen
class Done:
    """A comparison made: the search's trial, where its result was written, how long it took
    (building included), and what the store said when it failed."""

    trial: Trial
    result: str | None
    seconds: float
    store_error: str | None = None


@dataclass
class Bisected:
    """A search's account: the commits, the comparisons made, the commits skipped (index -> why),
    the builds made and reused, and the answer."""

    session: BisectSession
    search: Search
    done: list[Done] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)
    interrupted: KeyboardInterrupt | None = None  # Ctrl-C, or SIGTERM/SIGHUP (errors.Terminated)
    subject: str | None = None  # the named commit's subject line

    @property
    def answer(self) -> Answer:
        return self.search.answer()

    def revision(self, index: int) -> Revision:
        return self.session.revision(index)


class BisectSession:
    """One ``pairbench bisect GOOD BAD`` in ``project`` (see the module docstring)."""

    def __init__(self, project: Project, good: str, bad: str, *, cache_dir: str | None = None):
        self.project = project
        self.recipe: Recipe = recipe_of(project, "bisect")
        repository = toplevel(str(project.root))
        if repository is None:
            raise UsageError(f"bisect checks revisions out of git, but {project.root} is in no git repository")
        self.repository = repository
        first, last = (resolve(name, repository, option="bisect") for name in (good, bad))
        if first == last:
            raise UsageError(f"bisect {good!r} {bad!r}: both name commit {first[:SHORT]}; give the last commit "
                             "known to be fast and the first known to be slow")
        self.commits = tuple(first_parent_line(first, last, repository))
        self.names = (good, bad)
        self.subdirectory = os.path.relpath(project.root, repository)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.results = Path(project.root) / RESULTS_DIR / f"{first[:SHORT]}-{last[:SHORT]}-{stamp}-{os.getpid()}"
        self._keys: dict[str, BenchmarkKey] = {}  # label -> the benchmark's key, as comparisons find them
        self.cache = BuildCache(self.recipe, repository, self.subdirectory, project.build_timeout_ns(),
                                directory=cache_dir)

    def revision(self, index: int) -> Revision:
        """Commit ``index`` of the line, named as given for GOOD and BAD."""
        commit = self.commits[index]
        name = {0: self.names[0], len(self.commits) - 1: self.names[1]}.get(index, commit[:SHORT])
        return Revision(name, commit)

    # ------------------------------------------------------------------ searching

    def run(self, settings: Settings, seams: Seams | None = None, *, budget_ns: int | None = None, store=None,
            keep_builds: int = DEFAULT_KEEP, clock: Callable[[], float] = time.monotonic,
            on_trial: Callable[[Done], None] | None = None, measure: Measure | None = None) -> Bisected:
        """Search (``settings``: the options every comparison shares), measuring with ``seams``
        (``measure``: what measures a comparison instead, for a test); ``store``: the history store's
        target, or None. Ctrl-C ends the search with what it found so far (``interrupted``)."""
        measure = measure or (lambda each, boundary, pair: measure_builds(each, seams, boundary))
        search = Search(self.commits, settings.decision.alpha, settings.decision.threshold)
        _check_level(search)
        self._results_directory(make=False)  # a link is refused before anything is built
        bisected = Bisected(self, search)
        started = clock()
        try:
            while (pair := search.next()) is not None:
                left = None if budget_ns is None else budget_ns - int((clock() - started) * 1e9)
                if left is not None and left < MIN_COMPARISON_NS:
                    search.stop("budget")
                    break
                done = self._compare(pair, search, bisected, settings, measure, left, store, clock)
                if done is not None and on_trial is not None:
                    on_trial(done)
        except KeyboardInterrupt as exc:
            bisected.interrupted = exc
            search.stop("interrupted")
        finally:
            self.cache.close(keep_builds)
        found = search.answer().commit
        if found is not None:
            bisected.subject = commit_subject(self.commits[found], self.repository)
        return bisected

    def _results_directory(self, *, make: bool = True) -> None:
        """``.pairbench/bisect/SEARCH`` in the project, made (``make``) or checked through no symbolic
        link (a checkout's own, which a repository can commit: ``outputs.private_directory``)."""
        relative = str(self.results.relative_to(self.project.root))
        try:
            (private_directory if make else check_private_directory)(self.project.root, relative)
        except OSError as exc:
            raise MeasurementError(f"cannot write bisect's results: {exc.strerror or exc}") from None

    def _compare(self, pair: Pair, search: Search, bisected: Bisected, settings: Settings, measure: Measure,
                 left: int | None, store, clock) -> Done | None:
        """Build and measure ``pair``, and record it; None when its middle commit was skipped."""
        began = clock()
        base = self.cache.built(self.revision(pair.base))  # GOOD, or an end compared before
        try:
            cand = self.cache.built(self.revision(pair.cand))
            targets = (target_in(self.recipe, base), target_in(self.recipe, cand))
        except MeasurementError as exc:
            return self._skip(pair, search, bisected, exc)
        path = self.results / f"{len(search.trials) + 1:02d}-{base.commit[:SHORT]}-{cand.commit[:SHORT]}.json"
        boundary = search.boundaries()
        if self.recipe.kind == "compare" and not isinstance(boundary, Boundary):
            boundary = boundary[self.recipe.label]  # a command is one benchmark
        try:
            outcome = measure(self._settings(settings, search, targets, (base, cand), left, path), boundary, pair)
        except NothingToMeasure as exc:  # the benchmark is not in that commit
            return self._skip(pair, search, bisected, exc)
        if outcome.interrupted:
            raise KeyboardInterrupt if outcome.signum == signal.SIGINT else Terminated(outcome.signum)
        if outcome.error is not None:
            return self._skip(pair, search, bisected, outcome.error)
        self._keys.update({self._label_of(key): key for key in outcome.run.benchmarks})
        effects = effects_of(outcome.run, self._label_of)
        if lacking := search.lacking(pair, effects):
            return self._skip(pair, search, bisected, NothingToMeasure(
                f"it has no benchmark {', '.join(map(repr, lacking))}, and none it has is slower by the step"))
        trial = search.record(pair, effects)
        written = str(path) if outcome.result_error is None else None
        done = Done(trial, written, clock() - began, self._store(store, outcome, (base, cand), written))
        bisected.done.append(done)
        return done

    def _skip(self, pair: Pair, search: Search, bisected: Bisected, error: Exception) -> None:
        """A middle commit that does not build or measure, or lacks the benchmark, is skipped; GOOD's,
        BAD's or an end's failure ends the search (the error passes on)."""
        if pair.purpose != "middle":
            raise error
        search.skip(pair.cand)
        bisected.skipped[pair.cand] = str(error)
        return None

    def _label_of(self, key: BenchmarkKey) -> str:
        return self.recipe.label if self.recipe.kind == "compare" else key.label

    def _settings(self, settings: Settings, search: Search, targets: tuple[str, str],
                  revisions: tuple[Revision, Revision], left: int | None, path: Path) -> Settings:
        """The options of one comparison: its targets and sides, its share of alpha, its budget, the
        benchmarks with a step (after the first), read again by the settings' own parsers (as
        ``confirm``'s, the seed kept); its result file."""
        stored = settings.stored()
        sampling, decision, workers = stored["sampling"], stored["decision"], stored.get("workers")
        if left is not None:
            sampling["max_time_ns"] = _least(sampling["max_time_ns"], left)
        if workers is not None:
            workers["suite_time_ns"] = workers["suite_time_ns"] if left is None else _least(workers["suite_time_ns"], left)
            workers["filter"] = self._filter(search, workers["filter"])
        decision["alpha"] = search.level
        again = settings_from_stored(settings.kind, targets, tuple(r.short for r in revisions), stored)
        self._results_directory()
        return dataclasses.replace(again, outputs=dataclasses.replace(settings.outputs, json_path=str(path),
                                                                      exported=()))

    def _filter(self, search: Search, given: str | None) -> str | None:
        """-k as given for the step; after it, exactly the benchmarks with a step (``history``'s
        filter of each: its name as its program lists it)."""
        if not search.steps:
            return given
        return "|".join(f"(?:{bisect_filter(self._keys[label])})" for label in search.steps)

    def _store(self, target, outcome: Outcome, revisions: tuple[Revision, Revision], written: str | None) -> str | None:
        """Keep the comparison in the history store like ``confirm``'s; what went wrong, or None."""
        if target is None:
            return None
        from pairbench.sessions.confirm import keep_confirmations
        from pairbench.sessions.record import record
        from pairbench.store.history import Provenance

        bench = self.recipe.kind == "bench"
        if bench:
            cand = revisions[1].commit
            provenance = Provenance(cand, commit_time(cand, self.repository), None, False, "bisect")
            recorded = record(outcome.run, outcome.analysis, target, result_path=written, provenance=provenance)
            if recorded.error is not None:
                return str(recorded.error)
        return keep_confirmations(outcome, revisions, self.recipe, target)[1]


def _least(limit: int | None, left: int) -> int:
    """A time limit no longer than what is ``left`` of the search's budget (None: no limit given)."""
    return left if limit is None else min(limit, left)


def _check_level(search: Search) -> None:
    """Each comparison's share of alpha must be one a comparison takes (``settings.ALPHA_RANGE``)."""
    least = ALPHA_RANGE[0]
    if search.level < least:
        raise UsageError(f"--alpha {search.alpha:g} split over the {search.limit} comparisons this search can make "
                         f"is {search.level:.3g} per comparison, below the least a comparison takes ({least:g}): "
                         f"give --alpha {least * search.limit:g} or more")
