"""Order-statistic ranks of the distribution-free (sign-test) interval for a median.

Shared by ``median_ci`` (one sample) and ``paired_effect`` (median of per-pair
log-ratios): one rule, one place.
"""

from __future__ import annotations

import numpy as np

from pairbench.frozen import frozen
from pairbench.stats import _binomial


@frozen
class MedianRanks:
    """1-based ranks ``low``, ``high`` of the interval [x_(low), x_(high)] and its exact coverage."""

    low: int
    high: int
    achieved_confidence: float


def middle(values: np.ndarray) -> float:
    """The median of finite ``values`` as ``np.median`` computes it (the middle one, or the mean of
    the two middle ones), through ``np.partition``: ``np.median`` imports ``numpy.ma`` at its first
    call (14 ms), which the stopping rule must not do while sampling, nor need before it."""
    n = values.size
    if n % 2:
        return float(np.partition(values, n // 2)[n // 2])
    low, high = np.partition(values, (n // 2 - 1, n // 2))[n // 2 - 1 : n // 2 + 1]
    return float((low + high) / 2.0)


def smallest_n_for_median_interval(confidence: float) -> int:
    """The smallest n for which a two-sided interval at ``confidence`` exists: 2 * 0.5**n <= alpha."""
    alpha = 1.0 - confidence
    n = 1
    while 2.0 * 0.5**n > alpha:
        n += 1
    return n


def median_interval_ranks(n: int, confidence: float) -> MedianRanks | None:
    """Ranks of the sign-test interval for the median of n continuous values, or None if n is too small.

    The interval is [x_(k), x_(n-k+1)] with k the largest integer such that
    P(Binom(n, 1/2) <= k - 1) <= alpha/2; its exact coverage is
    1 - 2 P(Binom(n, 1/2) <= k - 1) >= confidence (Conover, *Practical
    Nonparametric Statistics*, 3rd ed., section 3.2). O(log n) binomial CDFs (``_binomial``).
    """
    alpha = 1.0 - confidence
    if not alpha > 0.0:
        # Even [x_(1), x_(n)] misses the median with probability 2^(1-n) > 0: no interval.
        return None
    k = _binomial.largest_rank_within(n, alpha / 2.0)
    if k < 1 or k > n - k + 1:
        return None
    achieved = 1.0 - 2.0 * _binomial.cdf(k - 1, n)
    return MedianRanks(low=k, high=n - k + 1, achieved_confidence=achieved)
