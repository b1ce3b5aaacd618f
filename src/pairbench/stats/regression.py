"""Straight lines through a benchmark's samples: least squares, and a robust slope with a rank test.

Benchmark validation asks two questions of times or memory readings taken at
several iteration counts: what a sample costs besides its iterations (the
intercept of a least-squares line, with its error), and whether the time grows
with the count at all (a rank test that a few preempted samples cannot sway).

References: ordinary least squares and its standard errors as in any regression
text (Draper & Smith, *Applied Regression Analysis*, 3rd ed., 1998, ch. 1-3);
Theil-Sen's slope, the median of the pairwise slopes, with Sen's interval
(P. K. Sen, "Estimates of the regression coefficient based on Kendall's tau",
JASA 63, 1968); Kendall's tau and its test (M. G. Kendall, *Rank Correlation
Methods*, 1970). ``tests/reference/regression.R`` checks them against R's
``lm``, ``qt`` and ``cor.test``.
"""

from __future__ import annotations

import numpy as np

from pairbench.frozen import frozen
from pairbench.stats._validation import as_pairs

ALTERNATIVES = ("two-sided", "greater", "less")


@frozen
class LineFit:
    """y = intercept + slope x by ordinary least squares, with standard errors and the half-widths of
    95% intervals (t quantile, n - 2 degrees of freedom); ``pvalue`` tests slope = 0 against
    ``alternative``."""

    n: int
    slope: float
    intercept: float
    slope_se: float
    intercept_se: float
    slope_ci: float
    intercept_ci: float
    r_squared: float
    pvalue: float
    alternative: str


@frozen
class TrendFit:
    """Theil-Sen's slope with its 95% interval, and Kendall's tau with the one-sided p-value that
    y grows with x."""

    n: int
    slope: float
    slope_low: float
    slope_high: float
    tau: float
    pvalue: float


def line_fit(x, y, alternative: str = "two-sided") -> LineFit | None:
    """The least-squares line through (x, y) (``scipy.stats.linregress``); None when x or y is
    constant or there are fewer than 3 points (no line, or no error for it). O(n)."""
    from scipy import stats as sps

    if alternative not in ALTERNATIVES:
        raise ValueError(f"`alternative` must be one of {ALTERNATIVES}, got {alternative!r}")
    x, y = as_pairs(x, y, min_n=0)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    fit = sps.linregress(x, y, alternative=alternative)
    t = float(sps.t.ppf(0.975, x.size - 2))
    return LineFit(int(x.size), float(fit.slope), float(fit.intercept), float(fit.stderr),
                   float(fit.intercept_stderr), t * float(fit.stderr), t * float(fit.intercept_stderr),
                   float(fit.rvalue) ** 2, float(fit.pvalue), alternative)


def trend_fit(x, y) -> TrendFit | None:
    """A line through points some of which a preemption pushed far up: Theil-Sen's slope
    (``scipy.stats.theilslopes``, Sen's 95% interval) and Kendall's tau with its one-sided test
    (``scipy.stats.kendalltau``: exact without ties for small n). None when x or y is constant or
    there are fewer than 3 points. O(n^2).

    Least squares is the wrong tool there: one sample stretched from 1 ms to 20 ms by the scheduler
    inflates its residual error enough that a clear growth no longer tests as one, while a rank test
    and a median of slopes move by one point's worth.
    """
    from scipy import stats as sps

    x, y = as_pairs(x, y, min_n=0)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    line = sps.theilslopes(y, x, alpha=0.95)
    growth = sps.kendalltau(x, y, alternative="greater")
    return TrendFit(int(x.size), float(line.slope), float(line.low_slope), float(line.high_slope),
                    float(growth.statistic), float(growth.pvalue))
