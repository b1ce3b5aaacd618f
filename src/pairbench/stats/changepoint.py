"""Change points in a series: PELT with the squared-error cost, and a robust scale for its penalty.

:func:`pelt` is the Pruned Exact Linear Time search of Killick, Fearnhead &
Eckley (2012) [1]_: the segmentation of ``y`` that minimises the sum over
segments of the squared deviations from the segment's mean, plus ``penalty``
per segment, with every segment at least ``min_size`` long. It gives the same
breakpoints as ``ruptures.Pelt(model="l2", min_size=m, jump=1)`` [2]_
(``tests/stats/test_changepoint.py`` checks them against ruptures on seeded
series). It is written here, vectorised over the admissible set with
cumulative sums, because ruptures' pure-Python loop takes 2.9 s for 1,000
points and 11 s for 2,000 on this project's machine, where a history of
10,000 commits must be analysed in well under a second.

:func:`noise_scale` estimates the noise's standard deviation from the
differences of consecutive values (median absolute deviation, scaled for the
normal; a difference of two values has sqrt(2) times their SD), so that steps,
which change few differences, do not inflate it.

.. [1] R. Killick, P. Fearnhead, I. A. Eckley (2012). Optimal detection of
   changepoints with a linear computational cost. JASA 107(500), 1590-1598.
.. [2] C. Truong, L. Oudre, N. Vayatis (2020). Selective review of offline change
   point detection methods. Signal Processing 167. (ruptures)
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.errors import StatisticsError

MAD_TO_SD = 1.482602218505602  # 1 / Phi^-1(3/4): the MAD of a normal sample, as its SD


def pelt(y, penalty: float, min_size: int = 2) -> tuple[int, ...]:
    """The breakpoints of the optimal segmentation of ``y`` (see the module docstring): the index
    at which each segment after the first starts, ascending. O(n) expected with regular changes,
    O(n^2) at worst (no change at all over a long series prunes little)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise StatisticsError("pelt needs a one-dimensional series of finite numbers")
    if not (isinstance(min_size, int) and min_size >= 1):
        raise StatisticsError(f"`min_size` must be a whole number >= 1, got {min_size!r}")
    if not (math.isfinite(penalty) and penalty > 0):
        raise StatisticsError(f"`penalty` must be a positive number, got {penalty!r}")
    n = y.size
    if n < 2 * min_size:
        return ()
    center = y - np.median(y)  # sums of squares of small numbers: no cancellation
    s1 = np.concatenate(([0.0], np.cumsum(center)))
    s2 = np.concatenate(([0.0], np.cumsum(center * center)))
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    last = np.zeros(n + 1, dtype=np.int64)
    admissible = np.empty(n + 1, dtype=np.int64)  # its first ``m`` entries, ascending
    m = 0
    for t in range(min_size, n + 1):
        start = t - min_size
        if start == 0 or start >= min_size:  # a segmentation of y[:start] exists
            admissible[m] = start
            m += 1
        s = admissible[:m]
        # F(s) + C(s, t), C the squared deviations of y[s:t] from their mean
        mean_sum = s1[t] - s1[s]
        fitted = best[s] + (s2[t] - s2[s]) - mean_sum * mean_sum / (t - s)
        k = int(fitted.argmin())
        best[t] = fitted[k] + penalty
        last[t] = s[k]
        kept = s[fitted <= best[t]]  # pruning: F(s) + C(s, t) + K <= F(t) + K, K = penalty
        m = kept.size
        admissible[:m] = kept
    return _backtrack(last, n)


def _backtrack(last: np.ndarray, n: int) -> tuple[int, ...]:
    breaks, t = [], n
    while t > 0:
        t = int(last[t])
        if t > 0:
            breaks.append(t)
    return tuple(reversed(breaks))


def noise_scale(y) -> float:
    """A robust estimate of the SD of ``y``'s noise about its level (module docstring); 0 when
    more than half the consecutive differences are equal."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < 3:
        raise StatisticsError("the noise of a series needs at least 3 values", code="not-enough-data",
                              needed=3, got=int(y.size), purpose="noise-scale")
    d = np.diff(y)
    return float(MAD_TO_SD * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))
