"""The suite driver: every benchmark of a suite, paired on its sides, one lane per job.

For each benchmark, on the lane of the job that takes it (``sessions.lanes``):

1. **pilot**: the iteration count of a sample, a power of two equal on every
   side, about ``--sample-time`` of work (``measure.worker.choose_iterations``)
   but long enough that a sample's fixed cost is at most 1% of the quickest
   side's (``measure.fixed_cost``), where the lane takes counts; else one
   sample per side at the harness's own count;
2. **validation**: samples per side at 1/8, 1/4, 1/2 and all of that, in
   seeded random order, each marked with its share of a sample (the metric
   ``validation``; a worker's also with its resident memory after it), which
   the analysis judges by the doctor's rules (``analysis.validation``: setup
   overhead, elided body, memory growth, too short, too long, name length);
3. **rounds**: one sample per side in random order, with the stopping rule
   after each (anytime-valid, at the suite's family-wise level), within the
   bracket of rounds the pilot sized from the benchmark's time budget
   (``sessions.sizing``; time stops it only at 1.5 times the budget).

The pilot's and validation's samples are taken by the benchmark's one
sampler before its rounds (``Sampler.take``, ``Sampler.unpaired``), stored as
warmups and journaled as they arrive, like those of the rounds. A benchmark that fails keeps what it took,
is named in a ``benchmark-failed`` note, and the others go on. With several
jobs each runs in its own thread with its own lane, taking the next benchmark
when it is done; Ctrl-C stops every job after its current round.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import threading
import time
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.ma  # noqa: F401 - np.median (a suite's costs, between samples) imports it at its first call

from pairbench.analysis import comparison_pairs, criteria_of
from pairbench.analysis.criteria import Boundary, SizedChange
from pairbench.analysis.effect import plan_rounds
from pairbench.analysis.stopping import StoppingRule
from pairbench.errors import CommandFailed
from pairbench.harness_registry import PAIRBENCH
from pairbench.measure.fixed_cost import FixedCost, ProbeTimes, floor_sample
from pairbench.measure.sampler import (
    LockedSink,
    Measured,
    RoundEnd,
    Sampler,
    SamplingPlan,
    Sink,
    StopRule,
)
from pairbench.measure.worker import choose_iterations, quickest_probe
from pairbench.model import VALIDATION_METRIC, Run, Samples, describe_status
from pairbench.notes import Note, Subject
from pairbench.sessions.lanes import (
    VALIDATION_ORDER,
    Lane,
    LaneFailed,
    benchmark_seed,
    block_rounds,
)
from pairbench.sessions.result import ProgressFactory
from pairbench.sessions.sizing import (
    BUDGET_SLACK,
    EXTENSION_CAP,
    HOPELESS,
    Spending,
    SuiteBudget,
    bracket,
)
from pairbench.settings import Settings

FAILURE_ADVICE = "The other benchmarks go on; this one keeps the samples taken."
LISTED_AT_MOST = 20  # names a note lists
VALIDATION_SHARES = (1, 2, 4, 8)
"""Validation samples are 1/8, 1/4, 1/2 and all of a sample (eighths)."""
SLOW_SAMPLE_NS = 100_000_000
"""A sample outside the rounds that costs more than this here (pytest's start-up: about a second) gets
one validation round instead of the lane's several: 4 points per side fit a line for the setup
overhead, though too few for the elided-body rank test, which then says it cannot tell."""

Boundaries = Boundary | Mapping[str, Boundary] | SizedChange | None
"""What ``bisect`` decides a suite's comparisons against: one boundary for all, or one per benchmark label;
or what a ``record`` link waits for besides its verdict (``analysis.criteria.SizedChange``)."""


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
                 origin_ns: int | None = None, boundary: Boundaries = None):
        """``boundary``: what ``bisect`` decides each benchmark against (by label), instead of its verdict."""
        self.settings, self.skeleton, self.names, self.lanes = settings, skeleton, list(names), list(lanes)
        self.boundary = boundary
        self.journal = LockedSink(journal) if journal is not None and len(lanes) > 1 else journal
        self.progress, self.sample_time_ns = progress, sample_time_ns
        self.samples: dict[tuple[int, int], Samples] = {}
        self.notes: list[Note] = []
        self.failures: list[str] = []
        self.skipped: list[str] = []
        self._origin = time.monotonic_ns() if origin_ns is None else origin_ns
        self._numbering = itertools.count().__next__
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._local = threading.local()  # per job: what its latest sample outside the rounds cost
        self._queue = list(enumerate(self.names))
        self._fixed: FixedCost | None = None
        self.budget = SuiteBudget(settings.workers.suite_time_ns, settings.sampling.max_time_ns, len(self.names),
                                  len(self.lanes))

    # ------------------------------------------------------------------ jobs

    def all(self) -> None:
        """Measure every benchmark; ``KeyboardInterrupt`` passes through once every job has stopped.

        Several jobs run in threads, each pinned to its lane's CPU (where its samples run), so one
        job's own work never runs on the CPU of another job's sample; the main thread sleeps until
        they end (no polling)."""
        self.fixed_cost()
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
            self.one(lane, b, name, budget)

    # ------------------------------------------------------------------ one benchmark

    def one(self, lane: Lane, b: int, name: str, budget_ns: int | None) -> None:
        """Measure benchmark ``b``: pilot, validation, then rounds until decided or out of budget."""
        label = self.skeleton.benchmarks[b].label
        sampling = self.settings.sampling
        outside = SamplingPlan((), StopRule(runs=0), timeout_ns=sampling.timeout_ns)  # the rounds' plan comes later
        sampler = Sampler(lane.executor, outside, sinks=[self.journal] if self.journal else [],
                          origin_ns=self._origin, numbering=self._numbering)
        try:
            try:
                iterations = self._pilot(lane, sampler, b, name)
                round_ns = self._validate(lane, sampler, b, name, iterations)
            except LaneFailed as exc:
                self._failed(label, f"benchmark {label!r} failed before it was measured (while its sample was "
                                    f"sized and checked): {exc}")
                return
            self._rounds(lane, sampler, b, name, iterations, round_ns, budget_ns)
        finally:
            with self._lock:
                self.samples.update(sampler.series())
                self.notes.extend(sampler.notes)

    def fixed_cost(self) -> FixedCost:
        """What a sample costs besides its iterations (``measure.fixed_cost``): measured once, by the
        first lane, in the calling thread (``all``: before any job starts, so during no sample)."""
        if self._fixed is None:
            self._fixed = self.lanes[0].fixed_cost() if self.lanes else FixedCost()
        return self._fixed

    def _rounds(self, lane: Lane, sampler: Sampler, b: int, name: str, iterations: int | None, round_ns: int,
                budget_ns: int | None) -> None:
        """The paired rounds, in the bracket the pilot's cost sizes from the benchmark's budget."""
        label, sampling = self.skeleton.benchmarks[b].label, self.settings.sampling
        criteria = criteria_of(self.skeleton)
        # a count's blocks are as long as the rounds of identical counts that decide it (stats.counts)
        blocks = (criteria.exact_rounds() if criteria.counts
                  else block_rounds(len(self.skeleton.sides), self.sample_time_ns))
        targets, sinks, per_block = lane.rounds(b, name, iterations, self.sample_time_ns, blocks,
                                                fixed_cpu_ns=getattr(self._local, "fixed_cpu_ns", None))
        rule = self._rule(b, per_block)
        first = (0 if not rule else criteria.exact_rounds() if criteria.counts
                 else rule.criteria.first_verdict_round() * (per_block or 1))
        most = bracket(budget_ns, round_ns, sampling.min_runs, sampling.max_runs, first_verdict=first)
        progress = self.progress(b, label, len(self.skeleton.benchmarks), rule) if self.progress else None
        limit = budget_ns if most is None or budget_ns is None or most == sampling.max_runs \
            else int(budget_ns * BUDGET_SLACK)
        spending = self._spending(rule, per_block, most, limit)
        stop = (StopRule(sampling.runs, sampling.min_runs, most, limit) if spending is None else
                StopRule(None, sampling.min_runs, sampling.max_runs, limit and EXTENSION_CAP * limit))
        plan = SamplingPlan(targets=targets, stop=stop,
                            warmup_rounds=sampling.warmup if lane.warms_up else 0, timeout_ns=sampling.timeout_ns,
                            seed=benchmark_seed(sampling.seed, b), failure_advice=FAILURE_ADVICE)
        decide = (None if not (rule and sampling.adaptive) else rule.decide if spending is None
                  else lambda: spending(sampler.rounds, sampler.elapsed_ns()))
        try:
            sampler.run(plan, decide=decide,
                        sinks=[s for s in (*sinks, rule, progress, _StopCheck(self._stop)) if s is not None])
        except CommandFailed as exc:
            self._failed(label, str(exc).removesuffix(" " + FAILURE_ADVICE))
        finally:
            self.budget.spent(sampler.elapsed_ns())

    def _pilot(self, lane: Lane, sampler: Sampler, b: int, name: str) -> int | None:
        """The iteration count of a sample (None: the harness chooses it from --sample-time): about
        --sample-time of the slowest side, raised until a sample's fixed cost is at most 1% of the
        quickest side's sample (``measure.fixed_cost``; a ``sample-time-raised`` note says so)."""
        sides = range(len(self.skeleton.sides))
        if not lane.explicit_iterations:
            for side in sides:
                self._take(lane, sampler, side, name, b, None, self.sample_time_ns)
            return None
        probes = ProbeTimes()

        def take(side: int, n: int) -> tuple[float, bool]:
            """A pilot sample's time, and whether another task interrupted it: counted around a
            worker's loop only (a harness's count holds its start-up too)."""
            measured = self._take(lane, sampler, side, name, b, n, self.sample_time_ns)
            return measured.total, lane.harness == PAIRBENCH and measured.sample.involuntary_cs > 0

        def slowest(n: int) -> float:
            """The slowest side's time of ``n`` iterations, each side's the ``quickest_probe`` of its
            samples: a sample another task preempted must not size the benchmark's samples."""
            for side in sides:
                probes.keep(side, n, quickest_probe(functools.partial(take, side, n)))
            return max(probes.times[(side, n)] for side in sides)

        floor = floor_sample(choose_iterations(slowest, self.sample_time_ns), probes, self.fixed_cost(),
                             self.sample_time_ns)
        if floor.raised:
            with self._lock:
                self.notes.append(floor.note(Subject(benchmark=self.skeleton.benchmarks[b].label)))
        return floor.iterations

    def _validate(self, lane: Lane, sampler: Sampler, b: int, name: str, iterations: int | None) -> int:
        """Take each side's validation samples of benchmark ``b`` (at 1/8, 1/4, 1/2 and all of the
        sample, in seeded random order; the analysis judges them); return what a round costs here
        (the sides' median cost at the full sample, and the further repetitions of a round's invocation:
        ``Lane.repetitions`` times the harness's own time of one)."""
        sides = range(len(self.skeleton.sides))
        sizes = ({k: (count, self.sample_time_ns) for k, count in zip(VALIDATION_SHARES, validation_counts(iterations),
                                                                        strict=True)}
                 if iterations is not None else {k: (None, self.sample_time_ns * k // 8) for k in VALIDATION_SHARES})
        order = np.random.default_rng(benchmark_seed(self.settings.sampling.seed, b, VALIDATION_ORDER))
        full: list[list[int]] = [[] for _ in sides]
        loops: list[list[float]] = [[] for _ in sides]
        processes: list[tuple[int, int]] = []  # each invocation's iterations and its process's CPU time
        for _ in range(lane.validation_rounds if self._cost_ns < SLOW_SAMPLE_NS else 1):
            jobs = [(lane.target(side, name, b, *sizes[k], validation=True), side, {VALIDATION_METRIC: k / 8})
                    for side in sides for k in VALIDATION_SHARES]
            for measured in sampler.unpaired(jobs, order):
                self._check(measured)
                processes.append((measured.sample.iterations, measured.sample.user_ns + measured.sample.sys_ns))
                if measured.metrics[VALIDATION_METRIC] == 1.0:
                    full[measured.side].append(measured.cost_ns)
                    loops[measured.side].append(measured.total)
        self._local.fixed_cpu_ns = self._fixed_cpu(lane, processes)
        more = (lane.repetitions - 1) * sum(float(np.median(loop)) for loop in loops)
        return int(sum(float(np.median(costs)) for costs in full) + more)

    @staticmethod
    def _fixed_cpu(lane: Lane, processes: list[tuple[int, int]]) -> float | None:
        """What an invocation of a harness that repeats its benchmark costs besides its loops, from the
        validation invocations of both sides (``analysis.process_cpu``); None for any other lane."""
        if lane.harness == "pairbench" or lane.repetitions < 2 or not processes:
            return None
        from pairbench.analysis.process_cpu import fixed_cpu_ns  # between samples: validation ended

        iterations, cpu = zip(*processes, strict=True)
        return fixed_cpu_ns(iterations, cpu)

    @property
    def _cost_ns(self) -> int:
        """What the latest sample outside the rounds cost here (a harness's start-up included)."""
        return getattr(self._local, "cost_ns", 0)

    def _take(self, lane: Lane, sampler: Sampler, side: int, name: str, b: int, iterations: int | None,
              sample_time_ns: int) -> Measured:
        """One pilot sample (stored as a warmup, journaled); ``LaneFailed`` if it failed."""
        return self._check(sampler.take(lane.target(side, name, b, iterations, sample_time_ns), side))

    def _check(self, measured: Measured) -> Measured:
        self._local.cost_ns = measured.cost_ns
        if measured.sample.status != 0:
            what = measured.detail or describe_status(measured.sample.status)
            raise LaneFailed(f"on {self.skeleton.sides[measured.side].name!r}: {what}")
        return measured

    def _spending(self, rule: StoppingRule | None, per_block: int | None, most: int | None,
                  limit: int | None) -> Spending | None:
        """How the benchmark spends the suite's time (``sizing.Spending``), when it stops adaptively."""
        if rule is None or not self.settings.sampling.adaptive:
            return None

        def needed() -> int | None:
            """Further rounds to a verdict (blocks' worth when rounds come in blocks), HOPELESS, or None."""
            values, criteria = rule.values(), rule.criteria
            if values.size < criteria.first_verdict_round():
                return None  # too few values (blocks) for an interval: a plan from them would be noise
            plan = plan_rounds(values, criteria, nearest=True)  # the verdict nearest, not any verdict
            if plan.needed is None:
                return HOPELESS if plan.note is not None else None
            return plan.needed * (per_block or 1)

        return Spending(rule.decide, needed, most, limit, self.budget)

    def _rule(self, b: int, per_block: int | None) -> StoppingRule | None:
        if len(self.skeleton.sides) < 2:
            return None
        boundary = self.boundary
        if isinstance(boundary, Mapping):
            boundary = boundary.get(self.skeleton.benchmarks[b].label)
        return StoppingRule(criteria_of(self.skeleton), pairs=comparison_pairs(self.skeleton), benchmark_ids=(b,),
                            block_rounds=per_block, boundary=boundary)

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


def validation_counts(iterations: int) -> tuple[int, int, int, int]:
    """The iteration counts validation samples: N/8, N/4, N/2 and N (from 1 up when N < 8)."""
    base = max(1, iterations // 8)
    return base, 2 * base, 4 * base, 8 * base


def _pin_this_thread(cpu: int | None) -> None:
    """Run the calling thread on ``cpu`` only (Linux pins threads one by one); nothing without one."""
    if cpu is not None:
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setaffinity(0, {cpu})
