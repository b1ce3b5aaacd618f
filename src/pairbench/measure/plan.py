"""Sampling plans: which command runs when, and when to stop.

A *round* runs every variant once, in a fresh random order (seeded); with one
variant a round is a single sample. Warmup rounds come first and are stored with
``warmup=1``. After each measured round the stopping rule is consulted: a fixed
number of rounds (``--runs``), or adaptive: at least ``min_runs``, then stop when
the caller's decision rule says so, or at ``max_runs`` / ``max_time``.

The :class:`Sampler` keeps every sample it takes in ``rows`` (per variant), so a
failure or Ctrl-C part-way loses nothing: the caller saves what is there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pairbench.errors import CommandFailed, HelperCommandFailed, UsageError
from pairbench.measure.executor import Execution, Executor
from pairbench.model import STATUS_TIMEOUT, Command, Sample, describe_status
from pairbench.units import format_duration


@dataclass(frozen=True)
class StopRule:
    """When sampling ends: a fixed number of rounds, or adaptive between min and max."""

    runs: int | None = None
    min_runs: int = 10
    max_runs: int | None = None
    max_time_ns: int | None = None

    def __post_init__(self):
        if self.runs is not None and self.runs < 1:
            raise UsageError(f"--runs must be at least 1, got {self.runs}")
        if self.min_runs < 1:
            raise UsageError(f"--min-runs must be at least 1, got {self.min_runs}")
        if self.max_runs is not None and self.max_runs < self.min_runs:
            raise UsageError(
                f"--max-runs ({self.max_runs}) must not be below --min-runs ({self.min_runs})"
            )

    @property
    def adaptive(self) -> bool:
        return self.runs is None


@dataclass(frozen=True)
class SamplingPlan:
    """Everything the sampler needs to know, fixed before the first sample."""

    commands: tuple[Command, ...]
    stop: StopRule
    warmup_rounds: int = 0
    prepare: Command | None = None
    timeout_ns: int | None = None
    ignore_failure: bool = False
    seed: int = 0
    names: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.commands:
            raise UsageError("give at least one command to measure")
        if self.warmup_rounds < 0:
            raise UsageError(f"--warmup must be 0 or more, got {self.warmup_rounds}")

    @property
    def paired(self) -> bool:
        """Rounds pair the variants' samples whenever there is more than one variant."""
        return len(self.commands) > 1

    def name(self, index: int) -> str:
        return self.names[index] if self.names else self.commands[index].text


@dataclass(frozen=True)
class Progress:
    """Where sampling stands, passed to the progress callback after every sample."""

    rounds: int  # measured rounds completed
    samples: int  # samples taken, warmups included
    elapsed_ns: int
    warming_up: bool


# Decision rule: called after each measured round once min_runs are done;
# returns a reason to stop early, or None to go on.
DecisionRule = Callable[["Sampler"], "str | None"]


class Sampler:
    """Runs a :class:`SamplingPlan` on an executor and keeps every sample it takes."""

    def __init__(
        self,
        executor: Executor,
        plan: SamplingPlan,
        *,
        on_sample: Callable[[int, Sample], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        decide: DecisionRule | None = None,
    ):
        self.executor = executor
        self.plan = plan
        self.rows: list[list[Sample]] = [[] for _ in plan.commands]
        self.rounds = 0
        self.stopped_because = ""
        self.notes: list[str] = []
        self._on_sample = on_sample
        self._on_progress = on_progress
        self._decide = decide
        self._rng = np.random.default_rng(plan.seed)
        self._seq = 0
        self._t0 = 0
        self._leftover_noted: set[int] = set()

    def elapsed_ns(self) -> int:
        return self.executor.now_ns() - self._t0

    def run(self) -> str:
        """Sample until the stopping rule says stop; return why it stopped.

        Raises ``CommandFailed`` (after storing the failing sample) on a failure
        without ``ignore_failure``; ``KeyboardInterrupt`` passes through. In both
        cases ``rows`` holds everything measured so far.
        """
        self._t0 = self.executor.now_ns()
        for _ in range(self.plan.warmup_rounds):
            self._run_round(round_id=-1, warmup=True)
        while True:
            self._run_round(round_id=self.rounds, warmup=False)  # counts itself in ``rounds``
            reason = self._stop_reason()
            if reason:
                self.stopped_because = reason
                return reason

    def measured_wall_ns(self, variant: int) -> np.ndarray:
        """Wall times of the successful, non-warmup samples of ``variant`` so far."""
        return np.array(
            [s.wall_ns for s in self.rows[variant] if not s.warmup and s.status == 0], dtype=np.int64
        )

    def _run_round(self, *, round_id: int, warmup: bool) -> None:
        order = self._rng.permutation(len(self.plan.commands))
        for slot, variant in enumerate(order):
            self._prepare()
            execution = self.executor.run(self.plan.commands[variant], timeout_ns=self.plan.timeout_ns)
            sample = self._record(int(variant), execution, round_id, slot, warmup)
            if execution.status != 0 and not self.plan.ignore_failure:
                raise CommandFailed(self._failure_message(int(variant), sample))
            if not warmup and slot == len(order) - 1:
                self.rounds += 1  # before the progress report, which then shows the round done
            self._report_progress(warmup)

    def _prepare(self) -> None:
        if self.plan.prepare is None:
            return
        result = self.executor.run(self.plan.prepare, timeout_ns=self.plan.timeout_ns)
        if result.status != 0:
            raise HelperCommandFailed(
                f"--prepare command {self.plan.prepare.text!r} failed: {describe_status(result.status)}"
            )

    def _record(self, variant: int, ex: Execution, round_id: int, slot: int, warmup: bool) -> Sample:
        sample = Sample(
            wall_ns=ex.wall_ns,
            user_ns=ex.user_ns,
            sys_ns=ex.sys_ns,
            max_rss_kib=ex.max_rss_kib,
            voluntary_cs=ex.voluntary_cs,
            involuntary_cs=ex.involuntary_cs,
            status=ex.status,
            start_ns=max(ex.start_ns - self._t0, 0),
            seq=self._seq,
            pair=round_id if self.plan.paired else -1,
            slot=slot,
            iterations=1,
            warmup=int(warmup),
        )
        self._seq += 1
        self.rows[variant].append(sample)
        if ex.leftover_processes and variant not in self._leftover_noted:
            self._leftover_noted.add(variant)
            self.notes.append(
                f"{self.plan.name(variant)!r} left {ex.leftover_processes} process(es) running after "
                "it exited; pairbench killed them so they could not disturb later samples"
            )
        if self._on_sample:
            self._on_sample(variant, sample)
        return sample

    def _failure_message(self, variant: int, sample: Sample) -> str:
        # warmups and measured samples are numbered apart: "warmup sample 1", "sample 1"
        number = sum(1 for s in self.rows[variant] if s.warmup == sample.warmup)
        what = describe_status(sample.status)
        if sample.status == STATUS_TIMEOUT and self.plan.timeout_ns:
            what = f"timed out after {format_duration(self.plan.timeout_ns, digits=3)}"
        phase = "warmup sample" if sample.warmup else "sample"
        return (
            f"command {self.plan.name(variant)!r} failed on {phase} {number}: {what}. "
            "Use --ignore-failure to keep failing runs (they are stored and left out of the statistics)."
        )

    def _stop_reason(self) -> str | None:
        stop = self.plan.stop
        if stop.runs is not None:
            return f"completed the requested {stop.runs} rounds" if self.rounds >= stop.runs else None
        if self.rounds < stop.min_runs:
            return None
        if self._decide is not None:
            reason = self._decide(self)
            if reason:
                return reason
        if stop.max_runs is not None and self.rounds >= stop.max_runs:
            return f"reached --max-runs {stop.max_runs}"
        if stop.max_time_ns is not None and self.elapsed_ns() >= stop.max_time_ns:
            return f"reached the time budget (--max-time {format_duration(stop.max_time_ns, digits=3)})"
        return None

    def _report_progress(self, warmup: bool) -> None:
        if self._on_progress:
            self._on_progress(Progress(self.rounds, self._seq, self.elapsed_ns(), warmup))
