"""An anytime-valid confidence sequence for the median of paired log-ratios.

``pairbench compare`` may look at the data after every round and stop as soon as
the interval excludes 0 (or lies inside +-threshold). Peeking at a fixed-n
interval after every round inflates the error rate (for a t test looked at from
n = 10 to 5000, more than half of A/A runs end "significant"), so the interval used for
stopping must hold at all n simultaneously:
P(for all t: median in CS_t) >= 1 - alpha.

Construction (distribution-free; Howard, Ramdas, McAuliffe & Sekhon 2021,
"Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist.
49(2):1055-1080; Howard & Ramdas 2022, "Sequential estimation of
quantiles with applications to A/B-testing and best-arm identification",
Bernoulli 28(3):1704, the fixed-quantile confidence sequence):

1. Let m be any median of D (P(D < m) <= 1/2 <= P(D <= m)). Pick the constant
   theta in [0, 1] with P(D < m) + theta P(D = m) = 1/2 (a proof device, never
   computed) and let G_i = 1{D_i < m} + theta 1{D_i = m}. Then G_i is in [0, 1]
   with mean 1/2, and N_lt(m) <= sum G_i <= N_le(m), where N_lt(q) = #{D_i < q}
   and N_le(q) = #{D_i <= q}. Atoms (ties from coarse timers) are thus covered.
2. G_i in [0, 1] with mean 1/2 is sub-Bernoulli: by convexity of
   x -> (2p)^x (2(1-p))^(1-x), E[(2p)^G (2(1-p))^(1-G)] <= 1. Mixing over
   p ~ Beta(a, a) gives the beta-binomial supermartingale
   M_t(s) = 2^t B(a + s, a + t - s) / B(a, a) with s = sum G_i
   (the beta-binomial conjugate mixture of Howard et al. 2021).
   The ``"normal-mixture"`` method instead uses Hoeffding's sub-Gaussian bound
   (variance proxy 1/4 per step, V_t = t/4) and Robbins' normal mixture
   M_t = sqrt(rho / (V_t + rho)) exp((s - t/2)^2 / (2 (V_t + rho))).
3. Ville's inequality: P(exists t: M_t >= 1/alpha) <= alpha. Both M_t are
   symmetric about s = t/2 and increase with |s - t/2|, so M_t >= 1/alpha iff
   |s - t/2| >= w_t. Let c_t be the smallest integer > t/2 with
   M_t(c_t) >= 1/alpha (c_t = ceil(t/2 + u_t) for the normal mixture, with
   u_t = sqrt((V_t + rho) ln((V_t + rho) / (rho alpha^2)))).
4. Exclude q when N_lt(q) >= c_t (q is too large) or N_le(q) <= t - c_t (too
   small). For q = m either event implies |sum G_i - t/2| >= c_t - t/2, hence
   M_t >= 1/alpha: so m is excluded at some t with probability <= alpha.
   Ties at q count against excluding it on both sides: that is the
   conservative choice, and it is what the proof needs.
5. What is left is the closed interval of order statistics
   [x_(t - c_t + 1), x_(c_t)] (-inf / +inf when the rank is out of range).

``anytime_pvalue`` is the matching always-valid p-value for "median = 0":
1 / (running maximum of M_t), below alpha exactly once the sequence at level
alpha has excluded 0.

The proof needs no i.i.d. assumption, only that each D_i has median m given the
past (theta may then change with i). Under H0, pairs run in randomized order
give exactly that whenever the two runs of a pair are exchangeable given the
past: a drift slower than one pair hits both arms alike.

Tuning: the mixing parameter is chosen to make the boundary tightest at
``t_opt`` rounds (default 200, the size of a typical compare run; the price of
anytime validity is then a half-width about 1.4 times the fixed-n sign-test
interval's near t_opt): rho minimises u_{t_opt} numerically (close to confseq's
closed form V_opt / (2 ln(1/alpha) + ln(1 + 2 ln(1/alpha)))), and a minimises the
beta-binomial boundary at t_opt. With t_opt = 200 and alpha = 0.05 or 0.01 the
beta-binomial ranks are never wider than the normal mixture's for n < 1000 and
one rank narrower at 5-15% of those n (it is finite from n = 16 vs 17 at alpha =
0.05, 18 vs 19 at 0.01); beyond n ~ 3000 it is one rank wider at about 10% of n.
So it is the default. (``pairbench compare`` and ``bench`` tune at 30 rounds,
about what a verdict takes: bounded from 11 pairs at alpha 0.01, and at most
one or two ranks wider than at 200 from 100 pairs on; ``analysis.criteria``
and RESULTS.md, "Fewer rounds at the same error rate".) Cost per call: O(log n) special-function evaluations for
c_n plus O(n) for two order statistics (np.partition).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats._minimize import fminbound
from pairbench.stats._order import distinct, middle
from pairbench.stats._rmath import zeroin
from pairbench.stats._validation import as_sample, check_confidence, check_count

METHODS = ("beta-binomial", "normal-mixture")

# Makes "M_t >= 1/alpha" slightly harder to meet than exact arithmetic would, so
# rounding can only make the sequence wider (conservative), never narrower.
_LOG_SLACK = 1e-9


@frozen
class ConfidenceSequence:
    """The anytime-valid interval [low, high] for the median of ``n`` paired log-ratios.

    Valid simultaneously over all n at level 1 - ``alpha``, so a caller may stop
    at the first n at which it excludes 0 or lies inside +-threshold.
    ``low``/``high`` are -inf/+inf until enough pairs exist
    (``low_rank`` < 1 or ``high_rank`` > n); the ``*_pct`` fields are
    100 * (exp(v) - 1), the relative change in percent (-100 and inf when
    unbounded). ``estimate`` is the sample median (``RunningSequence.current``: moved into the
    running interval when the median lies outside it).
    """

    estimate: float
    low: float
    high: float
    n: int
    alpha: float
    method: str
    t_opt: int
    low_rank: int
    high_rank: int
    estimate_pct: float
    low_pct: float
    high_pct: float
    warnings: tuple[Note, ...] = ()


def confidence_sequence(
    values, alpha: float = 0.01, t_opt: int = 200, method: str = "beta-binomial", *,
    tuned_for: float | None = None,
) -> ConfidenceSequence:
    """The anytime-valid confidence sequence for the median of ``values`` at their current n.

    ``values`` are the per-pair log-ratios ln(candidate / baseline) so far, in
    any order (only their order statistics matter). Call it after every round;
    each call costs O(n). ``alpha`` is the probability that the sequence *ever*
    misses the median; ``t_opt`` is the n at which it is tightest; ``method``
    is "beta-binomial" (default, tighter) or "normal-mixture". ``tuned_for`` is the
    level the mixture is tuned for (default ``alpha``): the sequences of one
    mixture at several levels are nested, and each excludes 0 exactly when that
    mixture's ``anytime_pvalue`` is at most its level (see :func:`tuning`).
    """
    alpha = check_confidence(alpha, "alpha")
    tuned = tuning(alpha, tuned_for)
    t_opt = _check_mixture(t_opt, method)
    x = as_sample(values, "values", min_n=1, what="for a confidence sequence")
    t = x.size
    high_rank = int(upper_ranks(np.array([t]), alpha, t_opt, method, tuned_for=tuned)[0])
    low_rank = t + 1 - high_rank
    low, high = _order_statistics(x, low_rank, high_rank)
    estimate = middle(x)
    return ConfidenceSequence(
        estimate=estimate,
        low=low,
        high=high,
        n=t,
        alpha=alpha,
        method=method,
        t_opt=t_opt,
        low_rank=low_rank,
        high_rank=high_rank,
        estimate_pct=_percent(estimate),
        low_pct=_percent(low),
        high_pct=_percent(high),
        warnings=_warnings(x, low_rank, alpha, t_opt, method, tuned),
    )


def tuning(alpha: float, tuned_for: float | None) -> float:
    """The level a mixture is tuned for: ``tuned_for`` (checked), else ``alpha``.

    A suite first measures every benchmark at one level (alpha / m, Bonferroni)
    and then lets Holm's procedure reject at larger levels. Those later
    intervals keep the mixture the measuring used and only lower its threshold
    1 / level, so they are the level sets of the one p-value that Holm's
    procedure adjusts: an interval excludes 0 exactly when that p-value is at
    most its level. (A mixture tuned afresh for each level would not be nested.)
    """
    return alpha if tuned_for is None else check_confidence(tuned_for, "tuned_for")


def anytime_pvalue(
    values, alpha: float = 0.01, t_opt: int = 200, method: str = "beta-binomial", *,
    tuned_for: float | None = None,
) -> float:
    """The anytime-valid p-value of "median = 0" after each of ``values`` (in time order) was seen.

    p_n = min(1, 1 / max_{t <= n} M_t), with M_t the same mixture supermartingale
    the confidence sequence uses, evaluated at the most favourable point for H0:
    the s in [#{D_i < 0}, #{D_i <= 0}] (first t values) closest to t/2, so tied
    zeros count against rejecting. By Ville's inequality P(exists n: p_n <= x) <= x
    for every x under H0, so p may be watched after every pair. For x = ``alpha``
    (the level the mixture is tuned for) p_n <= alpha exactly when the
    confidence sequence at level alpha has excluded 0 at some n' <= n. ``values``
    must be in the order they were measured (the running maximum needs it). O(n).
    """
    alpha = check_confidence(alpha, "alpha")
    t_opt = _check_mixture(t_opt, method)
    x = as_sample(values, "values", min_n=1, what="for an anytime p-value")
    return _pvalue_of(_max_log_m_at_zero(x, tuning(alpha, tuned_for), t_opt, method))


def _max_log_m_at_zero(x: np.ndarray, tuned: float, t_opt: int, method: str) -> float:
    """max over t of ln M_t for "median = 0", the first t of ``x`` (time order) at each t. O(n)."""
    t = np.arange(1, x.size + 1, dtype=np.float64)
    return float(np.max(_log_m_at_zero(t, np.cumsum(x < 0.0), np.cumsum(x <= 0.0), tuned, t_opt, method)))


def _log_m_at_zero(t, below, at_or_below, tuned: float, t_opt: int, method: str):
    """ln M_t for "median = 0" from the counts of values < 0 and <= 0 among the first t (vectorised);
    the mixture tuned for level ``tuned``."""
    s = np.clip(t / 2.0, below, at_or_below)  # the point of [below, at_or_below] nearest t/2
    if method == "beta-binomial":
        return _log_beta_binomial(s, t, _best_a(tuned, t_opt))
    rho = _best_rho(tuned, t_opt)
    v = t / 4.0 + rho
    return 0.5 * np.log(rho / v) + (s - t / 2.0) ** 2 / (2.0 * v)


def _pvalue_of(max_log_m: float) -> float:
    return float(min(1.0, math.exp(-(max_log_m - _LOG_SLACK))))


def running_bounds(
    values, alpha: float = 0.01, t_opt: int = 200, method: str = "beta-binomial", *,
    tuned_for: float | None = None,
) -> tuple[float, float]:
    """The intersection over t = 1..n of the sequence's intervals for the first t ``values``.

    ``values`` must be in time order. The running intersection of a confidence
    sequence is again one at the same level (every CS_t holds the median on the
    same event of probability >= 1 - alpha), so a caller may use it instead:
    it only narrows, a verdict once decided stays decided, and it excludes 0
    exactly when ``anytime_pvalue`` <= alpha. Returns (-inf, inf) while no
    prefix is bounded; low > high when the intersection is empty (the median
    itself moved, or the rare miss the level allows).

    Written here because no library computes it. With L_t = t + 1 - c_t the
    lower bound at t is the L_t-th smallest of the first t values, and it is
    <= u iff #{i <= t: x_i <= u} >= L_t; so the largest lower bound is the
    smallest data value u for which that holds at every bounded t, found by
    bisection over the sorted values (the upper bound likewise, with "at some
    t" and c_t). O(n log n).
    """
    alpha = check_confidence(alpha, "alpha")
    tuned = tuning(alpha, tuned_for)
    t_opt = _check_mixture(t_opt, method)
    x = as_sample(values, "values", min_n=1, what="for a confidence sequence")
    t = np.arange(1, x.size + 1)
    c = upper_ranks(t, alpha, t_opt, method, tuned_for=tuned)
    bounded = c <= t
    if not bounded.any():
        return -math.inf, math.inf
    high_rank, low_rank = c[bounded], (t + 1 - c)[bounded]
    grid = distinct(x)

    def counts(u: float) -> np.ndarray:
        return np.cumsum(x <= u)[bounded]

    low = grid[_first_true(grid.size, lambda i: bool(np.all(counts(grid[i]) >= low_rank)))]
    high = grid[_first_true(grid.size, lambda i: bool(np.any(counts(grid[i]) >= high_rank)))]
    return float(low), float(high)


def _first_true(size: int, holds) -> int:
    """The smallest index in 0..size-1 at which the monotone predicate ``holds`` (it holds at size-1)."""
    lo, hi = -1, size - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


class RunningSequence:
    """The confidence sequence of paired log-ratios as rounds arrive: intersected over time, with its p-value.

    ``extend`` with one new value costs O(n) (one partition, one count); with
    several (catching up) it recomputes from all values in O(n log n). Either
    way the state equals ``running_bounds`` and ``anytime_pvalue`` of all
    values so far, so a verdict made while measuring and one recomputed from
    the stored samples agree.
    """

    def __init__(self, alpha: float = 0.01, t_opt: int = 200, method: str = "beta-binomial", *,
                 tuned_for: float | None = None):
        self.alpha = check_confidence(alpha, "alpha")
        self.tuned = tuning(self.alpha, tuned_for)  # the level the mixture is tuned for
        self.t_opt = _check_mixture(t_opt, method)
        self.method = method
        self._buffer = np.empty(256, dtype=np.float64)  # grows by doubling: O(1) amortised per round
        self._n = 0
        self._latest: ConfidenceSequence | None = None  # the sequence at the current n, once computed
        self.low, self.high = -math.inf, math.inf
        self._max_log_m = -math.inf

    def extend(self, values) -> None:
        new = as_sample(values, "values", min_n=0)
        if not new.size:
            return
        self._append(new)
        x = self.values
        args, mixture = (self.alpha, self.t_opt, self.method), (self.tuned, self.t_opt, self.method)
        if new.size == 1 and x.size > 1:
            self._latest = confidence_sequence(x, *args, tuned_for=self.tuned)
            self.low, self.high = max(self.low, self._latest.low), min(self.high, self._latest.high)
            t = np.array([float(x.size)])
            log_m = _log_m_at_zero(t, np.count_nonzero(x < 0.0), np.count_nonzero(x <= 0.0), *mixture)
            self._max_log_m = max(self._max_log_m, float(log_m[0]))
        else:
            self._latest = None
            self.low, self.high = running_bounds(x, *args, tuned_for=self.tuned)
            self._max_log_m = _max_log_m_at_zero(x, *mixture)

    def _append(self, new: np.ndarray) -> None:
        needed = self._n + new.size
        if needed > self._buffer.size:
            grown = np.empty(max(needed, 2 * self._buffer.size), dtype=np.float64)
            grown[: self._n] = self._buffer[: self._n]
            self._buffer = grown
        self._buffer[self._n : needed] = new
        self._n = needed

    @property
    def n(self) -> int:
        return self._n

    @property
    def values(self) -> np.ndarray:
        """The values so far, in the order they arrived (a read-only view)."""
        view = self._buffer[: self._n]
        view.flags.writeable = False
        return view

    @property
    def pvalue(self) -> float:
        """``anytime_pvalue`` of the values so far (1 before any)."""
        return _pvalue_of(self._max_log_m) if self._n else 1.0

    def current(self) -> ConfidenceSequence:
        """The sequence at the current n with its interval replaced by the running intersection, and its
        estimate the value of that interval nearest the median of all values so far.

        The intersection's ends may come from earlier rounds, so the median of all rounds can lie
        outside it (the change moved during the run, or the median sits near an end): the estimate is
        then the interval's nearer end, the values it still holds closest to the median (the median
        projected onto the confidence set), and a warning gives the median. An empty intersection
        keeps the current interval (which holds the median) and says why in ``warnings``.
        """
        cs = self._latest or confidence_sequence(self.values, self.alpha, self.t_opt, self.method,
                                                 tuned_for=self.tuned)
        self._latest = cs
        if self.low > self.high:
            empty = note("running-interval-empty",
                         "the running interval became empty: the change itself moved during the run "
                         "(or this is the rare miss the level allows); the interval at the last round "
                         "is shown")
            return replace(cs, warnings=(*cs.warnings, empty))
        running = replace(cs, low=self.low, high=self.high, low_pct=_percent(self.low),
                          high_pct=_percent(self.high))
        return _estimate_within(running)


def _estimate_within(cs: ConfidenceSequence) -> ConfidenceSequence:
    """``cs`` with its estimate (the median of all values) moved to the nearer end of its interval
    when it lies outside, and a warning that gives the median; ``cs`` itself when it lies inside."""
    if cs.low <= cs.estimate <= cs.high:
        return cs
    inside = cs.low if cs.estimate < cs.low else cs.high
    outside = note("median-outside-running-interval",
                   f"the median of all {cs.n} pairs, {cs.estimate_pct:+.3g}%, lies outside the interval "
                   "intersected over the rounds: the change moved during the run, or the median lies near "
                   "an end; the estimate is the interval's nearer end",
                   n=cs.n, median_pct=cs.estimate_pct, low_pct=cs.low_pct, high_pct=cs.high_pct)
    return replace(cs, estimate=inside, estimate_pct=cs.low_pct if inside == cs.low else cs.high_pct,
                   warnings=(*cs.warnings, outside))


def _check_mixture(t_opt, method: str) -> int:
    """Return ``t_opt`` as a positive int, or raise; and raise unless ``method`` is one of ``METHODS``."""
    t_opt = check_count(t_opt, "t_opt", "a positive integer (rounds)")
    if method not in METHODS:
        raise StatisticsError(f"`method` must be one of {METHODS}, got {method!r}")
    return t_opt


def _percent(v: float) -> float:
    """A log-ratio as percent change, 100 * (exp(v) - 1); -100 / inf at -inf / +inf."""
    return float(100.0 * np.expm1(v))


def _order_statistics(x: np.ndarray, low_rank: int, high_rank: int) -> tuple[float, float]:
    """x_(low_rank) and x_(high_rank) (1-based), -inf/+inf outside 1..n; O(n) by partition."""
    t = x.size
    kth = [r - 1 for r in (low_rank, high_rank) if 1 <= r <= t]
    part = np.partition(x, kth) if kth else x
    low = float(part[low_rank - 1]) if low_rank >= 1 else -math.inf
    high = float(part[high_rank - 1]) if high_rank <= t else math.inf
    return low, high


def _warnings(x, low_rank: int, alpha: float, t_opt: int, method: str, tuned: float) -> tuple[Note, ...]:
    out = []
    if low_rank < 1:
        first = first_bounded_n(alpha, t_opt, method, tuned_for=tuned)
        out.append(note(
            "sequence-unbounded",
            f"the sequence is unbounded with {x.size} pairs; it needs at least {first}"
            f" pairs at alpha = {alpha:g}",
            n=int(x.size), needed=first, alpha=alpha,
        ))
    if x.size > 1 and np.all(x == x[0]):
        out.append(note(
            "no-variance",
            "no variance: every pair has the same log-ratio; is the timer resolution too coarse?",
            n=int(x.size), change_pct=_percent(float(x[0])), pairs=True,
        ))
    return tuple(out)


# ---------------------------------------------------------------------------
# Boundaries: c_t, the smallest integer count > t/2 at which M_t >= 1/alpha.


def upper_ranks(t: np.ndarray, alpha: float, t_opt: int, method: str, *,
                tuned_for: float | None = None) -> np.ndarray:
    """c_t for each t (int array, >= 1): the CS at t is [x_(t + 1 - c_t), x_(c_t)].

    c_t = t + 1 means the sequence is still unbounded at t. Vectorised over t;
    the simulations in tests/ and benchmarks/ use it to monitor every t cheaply.
    The threshold is 1 / ``alpha``; the mixture is tuned for ``tuned_for`` (default ``alpha``).
    """
    t = np.asarray(t, dtype=np.int64)
    if np.any(t < 1):
        raise StatisticsError("t must be >= 1")
    tuned = alpha if tuned_for is None else tuned_for
    if method == "normal-mixture":
        u = _normal_mixture_radius(t.astype(np.float64), alpha, _best_rho(tuned, t_opt))
        c = np.ceil(t / 2.0 + u).astype(np.int64)
        return np.minimum(c, t + 1)
    if method == "beta-binomial":
        a = _best_a(tuned, t_opt)
        most = int(t.max()) if t.size else 0
        if most > TABLE_ROUNDS:
            return _beta_binomial_ranks(t, alpha, a)
        return _beta_binomial_table(alpha, a, most)[t - 1]
    raise StatisticsError(f"`method` must be one of {METHODS}, got {method!r}")


TABLE_ROUNDS = 65536
"""Up to this many rounds a mixture's ranks are kept in a table (``_beta_binomial_table``)."""
_TABLES: dict[tuple[float, float], np.ndarray] = {}


def _beta_binomial_table(alpha: float, a: float, rounds: int) -> np.ndarray:
    """c_t for t = 1 to at least ``rounds``, kept per level and mixture and doubled (from 64) as
    more rounds come: a round's ranks are then a lookup, not a bisection of special functions
    (ranks up to 64 take about 2 ms to compute, up to 4096 about 34 ms)."""
    table = _TABLES.get((alpha, a))
    if table is None or table.size < rounds:
        have = 0 if table is None else table.size
        size = max(64, 2 * have)
        while size < rounds:
            size *= 2
        more = _beta_binomial_ranks(np.arange(have + 1, size + 1), alpha, a)
        table = more if table is None else np.concatenate([table, more])
        table.flags.writeable = False
        if len(_TABLES) >= 64:  # a bound on what levels and mixtures a process keeps
            _TABLES.clear()
        _TABLES[(alpha, a)] = table
    return table


def _normal_mixture_radius(t, alpha: float, rho: float):
    """u_t = sqrt((V + rho) ln((V + rho) / (rho alpha^2))), V = t/4 (Robbins 1970)."""
    v = t / 4.0 + rho
    return np.sqrt(v * (np.log(v / rho) + 2.0 * math.log(1.0 / alpha)))


def _log_beta_binomial(s, t, a: float):
    """ln M_t(s) = t ln 2 + ln B(a + s, a + t - s) - ln B(a, a): the Beta(a, a) mixture of LRs."""
    return t * math.log(2.0) + _log_beta(a + s, a + t - s) - _log_beta_of_equals(a)


def _log_beta(p, q):
    """ln B(p, q) = ln Gamma(p) + ln Gamma(q) - ln Gamma(p + q) for p, q > 0, elementwise, on the
    standard library's lgamma: the stopping rule needs it before the first sample, where
    ``scipy.special.betaln`` would cost 0.2 s of CPU to import (they agree to about 1e-15 times the
    size of the terms; ``tests/stats/test_sequential_tuning.py``)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return _lgamma(p) + _lgamma(q) - _lgamma(p + q)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """``math.lgamma`` of each element (one call per element: numpy has no lgamma)."""
    return np.fromiter(map(math.lgamma, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


@lru_cache(maxsize=256)
def _log_beta_of_equals(a: float) -> float:
    """ln B(a, a), the mixture's normaliser, once per mixture."""
    return 2.0 * math.lgamma(a) - math.lgamma(2.0 * a)


def _beta_binomial_ranks(t: np.ndarray, alpha: float, a: float) -> np.ndarray:
    """Smallest integer s in (t/2, t] with ln M_t(s) >= ln(1/alpha), else t + 1; by bisection.

    ln M_t(s) is convex in s and symmetric about t/2 (second derivative
    trigamma(a+s) + trigamma(a+t-s) > 0), so it increases on [t/2, t] and the
    set where it crosses the threshold is an upper range of integers.
    """
    threshold = math.log(1.0 / alpha) + _LOG_SLACK
    tf = t.astype(np.float64)
    lo = t // 2  # M_t(lo) <= 1 < 1/alpha: never a crossing
    hi = t.copy()
    crosses = _log_beta_binomial(tf, tf, a) >= threshold
    # invariant (where crosses): M(lo) < threshold <= M(hi)
    while True:
        active = crosses & (hi - lo > 1)
        if not active.any():
            break
        mid = (lo + hi) // 2
        up = _log_beta_binomial(mid.astype(np.float64), tf, a) >= threshold
        hi = np.where(active & up, mid, hi)
        lo = np.where(active & ~up, mid, lo)
    return np.where(crosses, hi, t + 1)


@lru_cache(maxsize=64)
def _best_rho(alpha: float, t_opt: int) -> float:
    """The rho minimising the normal-mixture radius u_t at t = t_opt."""
    return math.exp(fminbound(
        lambda log_rho: float(_normal_mixture_radius(float(t_opt), alpha, math.exp(log_rho))),
        -12.0, 16.0, xatol=1e-10))


@lru_cache(maxsize=64)
def _best_a(alpha: float, t_opt: int) -> float:
    """The Beta(a, a) parameter minimising the beta-binomial radius w_t at t = t_opt."""
    t = float(t_opt)
    threshold = math.log(1.0 / alpha)

    def radius(log_a: float) -> float:
        a = math.exp(log_a)
        excess = _log_beta_binomial(t, t, a) - threshold  # at s = t (the largest deviation)
        if excess < 0.0:
            return t  # cannot cross at t_opt: worst possible
        def gap(w: float) -> float:
            return float(_log_beta_binomial(t / 2 + w, t, a)) - threshold

        return zeroin(gap, 0.0, t / 2, gap(0.0), gap(t / 2), _ROOT_TOLERANCE)

    return math.exp(fminbound(radius, -8.0, 16.0, xatol=1e-8))


_ROOT_TOLERANCE = 2e-12  # as scipy.optimize.brentq's default xtol


@lru_cache(maxsize=256)
def first_bounded_n(alpha: float, t_opt: int = 200, method: str = "beta-binomial", *,
                    tuned_for: float | None = None) -> int:
    """The smallest n at which the sequence is a finite interval (c_n <= n); cached. Searched in
    windows of 64, 256, 1024 and 4096 rounds (the ranks of a window cost in proportion to it)."""
    for size in (64, 256, 1024, 4096):
        t = np.arange(1, size + 1)
        bounded = np.flatnonzero(upper_ranks(t, alpha, t_opt, method, tuned_for=tuned_for) <= t)
        if bounded.size:
            return int(t[bounded[0]])
    raise StatisticsError(f"alpha = {alpha:g} needs more than 4096 pairs for a finite interval")  # pragma: no cover
