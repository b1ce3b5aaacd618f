"""Order statistics: the ranks of the distribution-free (sign-test) interval for a median, and
numpy's median and quantiles without ``numpy.ma``.

The ranks are shared by ``median_ci`` (one sample) and ``paired_effect`` (median of per-pair
log-ratios): one rule, one place. ``np.median``, ``np.quantile`` and ``np.percentile`` import
``numpy.ma`` at their first call (8 ms of CPU), which a compare loads beside its warm-up round for
nothing else; :func:`middle` and :func:`quantiles` give their values without it, on a compare's path.
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
    the two middle ones), through ``np.partition``, without ``numpy.ma`` (above)."""
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


def quantiles(values: np.ndarray, probabilities) -> np.ndarray | np.float64:
    """``np.quantile(values, probabilities)`` (its default, linear method) of finite ``values``,
    computed step for step as numpy 2 does (``numpy/lib/_function_base_impl.py``: ``_quantile``,
    ``_get_indexes``, ``_get_gamma``, ``_lerp``), so bit for bit the same, but with the partition's
    indexes sorted in Python: numpy sorts them with ``np.unique``, which imports ``numpy.ma`` (8 ms)
    at its first call, and a compare needs nothing else of it (tests/stats/test_order.py holds
    this to numpy's). O(n)."""
    arr = np.array(values).ravel()  # a copy, partitioned in place
    q = np.asanyarray(probabilities)
    n = arr.size
    virtual = (n - 1) * q
    previous = np.floor(virtual, out=...)
    following = np.add(previous, 1, out=...)
    above = virtual >= n - 1  # the largest value
    previous[above] = -1
    following[above] = -1
    below = virtual < 0
    previous[below] = 0
    following[below] = 0
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    arr.partition(sorted({0, -1, *previous.ravel().tolist(), *following.ravel().tolist()}))
    gamma = np.asanyarray(np.asanyarray(virtual - previous), dtype=virtual.dtype)
    low, high = arr[previous], arr[following]
    step = high - low
    result = np.add(low, step * gamma, out=...)
    np.subtract(high, step * (1 - gamma), out=result, where=gamma >= 0.5, casting="unsafe",
                dtype=type(result.dtype))
    return result[()] if result.ndim == 0 else result


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of finite ``values``, in order: ``np.unique(values)`` without ``numpy.ma``
    (above). numpy 2 finds them with a hash table, so of a -0.0 beside a 0.0 it may keep the other
    zero; every other value is the same."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.size < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def distinct_count(values: np.ndarray) -> int:
    """How many distinct values finite ``values`` hold: ``np.unique(values).size`` (``distinct``)."""
    return int(distinct(values).size)
