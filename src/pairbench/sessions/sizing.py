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
measured (and said so). Without ``--suite-time`` the suite's budget is
``--max-time`` for each benchmark (over the jobs), so that the time one saves
goes to another too, though every benchmark is measured.

What a benchmark spends (:class:`Spending`): its bracket and its time budget,
then more where its rounds-needed estimate (``analysis.effect.plan_rounds``,
``nearest``: to the verdict its interval, where it lies, reaches first) says the
verdict is within one more doubling of its rounds and the suite has
that time to spare beyond what the benchmarks not yet started are due (the
bracket doubles, so it stays a power of two); and nothing more once that
estimate says no budget the suite could give would decide it (ties a timer's
step apart, or over ``HOPELESS_FACTOR`` times the time it has left). Any
stopping rule keeps the anytime-valid verdict valid.
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


HOPELESS_FACTOR = 4.0
"""A benchmark stops early when its verdict needs more than this many times the time it may still get."""
HOPELESS = -1
"""What a rounds-needed estimate is when more rounds would not decide (``Spending``)."""
EXTENSION_CAP = 4
"""At most this many times its bracket and its time budget, however much time the suite has to spare."""


class SuiteBudget:
    """The time each benchmark may spend sampling, from the whole suite's budget as it is spent.

    ``suite_ns`` None: every benchmark gets ``per_benchmark_ns``. Safe to call from several jobs.
    """

    def __init__(self, suite_ns: int | None, per_benchmark_ns: int | None, benchmarks: int, jobs: int,
                 clock: Callable[[], int] = time.monotonic_ns):
        self.suite_ns, self.per_benchmark_ns = suite_ns, per_benchmark_ns
        self.left, self.jobs, self.clock = benchmarks, max(jobs, 1), clock
        self.benchmarks = benchmarks
        self.start = clock()
        self._lock = threading.Lock()
        self.spent_ns = 0  # the rounds of the benchmarks done so far (``spent``)

    def spent(self, ns: int) -> None:
        """A benchmark's rounds took ``ns``."""
        with self._lock:
            self.spent_ns += ns

    def spare_ns(self, running_ns: int = 0) -> int:
        """Time the suite can give a benchmark whose rounds have run ``running_ns``, beyond what the
        benchmarks not yet started are due (0: none). With --suite-time, the suite's time left; else
        what the benchmarks measured so far saved of their --max-time (rounds only: a pilot and its
        validation are not part of --max-time)."""
        if self.per_benchmark_ns is None and self.suite_ns is None:
            return 0
        with self._lock:
            if self.suite_ns is not None:
                due = self.left * (self.per_benchmark_ns or 0) // self.jobs
                return max(self.suite_ns - (self.clock() - self.start) - due, 0)
            started = self.benchmarks - self.left  # this one included
            return max(started * self.per_benchmark_ns - self.spent_ns - running_ns, 0)

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


class Spending:
    """When a benchmark of a suite stops (see the module's docstring): the decision rule the sampler
    consults after each round from ``--min-runs`` on, around the benchmark's stopping rule.

    ``bracket`` its rounds (None: time alone limits it), ``limit_ns`` its sampling time, ``budget`` the
    suite's; ``needed()`` the further rounds its values so far need to decide: a count, ``HOPELESS``
    (more rounds would not decide it), or None (not known yet: too few rounds).
    """

    def __init__(self, decide: Callable[[], str | None], needed: Callable[[], int | None], bracket: int | None,
                 limit_ns: int | None, budget: SuiteBudget):
        self._decide, self._needed, self.budget = decide, needed, budget
        self.bracket, self.limit_ns = bracket, limit_ns
        self._first = (bracket, limit_ns)
        self._looked = 0

    def __call__(self, rounds: int, elapsed_ns: int) -> str | None:
        reason = self._decide()
        if reason:
            return reason
        out_of_rounds = self.bracket is not None and rounds >= self.bracket
        out_of_time = self.limit_ns is not None and elapsed_ns >= self.limit_ns
        if out_of_rounds or out_of_time:
            if self._extend(rounds, elapsed_ns):
                return None
            return (f"reached its bracket of {self.bracket} rounds" if out_of_rounds
                    else f"reached its time budget ({elapsed_ns / 1e9:.3g} s)")
        return self._hopeless(rounds, elapsed_ns)

    def _extend(self, rounds: int, elapsed_ns: int) -> bool:
        """More rounds when the verdict is within one doubling of them and the suite can spare the time."""
        needed = self._needed()
        round_ns = elapsed_ns / max(rounds, 1)
        if needed is None or needed == HOPELESS or needed > rounds or not self._within_cap(rounds + needed, elapsed_ns + needed * round_ns):
            return False
        cost = int(needed * round_ns)
        if cost > self.budget.spare_ns(elapsed_ns):
            return False
        if self.bracket is not None:
            while self.bracket < rounds + needed:
                self.bracket *= 2
        if self.limit_ns is not None:
            self.limit_ns = max(self.limit_ns, elapsed_ns + cost)
        return True

    def _within_cap(self, rounds: int, elapsed_ns: float) -> bool:
        bracket, limit = self._first
        return ((bracket is None or rounds <= EXTENSION_CAP * bracket)
                and (limit is None or elapsed_ns <= EXTENSION_CAP * limit))

    def _hopeless(self, rounds: int, elapsed_ns: int) -> str | None:
        """Stop when the verdict is out of any reach: looked at each time the rounds double."""
        if rounds < 2 * max(self._looked, 8):
            return None
        self._looked = rounds
        needed = self._needed()
        if needed is None:
            return None
        round_ns = elapsed_ns / rounds
        may_get = max((self.limit_ns or 0) - elapsed_ns, 0) + self.budget.spare_ns(elapsed_ns)
        if self.bracket is not None:
            may_get = max(may_get, (self.bracket - rounds) * round_ns)
        if needed == HOPELESS or needed * round_ns > HOPELESS_FACTOR * may_get:
            more = "more rounds would not decide it" if needed == HOPELESS else f"about {needed} more rounds needed"
            return f"stopped early: no budget it could get would decide it ({more})"
        return None
