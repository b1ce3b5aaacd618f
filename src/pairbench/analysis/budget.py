"""What budget would decide a suite's undecided benchmarks, from what measuring them cost so far.

An inconclusive comparison with a rounds-needed estimate (``comparison.plan_rounds``) would need
about that many more rounds, each as long as its rounds took; one without an estimate (ties a
timer's step apart, more than ``MAX_ROUNDS_PLANNED`` rounds, a refused verdict) will not be decided
by more rounds of the same; a benchmark the suite's budget never reached would cost what a measured
one cost (the median, pilot and validation included). The time is sampling time, shared over the
jobs. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairbench.analysis.records import Comparison
from pairbench.model import Run


@dataclass(frozen=True)
class BudgetNeeded:
    """Sampling time that would decide what a suite left undecided: ``more_ns`` for the
    ``decidable`` inconclusive comparisons and the ``not_measured`` benchmarks, over the jobs;
    ``undecidable`` inconclusive ones more rounds would not decide; ``spent_ns`` the sampling the
    run took (first sample to last, over the jobs)."""

    decidable: int
    undecidable: int
    not_measured: int
    more_ns: int
    spent_ns: int

    @property
    def suite_ns(self) -> int:
        """The --suite-time that would have given the run the time it needs."""
        return self.spent_ns + self.more_ns


def budget_needed(run: Run, comparisons: Sequence[Comparison], not_measured: int) -> BudgetNeeded | None:
    """The budget that would decide ``run``'s inconclusive ``comparisons`` (of ``run.benchmarks``, by
    key) and its ``not_measured`` benchmarks; None when nothing is left undecided."""
    inconclusive = [c for c in comparisons if c.verdict.verdict == "inconclusive" and not c.self_check and c.rounds]
    if not inconclusive and not not_measured:
        return None
    index = {key: b for b, key in enumerate(run.benchmarks)}
    decidable = [c for c in inconclusive if c.rounds_needed and c.benchmark in index]
    more = sum(c.rounds_needed * round_ns(run, index[c.benchmark]) for c in decidable)
    spans = [span_ns(run, b) for b in range(len(run.benchmarks))]
    measured = [s for s in spans if s > 0]
    if not_measured and measured:
        more += not_measured * float(np.median(measured))
    jobs = run.settings.workers.jobs if run.settings.workers else 1
    return BudgetNeeded(len(decidable), len(inconclusive) - len(decidable), not_measured, int(more / jobs),
                        int(sum(measured) / jobs))


def round_ns(run: Run, benchmark: int) -> float:
    """How long a measured round of ``benchmark`` took: its rounds' span over their number."""
    measured = [s.measured() for _, s in _series(run, benchmark)]
    rounds = len({int(p) for s in measured for p in s["pair"] if p >= 0})
    starts = np.concatenate([s["start_ns"] for s in measured]) if measured else np.zeros(0)
    if rounds < 2 or not starts.size:
        return 0.0
    ends = np.concatenate([s["start_ns"] + s["wall_ns"] for s in measured])
    return float(ends.max() - starts.min()) / rounds


def span_ns(run: Run, benchmark: int) -> int:
    """The time from ``benchmark``'s first sample to its last (pilot and validation included), 0 if none."""
    series = [s for _, s in _series(run, benchmark) if len(s)]
    if not series:
        return 0
    starts = np.concatenate([s["start_ns"] for s in series])
    ends = np.concatenate([s["start_ns"] + s["wall_ns"] for s in series])
    return int(ends.max() - starts.min())


def _series(run: Run, benchmark: int):
    return [(side, run.series(benchmark, side)) for side in range(len(run.sides))]
