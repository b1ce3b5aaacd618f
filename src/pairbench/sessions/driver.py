"""The suite driver: every benchmark of a suite, paired on its sides, one lane per job.

For each benchmark, on the lane of the job that takes it (``sessions.lanes``):

1. **pilot**: the iteration count of a sample, a power of two equal on every
   side, about ``--sample-time`` of work (``measure.worker.choose_iterations``),
   where the lane takes counts; else one sample per side at the harness's own
   count;
2. **validation**: samples per side at 1/8, 1/4, 1/2 and all of that, in
   seeded random order, judged by the doctor's rules (setup overhead, elided
   body, memory growth, too short, too long, name length) after the rounds; a
   rule that fails becomes a note naming the benchmark and side;
3. **rounds**: one sample per side in random order, with the stopping rule
   after each (anytime-valid, at the suite's family-wise level), within the
   bracket of rounds the pilot sized from the benchmark's time budget
   (``sessions.sizing``; time stops it only at 1.5 times the budget).

Every sample outside the rounds is stored as a warmup and journaled as it
arrives, like those of the rounds. A benchmark that fails keeps what it took,
is named in a ``benchmark-failed`` note, and the others go on. With several
jobs each runs in its own thread with its own lane, taking the next benchmark
when it is done; Ctrl-C stops every job after its current round.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pairbench import preload
from pairbench.analysis import baseline_and_candidates, criteria_of
from pairbench.analysis.stopping import StoppingRule
from pairbench.doctor.samplechecks import check_name
from pairbench.doctor.workerchecks import validation_counts
from pairbench.errors import CommandFailed
from pairbench.measure.sampler import (
    LockedSink,
    Measured,
    RoundEnd,
    Sampler,
    SamplingPlan,
    Sink,
    StopRule,
)
from pairbench.measure.worker import choose_iterations
from pairbench.model import Run, Sample, Samples, append_metrics
from pairbench.notes import Note, Subject
from pairbench.sessions.lanes import (
    VALIDATION_ORDER,
    Lane,
    LaneFailed,
    Probe,
    benchmark_seed,
    block_rounds,
)
from pairbench.sessions.sizing import BUDGET_SLACK, SuiteBudget, bracket
from pairbench.settings import Settings
from pairbench.stats.sequential import first_bounded_n

FAILURE_ADVICE = "The other benchmarks go on; this one keeps the samples taken."
LISTED_AT_MOST = 20  # names a note lists
TOO_LONG_FACTOR = 2  # a sample of one iteration over twice --sample-time: the iteration is too long
PILOT_SAMPLES = 2  # per side and iteration count tried by the pilot; the quicker one counts
STATISTICS = (*preload.MODULES, "pairbench.doctor.workerchecks", "scipy.stats")
"""What judging the validation samples and the analysis import: loaded before the first sample
(``pairbench.preload``), in the main thread, so no job imports (nor waits on another's import)."""
SLOW_SAMPLE_NS = 100_000_000
"""A sample outside the rounds that costs more than this here (pytest's start-up: about a second) gets
one validation round instead of the lane's several: 4 points per side fit a line for the setup
overhead, though too few for the elided-body rank test, which then says it cannot tell."""

# (benchmark index, its label, how many, its stopping rule) -> the progress sink for it, or None
ProgressFactory = Callable[[int, str, int, StoppingRule | None], Sink | None]


@dataclass
class _Series:
    """The rows of one side of one benchmark and their metrics' columns, as they are taken."""

    rows: list[Sample] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)

    def add(self, row: Sample, metrics: Mapping[str, float]) -> None:
        self.rows.append(row)
        append_metrics(self.metrics, len(self.rows) - 1, metrics)


class _Stopped(Exception):
    """Another job was interrupted: this one stops after its round."""


class _StopCheck(Sink):
    def __init__(self, event: threading.Event):
        self.event = event

    def on_round(self, end: RoundEnd) -> None:
        if self.event.is_set():
            raise _Stopped


class SuiteDriver:
    """Measures benchmarks ``names`` (the harness's names, by index of ``skeleton.benchmarks``) on
    ``lanes`` (one per job) and keeps every sample, note and failure."""

    def __init__(self, settings: Settings, skeleton: Run, names: Sequence[str], lanes: Sequence[Lane], *,
                 sample_time_ns: int, journal: Sink | None = None, progress: ProgressFactory | None = None,
                 resolution_ns: int = 0, origin_ns: int | None = None):
        self.settings, self.skeleton, self.names, self.lanes = settings, skeleton, list(names), list(lanes)
        self.journal = LockedSink(journal) if journal is not None and len(lanes) > 1 else journal
        self.progress, self.resolution_ns, self.sample_time_ns = progress, resolution_ns, sample_time_ns
        self.samples: dict[tuple[int, int], Samples] = {}
        self.notes: list[Note] = []
        self.failures: list[str] = []
        self.skipped: list[str] = []
        self.spent_ns: dict[int, int] = {}  # benchmark -> time measuring it took, pilot included
        self._origin = time.monotonic_ns() if origin_ns is None else origin_ns
        self._numbering = itertools.count().__next__
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._local = threading.local()  # per job: what its latest probe cost
        self._queue = list(enumerate(self.names))
        sampling = settings.sampling
        self.budget = SuiteBudget(settings.workers.suite_time_ns, sampling.max_time_ns, len(self.names),
                                  len(self.lanes))

    # ------------------------------------------------------------------ jobs

    def all(self) -> None:
        """Measure every benchmark; ``KeyboardInterrupt`` passes through once every job has stopped.

        Several jobs run in threads, each pinned to its lane's CPU (where its samples run), so one
        job's own work never runs on the CPU of another job's sample; the main thread sleeps until
        they end (no polling)."""
        preload.load(STATISTICS)
        if len(self.lanes) == 1:
            self._work(self.lanes[0])
            return
        errors: list[BaseException] = []
        ended = threading.Semaphore(0)
        threads = [threading.Thread(target=self._guarded, args=(lane, errors, ended), name=f"pairbench-job-{j}",
                                    daemon=True) for j, lane in enumerate(self.lanes)]
        for thread in threads:
            thread.start()
        try:
            for _ in threads:
                ended.acquire()  # Ctrl-C interrupts the wait
        except KeyboardInterrupt:
            self._stop.set()
            for thread in threads:
                thread.join()
            raise
        if errors:
            raise errors[0]

    def _guarded(self, lane: Lane, errors: list[BaseException], ended: threading.Semaphore) -> None:
        try:
            _pin_this_thread(lane.cpu)
            self._work(lane)
        except _Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            errors.append(exc)
            self._stop.set()
        finally:
            ended.release()

    def _work(self, lane: Lane) -> None:
        while not self._stop.is_set():
            with self._lock:
                if not self._queue:
                    return
                b, name = self._queue.pop(0)
            measure, budget = self.budget.next()
            if not measure:
                with self._lock:
                    self.skipped.append(self.skeleton.benchmarks[b].label)
                continue
            start = time.monotonic_ns()
            try:
                self.one(lane, b, name, budget)
            finally:
                with self._lock:
                    self.spent_ns[b] = time.monotonic_ns() - start

    # ------------------------------------------------------------------ one benchmark

    def one(self, lane: Lane, b: int, name: str, budget_ns: int | None) -> None:
        """Measure benchmark ``b``: pilot, validation, then rounds until decided or out of budget."""
        label = self.skeleton.benchmarks[b].label
        taken = [_Series() for _ in self.skeleton.sides]
        notes: list[Note] = []
        try:
            iterations = self._pilot(lane, b, name, taken)
            probes, round_ns = self._validate(lane, b, name, iterations, taken)
        except LaneFailed as exc:
            self._failed(label, f"benchmark {label!r} failed before it was measured (while its sample was sized "
                                f"and checked): {exc}")
            self._store(b, taken, notes)
            return
        sampling = self.settings.sampling
        targets, sinks, per_block = lane.rounds(b, name, iterations, self.sample_time_ns,
                                                block_rounds(len(taken), self.sample_time_ns))
        rule = self._rule(b, per_block)
        most = bracket(budget_ns, round_ns, sampling.min_runs, sampling.max_runs,
                       first_verdict=_first_verdict(rule, per_block))
        progress = self.progress(b, label, len(self.skeleton.benchmarks), rule) if self.progress else None
        limit = budget_ns if most is None or budget_ns is None or most == sampling.max_runs \
            else int(budget_ns * BUDGET_SLACK)
        plan = SamplingPlan(targets=targets, stop=StopRule(sampling.runs, sampling.min_runs, most, limit),
                            warmup_rounds=sampling.warmup if lane.warms_up else 0, timeout_ns=sampling.timeout_ns,
                            seed=benchmark_seed(sampling.seed, b), failure_advice=FAILURE_ADVICE)
        sampler = Sampler(lane.executor, plan, origin_ns=self._origin, numbering=self._numbering,
                          sinks=[s for s in (*sinks, self.journal, rule, progress, _StopCheck(self._stop))
                                 if s is not None],
                          decide=rule.decide if rule and sampling.adaptive else None)
        try:
            sampler.run()
        except CommandFailed as exc:
            self._failed(label, str(exc).removesuffix(" " + FAILURE_ADVICE))
        finally:
            for side, series in enumerate(taken):
                for row, metrics in zip(sampler.rows.get((b, side), []),
                                        _rows_of(sampler.metrics.get((b, side), {})), strict=False):
                    series.add(row, metrics)
            try:  # a Ctrl-C while judging must not lose the samples: stored in any case
                notes.extend(self._validation_notes(lane, b, probes))
            finally:
                notes.extend(sampler.notes)
                self._store(b, taken, notes)

    def _pilot(self, lane: Lane, b: int, name: str, taken: list[_Series]) -> int | None:
        """The iteration count of a sample (None: the harness chooses it from --sample-time)."""
        sides = range(len(taken))
        if not lane.explicit_iterations:
            for side in sides:
                self._take(lane, side, name, b, None, self.sample_time_ns, taken)
            return None

        def slowest(n: int) -> float:
            """The slowest side's time of ``n`` iterations, each side's the quicker of two samples: a
            sample another task preempted must not size the benchmark's samples."""
            return max(min(self._take(lane, side, name, b, n, self.sample_time_ns, taken).measured_ns
                           for _ in range(PILOT_SAMPLES)) for side in sides)

        return choose_iterations(slowest, self.sample_time_ns)

    @property
    def _pilot_cost_ns(self) -> int:
        """What the latest sample outside the rounds cost here (a harness's start-up included)."""
        return getattr(self._local, "cost_ns", 0)

    def _validate(self, lane: Lane, b: int, name: str, iterations: int | None, taken: list[_Series],
                  ) -> tuple[list[list[tuple[bool, Probe]]], int]:
        """Take each side's validation samples of benchmark ``b`` (at 1/8, 1/4, 1/2 and all of the
        sample, in seeded random order); return them, each marked True at the full sample, and what a
        round costs here (the sides' median cost at the full sample). They are judged after the
        rounds (``_validation_notes``), once the statistics the checks use have loaded."""
        sides = len(taken)
        sizes = (validation_counts(iterations) if iterations is not None
                 else tuple(self.sample_time_ns * k // 8 for k in (1, 2, 4, 8)))
        order = np.random.default_rng(benchmark_seed(self.settings.sampling.seed, b, VALIDATION_ORDER))
        probes: list[list[tuple[bool, Probe]]] = [[] for _ in range(sides)]
        for _ in range(lane.validation_rounds if self._pilot_cost_ns < SLOW_SAMPLE_NS else 1):
            for draw in order.permutation(sides * len(sizes)):
                side, k = divmod(int(draw), len(sizes))
                count, time_ns = (sizes[k], self.sample_time_ns) if iterations is not None else (None, sizes[k])
                probes[side].append((k == len(sizes) - 1, self._take(lane, side, name, b, count, time_ns, taken)))
        return probes, int(sum(float(np.median([p.cost_ns for full, p in side_probes if full]))
                               for side_probes in probes))

    def _validation_notes(self, lane: Lane, b: int, probes: list[list[tuple[bool, Probe]]]) -> list[Note]:
        """A note for each check benchmark ``b``'s validation samples fail, per side, and for its name
        when it was given to pairbench's harness (another suite's long names are its authors')."""
        label = self.skeleton.benchmarks[b].label
        notes = []
        for side, taken_probes in enumerate(probes):
            about = Subject(benchmark=label, side=self.skeleton.sides[side].name)
            views = [p.view() for _, p in taken_probes]
            for finding in lane.validate(views, [p.memory_kib for _, p in taken_probes], self.resolution_ns):
                if finding.status == "warn":
                    code = lane.memory_code if finding.check == "memory-growth" else f"benchmark-{finding.check}"
                    notes.append(Note(code, {**finding.data, "harness": lane.harness}, about))
            full = [p for at_full, p in taken_probes if at_full]
            notes.extend(_too_long(full, self.sample_time_ns, about))
        named = check_name(label)
        if named.status == "warn" and lane.names_chosen:
            notes.append(Note("benchmark-name", named.data, Subject(benchmark=label)))
        return notes

    def _take(self, lane: Lane, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int,
              taken: list[_Series]) -> Probe:
        """One sample outside the rounds: stored as a warmup, journaled, kept in ``taken``."""
        probe = lane.probe(side, name, b, iterations, sample_time_ns)
        self._local.cost_ns = probe.cost_ns
        sample = Sample(**{**probe.sample.__dict__, "seq": self._numbering(), "slot": side})
        if self.journal is not None:
            self.journal.on_sample(Measured(side, b, sample, probe.metrics))
        taken[side].add(sample, probe.metrics)
        return probe

    def _rule(self, b: int, per_block: int | None) -> StoppingRule | None:
        if len(self.skeleton.sides) < 2:
            return None
        base, candidates = baseline_and_candidates(self.skeleton)
        return StoppingRule(criteria_of(self.skeleton), base, candidates, benchmark_ids=(b,),
                            block_rounds=per_block)

    def _store(self, b: int, series: list[_Series], notes: list[Note]) -> None:
        with self._lock:
            for side, taken in enumerate(series):
                if taken.rows:
                    self.samples[(b, side)] = Samples.from_rows(taken.rows, taken.metrics)
            self.notes.extend(notes)

    def _failed(self, label: str, why: str) -> None:
        """Benchmark ``label`` failed (``why`` names it and the side): said at the end, and noted."""
        with self._lock:
            self.failures.append(why)
            self.notes.append(Note("benchmark-failed", {"benchmark": label, "why": why}))

    def skipped_note(self) -> Note | None:
        """The note of the benchmarks the suite's budget left no time for, if any."""
        if not self.skipped:
            return None
        return Note("suite-budget-spent", {"count": len(self.skipped), "names": self.skipped[:LISTED_AT_MOST],
                                           "suite_time_ns": self.settings.workers.suite_time_ns})


def _pin_this_thread(cpu: int | None) -> None:
    """Run the calling thread on ``cpu`` only (Linux pins threads one by one); nothing without one."""
    if cpu is not None:
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setaffinity(0, {cpu})


def _first_verdict(rule: StoppingRule | None, per_block: int | None) -> int:
    """The rounds before which no verdict can be reached: the confidence sequence is unbounded
    below ``first_bounded_n`` values (blocks, when rounds come in blocks). A bracket below it
    would stop every benchmark undecided."""
    if rule is None or not rule.criteria.anytime:
        return 0
    return first_bounded_n(rule.criteria.level_alpha, rule.criteria.t_opt) * (per_block or 1)


def _rows_of(columns: Mapping[str, list[float]]):
    """The metric columns of a series as one mapping per row."""
    names = list(columns)
    for values in zip(*(columns[n] for n in names), strict=True):
        yield dict(zip(names, values, strict=True))
    if not names:
        yield from itertools.repeat({})


def _too_long(full: Sequence[Probe], sample_time_ns: int, about: Subject) -> list[Note]:
    """A note when even one iteration makes a sample over ``TOO_LONG_FACTOR`` times --sample-time."""
    if not full:
        return []
    per_sample = float(np.median([p.measured_ns for p in full]))
    iterations = int(np.median([p.sample.iterations for p in full]))
    if iterations > 1 or per_sample <= TOO_LONG_FACTOR * sample_time_ns:
        return []
    return [Note("benchmark-too-long", {"iteration_ns": per_sample / max(iterations, 1),
                                        "sample_time_ns": sample_time_ns}, about)]
