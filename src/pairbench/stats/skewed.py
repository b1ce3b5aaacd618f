"""Change points in skewed noise: the test that a history's noise is skewed, its two-piece
pseudo-values, and a step's place by the noise's own density.

Timings on a shared machine are slowed, never sped up, by other tenants: the noise of a
benchmark's history is often one-sided, a tight bulk with a long tail on one side (the real
result noise of ``benchmarks/history_noise.py``: its SD is 3.2 times its MAD-SD, a quarter of
the values lie beyond +1.6 MAD-SDs). A model of Gaussian noise reads that tail as spread, so a
step the size of a few bulk-widths is lost in it, and where the step is found, the tail's values
pull its least-squares place off. ``analysis.change_points.detect`` takes such a history apart:

* :func:`is_skewed`: the residuals about the running median have a quantile skewness
  ((q90 + q10 - 2 q50) / (q90 - q10), Bowley's on the 10% and 90% quantiles) beyond
  ``threshold / sqrt(n)``; symmetric noise (normal, AR(1), Student t3) passes at 3.5 in well
  under 1% of histories of 30 to 1,000 commits (``benchmarks/history_skewed.py``);
* :func:`two_piece`: each side's residuals about a fit scaled to the lighter side's scale (each
  side's from its median distance, as a half-normal's), so the tail weighs no more than the bulk;
* :func:`placed_by_density`: each step between two levels moved to the place between its
  neighbours where the residuals' own density (a Gaussian kernel estimate) makes the history
  likeliest; under the tail the Gaussian least-squares place is pulled off by slow values.

Written here with numpy, not scipy: scipy has the kernel density (``gaussian_kde``) and midranks
(``rankdata``), but importing ``scipy.stats`` would be most of ``pairbench history``'s time, and it
has no change point's place under a density. Pure functions over arrays.
"""

from __future__ import annotations

import math

import numpy as np

HALF_NORMAL_MEDIAN = 0.6744897501960817  # the median of |Z|, Z standard normal
DENSITY_POINTS = 512  # the kernel estimate is built on at most this many quantiles of the residuals
DENSITY_ROWS = 2048  # values whose log density is computed at once (memory: rows times points)


def running_median(y, width: int) -> np.ndarray:
    """The median of each value's window of ``width`` (odd), the ends padded with the end values."""
    y = np.asarray(y, dtype=np.float64)
    half = width // 2
    padded = np.concatenate((np.full(half, y[0]), y, np.full(half, y[-1])))
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, width), axis=1)


def midranks(y) -> np.ndarray:
    """The ranks of ``y`` from 1, ties given the mean of their ranks (R's ``rank``)."""
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(y, kind="mergesort")
    ordered = y[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ordered)) + 1))
    ends = np.concatenate((starts[1:], [y.size]))
    ranks = np.empty(y.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def quantile_skewness(residuals) -> float:
    """Bowley's skewness on the 10% and 90% quantiles: (q90 + q10 - 2 q50) / (q90 - q10), in
    [-1, 1]; 0 when the quantiles coincide."""
    q10, q50, q90 = np.percentile(np.asarray(residuals, dtype=np.float64), [10, 50, 90])
    return float((q90 + q10 - 2.0 * q50) / (q90 - q10)) if q90 > q10 else 0.0


def is_skewed(y, width: int, threshold: float) -> bool:
    """Whether the residuals of ``y`` about its running median of ``width`` have a quantile
    skewness beyond ``threshold / sqrt(n)``."""
    y = np.asarray(y, dtype=np.float64)
    return abs(quantile_skewness(y - running_median(y, width))) > threshold / math.sqrt(y.size)


def two_piece(y, fit) -> np.ndarray:
    """``fit`` plus the residuals of ``y`` about it, each side's scaled to the lighter side's scale
    (each side's median distance over a half-normal's); ``y`` itself when a side has fewer than
    three residuals."""
    y, fit = np.asarray(y, dtype=np.float64), np.asarray(fit, dtype=np.float64)
    r = y - fit
    up, down = r[r > 0], -r[r < 0]
    if up.size < 3 or down.size < 3:
        return y
    scale_up, scale_down = np.median(up) / HALF_NORMAL_MEDIAN, np.median(down) / HALF_NORMAL_MEDIAN
    lighter = min(scale_up, scale_down)
    return fit + np.where(r > 0, r * (lighter / scale_up), r * (lighter / scale_down))


def placed_by_density(y, fit, breaks: tuple[int, ...], sloped: tuple[bool, ...], min_size: int) -> tuple[int, ...]:
    """``breaks`` with each step between two levels (neither neighbour ``sloped``) moved, in turn, to
    the place at least ``min_size`` from its neighbouring breaks (the one before as moved) where
    the values before it about the level before (``fit`` just before the break) and those after
    about the level after are likeliest under the kernel density of the residuals ``y - fit``; of
    equal places, the nearest."""
    y, fit = np.asarray(y, dtype=np.float64), np.asarray(fit, dtype=np.float64)
    r = y - fit
    if not breaks or np.ptp(r) == 0.0:
        return tuple(breaks)
    log_density = _log_density(r)
    placed = list(breaks)
    for k, q in enumerate(breaks):
        lo = (placed[k - 1] if k else 0) + min_size  # the break before as placed: no two cross
        hi = (breaks[k + 1] if k + 1 < len(breaks) else y.size) - min_size
        if sloped[k] or sloped[k + 1] or hi <= lo:
            continue
        window = y[lo - 1:hi + 1]
        before = np.concatenate(([0.0], np.cumsum(log_density(window - fit[q - 1]))))
        after = np.concatenate((np.cumsum(log_density(window - fit[q])[::-1])[::-1], [0.0]))
        places = np.arange(lo, hi + 1)
        score = before[places - lo + 1] + after[places - lo + 1]
        best = places[score >= score.max() - 1e-12]
        placed[k] = int(best[np.argmin(np.abs(best - q))])
    return tuple(placed)


def _log_density(r: np.ndarray):
    """The log of a Gaussian kernel estimate of the density of ``r`` (Scott's bandwidth for its
    size, as ``scipy.stats.gaussian_kde``'s), built on at most ``DENSITY_POINTS`` of its quantiles
    so that a long history costs no more than a short one."""
    points = r if r.size <= DENSITY_POINTS else np.quantile(r, np.linspace(0.0, 1.0, DENSITY_POINTS))
    bandwidth = r.size ** -0.2 * float(np.std(r, ddof=1))
    constant = math.log(points.size * bandwidth * math.sqrt(2.0 * math.pi))

    def log_density(x: np.ndarray) -> np.ndarray:
        out = np.empty(x.size)
        for start in range(0, x.size, DENSITY_ROWS):
            z = (x[start:start + DENSITY_ROWS, None] - points[None, :]) / bandwidth
            exponent = -0.5 * z * z
            top = exponent.max(axis=1)
            out[start:start + DENSITY_ROWS] = top + np.log(np.exp(exponent - top[:, None]).sum(axis=1)) - constant
        return out

    return log_density
