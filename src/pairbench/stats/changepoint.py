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
from pairbench.frozen import frozen

MAD_TO_SD = 1.482602218505602  # 1 / Phi^-1(3/4): the MAD of a normal sample, as its SD
PHI_MAX = 0.95  # the largest lag-1 autocorrelation the noise model takes (a long-run SD 6.2 times the SD)


@frozen
class Segmentation:
    """An optimal segmentation: the index at which each segment after the first starts (ascending),
    and for each segment (one more than the breaks) whether it is fitted with a slope."""

    breaks: tuple[int, ...]
    sloped: tuple[bool, ...]


def pelt(y, penalty: float, min_size: int = 2) -> tuple[int, ...]:
    """The breakpoints of the optimal segmentation of ``y`` (see the module docstring): the index
    at which each segment after the first starts, ascending. O(n) expected with regular changes,
    O(n^2) at worst (no change at all over a long series prunes little)."""
    return segment(y, penalty, min_size).breaks


def segment(y, penalty: float, min_size: int = 2) -> Segmentation:
    """The optimal segmentation of ``y`` into levels by PELT (module docstring)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise StatisticsError("pelt needs a one-dimensional series of finite numbers")
    if not (isinstance(min_size, int) and min_size >= 1):
        raise StatisticsError(f"`min_size` must be a whole number >= 1, got {min_size!r}")
    _check_penalty(penalty)
    n = y.size
    if n < 2 * min_size:
        return Segmentation((), (False,))
    return _pelt(_SegmentCosts(y), n, penalty, min_size)


class _Admissible:
    """PELT's admissible starts ``s`` and, aligned with them, what the cost of a segment ``s..t``
    needs of each: F(s), and the cumulative sums at ``s`` (gathered once, when ``s`` enters, not at
    every ``t``); ``work`` and ``keep`` are scratch for the costs and the pruning."""

    def __init__(self, n: int):
        self.starts, self.best, self.s1, self.s2, self.work, self.scratch = (np.empty(n + 1) for _ in range(6))
        self.keep = np.empty(n + 1, dtype=bool)
        self.m = 0

    def add(self, start: int, best: float, costs: _SegmentCosts) -> None:
        m = self.m
        self.starts[m], self.best[m], self.s1[m], self.s2[m] = start, best, costs.s1[start], costs.s2[start]
        self.m = m + 1

    def fitted(self, costs: _SegmentCosts, t: int) -> np.ndarray:
        """F(s) + C(s, t) for every admissible ``s``: the same operations, in the same order, as
        ``best[s] + costs.level(s, t)`` (so the same numbers), in place."""
        m = self.m
        total, length, fit = self.work[:m], self.scratch[:m], self.s2[:m]
        np.subtract(costs.s1[t], self.s1[:m], out=total)
        np.multiply(total, total, out=total)
        np.subtract(float(t), self.starts[:m], out=length)  # t - s: whole numbers, exact in floats
        np.divide(total, length, out=total)
        np.subtract(costs.s2[t], fit, out=length)
        np.subtract(length, total, out=length)
        return np.add(self.best[:m], length, out=length)

    def prune(self, fitted: np.ndarray, bound: float) -> None:
        """Keep the starts whose F(s) + C(s, t) is at most ``bound`` (most are: compacted only when not)."""
        keep = np.less_equal(fitted, bound, out=self.keep[:self.m])
        if keep.all():
            return
        kept = np.flatnonzero(keep)
        for column in (self.starts, self.best, self.s1, self.s2):
            column[:kept.size] = column[kept]
        self.m = kept.size


def _pelt(costs: _SegmentCosts, n: int, penalty: float, min_size: int) -> Segmentation:
    """PELT's recursion over ``t`` (module docstring): F(t) = min over admissible s of F(s) + C(s, t)
    + penalty, then the pruning F(s) + C(s, t) + K <= F(t), K = 0 for squared errors."""
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    last = np.zeros(n + 1, dtype=np.int64)
    admissible = _Admissible(n)
    for t in range(min_size, n + 1):
        start = t - min_size
        if start == 0 or start >= min_size:  # a segmentation of y[:start] exists
            admissible.add(start, best[start], costs)
        fitted = admissible.fitted(costs, t)
        k = int(fitted.argmin())
        best[t] = fitted[k] + penalty
        last[t] = int(admissible.starts[k])
        admissible.prune(fitted, best[t])
    return _backtrack(last, n)


def with_lines(y, segmentation: Segmentation, penalty: float, min_length: int,
               slope_penalty: float | None = None) -> Segmentation:
    """``segmentation`` with runs of its consecutive segments joined where one straight line fits
    them for less: the optimal partition of ``y`` at (a subset of) the segmentation's breaks, each
    part costing ``penalty`` plus the squared deviations from its mean or, for ``slope_penalty``
    more (default ``penalty``) and when at least ``min_length`` long, from its least-squares line.
    O(k^2) for k breaks.

    A slow drift is cut by a search for levels into a staircase of small steps; here the steps of
    a staircase give way to one line when the line fits as well for fewer penalties."""
    y = np.asarray(y, dtype=np.float64)
    _check_penalty(penalty)
    slope_penalty = penalty if slope_penalty is None else slope_penalty
    _check_penalty(slope_penalty)
    edges = [0, *segmentation.breaks, y.size]
    costs = _SegmentCosts(y)
    best = [0.0] + [math.inf] * (len(edges) - 1)
    choice: list[tuple[int, bool]] = [(0, False)] * len(edges)
    for j in range(1, len(edges)):
        for i in range(j):
            level, line = (float(v[0]) for v in costs.both(np.array([edges[i]]), edges[j]))
            sloped = edges[j] - edges[i] >= min_length and line + slope_penalty < level
            total = best[i] + (line + slope_penalty if sloped else level) + penalty
            if total < best[j]:
                best[j], choice[j] = total, (i, sloped)
    breaks, lines, j = [], [], len(edges) - 1
    while j > 0:
        i, sloped = choice[j]
        lines.append(sloped)
        if i > 0:
            breaks.append(edges[i])
        j = i
    return Segmentation(tuple(reversed(breaks)), tuple(reversed(lines)))


def _check_penalty(penalty: float) -> None:
    if not (math.isfinite(penalty) and penalty > 0):
        raise StatisticsError(f"`penalty` must be a positive number, got {penalty!r}")


class _SegmentCosts:
    """The squared deviations of any segment ``y[s:t]`` from its mean and from its least-squares
    line, from cumulative sums: O(1) per segment. Sums are taken about the median and the middle
    index, so that levels of 1e9 and 10,000 commits lose nothing."""

    def __init__(self, y: np.ndarray):
        center = y - np.median(y)
        u = np.arange(y.size, dtype=np.float64) - (y.size - 1) / 2.0
        self.s1, self.s2 = _cumulative(center), _cumulative(center * center)
        self.u1, self.u2, self.uy = _cumulative(u), _cumulative(u * u), _cumulative(u * center)

    def level(self, s: np.ndarray, t: int) -> np.ndarray:
        total = self.s1[t] - self.s1[s]
        return (self.s2[t] - self.s2[s]) - total * total / (t - s)

    def both(self, s: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Each segment's deviations from its mean, and from its line (the mean's for 2 values or fewer)."""
        length = t - s
        total = self.s1[t] - self.s1[s]
        level = (self.s2[t] - self.s2[s]) - total * total / length
        u = self.u1[t] - self.u1[s]
        suu = (self.u2[t] - self.u2[s]) - u * u / length
        suy = (self.uy[t] - self.uy[s]) - u * total / length
        line = np.where(length > 2, level - suy * suy / np.where(suu > 0, suu, 1.0), level)
        return level, line


def _cumulative(values: np.ndarray) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(values)))


def _backtrack(last: np.ndarray, n: int) -> Segmentation:
    breaks, t = [], n
    while t > 0:
        t = int(last[t])
        if t > 0:
            breaks.append(t)
    return Segmentation(tuple(reversed(breaks)), (False,) * (len(breaks) + 1))


def noise_scale(y) -> float:
    """A robust estimate of the SD of ``y``'s noise about its level (module docstring); 0 when
    more than half the consecutive differences are equal."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < 3:
        raise StatisticsError("the noise of a series needs at least 3 values", code="not-enough-data",
                              needed=3, got=int(y.size), purpose="noise-scale")
    d = np.diff(y)
    return float(MAD_TO_SD * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))


# --------------------------------------------------------------------------- the noise about a fit


@frozen
class SerialNoise:
    """The noise about a segmentation's fit, as a stationary AR(1) process: its SD, its lag-1
    autocorrelation ``phi`` (0 <= phi <= ``PHI_MAX``), and its long-run SD,
    sd * sqrt((1 + phi) / (1 - phi)): the mean of a long stretch of L values varies with SD
    long_run_sd / sqrt(L), which is what a step between two stretches is measured against."""

    sd: float
    phi: float

    @property
    def long_run_sd(self) -> float:
        return self.sd * math.sqrt((1.0 + self.phi) / (1.0 - self.phi))


def fitted(y, segmentation: Segmentation) -> np.ndarray:
    """Each segment's least-squares fit of ``y``: its mean, or its line where it is sloped."""
    y = np.asarray(y, dtype=np.float64)
    fit = np.empty_like(y)
    for (a, b), line in zip(_bounds(segmentation, y.size), segmentation.sloped, strict=True):
        fit[a:b] = _line(y[a:b]) if line else np.mean(y[a:b])
    return fit


def median_fitted(y, segmentation: Segmentation) -> np.ndarray:
    """Each segment's robust level: its median, or where it is sloped its median plus its
    least-squares slope about its middle."""
    y = np.asarray(y, dtype=np.float64)
    fit = np.empty_like(y)
    for (a, b), line in zip(_bounds(segmentation, y.size), segmentation.sloped, strict=True):
        u = np.arange(b - a, dtype=np.float64) - (b - a - 1) / 2.0
        fit[a:b] = np.median(y[a:b]) + (slope(y[a:b]) * u if line else 0.0)
    return fit


def slope(y) -> float:
    """The least-squares slope of ``y`` against its index (per step of the index)."""
    y = np.asarray(y, dtype=np.float64)
    u = np.arange(y.size, dtype=np.float64) - (y.size - 1) / 2.0
    return float(np.dot(u, y - y.mean()) / np.dot(u, u))


def _line(y: np.ndarray) -> np.ndarray:
    u = np.arange(y.size, dtype=np.float64) - (y.size - 1) / 2.0
    return y.mean() + slope(y) * u


def _bounds(segmentation: Segmentation, n: int) -> list[tuple[int, int]]:
    edges = [0, *segmentation.breaks, n]
    return list(zip(edges[:-1], edges[1:], strict=True))


def serial_noise(y, segmentation: Segmentation) -> SerialNoise:
    """The AR(1) noise of ``y`` about ``segmentation``'s fit (O(n)).

    ``phi`` is the residuals' lag-1 autocorrelation within segments (the Yule-Walker ratio), whose
    bias about fitted means, -(1 + 4 phi) / n per fitted parameter p (a level per segment, a slope
    per sloped one; Shaman & Stine 1988 [3]_ give it for one mean), is removed by solving
    r = phi - (1 + 4 phi) p / n for phi; then clamped to [0, ``PHI_MAX``]: a negative
    autocorrelation is read as none, which keeps the long-run SD on the safe (larger) side.
    The SD comes from the residuals' consecutive differences within segments, whose variance is
    2 sd^2 (1 - phi) whatever the segments' levels: so it does not shrink when a segmentation fits
    too many levels (the residuals' own SD would, and a noise model estimated from them would then
    call for still more levels)."""
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    residuals = y - fitted(y, segmentation)
    bounds = _bounds(segmentation, n)
    differences = np.concatenate([np.diff(residuals[a:b]) for a, b in bounds])
    spread = float(np.dot(differences, differences)) / max(differences.size, 1)
    squares = float(np.dot(residuals, residuals))
    if spread == 0.0 or squares == 0.0:
        return SerialNoise(0.0, 0.0)
    r = sum(float(np.dot(residuals[a:b - 1], residuals[a + 1:b])) for a, b in bounds) / squares
    p = len(segmentation.sloped) + sum(segmentation.sloped)
    share = min(p / n, 0.125)  # the correction is for p << n; bounded where it is not
    phi = min(max((r + share) / (1.0 - 4.0 * share), 0.0), PHI_MAX)
    return SerialNoise(math.sqrt(spread / (2.0 * (1.0 - phi))), phi)


def refined(y, segmentation: Segmentation, noise: SerialNoise, reach: int = 3, min_size: int = 3,
            exact: float = 0.2) -> Segmentation:
    """``segmentation`` with each break moved (by at most ``reach``, each segment kept at least
    ``min_size`` long) to the centre of the three consecutive places with the most profile
    likelihood: each place's likelihood of its two neighbouring segments, fitted by generalised
    least squares under ``noise`` (AR(1), Prais-Winsten transformation [4]_), summed with its two
    neighbours' and ``exact`` times its own. Under AR(1) noise the likelihood of a step's place is
    often flat across 2-3 commits, and its single maximum then falls two commits off as easily as
    one: one step of 3 SDs under phi 0.5, phi and SD known, is placed within one commit in 94% of
    series by the likeliest place (89% by ordinary least squares) and in 96% by the likeliest three,
    nearly the Bayes rule's 96-97% (``benchmarks/history_placement_bound.py``). The window alone
    is the Bayes rule for "within one commit" but puts a step on its very commit in only a third
    of those series (a sharp maximum's two neighbours score as much as it does); ``exact`` > 0 is
    the Bayes rule for "within one, and on it counts ``exact`` more", which keeps nearly all of
    both (``benchmarks/RESULTS.md``). With no noise (SD 0) the likeliest place."""
    y = np.asarray(y, dtype=np.float64)
    if not segmentation.breaks:
        return segmentation
    breaks = list(segmentation.breaks)
    edges = [0, *breaks, y.size]
    for i in range(len(breaks)):
        a, b, c = edges[i], edges[i + 1], edges[i + 2]
        places = [q for q in range(b - reach - 1, b + reach + 2) if q - a >= min_size and c - q >= min_size]
        rss = np.array([_whitened_rss(y[a:c], q - a, segmentation.sloped[i:i + 2], noise.phi) for q in places])
        edges[i + 1] = breaks[i] = _likeliest_window(places, rss, noise, b, reach, exact)
    return Segmentation(tuple(breaks), segmentation.sloped)


def _likeliest_window(places: list[int], rss: np.ndarray, noise: SerialNoise, b: int, reach: int,
                      exact: float) -> int:
    """Of ``places`` within ``reach`` of ``b``, the one whose likelihood summed with its neighbours'
    (those of ``places`` one away), plus ``exact`` times its own, is the largest; ties to the
    nearest ``b``. The likelihood of a place is exp(-rss / (2 s^2)), s^2 = sd^2 (1 - phi^2) the
    variance of the AR(1) innovations."""
    innovations = noise.sd * noise.sd * (1.0 - noise.phi * noise.phi)
    centres = [q for q in places if abs(q - b) <= reach]
    if innovations <= 0.0:
        least = dict(zip(places, rss.tolist(), strict=True))
        return min(centres, key=lambda q: (least[q], abs(q - b)))
    score = dict(zip(places, window_scores(-rss / (2.0 * innovations), exact).tolist(), strict=True))
    return min(centres, key=lambda q: (-score[q], abs(q - b)))


def window_scores(log_likelihood: np.ndarray, exact: float) -> np.ndarray:
    """Each of consecutive places' likelihood (relative to the largest) summed with its two
    neighbours', plus ``exact`` times its own: the Bayes rule for placing a step "within one
    place, and on it counts ``exact`` more" is the place of the largest score (:func:`refined`)."""
    likelihood = relative_likelihood(log_likelihood)
    padded = np.pad(likelihood, 1)
    return padded[:-2] + (1.0 + exact) * padded[1:-1] + padded[2:]


def relative_likelihood(log_likelihood) -> np.ndarray:
    """exp(``log_likelihood``) relative to its largest value; places of infinite likelihood (an
    exact fit) share all of it, and when every place's is 0 (-inf: an underflow), they share it
    equally."""
    logs = np.asarray(log_likelihood, dtype=np.float64)
    if logs.ndim != 1 or logs.size == 0 or np.isnan(logs).any():
        raise StatisticsError("a log likelihood must be a non-empty sequence of numbers, none NaN")
    if np.isposinf(logs).any():
        return np.isposinf(logs).astype(np.float64)
    if np.all(np.isneginf(logs)):
        return np.ones(logs.size)
    return np.exp(logs - np.max(logs))


def _whitened_rss(y: np.ndarray, q: int, lines: tuple[bool, ...], phi: float) -> float:
    """The residual sum of squares of ``y`` fitted by a level (or line) before ``q`` and another
    after, by least squares on the AR(1)-whitened values: w_0 = sqrt(1 - phi^2) y_0,
    w_t = y_t - phi y_(t-1)."""
    n = y.size
    u = np.arange(n, dtype=np.float64) - (n - 1) / 2.0
    before = np.arange(n) < q
    columns = [before.astype(float), (~before).astype(float)]
    columns += [u * part for part, line in zip((before, ~before), lines, strict=True) if line]
    design = np.column_stack(columns)
    w, x = whitened(y, phi), np.apply_along_axis(whitened, 0, design, phi)
    r = w - x @ np.linalg.lstsq(x, w, rcond=None)[0]
    return float(r @ r)


def whitened(v: np.ndarray, phi: float) -> np.ndarray:
    """``v`` by the AR(1) Prais-Winsten transformation: sqrt(1 - phi^2) v_0, then v_t - phi v_(t-1)."""
    out = np.empty_like(v)
    out[0] = math.sqrt(1.0 - phi * phi) * v[0]
    out[1:] = v[1:] - phi * v[:-1]
    return out
