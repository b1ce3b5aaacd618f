"""How many rounds a benchmark of a suite may take, and how a suite's time budget is shared.

The Swift benchmark suite's lesson: size each benchmark from a short pilot,
and round what the pilot suggests to a power of two, so that two runs (the
main branch's, a pull request's; two shards) land in the same *bracket* and
measure alike, though their pilots differed by a little noise. Here the pilot
gives the time a round takes; the bracket is the power of two of rounds
nearest to what fits the benchmark's time budget (at least ``--min-runs``),
and ``BUDGET_SLACK`` times the budget stops a benchmark whose pilot was too
optimistic.

A whole-suite budget (``--suite-time``) is shared as the suite goes: each
benchmark gets the time left, times the jobs, divided by the benchmarks left,
capped by the per-benchmark budget (``--max-time``). A benchmark that decides
early leaves its time to the others; one started when nothing is left is not
measured (and said so).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

BUDGET_SLACK = 1.5
"""A bracketed benchmark stops at this many times its budget at the latest: the bracket may be up to
1.41 times the budget by the pilot's timing, and the pilot may have been quick."""


def bracket(budget_ns: int | None, round_ns: int, min_runs: int, max_runs: int | None = None, *,
            first_verdict: int = 0) -> int | None:
    """The most rounds a benchmark takes: the power of two of rounds of ``round_ns`` nearest (on a log
    scale) to what fits ``budget_ns``, so between 0.71 and 1.41 times the budget; at least
    ``min_runs``, at most ``max_runs``. Without a bracket (``max_runs``
    alone, time limits the rest): when there is no budget, the round's cost is unknown, or the
    bracket would end before ``first_verdict`` rounds, the fewest that can reach a verdict (the
    pilot may have been slow: only time can tell whether more rounds fit)."""
    if budget_ns is None or round_ns <= 0:
        return max_runs
    fit = max(budget_ns / round_ns, 1.0)
    below = 1 << (int(fit).bit_length() - 1)
    rounds = max(below * 2 if fit > below * math.sqrt(2) else below, min_runs)  # the nearest, on a log scale
    if rounds < first_verdict:
        return max_runs
    return rounds if max_runs is None else min(rounds, max(max_runs, min_runs))


class SuiteBudget:
    """The time each benchmark may spend sampling, from the whole suite's budget as it is spent.

    ``suite_ns`` None: every benchmark gets ``per_benchmark_ns``. Safe to call from several jobs.
    """

    def __init__(self, suite_ns: int | None, per_benchmark_ns: int | None, benchmarks: int, jobs: int,
                 clock: Callable[[], int] = time.monotonic_ns):
        self.suite_ns, self.per_benchmark_ns = suite_ns, per_benchmark_ns
        self.left, self.jobs, self.clock = benchmarks, max(jobs, 1), clock
        self.start = clock()
        self._lock = threading.Lock()

    def next(self) -> tuple[bool, int | None]:
        """(measure it?, its sampling budget) for the next benchmark: False once the suite's budget
        is spent."""
        with self._lock:
            left, self.left = max(self.left, 1), self.left - 1
            if self.suite_ns is None:
                return True, self.per_benchmark_ns
            remaining = self.suite_ns - (self.clock() - self.start)
            if remaining <= 0:
                return False, None
            share = remaining * min(self.jobs, left) // left
            return True, share if self.per_benchmark_ns is None else min(share, self.per_benchmark_ns)
