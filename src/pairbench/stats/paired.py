"""Paired effects: the median per-pair log-ratio with a distribution-free interval (paired benchmarking).

A paired benchmark runs baseline and candidate back to back, in randomized order,
``n`` times. The effect ``pairbench compare`` decides on is the median of the
per-pair log-ratios r_i = ln(candidate_i / baseline_i), with the sign-test
(binomial order-statistic) interval for that median. Neither needs the
log-ratios to be symmetric, unimodal or normal, which timing data are not
(seeds 000, 003).

Paired benchmarking's "symmetric outlier" rule lives here too, but only as a diagnostic:
dropping outliers whose signs balance raises the false-positive rate at small n
and hides a real regression that lives in the tail, so ``outlier_balance``
counts and tests, and never removes anything.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from pairbench.errors import NotEnoughData, NoVariance, StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats import _binomial
from pairbench.stats._order import (
    distinct_count,
    median_interval_ranks,
    middle,
    smallest_n_for_median_interval,
)
from pairbench.stats._validation import (
    as_pairs,
    as_sample,
    check_confidence,
    check_number,
    level_text,
)

NORMAL_MAD_SCALE = 0.6744897501960817
"""The standard normal's 0.75 quantile (``scipy.special.ndtri(0.75)``): raw MAD / this estimates
the standard deviation of normal data (``scipy.stats.median_abs_deviation(scale="normal")``)."""

# compare calls paired_effect after every round with the same few (n, confidence):
# the ranks are pure functions of them, so remember them.
_interval_ranks = lru_cache(maxsize=1024)(median_interval_ranks)


@frozen
class PairedEffect:
    """The median per-pair log-ratio ln(candidate / baseline) with its sign-test interval.

    ``estimate``, ``low``, ``high`` are log-ratios (0 = no change, ln 1.01 ~ 0.00995
    = 1% slower); the ``*_pct`` fields are the same as relative changes in percent,
    100 * (exp(v) - 1), so negative means the candidate is faster.
    ``[low, high]`` is the closed interval [r_(low_rank), r_(high_rank)] of the
    sorted log-ratios; it covers the median with probability at least
    ``achieved_confidence`` (>= ``confidence``) for any distribution, ties included.
    ``p_value`` is the two-sided sign test of "candidate faster and slower are
    equally likely" over the untied pairs; ``n_tied`` pairs with candidate ==
    baseline are left out of it.
    """

    n: int
    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float
    estimate_pct: float
    low_pct: float
    high_pct: float
    p_value: float
    n_faster: int
    n_slower: int
    n_tied: int
    low_rank: int
    high_rank: int
    warnings: tuple[Note, ...] = ()


@frozen
class OutlierBalance:
    """How many outliers lie above and below the median, and whether that is lopsided.

    Outliers are values with |d - median| > k * MAD (normal-consistent MAD). Under
    H0 with exchangeable baseline/candidate runs the paired differences are
    symmetric, so each outlier is above or below with probability 1/2 and
    ``p_value`` is the two-sided binomial test of ``n_above`` out of
    ``n_above + n_below``; 1.0 when there is no outlier or the check is disabled
    (``enabled`` False: MAD = 0). A diagnostic only: nothing is removed.
    """

    n: int
    median: float
    mad: float
    k: float
    lower_fence: float
    upper_fence: float
    n_above: int
    n_below: int
    p_value: float
    enabled: bool
    warnings: tuple[Note, ...] = ()


def _percent(log_ratio: float) -> float:
    """A log-ratio as a relative change in percent: 100 * (exp(v) - 1); exact near 0."""
    return float(100.0 * np.expm1(log_ratio))


def _positive_durations(values: np.ndarray, name: str) -> None:
    """Raise when any duration is zero or negative, naming the first bad index."""
    bad = np.flatnonzero(values <= 0.0)
    if bad.size:
        i = int(bad[0])
        raise StatisticsError(
            f"{name} must hold positive durations, got {float(values[i])!r} at index {i}"
            f" ({bad.size} value(s) <= 0 in all)"
        )


def log_ratios(baseline, candidate) -> np.ndarray:
    """Per-pair log-ratios ln(candidate_i / baseline_i) of positive, finite, paired durations.

    Computed as log1p((c - b) / b): c - b is exact for close durations, so tiny
    changes between large integer nanosecond counts keep their precision, and a
    tied pair (c == b) gives exactly 0.
    """
    b, c = as_pairs(baseline, candidate, ("baseline", "candidate"), min_n=0)
    _positive_durations(b, "baseline")
    _positive_durations(c, "candidate")
    return np.log1p((c - b) / b)


def paired_effect(baseline, candidate, confidence: float = 0.95) -> PairedEffect:
    """The paired effect of candidate vs baseline: median log-ratio, sign-test interval, counts.

    Method (Conover, *Practical Nonparametric Statistics*, 3rd ed., section 3.2):

    1. r_i = ln(candidate_i / baseline_i) for each pair (inputs must be > 0).
    2. estimate = median(r).
    3. interval = [r_(k), r_(n-k+1)], k from ``median_interval_ranks``: the largest
       k with P(Binom(n, 1/2) <= k - 1) <= alpha/2; achieved confidence
       1 - 2 P(Binom(n, 1/2) <= k - 1).
    4. p-value: the exact two-sided sign test of #slower of #slower + #faster (as
       ``scipy.stats.binomtest``).

    Ties (coarse timers). The interval is closed, and for *any* distribution,
    atoms included, P(r_(k) > m) = P(#{r_i <= m} <= k - 1) <= P(Binom(n, 1/2)
    <= k - 1) because P(r <= m) >= 1/2 for a median m; likewise on the right.
    So tied values never shrink coverage below ``achieved_confidence``: they
    only make it conservative, and nothing is dropped or jittered. The sign test
    drops the tied pairs (r = 0) and conditions on the rest (the usual sign
    test); with many ties it can reject while the closed interval still touches
    0. A verdict should rest on the interval, which is why a warning says so.

    Needs ``smallest_n_for_median_interval(confidence)`` pairs (6 at 95%, 8 at
    99%). O(n): np.median and np.partition are linear; the ranks are O(1) and cached.

    Raises ``NotEnoughData`` with too few pairs and ``NoVariance`` when every
    pair is identical (every log-ratio 0: timer too coarse). A constant non-zero
    log-ratio gets the interval [r, r] and the sign test's p = 2 * 0.5**n.
    """
    confidence = check_confidence(confidence)
    r = log_ratios(baseline, candidate)
    needed = smallest_n_for_median_interval(confidence)
    if r.size < needed:
        raise NotEnoughData(
            f"need at least {needed} pairs for a {level_text(confidence)} interval of the paired effect"
            f" (2 * 0.5**n must be <= {1 - confidence:g}), got {r.size}",
            needed=needed, got=int(r.size), purpose="paired-interval", confidence=confidence,
        )
    require_spread(r)
    ranks = _interval_ranks(int(r.size), confidence)
    if ranks is None:  # pragma: no cover - guarded by smallest_n_for_median_interval
        raise NotEnoughData(f"no {level_text(confidence)} median interval exists for {r.size} pairs")
    ordered = np.partition(r, (ranks.low - 1, ranks.high - 1))
    low, high = float(ordered[ranks.low - 1]), float(ordered[ranks.high - 1])
    estimate = middle(r)
    n_slower = int(np.count_nonzero(r > 0.0))
    n_faster = int(np.count_nonzero(r < 0.0))
    n_tied = r.size - n_slower - n_faster
    p_value = sign_test_pvalue(n_slower, n_faster)
    return PairedEffect(
        n=int(r.size),
        estimate=estimate,
        low=low,
        high=high,
        confidence=confidence,
        achieved_confidence=ranks.achieved_confidence,
        estimate_pct=_percent(estimate),
        low_pct=_percent(low),
        high_pct=_percent(high),
        p_value=p_value,
        n_faster=n_faster,
        n_slower=n_slower,
        n_tied=n_tied,
        low_rank=ranks.low,
        high_rank=ranks.high,
        warnings=_effect_warnings(r, confidence, ranks.achieved_confidence, n_tied),
    )


def sign_test_pvalue(above: int, below: int) -> float:
    """The two-sided sign test of ``above`` values one way against ``below`` the other (ties left
    out): what ``scipy.stats.binomtest(above, above + below, 1/2)`` gives, computed exactly here
    (``_binomial``: the stopping path runs without scipy); 1 when there are none."""
    return _binomial.two_sided_pvalue(above, above + below)


def require_spread(r: np.ndarray) -> None:
    """Raise NoVariance when every log-ratio is 0: every pair identical (a timer too coarse to
    tell the commands apart), about which an interval [0, 0] would say nothing true.

    A constant *non-zero* ratio is not refused: every pair moved the same way, which is the
    clearest evidence there is. The sign-test interval (closed order statistics) and the
    confidence sequence cover it at their stated level, atoms included (see ``paired_effect``):
    under "no change" all n pairs land on one side of the median with probability at most
    2 * 0.5**n.
    """
    if r.size and np.all(r == 0.0):
        raise NoVariance(
            "no variance: every pair is identical; is the timer resolution too coarse?",
            n=int(r.size), change_pct=0.0, pairs=True,
        )


def _effect_warnings(
    r: np.ndarray, confidence: float, achieved: float, n_tied: int
) -> tuple[Note, ...]:
    """Caveats a reader of a paired effect should see (data, never printed here)."""
    out = []
    alpha = 1.0 - confidence
    if (1.0 - achieved) < alpha / 2.0:
        out.append(note(
            "interval-conservative",
            f"the interval's exact confidence is {achieved:.2%}, above the {level_text(confidence)}"
            f" asked for: with {r.size} pairs no sign-test interval is closer",
            achieved=achieved, requested=confidence, n=int(r.size),
        ))
    if n_tied:
        out.append(note(
            "tied-pairs",
            f"{n_tied} of {r.size} pairs are tied (candidate == baseline): the sign-test"
            " p-value leaves them out, the interval counts them conservatively",
            tied=n_tied, n=int(r.size),
        ))
    distinct = distinct_count(r)
    if distinct < 0.5 * r.size:
        out.append(note(
            "coarse-ratios",
            f"only {distinct} distinct log-ratios among {r.size} pairs: the timer looks coarse;"
            " the interval stays valid but is conservative",
            distinct=int(distinct), n=int(r.size),
        ))
    return tuple(out)


def outlier_balance(differences, k: float = 3.0) -> OutlierBalance:
    """Paired benchmarking's symmetric-outlier check, as a diagnostic: outliers above vs below, binomial p.

    Outliers are |d - median| > k * MAD with MAD the normal-consistent median
    absolute deviation (``scipy.stats.median_abs_deviation(scale='normal')``,
    1.4826 * raw MAD; k = 3 as perfolizer uses). Under
    H0 the paired differences are symmetric, so the outliers' signs are
    Binomial(n_out, 1/2); ``p_value`` is ``scipy.stats.binomtest`` two-sided.

    It never removes data: dropping "balanced" outliers raises the type-I error
    at small n and hides a one-sided tail regression. MAD = 0 (half the values
    tied) disables the check with a note. O(n).
    """
    d = as_sample(differences, "differences", min_n=1, what="for an outlier check")
    k = check_number(k, "k", "a positive finite number", lambda v: math.isfinite(v) and v > 0.0)
    center = middle(d)
    mad = middle(np.abs(d - center)) / NORMAL_MAD_SCALE
    if mad == 0.0:
        warning = note(
            "outlier-check-disabled",
            f"outlier check disabled: the MAD of the differences is 0 (at least half of the"
            f" {d.size} values equal {center:.6g}), so every other value would be an outlier",
            n=int(d.size), center=center,
        )
        return OutlierBalance(
            n=int(d.size), median=center, mad=0.0, k=k, lower_fence=center,
            upper_fence=center, n_above=0, n_below=0, p_value=1.0, enabled=False,
            warnings=(warning,),
        )  # fmt: skip
    n_above = int(np.count_nonzero(d - center > k * mad))
    n_below = int(np.count_nonzero(center - d > k * mad))
    total = n_above + n_below
    p_value = sign_test_pvalue(n_above, n_below)
    warnings = ()
    if 0 < total < 6:
        warnings = (note(
            "few-outliers",
            f"only {total} outlier(s): a binomial test of their signs cannot reach p < 0.05"
            " with fewer than 6 (even 5 vs 0 gives p = 0.0625)",
            total=total,
        ),)
    return OutlierBalance(
        n=int(d.size), median=center, mad=mad, k=k, lower_fence=center - k * mad,
        upper_fence=center + k * mad, n_above=n_above, n_below=n_below, p_value=p_value,
        enabled=True, warnings=warnings,
    )  # fmt: skip
