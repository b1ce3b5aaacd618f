"""The Sampler: interleaved, randomized rounds, and the events that report them.

A *round* executes every side's target once, in a fresh random order (seeded);
with one side a round is a single sample. Warmup rounds come first and are
stored with ``warmup=1``. After each measured round the stop rule is
consulted: a fixed number of rounds (``--runs``), or adaptive: at least
``min_runs``, then stop when the decision rule says so, or at ``max_runs`` /
``max_time``. The adaptive time budget covers warmup too: once it is spent, no
further warmup round starts (a ``warmup-cut-short`` note says how many ran), and
measuring goes on to ``min_runs``.

Before its rounds a plan may take samples outside them (:meth:`Sampler.take`,
:meth:`Sampler.unpaired`): ``bench``'s pilot, which sizes a sample, and its
validation samples at fractions of it. They are stored as warmups and reach the
sinks like every other sample.

Whoever needs to follow sampling is a :class:`Sink`: the journal writes each
sample as it arrives (:meth:`Sink.on_sample`), the stopping rule and the
progress line read each finished round (:meth:`Sink.on_round`). None of them
reads the sampler itself. The sampler keeps every sample it took, so a failure
or Ctrl-C part-way loses nothing: its owner builds the run from
:meth:`Sampler.series` (the samples of each benchmark and side) and ``notes``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from pairbench import collector
from pairbench.errors import CommandFailed, HelperCommandFailed
from pairbench.frozen import frozen
from pairbench.measure.executor import Executor
from pairbench.measure.targets import Row, Target
from pairbench.model import (
    PRIMARY_METRIC,
    STATUS_TIMEOUT,
    Sample,
    Samples,
    append_metrics,
    describe_status,
)
from pairbench.notes import Note
from pairbench.settings import DEFAULTS
from pairbench.units import format_duration

if TYPE_CHECKING:
    import numpy as np


@frozen
class StopRule:
    """When sampling ends: a fixed number of rounds, or adaptive between min and max (validated
    by ``settings``)."""

    runs: int | None = None
    min_runs: int = DEFAULTS["min_runs"]
    max_runs: int | None = None
    max_time_ns: int | None = None

    @property
    def adaptive(self) -> bool:
        return self.runs is None


@frozen
class SamplingPlan:
    """Everything the sampler's rounds need, fixed before the first sample: the targets a round
    runs, each once, and the side each measures (``sides[t]``; none given: target t is side t).
    With parameters a side runs one target per benchmark, so that a round shuffles them all."""

    targets: tuple[Target, ...]
    stop: StopRule
    warmup_rounds: int = 0
    timeout_ns: int | None = None
    ignore_failure: bool = False
    seed: int = 0
    failure_advice: str = ("Use --ignore-failure to keep failing runs (they are stored and left out of "
                           "the statistics).")
    sides: tuple[int, ...] = ()

    @property
    def paired(self) -> bool:
        """Rounds pair the sides' samples whenever there is more than one side."""
        return len(self.targets) > 1

    def side_of(self, target: int) -> int:
        return self.sides[target] if self.sides else target


@frozen
class Measured:
    """One sample as it arrived: of benchmark ``benchmark`` on side ``side``; ``detail`` says why a
    failed one failed when its status does not, ``cost_ns`` what taking it took here (a process's
    start-up, a worker's round trip)."""

    side: int
    benchmark: int
    sample: Sample
    metrics: Mapping[str, float] = field(default_factory=dict)
    detail: str = ""
    cost_ns: int = 0

    @property
    def total(self) -> float:
        """The sample's measured quantity over all its iterations, as ``Samples.totals`` reads it."""
        return float(self.metrics.get(PRIMARY_METRIC, self.sample.wall_ns))

    @property
    def value(self) -> float:
        """One operation's value, as ``Samples.values`` computes it for stored samples."""
        return self.total / self.sample.iterations


@frozen
class RoundEnd:
    """A finished round: its samples, and where sampling stands.

    ``round`` is the measured round's id (-1 for warmup); ``rounds`` counts the
    measured rounds finished, this one included; ``taken`` every sample so far.
    """

    round: int
    warmup: bool
    samples: tuple[Measured, ...]
    rounds: int
    taken: int
    elapsed_ns: int


class Sink:
    """Follows sampling: each sample as it arrives, each round when it ends. Does nothing by default."""

    def on_sample(self, measured: Measured) -> None:
        """One sample arrived (warmups included)."""

    def on_round(self, end: RoundEnd) -> None:
        """A round ended (warmup rounds included)."""


class LockedSink(Sink):
    """A sink that the samplers of several jobs (threads) feed: one event at a time."""

    def __init__(self, sink: Sink, lock: threading.Lock | None = None):
        self.sink, self.lock = sink, lock or threading.Lock()

    def on_sample(self, measured: Measured) -> None:
        with self.lock:
            self.sink.on_sample(measured)

    def on_round(self, end: RoundEnd) -> None:
        with self.lock:
            self.sink.on_round(end)


def _started(work: Callable[[], object] | None) -> threading.Thread | None:
    """``work`` running in a daemon thread (an exit never waits for it); what it raises is dropped: it
    only loads ahead what the main thread would load anyway, and meets the same error then."""
    if work is None:
        return None

    def quietly() -> None:
        with contextlib.suppress(Exception):
            work()

    thread = threading.Thread(target=quietly, name="pairbench-beside-warmup", daemon=True)
    thread.start()
    return thread


def _ended(thread: threading.Thread, limit_s: float = 0.1) -> None:
    """Wait for ``thread`` to end, and on Linux for the kernel's thread too: ``join`` returns once the
    thread's last Python step is done, and its teardown (a few microseconds) then often still runs,
    beside what comes next (the first measured sample). Waits at most ``limit_s`` for the teardown."""
    thread.join()
    task, deadline = f"/proc/self/task/{thread.native_id}", time.monotonic() + limit_s
    while os.path.exists(task) and time.monotonic() < deadline:
        time.sleep(0.0001)


def round_orders(plan: SamplingPlan) -> np.random.Generator | None:
    """The seeded generator of the rounds' random orders; None for a plan of one target, whose
    rounds have one order: numpy need not load before its first sample, and a seed draws the same
    orders as it did when one was made (a permutation of one draws nothing). A plan of no target
    (its rounds' plan comes later, after samples taken outside them) loads numpy.random now."""
    if len(plan.targets) == 1:
        return None
    import numpy as np
    import numpy.random  # noqa: F401 - numpy loads it at first use: here, so that no import runs beside a sample

    return np.random.default_rng(plan.seed)


# Consulted after each measured round once min_runs are done: a reason to stop, or None.
DecisionRule = Callable[[], "str | None"]


class Sampler:
    """Runs a :class:`SamplingPlan` on an executor, reports to its sinks, and keeps every sample.

    ``rows[(benchmark, side)]`` and ``metrics[(benchmark, side)]`` hold the
    samples taken, in order (:meth:`series` hands them over); ``notes`` what was
    noticed (processes left running). ``beside_warmup``: work that may run in a
    thread beside the warmup rounds, whose samples are never analysed (loading
    what comes after the last sample); it ends before the first measured round.
    """

    def __init__(self, executor: Executor, plan: SamplingPlan, *, sinks: Sequence[Sink] = (),
                 decide: DecisionRule | None = None, origin_ns: int | None = None,
                 numbering: Callable[[], int] | None = None, beside_warmup: Callable[[], object] | None = None):
        self.executor = executor
        self._beside_warmup = beside_warmup
        self.plan = plan
        self.rows: dict[tuple[int, int], list[Sample]] = {}
        self.metrics: dict[tuple[int, int], dict[str, list[float]]] = {}
        self.rounds = 0
        self.stopped_because = ""
        self.notes: list[Note] = []
        self._sinks = tuple(sinks)
        self._decide = decide
        self._rng = round_orders(plan)
        self._seq = 0
        self._numbering = numbering  # the seq of each sample, shared by samplers running at once
        self._t0 = 0
        self._origin = origin_ns  # samples' start_ns count from here (the run's start); None: from run()
        self._leftover_noted: set = set()  # sides (and (side, "escaped")) already noted

    def series(self) -> dict[tuple[int, int], Samples]:
        """The samples taken of each (benchmark, side), in order, with their metrics."""
        return {series: Samples.from_rows(rows, self.metrics.get(series)) for series, rows in self.rows.items()}

    def elapsed_ns(self) -> int:
        return self.executor.now_ns() - self._t0

    def take(self, target: Target, side: int, metrics: Mapping[str, float] | None = None) -> Measured:
        """One sample of ``target`` outside the rounds, for ``side``: stored as a warmup (with
        ``metrics`` added to its own), told to the sinks; the last row it yielded. A failure is
        that row's status (``Measured.detail`` says why): the caller decides what it means."""
        if self._origin is None:
            self._origin = self.executor.now_ns()
        start = self.executor.now_ns()
        rows = target.execute(self.executor, timeout_ns=self.plan.timeout_ns)
        cost = self.executor.now_ns() - start
        taken = [self._record(side, target.name, dataclasses.replace(row, metrics={**row.metrics, **(metrics or {})}),
                              -1, side, True, cost) for row in rows]
        return taken[-1]

    def unpaired(self, targets: Sequence[tuple[Target, int, Mapping[str, float]]], order: np.random.Generator,
                 ) -> list[Measured]:
        """Each of ``targets`` (target, side, metrics) taken once (:meth:`take`), in a random
        ``order``; returned in the order given. A failure ends them: it is the last one taken."""
        taken: list[Measured | None] = [None] * len(targets)
        for i in order.permutation(len(targets)):
            target, side, metrics = targets[int(i)]
            taken[int(i)] = measured = self.take(target, side, metrics)
            if measured.sample.status != 0:
                break
        return [m for m in taken if m is not None]

    def run(self, plan: SamplingPlan | None = None, *, decide: DecisionRule | None = None,
            sinks: Sequence[Sink] = ()) -> str:
        """Run the rounds until the stop rule says stop; return why it stopped. A plan whose rounds
        are known only after the samples taken outside them (``bench``: the iteration count, the
        bracket of rounds) is given here, with the rule that decides and the sinks of its rounds.

        Raises ``CommandFailed`` (after storing the failing sample) on a failure
        without ``ignore_failure``; ``KeyboardInterrupt`` passes through. In both
        cases ``rows`` holds everything measured so far.
        """
        if plan is not None:
            self.plan, self._rng = plan, round_orders(plan)
        self._decide = decide or self._decide
        self._sinks = (*self._sinks, *sinks)
        self._t0 = self.executor.now_ns()
        if self._origin is None:
            self._origin = self._t0
        self._warm_up()
        while True:
            self._run_round(round_id=self.rounds, warmup=False)
            reason = self._stop_reason()
            if reason:
                self.stopped_because = reason
                return reason

    def _warm_up(self) -> None:
        """Run the warmup rounds, as many as the adaptive time budget leaves time for, with the work
        given to run beside them; it has ended when they have."""
        asked = self.plan.warmup_rounds
        beside = _started(self._beside_warmup) if asked else None
        try:
            for done in range(asked):
                if self._out_of_time():
                    self.notes.append(Note("warmup-cut-short", {"done": done, "asked": asked}))
                    return
                self._run_round(round_id=-1, warmup=True)
        finally:  # a failure too: what follows (--cleanup, the analysis) never imports beside it
            if beside is not None:
                _ended(beside)
            collector.release()  # held while pairbench started (collector): it has loaded now

    def _out_of_time(self) -> bool:
        stop = self.plan.stop
        return stop.adaptive and stop.max_time_ns is not None and self.elapsed_ns() >= stop.max_time_ns

    def _run_round(self, *, round_id: int, warmup: bool) -> None:
        taken: list[Measured] = []
        for slot, t in enumerate(self._order()):
            target, side = self.plan.targets[t], self.plan.side_of(int(t))
            try:
                rows = target.execute(self.executor, timeout_ns=self.plan.timeout_ns)
            except HelperCommandFailed as exc:
                for row in exc.rows:  # measured whole before its --conclude failed: kept
                    self._record(side, target.name, row, round_id, slot, warmup)
                raise
            for row in rows:
                measured = self._record(side, target.name, row, round_id, slot, warmup)
                if row.priming:
                    continue
                taken.append(measured)
                if row.execution.status != 0 and not self.plan.ignore_failure:
                    raise CommandFailed(self._failure_message(target.name, measured, row.detail))
        if not warmup:
            self.rounds += 1
        end = RoundEnd(round_id, warmup, tuple(taken), self.rounds, self._seq, self.elapsed_ns())
        for sink in self._sinks:
            sink.on_round(end)

    def _order(self) -> list[int]:
        """The order of a round's targets: a fresh seeded permutation (one target: itself), shuffled in
        a list: the draws of ``Generator.permutation`` (tests/measure/test_sampler.py holds them), at
        half its cost between two samples (24 us instead of 44, cache-cold after a sample)."""
        order = list(range(len(self.plan.targets)))
        if self._rng is not None:
            self._rng.shuffle(order)
        return order

    def _record(self, side: int, name: str, row: Row, round_id: int, slot: int, warmup: bool,
                cost_ns: int = 0) -> Measured:
        """Store one row of target ``name`` on ``side`` and tell the sinks."""
        ex = row.execution
        sample = Sample(
            wall_ns=ex.wall_ns, user_ns=ex.user_ns, sys_ns=ex.sys_ns, max_rss_kib=ex.max_rss_kib,
            voluntary_cs=ex.voluntary_cs, involuntary_cs=ex.involuntary_cs, status=ex.status,
            start_ns=max(ex.start_ns - self._origin, 0), seq=self._numbering() if self._numbering else self._seq,
            pair=round_id if self.plan.paired and not row.priming else -1, slot=slot,
            iterations=row.iterations, warmup=int(warmup or row.priming),
        )
        self._seq += 1
        series = (row.benchmark, side)
        self.rows.setdefault(series, []).append(sample)
        self._record_metrics(series, row.metrics)
        if ex.leftover_processes and name not in self._leftover_noted:
            self._leftover_noted.add(name)
            self.notes.append(Note("leftover-processes", {"side": name, "count": ex.leftover_processes}))
        if ex.escaped_processes and (name, "escaped") not in self._leftover_noted:
            self._leftover_noted.add((name, "escaped"))
            self.notes.append(Note("containment-partial", {"side": name, "count": ex.escaped_processes}))
        measured = Measured(side, row.benchmark, sample, dict(row.metrics), row.detail, cost_ns)
        for sink in self._sinks:
            sink.on_sample(measured)
        return measured

    def _record_metrics(self, series: tuple[int, int], metrics: Mapping[str, float]) -> None:
        """Append a row's metrics to its series' columns, as long as its rows (``append_metrics``)."""
        if metrics or series in self.metrics:
            append_metrics(self.metrics.setdefault(series, {}), len(self.rows[series]) - 1, metrics)

    def _failure_message(self, name: str, measured: Measured, detail: str) -> str:
        """"command 'x' failed on sample 3: exit code 1. ADVICE"; a target's ``detail`` (and name:
        "benchmark 'sort' on 'baseline'") replaces the status's words."""
        # warmups and measured samples are numbered apart: "warmup sample 1", "sample 1"
        sample = measured.sample
        series = self.rows[(measured.benchmark, measured.side)]
        number = sum(1 for s in series if s.warmup == sample.warmup)
        what = detail or describe_status(sample.status)
        if sample.status == STATUS_TIMEOUT and self.plan.timeout_ns and not detail:
            what = f"timed out after {format_duration(self.plan.timeout_ns, digits=3)}"
        phase = "warmup sample" if sample.warmup else "sample"
        who = name if detail else f"command {name!r}"
        advice = f" {self.plan.failure_advice}" if self.plan.failure_advice else ""
        return f"{who} failed on {phase} {number}: {what.rstrip('.')}.{advice}"

    def _stop_reason(self) -> str | None:
        stop = self.plan.stop
        if stop.runs is not None:
            return f"completed the requested {stop.runs} rounds" if self.rounds >= stop.runs else None
        if self.rounds < stop.min_runs:
            return None
        if self._decide is not None:
            reason = self._decide()
            if reason:
                return reason
        if stop.max_runs is not None and self.rounds >= stop.max_runs:
            return f"reached --max-runs {stop.max_runs}"
        if self._out_of_time():
            return f"reached the time budget (--max-time {format_duration(stop.max_time_ns, digits=3)})"
        return None
