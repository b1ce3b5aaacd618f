"""Quantile intervals and the shift function: how two distributions differ, decile by decile.

A single effect (a median ratio, a Hodges-Lehmann shift) says how much one
distribution moved; when a change slows only the tail, or speeds the body and
slows the tail, one number hides it ("sometimes s1 is
faster than s2, but the opposite is also true"). The *shift function* of
Doksum (1974) plots, for each decile q, the difference of the candidate's and
the baseline's q-quantiles; a pure location shift is a flat line.

Intervals: each decile of
each sample gets the distribution-free order-statistic interval
[x_(l), x_(u)] with B ~ Binomial(n, q) and

    l = qbinom(a/2, n, q),   u = qbinom(1 - a/2, n, q) + 1,

so that P(x_(l) <= xi_q <= x_(u)) >= P(l <= B <= u - 1) >= 1 - a for any
continuous distribution (conservative with ties); Conover, *Practical
Nonparametric Statistics*, 3rd ed., section 3.2. The difference of two deciles
gets [c_low - b_high, c_high - b_low], which covers the true difference
whenever both intervals cover. With a Bonferroni split over the 9 deciles and
the 2 samples (a = alpha / 18) all nine difference intervals hold at once with
probability >= 1 - alpha, whether or not the samples are independent (paired
rounds are not), at any n, in O(n log n). Wilcox's ``shifthd`` (Harrell-Davis
deciles with bootstrap errors) is narrower at small n but costs bootstraps and
has only an approximate simultaneous level; we prefer the exact bound.

Decile estimates are numpy's default "linear" quantiles (R's ``quantile(type =
7)``), the convention of ``describe``. When n is too small for an order
statistic to exist (e.g. no x_(l) with l >= 1) that end of the interval is
unbounded and given as None.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats import _special
from pairbench.stats._order import quantiles
from pairbench.stats._validation import as_sample, check_confidence, check_count

DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
_FUZZ = 1.0 - 64 * np.finfo(float).eps  # R's qbinom fuzz: p * (1 - 64 eps) guards rounding


@frozen
class QuantileRanks:
    """1-based order-statistic ranks of a quantile interval and its exact coverage.

    ``low`` is 0 when no lower order statistic qualifies (the interval is
    unbounded below) and ``high`` is n + 1 when none qualifies above.
    ``achieved_confidence`` = P(low <= B <= high - 1), B ~ Binomial(n, p).
    """

    low: int
    high: int
    achieved_confidence: float


@frozen
class QuantileInterval:
    """A sample quantile with its distribution-free interval; None marks an unbounded end."""

    p: float
    estimate: float
    low: float | None
    high: float | None
    confidence: float
    achieved_confidence: float
    n: int
    low_rank: int
    high_rank: int


@frozen
class ShiftFunction:
    """Candidate-minus-baseline quantile differences with simultaneous intervals.

    ``difference[i]`` = candidate q-quantile - baseline q-quantile for
    ``quantiles[i]``; ``low[i]``/``high[i]`` bound it (None: unbounded), and
    all of them hold together with probability >= ``confidence``. Each
    quantile interval of each sample is built at ``interval_confidence``.
    ``pure_shift_excluded`` is True when no single value lies inside every
    difference interval: then the two distributions differ by more than a
    location shift, a test at level 1 - ``confidence``.
    """

    quantiles: tuple[float, ...]
    baseline: tuple[QuantileInterval, ...]
    candidate: tuple[QuantileInterval, ...]
    difference: tuple[float, ...]
    low: tuple[float | None, ...]
    high: tuple[float | None, ...]
    confidence: float
    interval_confidence: float
    n_baseline: int
    n_candidate: int
    pure_shift_excluded: bool
    warnings: tuple[Note, ...] = ()


def quantile_ranks(n: int, p: float, confidence: float = 0.95) -> QuantileRanks:
    """The order-statistic ranks of the two-sided ``confidence`` interval for the p-quantile.

    l = qbinom(a/2, n, p) and u = qbinom(1 - a/2, n, p) + 1 with a = 1 -
    confidence, computed like R's ``qbinom`` (smallest k with pbinom(k) >=
    target, with R's 64-epsilon fuzz), from Cornish-Fisher's start as R's is.
    """
    n, p = check_count(n, "n"), check_confidence(p, "p")
    low, high, achieved = _ranks(n, np.array([p]), check_confidence(confidence))
    return QuantileRanks(low=int(low[0]), high=int(high[0]), achieved_confidence=float(achieved[0]))


def quantile_ci(x, p: float, confidence: float = 0.95) -> QuantileInterval:
    """The p-quantile of ``x`` (type 7) with its distribution-free order-statistic interval."""
    arr = np.sort(as_sample(x, "x", min_n=1, what="for a quantile interval"))
    conf = check_confidence(confidence)
    return _intervals(arr, (check_confidence(p, "p"),), conf)[0]


def shift_function(baseline, candidate, confidence: float = 0.95,
                   quantiles: tuple[float, ...] = DECILES) -> ShiftFunction:
    """The shift function of ``candidate`` against ``baseline`` with simultaneous intervals.

    Bonferroni over ``len(quantiles)`` quantiles and both samples: each
    quantile interval is built at 1 - (1 - confidence) / (2 * len(quantiles)).
    O((n + m) log(n + m)); 1e6 samples each take about a quarter of a second.
    """
    conf = check_confidence(confidence)
    qs = _check_quantiles(quantiles)
    b = np.sort(as_sample(baseline, "baseline", min_n=1, what="for a shift function"))
    c = np.sort(as_sample(candidate, "candidate", min_n=1, what="for a shift function"))
    per_interval = 1.0 - (1.0 - conf) / (2 * len(qs))
    b_int = _intervals(b, qs, per_interval)
    c_int = _intervals(c, qs, per_interval)
    diff = tuple(ci.estimate - bi.estimate for bi, ci in zip(b_int, c_int, strict=True))
    low = tuple(_minus(ci.low, bi.high) for bi, ci in zip(b_int, c_int, strict=True))
    high = tuple(_minus(ci.high, bi.low) for bi, ci in zip(b_int, c_int, strict=True))
    lows = [v for v in low if v is not None]
    highs = [v for v in high if v is not None]
    excluded = bool(lows and highs and max(lows) > min(highs))
    warnings = []
    unbounded = sum(v is None for v in low + high)
    if unbounded:
        warnings.append(note(
            "shift-unbounded",
            f"{unbounded} of {2 * len(qs)} shift-function bounds are unbounded: too few samples "
            f"({min(b.size, c.size)}) for order-statistic intervals at {per_interval:.4g} each",
            unbounded=unbounded, total=2 * len(qs), n=min(int(b.size), int(c.size)),
            level=per_interval,
        ))
    return ShiftFunction(
        quantiles=qs, baseline=b_int, candidate=c_int, difference=diff, low=low, high=high,
        confidence=conf, interval_confidence=per_interval, n_baseline=int(b.size),
        n_candidate=int(c.size), pure_shift_excluded=excluded, warnings=tuple(warnings),
    )


def _intervals(sorted_arr: np.ndarray, ps: tuple[float, ...], confidence: float,
               ) -> tuple[QuantileInterval, ...]:
    n = sorted_arr.size
    low, high, achieved = _shared_ranks(n, tuple(ps), confidence)
    estimates = quantiles(sorted_arr, ps)
    return tuple(
        QuantileInterval(
            p=p,
            estimate=float(estimates[i]),
            low=float(sorted_arr[low[i] - 1]) if low[i] >= 1 else None,
            high=float(sorted_arr[high[i] - 1]) if high[i] <= n else None,
            confidence=confidence,
            achieved_confidence=float(achieved[i]),
            n=n,
            low_rank=int(low[i]),
            high_rank=int(high[i]),
        )
        for i, p in enumerate(ps)
    )


@functools.lru_cache(maxsize=16)
def _shared_ranks(n: int, ps: tuple[float, ...], confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_ranks``, computed once for the samples of one size (a shift function's two sides, mostly)."""
    ranks = _ranks(n, np.asarray(ps), confidence)
    for r in ranks:
        r.flags.writeable = False
    return ranks


def _ranks(n: int, ps: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised ranks (low, high) and exact coverage for quantiles ``ps`` of n values."""
    a = 1.0 - confidence
    low, before_low, _ = _qbinom(a / 2.0, n, ps)
    high, _, at_high = _qbinom(1.0 - a / 2.0, n, ps)
    high = high + 1
    below = np.where(low >= 1, before_low, 0.0)  # pbinom(low - 1), as _qbinom settled it
    upto = np.where(high <= n, at_high, 1.0)  # pbinom(high - 1)
    return low, high, upto - below


def _qbinom(target: float, n: int, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smallest k in 0..n with pbinom(k, n, p) >= target, per p (R's qbinom, with its fuzz), with the
    pbinom(k - 1) and pbinom(k) that settled it (the coverage needs them again)."""
    goal = target * _FUZZ
    k = _special.binomial_quantile_start(target, n, ps)
    before, at = _special.bdtr(k - 1, n, ps), _special.bdtr(k, n, ps)
    while True:  # the start is a few steps off at most; settle it exactly, a step at a time
        down = (k > 0) & (before >= goal)
        up = (k < n) & (at < goal)
        moved = down | up
        if not moved.any():
            return k, before, at
        k = k - down + up
        if ps.size > _special.SCALAR_MAX:  # numpy's route, whose rounding depends on the batch
            before, at = _special.bdtr(k - 1, n, ps), _special.bdtr(k, n, ps)
            continue
        # each p alone (``bdtr``'s scalar route): a step down makes the old pbinom(k - 1) the new
        # pbinom(k), a step up the old pbinom(k) the new pbinom(k - 1); one new CDF per p moved
        before, at = np.where(up, at, before), np.where(down, before, at)
        fresh = _special.bdtr(np.where(down, k - 1, k)[moved], n, ps[moved])
        before[down], at[up] = fresh[down[moved]], fresh[up[moved]]


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _check_quantiles(quantiles) -> tuple[float, ...]:
    try:
        qs = tuple(float(q) for q in quantiles)
    except (TypeError, ValueError):
        raise StatisticsError(f"`quantiles` must be numbers in (0, 1), got {quantiles!r}") from None
    if not qs or not all(0.0 < q < 1.0 and math.isfinite(q) for q in qs):
        raise StatisticsError(f"`quantiles` must be numbers in (0, 1), got {quantiles!r}")
    return qs
