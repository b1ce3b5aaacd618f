"""A comparison's effect and verdict from its per-round log-ratios, and the rounds still needed.

The part of the analysis the stopping rule runs after every round
(``analysis.stopping``), so it is what ``analyse`` decides with too, and a
verdict that stopped a run is the one the analysis reports:

* fixed rounds (``--runs``): the exact sign-test interval (``stats.paired_effect``);
* adaptive stopping: the anytime-valid confidence sequence, intersected over
  the rounds (``stats.RunningSequence``), shown through :func:`anytime_effect`.

It runs on numpy and the standard library only (the sign test's binomial in
``stats._binomial``, the sequence's tuning in ``stats._minimize``): the
stopping rule imports it before the first sample, and scipy, which the rest
of the analysis uses, loads only after the last one
(``tests/cli/test_startup.py``). Pure.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.records import Effect
from pairbench.analysis.summary import refusal_note
from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note
from pairbench.stats import _binomial
from pairbench.stats._order import smallest_n_for_median_interval
from pairbench.stats.counts import ExactEffect, exact_effect
from pairbench.stats.paired import paired_effect, require_spread
from pairbench.stats.sequential import RunningSequence, first_bounded_n, upper_ranks
from pairbench.verdict import Verdict, decide, moved, refuse

MAX_ROUNDS_PLANNED = 10_000_000  # beyond this, "rounds still needed" is not given
ANYTIME_METHOD = "anytime-valid confidence sequence for the median, intersected over rounds"
FIXED_METHOD = "sign-test interval for the median"
EXACT_METHOD = "exact: the same count in every round on each side"


def effect_of(log_ratios: np.ndarray, criteria: Criteria) -> tuple[Effect, tuple[Note, ...]]:
    """The effect interval at the criteria's level and its notes; raises StatisticsError when none
    can be given. ``log_ratios`` are in round order (the adaptive interval intersects over rounds)."""
    level = criteria.level
    if criteria.anytime:
        running = RunningSequence(level, criteria.t_opt, tuned_for=criteria.level_alpha)
        running.extend(log_ratios)
        effect, notes = anytime_effect(running)
    else:
        fixed = paired_effect(np.ones_like(log_ratios), np.exp(log_ratios), 1.0 - level)
        effect, notes = (Effect(fixed.estimate_pct, fixed.low_pct, fixed.high_pct, fixed.achieved_confidence,
                                FIXED_METHOD, fixed.p_value, "sign test", fixed.n), fixed.warnings)
    if criteria.split > 1:  # the interval had its share of alpha: its p-value answers for the whole
        effect = dataclasses.replace(effect, pvalue=min(1.0, effect.pvalue * criteria.split))
    if criteria.holm_level is not None:
        effect = dataclasses.replace(effect, method=f"{effect.method}, Holm step at alpha {level:.3g}")
    return effect, notes


def exact_or_interval(base: np.ndarray, cand: np.ndarray, log_ratios: np.ndarray, criteria: Criteria,
                      ) -> tuple[Effect, tuple[Note, ...]]:
    """For a count whose every round gave one value on each side (enough rounds of it): its exact
    effect (``stats.counts``); else the interval of ``log_ratios`` (``effect_of``)."""
    if criteria.counts and base.size == cand.size:
        exact = exact_effect(base, cand, criteria.level)
        if exact is not None:
            return exact_record(exact, criteria), ()
    return effect_of(log_ratios, criteria)


def exact_record(exact: ExactEffect, criteria: Criteria) -> Effect:
    """The ``Effect`` of an exact count: an interval of one point, right with probability above
    1 - alpha / 2 (``Criteria.split``); its p-value the rule's bound, 2^-rounds, doubled for the
    split (1 when the counts are equal)."""
    e = exact.estimate_pct
    pvalue = 1.0 if e == 0 else min(1.0, criteria.split * 0.5 ** exact.rounds)
    return Effect(e, e, e, 1.0 - exact.alpha, EXACT_METHOD, pvalue, "the bound of the exact rule (2^-rounds)",
                  exact.rounds)


def anytime_effect(running: RunningSequence) -> tuple[Effect, tuple[Note, ...]]:
    """The effect of a running confidence sequence, once it is bounded and the pairs vary.

    An empty running interval is said by the verdict (``verdict.moved``), so its
    note is not repeated.
    """
    needed = first_bounded_n(running.alpha, running.t_opt)
    if running.n < needed:
        raise NotEnoughData(
            f"too few rounds for an anytime-valid interval at alpha {running.alpha:.3g}: "
            f"need at least {needed}, got {running.n}",
            needed=needed, got=running.n, purpose="anytime-interval", alpha=running.alpha)
    require_spread(running.values)
    cs = running.current()
    notes = tuple(w for w in cs.warnings if w.code != "running-interval-empty")
    return (Effect(cs.estimate_pct, cs.low_pct, cs.high_pct, 1.0 - running.alpha, ANYTIME_METHOD,
                   running.pvalue, "anytime-valid (confidence sequence)", running.n,
                   moved=running.low > running.high), notes)


def verdict_of(effect: Callable[[], tuple[Effect, tuple[Note, ...]]], criteria: Criteria,
               ) -> tuple[Verdict, Effect | None, tuple[Note, ...]]:
    """The verdict, the effect it rests on and the effect's notes; refused when no interval exists."""
    try:
        found, notes = effect()
    except StatisticsError as exc:
        return refuse(refusal_note(exc)), None, ()
    if found.moved:
        return moved(), found, notes
    return decide(found.low, found.high, criteria.threshold), found, notes


@frozen
class RoundsPlan:
    """How many further rounds should decide an inconclusive comparison; when none is given
    (``needed`` None) for a reason the user should hear, the ``note`` that says it."""

    needed: int | None
    note: Note | None = None
    span: tuple[int, int] | None = None
    """While the estimate is known to be unsteady (fewer than ``STEADY_VALUES`` values), the further
    rounds at the ends of its own interval (``rounds_span``), ``needed`` between them; else None."""


def plan_rounds(log_ratios: np.ndarray, criteria: Criteria, *, nearest: bool = False) -> RoundsPlan:
    """Further rounds after which the verdict's interval should be decisive, or why none is given.

    An interval no wider than the threshold always decides: if it holds 0 it
    lies within +-threshold. So this is the smallest total n at which the
    interval the criteria use (the sequence's ranks when adaptive, the sign
    test's otherwise) spans at most ln(1 + threshold) in the distribution of
    the log-ratios seen so far, and never less than the n at which that
    interval first exists. That distribution is the sample's quantile function
    (linear between order statistics), except between two values that each
    occur more than once: ties at a timer's resolution have nothing between
    them, so the quantile steps there instead of sliding; and near the median,
    where the interval of many more rounds lies, a line of the sample's slope
    there (``_NearMedian``): read from two neighbouring order statistics, the
    estimate varied 36-fold between identical trials of 32 rounds.

    Not given (None) with fewer than 3 pairs or no spread (the refusal says
    why), and with a note when more rounds cannot be expected to decide: the
    median falls between two tied values further apart than the threshold (the
    interval then never narrows below that step), or it would take more than
    ``MAX_ROUNDS_PLANNED`` rounds. Cost: O(m log m) for m pairs, then
    O(log MAX_ROUNDS_PLANNED) evaluations of the interval's ranks, each closed
    form (fixed rounds) or a bisection (adaptive): nothing steps through
    binomial CDFs.

    ``nearest``: the smallest n at which that interval, placed where the values
    so far put it, gets a verdict by the verdict rules (``verdict.decide``: it
    excludes zero, or lies within +-threshold, here +-ln(1 + threshold) so that
    the estimate is the same with the sides swapped), whichever comes first. That
    is never more than the width's n and up to four times fewer near zero or near
    +-threshold (an interval around 0 decides once about 2 x threshold wide): what
    a suite's spending asks, to tell a benchmark near a verdict from one far from it.
    """
    r = np.sort(np.asarray(log_ratios, dtype=np.float64))
    if r.size < 3 or r[0] == r[-1]:
        return RoundsPlan(None)
    level, target = criteria.level_alpha, math.log1p(criteria.threshold / 100.0)
    tied = _TiedQuantile(r)
    gap = tied.gap_at_median()
    quantile = tied if tied.tied_at_median() else _NearMedian(tied)
    if gap is not None and gap[1] - gap[0] > target:
        return RoundsPlan(None, Note("no-rounds-estimate", {
            "reason": "ties", "values_pct": [float(100.0 * np.expm1(v)) for v in gap],
            "threshold": criteria.threshold}))
    floor = (first_bounded_n(level, criteria.t_opt) if criteria.anytime
             else smallest_n_for_median_interval(1.0 - level))

    def decisive(n: int) -> bool:
        low_rank, high_rank = _interval_ranks(n, level, criteria.t_opt if criteria.anytime else None)
        if low_rank < 1:
            return False
        low, high = quantile((low_rank - 0.5) / n), quantile((high_rank - 0.5) / n)
        if nearest:  # it excludes 0, or lies within +-target: the verdict rules, symmetric in log-ratios
            return low > 0.0 or high < 0.0 or (-target <= low and high <= target)
        return high - low <= target

    if not decisive(MAX_ROUNDS_PLANNED):
        return RoundsPlan(None, Note("no-rounds-estimate", {"reason": "too-many", "limit": MAX_ROUNDS_PLANNED}))
    lo, hi = floor - 1, MAX_ROUNDS_PLANNED  # decisive(hi); bisection on the (nearly monotone) width
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mid >= floor and decisive(mid) else (mid, hi)
    return RoundsPlan(max(hi - int(r.size), 1), span=rounds_span(hi, int(r.size)))


STEADY_VALUES = 256
"""From this many values on the rounds-needed estimate is given alone: ten identical trials' estimates
then lie within about 2 times of each other (``benchmarks/results/rounds_needed_stability.md``); below, it
comes with its own 90% interval (``rounds_span``)."""
SPAN_Z = 1.6448536269514722
"""The standard normal's 0.95 quantile (scipy.stats.norm.ppf(0.95)): ``rounds_span`` is a 90% interval.
(At 80% ten identical trials' intervals shared a point in only 6-48% of simulated sets.)"""


def rounds_span(total: int, n: int) -> tuple[int, int] | None:
    """The further rounds at the ends of a 90% interval for the rounds-needed estimate ``total`` (all
    rounds, those measured included) read from ``n`` values, or None from ``STEADY_VALUES`` values on.

    The estimate goes as the square of the sample's sparsity at the median (``_NearMedian``), the
    spacing of the order statistics across Hall and Sheather's window, which holds k = 2 h n of them.
    Such a spacing is k exponential gaps (a Beta(k, n - k + 1) of uniform ones), so its logarithm has a
    standard deviation of about 1 / sqrt(k) and the estimate's about 2 / sqrt(k); the interval is
    ``total`` times exp(-+ z 2 / sqrt(k)). Its coverage of the rounds the distribution needs, and how
    often ten identical trials' intervals share a point, are measured by seeded simulation
    (``benchmarks/rounds_needed_stability.py --ranges``). Hand-written: neither numpy nor scipy has it,
    and this runs while sampling (the suite's spending), before scipy may load."""
    if n >= STEADY_VALUES:
        return None
    h = min(n ** (-1 / 3) * _HS_FACTOR, 0.49)
    spread = math.exp(SPAN_Z * 2.0 / math.sqrt(2.0 * h * n))
    low, high = max(math.floor(total / spread) - n, 1), max(math.ceil(total * spread) - n, 1)
    return low, high


class _TiedQuantile:
    """The quantile function of sorted values, linear between order statistics (numpy's default),
    except between two distinct values that are each tied: there it steps where the empirical
    distribution does, at the fraction of the values at or below the lower one."""

    def __init__(self, ordered: np.ndarray):
        self.x = ordered
        values, counts = np.unique(ordered, return_counts=True)
        self.tied = np.repeat(counts > 1, counts)  # per order statistic: its value occurs twice or more

    def __call__(self, p: float) -> float:
        x, last = self.x, self.x.size - 1
        h = min(max(p, 0.0), 1.0) * last
        i = min(int(h), last - 1)
        low, high = float(x[i]), float(x[i + 1])
        if low != high and self.tied[i] and self.tied[i + 1]:  # i is low's last copy
            return low if p < (i + 1) / x.size else high
        return low + (h - i) * (high - low)

    def tied_at_median(self) -> bool:
        """Whether a value the median falls on or next to occurs more than once (a timer's steps):
        there the quantile steps, and nothing smooths it."""
        m = self.x.size
        return bool(self.tied[(m - 1) // 2] or self.tied[m // 2])

    def gap_at_median(self) -> tuple[float, float] | None:
        """The two tied values the median falls between (half the values at or below the first),
        or None: where more rounds converge on one value."""
        x, m = self.x, self.x.size
        if m % 2:
            return None
        i = m // 2 - 1
        if x[i] != x[i + 1] and self.tied[i] and self.tied[i + 1]:
            return float(x[i]), float(x[i + 1])
        return None


class _NearMedian:
    """The quantile function ``plan_rounds`` reads a future interval from: the sample's (``tied``) away
    from the median, and within ``h`` of it the line through the sample median whose slope is the
    sample's sparsity there, (Q(1/2 + h) - Q(1/2 - h)) / 2h (Siddiqui 1960; Bloch & Gastwirth 1968),
    with Hall & Sheather's (1988) bandwidth h = n^(-1/3) z^(2/3) (1.5 phi(0)^2)^(1/3), z the normal
    quantile at 0.975 (Koenker, *Quantile Regression*, 2005, section 3.4.2).

    Why: the interval of many more rounds lies a few ranks either side of the median, and the gap
    between two neighbouring order statistics of 32 rounds is nearly as variable as one value, so the
    rounds it gave (which go as its square) varied 36-fold (the median over sets of ten identical
    trials of normal log-ratios; 13-fold at 64 rounds) where this slope's vary 3.4-fold (2.5-fold;
    1.9-fold at 256), at 1.14 times the rounds the distribution itself needs (1.04 at 256): even an
    estimate that knew the distribution was normal would vary about 2.2-fold over ten trials of 32
    (``benchmarks/results/rounds_needed_stability.md``). Hand-written: scipy and numpy have no
    sparsity estimator."""

    def __init__(self, tied: _TiedQuantile):
        n = tied.x.size
        self.tied = tied
        self.h = min(n ** (-1 / 3) * _HS_FACTOR, 0.49)
        self.median = tied(0.5)
        self.slope = (tied(0.5 + self.h) - tied(0.5 - self.h)) / (2 * self.h)

    def __call__(self, p: float) -> float:
        if abs(p - 0.5) <= self.h:
            return self.median + (p - 0.5) * self.slope
        return self.tied(p)


_NORMAL = NormalDist()  # the standard library's: scipy loads only after the last sample
_HS_FACTOR = _NORMAL.inv_cdf(0.975) ** (2 / 3) * (1.5 * _NORMAL.pdf(0.0) ** 2) ** (1 / 3)
"""Hall & Sheather's bandwidth at the median, times n^(1/3) (``_NearMedian``): 0.9716."""


@functools.lru_cache(maxsize=65536)  # pure; the comparisons of a run share the level and most n
def _interval_ranks(n: int, level: float, t_opt: int | None) -> tuple[int, int]:
    """1-based ranks (low, high) of the interval at n pairs, for planning; low 0 while unbounded.

    Adaptive (``t_opt``, the sequence's tuning): its ranks (``stats.sequential.upper_ranks``, a
    bisection). Fixed (``t_opt`` None): the sign test's, k the largest with
    P(Binom(n, 1/2) <= k - 1) <= level/2 (Conover, *Practical Nonparametric Statistics*, 3rd ed.,
    section 3.2), from ``stats._binomial.largest_rank_within``: O(log n) CDFs at any level.
    """
    if t_opt is not None:
        high = int(upper_ranks(np.array([n]), level, t_opt, "beta-binomial")[0])
        return n + 1 - high, high
    low = _binomial.largest_rank_within(n, level / 2.0)
    return low, n + 1 - low
