"""Rank tests and Hodges-Lehmann intervals, computed as R 4.2.2's ``wilcox.test`` does.

* ``mann_whitney(x, y)``: Wilcoxon rank-sum / Mann-Whitney U test (Mann & Whitney,
  Ann. Math. Statist. 18:50, 1947), p-value as R's (``_rank_sum_pvalue``).
* ``hodges_lehmann(x, y)``: the shift estimate median{x_i - y_j} (Hodges & Lehmann,
  Ann. Math. Statist. 34:598, 1963) with R's ``wilcox.test(x, y, conf.int=TRUE)``
  interval.
* ``signed_rank(x, y=None)``: Wilcoxon signed-rank test with the pseudomedian
  (median of Walsh averages) and R's interval; p-value as R's (``_signed_rank_pvalue``).

R's rules, from ``stats:::wilcox.test.default`` (R 4.2.2, which wrote the reference values):

* Exact route when both samples have fewer than 50 values (signed rank: fewer than
  50 non-zero differences) and there are no ties (and no zero differences). The
  interval is [D_(qu), D_(N-qu+1)] of the sorted differences (Walsh averages),
  qu = qwilcox(alpha/2, n, m) (qsignrank(alpha/2, n)), qu = 0 -> 1.
* Otherwise the normal approximation with tie and continuity correction. The
  interval solves Z(d) = +-z_{1-alpha/2} with ``uniroot(tol = 1e-4)``, where Z(d) is
  the tie-corrected, continuity-corrected statistic of the pooled sample (x - d, y)
  (of x - d for one sample). Without ties inside the samples Z(d) is a step
  function of d with steps at the order statistics, so the root is the order
  statistic D_(k), k = ceil(N/2 - 1/2 - z sigma), up to
  uniroot's tolerance; we return D_(k) exactly. With ties inside a sample (coarse
  timers), sigma depends on d (and R's root finder evaluates Z exactly at tied
  differences, where the pooled tie correction jumps), so R's root can sit one
  step away from that formula. We re-run R's root finder (a port of R_zeroin2) on
  an exact O((n + m) log(n + m)) evaluation of R's Z(d), then report the
  difference (Walsh average) nearest to R's root: the step it converged to, so
  within tol.root = 1e-4 of R, and low <= high even where R's two roots of one
  step come out in the wrong order.

Every interval end is therefore an order statistic of the differences (Walsh
averages), or one of R's bracket ends, which are too.

Where we differ from R, on purpose:

* ``estimate`` is always the exact Hodges-Lehmann median (pseudomedian). On the
  normal route R reports instead ``uniroot(Z(d) = 0)``, which is off by up to
  tol.root and, with ties, any point of a flat region (DescTools #97: R says
  0.5828427 for ``c(0.7, 0.5, 0.5)`` where the pseudomedian is 0.55).
* Where R fails or returns NaN (every value identical), we return p = 1 and a NaN
  interval with a "no variance" warning.
* Signed rank drops zero differences for the test and the interval, like R; the
  estimate is then the pseudomedian of the non-zero differences, so that it lies
  inside its interval. ``zeros`` reports how many were dropped.

Warnings are returned as data (``warnings``), never emitted.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats import _rank_steps
from pairbench.stats._rmath import (
    finite_for_zeroin,
    psignrank,
    pwilcox,
    qnorm,
    qsignrank,
    qwilcox,
    zeroin,
)
from pairbench.stats._select import pairwise_differences, walsh_sums
from pairbench.stats._validation import as_pairs, as_sample, check_confidence
from pairbench.stats.skewed import midranks

_TOL_ROOT = 1e-4  # R's wilcox.test(tol.root = 1e-4)
_EXACT_LIMIT = 50  # R: exact when n < 50 (and m < 50)
_DBL_EPS = sys.float_info.epsilon


@frozen
class MannWhitney:
    """A Wilcoxon rank-sum (Mann-Whitney) test of x against y, two-sided.

    ``W`` is R's statistic: U of the first sample, #{x_i > y_j} + #{x_i = y_j}/2.
    ``method`` is "exact" (R's exact null distribution) or "normal".
    """

    W: float
    pvalue: float
    method: str
    warnings: tuple[Note, ...] = ()


@frozen
class HodgesLehmann:
    """The Hodges-Lehmann shift of x relative to y, median{x_i - y_j}, with R's interval.

    ``confidence`` is the level requested; ``achieved_confidence`` is the exact
    coverage of the exact route, the (possibly lowered) nominal level otherwise.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float
    method: str
    warnings: tuple[Note, ...] = ()


@frozen
class SignedRank:
    """A Wilcoxon signed-rank test of d = x - y (or x) about 0, with the pseudomedian.

    ``V`` is R's statistic, the sum of the ranks of |d| over d > 0; ``estimate``
    the median of the Walsh averages of the non-zero d; ``zeros`` how many zero
    differences were dropped (R drops them too).
    """

    V: float
    pvalue: float
    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float
    method: str
    zeros: int
    warnings: tuple[Note, ...] = ()


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------
def mann_whitney(x, y) -> MannWhitney:
    """Two-sided Wilcoxon rank-sum test of x against y, equal to R's ``wilcox.test(x, y)``.

    ``method`` says the route: "exact" (R's exact null distribution) when n, m < 50 and no
    value is tied, else "normal" (the normal approximation with tie and continuity correction),
    with a "rank-ties" note when ties forced it below 50.
    """
    x, y = as_sample(x, "x"), as_sample(y, "y")
    n, m = x.size, y.size
    if _all_identical(x, y):
        return MannWhitney(n * m / 2.0, 1.0, "normal", (_no_variance_two(n, m),))
    tied = _has_ties(np.concatenate([x, y]))
    exact = n < _EXACT_LIMIT and m < _EXACT_LIMIT and not tied
    statistic, pvalue = _rank_sum_pvalue(x, y, exact)
    notes = (_ties_note("mann-whitney"),) if tied and n < _EXACT_LIMIT and m < _EXACT_LIMIT else ()
    return MannWhitney(statistic, pvalue, "exact" if exact else "normal", notes)


def hodges_lehmann(x, y, confidence: float = 0.95) -> HodgesLehmann:
    """Hodges-Lehmann shift of x relative to y with R's ``wilcox.test(conf.int=TRUE)`` interval.

    ``estimate`` = median of all x_i - y_j (R's sign and argument order), exact.
    ``low``, ``high`` = R's interval at ``confidence`` (see the module docstring).
    O((n + m) log(n + m)) expected time and O(n + m) memory: the n*m differences
    are never built (``_select``).
    """
    x, y = as_sample(x, "x"), as_sample(y, "y")
    level = check_confidence(confidence)
    xs, ys = np.sort(x), np.sort(y)
    n, m = xs.size, ys.size
    diffs = pairwise_differences(xs, ys)
    mid = _middle_ranks(n * m)
    small = n < _EXACT_LIMIT and m < _EXACT_LIMIT
    if small and not _has_ties(np.concatenate([xs, ys])):
        return _hl_exact(diffs, mid, n, m, level)
    notes = [_ties_note("hodges-lehmann")] if small else []
    if xs[0] == xs[-1] and ys[0] == ys[-1]:
        notes.append(_no_variance_two(n, m))
        est = float(xs[0] - ys[0])
        return HodgesLehmann(est, math.nan, math.nan, level, math.nan, "normal", tuple(notes))
    smallest, largest = xs[0] - ys[-1], xs[-1] - ys[0]
    if _has_ties(xs, is_sorted=True) or _has_ties(ys, is_sorted=True):
        est = _median_of(diffs.select(mid))
        low, high = _rank_sum_root_interval(xs, ys, 1.0 - level)
        low, high = diffs.nearest(low), diffs.nearest(high)
    else:
        del ys  # held by ``diffs`` as -y: 8 MB less at n = 1e6
        ks = _rank_sum_step_ranks(n, m, 1.0 - level)
        low, *middle, high = diffs.select([ks[0], *mid, ks[1]])
        est = _median_of(middle)
    notes += _edge_notes(low, high, smallest, largest, "difference")
    return HodgesLehmann(est, float(low), float(high), level, level, "normal", tuple(notes))


def signed_rank(x, y=None, confidence: float = 0.95) -> SignedRank:
    """Wilcoxon signed-rank test of x - y (paired) or of x (one sample) about 0, with CI.

    Equal to R's ``wilcox.test(x, y, paired=TRUE, conf.int=TRUE)`` (or
    ``wilcox.test(x, conf.int=TRUE)``) except that ``estimate`` is the exact
    pseudomedian. Zero differences are dropped like R. ``method`` says the route: "exact" (R's
    exact null distribution) when fewer than 50 differences are non-zero, no |difference| is tied
    and none is zero, else "normal" (tie and continuity corrected), with a "rank-ties" note when
    ties forced it below 50 and a "zero-differences" note when zeros were dropped.
    """
    if y is None:
        d = as_sample(x, "x")
    else:
        xa, ya = as_pairs(x, y)
        d = xa - ya
    level = check_confidence(confidence)
    nonzero = np.sort(d[d != 0])
    zeros = d.size - nonzero.size
    n = nonzero.size
    if n == 0:
        zero = note("no-variance",
                    f"no variance: all {d.size} differences are zero; is the timer resolution too coarse?",
                    n=int(d.size), change_pct=0.0, pairs=True)
        return SignedRank(
            0.0, 1.0, 0.0, math.nan, math.nan, level, math.nan, "normal", zeros, (zero,)
        )
    v_stat = float(_rank_abs(nonzero)[nonzero > 0].sum())
    tied = _has_ties(np.abs(nonzero))
    exact = n < _EXACT_LIMIT and not tied and zeros == 0
    pvalue = _signed_rank_pvalue(nonzero, v_stat, exact)
    walsh = walsh_sums(nonzero)
    if exact:
        est, low, high, achieved, notes = _signed_rank_exact_interval(walsh, n, level)
    else:
        est, low, high, achieved, notes = _signed_rank_normal_interval(walsh, nonzero, level)
        notes = _signed_rank_route_notes(n, tied, zeros) + notes
    method = "exact" if exact else "normal"
    return SignedRank(v_stat, float(pvalue), est, low, high, level, achieved, method, zeros, notes)


def _rank_abs(d: np.ndarray) -> np.ndarray:
    """Midranks of |d| (R's ``rank(abs(x))``)."""
    return midranks(np.abs(d))


# The two p-values are hand-written, not called from ``scipy.stats.mannwhitneyu`` and ``wilcoxon``
# (which give the same numbers: tests/stats/test_ranks.py compares them at test time): a compare
# shows them beside its verdict, computed after its last sample, and importing ``scipy.stats`` there
# cost 0.5-0.8 s of CPU, most of its fixed cost against the goal of a ``compare --runs 30`` within
# 1.2 times ``hyperfine -N --runs 30`` (benchmarks/results/startup.md). They follow R 4.2.2's
# ``stats:::wilcox.test.default`` line by line:
# * the statistics: W = the sum of x's midranks in the pooled sample - n(n + 1)/2 (Mann & Whitney's
#   U of x); V = the sum of the midranks of |d| over d > 0, zero differences dropped (Wilcoxon 1945);
# * the exact route: two-sided p = min(1, 2 P(W <= w)) below the null mean and
#   min(1, 2 P(W >= w)) = 2 pwilcox(w - 1, lower.tail = FALSE) above it (psignrank likewise), on the
#   exact null counts of ``_rmath`` (R's nmath/wilcox.c and signrank.c, summed in R's order);
# * the normal route: z = (s - E[s] - sign(s - E[s]) / 2) / sigma (the continuity correction), sigma
#   with R's tie correction sum(t^3 - t) over the tie groups (NTIES), p = min(1, 2 Phi(-|z|)) by
#   math.erfc (R: 2 min(pnorm(z), pnorm(z, lower.tail = FALSE))).


def _ties_of(values: np.ndarray) -> float:
    """sum(t^3 - t) over the sizes t of the groups of equal values (R's NTIES)."""
    return _tie_sum(np.unique(values, return_counts=True)[1])


def _normal_two_sided(z: float, sigma: float) -> float:
    """R's two-sided p-value of a centred statistic ``z`` with continuity correction."""
    z = (z - math.copysign(0.5, z) if z else 0.0) / sigma
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


def _rank_sum_pvalue(x: np.ndarray, y: np.ndarray, exact: bool) -> tuple[float, float]:
    """R's W (U of x) and its two-sided p-value."""
    n, m = x.size, y.size
    pooled = np.concatenate([x, y])
    w = float(midranks(pooled)[:n].sum() - n * (n + 1) / 2.0)
    if exact:
        p = pwilcox(w - 1, n, m, lower_tail=False) if w > n * m / 2.0 else pwilcox(w, n, m)
        return w, min(2.0 * p, 1.0)
    sigma = math.sqrt(n * m / 12.0 * ((n + m + 1) - _ties_of(pooled) / ((n + m) * (n + m - 1))))
    return w, _normal_two_sided(w - n * m / 2.0, sigma)


def _signed_rank_pvalue(nonzero: np.ndarray, v: float, exact: bool) -> float:
    """R's two-sided p-value of V = ``v`` over the non-zero differences, continuity corrected."""
    n = nonzero.size
    if exact:
        p = psignrank(v - 1, n, lower_tail=False) if v > n * (n + 1) / 4.0 else psignrank(v, n)
        return min(2.0 * p, 1.0)
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0 - _ties_of(np.abs(nonzero)) / 48.0)
    return _normal_two_sided(v - n * (n + 1) / 4.0, sigma)


# ---------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------
def _ties_note(test: str) -> Note:
    return note("rank-ties",
                "ties: exact p-value and interval not available, used the normal approximation",
                tests=[test])


def _no_variance_two(n: int, m: int) -> Note:
    return note("rank-no-variance",
                f"no variance: all {n} values of x are identical and all {m} values of y are "
                "identical; is the timer resolution too coarse?", n=n, m=m)


def _has_ties(values: np.ndarray, *, is_sorted: bool = False) -> bool:
    s = values if is_sorted else np.sort(values)
    return bool(np.any(s[1:] == s[:-1]))


def _all_identical(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(x == x[0]) and np.all(y == x[0]))


def _middle_ranks(total: int) -> list[int]:
    """1-based ranks whose mean is the median of ``total`` values."""
    return sorted({(total + 1) // 2, total // 2 + 1})


def _median_of(middle) -> float:
    """Mean of the one or two middle values, as ``np.median`` and R's ``median`` compute it."""
    return float(middle[0]) if len(middle) == 1 else float((middle[0] + middle[1]) / 2.0)


def _edge_notes(low, high, smallest, largest, what: str) -> list[Note]:
    """R returns the range of the data when the requested interval reaches past it."""
    if low == smallest or high == largest:
        edge = "smallest" if low == smallest else "largest"
        return [note("interval-at-edge",
                     f"the interval reaches the {edge} {what}: too few values for the requested "
                     "confidence", edge=edge)]
    return []


def _sign(v: float) -> float:
    return (v > 0) - (v < 0)


def _hl_exact(diffs, mid, n: int, m: int, level: float) -> HodgesLehmann:
    """R's exact route: order statistics qu and nm - qu + 1 of the sorted differences."""
    alpha = 1.0 - level
    qu = max(qwilcox(alpha / 2, n, m), 1)
    achieved_alpha = 2 * pwilcox(qu - 1, n, m)
    low, *middle, high = diffs.select([qu, *mid, n * m - qu + 1])
    notes = _not_achievable(level, achieved_alpha, f"n = {n}, m = {m}")
    return HodgesLehmann(
        _median_of(middle), float(low), float(high), level, 1.0 - achieved_alpha, "exact", notes
    )


def _not_achievable(level: float, achieved_alpha: float, sizes: str) -> tuple[Note, ...]:
    alpha = 1.0 - level
    if achieved_alpha - alpha > alpha / 2:  # R's rule
        return (note(
            "confidence-not-achievable",
            f"requested confidence {level:g} not achievable with {sizes}; "
            f"the interval's exact confidence is {1.0 - achieved_alpha:.4g}",
            requested=level, achieved=1.0 - achieved_alpha,
        ),)
    return ()


def _signed_rank_exact_interval(walsh, n: int, level: float):
    """R's exact signed-rank interval: Walsh averages qu and N - qu + 1, qu = qsignrank."""
    total = n * (n + 1) // 2
    alpha = 1.0 - level
    qu = max(qsignrank(alpha / 2, n), 1)
    achieved_alpha = 2 * psignrank(qu - 1, n)
    low, *middle, high = walsh.select([qu, *_middle_ranks(total), total - qu + 1]) / 2.0
    notes = _not_achievable(level, achieved_alpha, f"n = {n}")
    return _median_of(middle), float(low), float(high), 1.0 - achieved_alpha, notes


def _signed_rank_route_notes(n: int, tied: bool, zeros: int) -> tuple[Note, ...]:
    notes = []
    if n < _EXACT_LIMIT and tied:
        notes.append(_ties_note("signed-rank"))
    if zeros:
        notes.append(note(
            "zero-differences",
            f"{zeros} zero difference(s) dropped (R's rule); exact p-value and interval not available",
            zeros=zeros,
        ))
    return tuple(notes)


# ---------------------------------------------------------------------------------------
# Normal route: R's qnorm, R's Z(d), R's uniroot
# ---------------------------------------------------------------------------------------
def _z_ratio(dz: float, sigma: float) -> float:
    """(dz - CORRECTION) / SIGMA with R's continuity correction and IEEE division."""
    num = dz - 0.5 * _sign(dz)
    if sigma == 0.0:
        return math.nan if num == 0 else math.copysign(math.inf, num)
    return num / sigma


def _tally(sorted_values: np.ndarray):
    """Distinct values of an ascending array and their multiplicities."""
    first = np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
    return sorted_values[first], np.diff(np.append(first, sorted_values.size))


def _tie_sum(groups: np.ndarray) -> float:
    """sum(t^3 - t) over tie-group sizes t, correctly rounded like R's long-double ``sum``
    (``_rank_steps.tie_sum``, on the groups of ties alone: most shifts have none)."""
    return _rank_steps.tie_sum(groups[groups > 1].tolist())


def _match(keys: np.ndarray, values: np.ndarray):
    """Index of each key in ``values`` (ascending) and whether it is there."""
    pos = np.searchsorted(values, keys, side="left")
    if values.size == 0:
        return pos, np.zeros(keys.size, dtype=bool), pos
    at = np.minimum(pos, values.size - 1)
    return pos, (pos < values.size) & (values[at] == keys), at


class _RankSumZ:
    """R's ``W(d)`` of the two-sample interval: Z of the rank-sum test of (x - d, y).

    Ties and continuity corrected (wilcox.test.default, ``correct = TRUE``,
    two-sided). One evaluation is O((u + v) log v) for u, v distinct values.
    """

    def __init__(self, xs: np.ndarray, ys: np.ndarray, *, small: bool | None = None):
        self.xv, self.xc = _tally(xs)
        self.yv, self.yc = _tally(ys)
        self.ycum = np.concatenate(([0], np.cumsum(self.yc)))
        self.nx, self.ny = float(xs.size), float(ys.size)
        self.small = _rank_steps.small(self.xv.size + self.yv.size, xs.size + ys.size) if small is None else small
        self.lists = (self.xv.tolist(), self.xc.tolist(), self.yv.tolist(), self.yc.tolist())

    def __call__(self, d: float) -> float:
        if self.small:  # the same numbers on Python floats (``_rank_steps``)
            twice_u, ties = _rank_steps.rank_sum_parts(*self.lists, d)
        else:
            xv, xc = _tally_counts(self.xv - d, self.xc)
            pos, hit, at = _match(xv, self.yv)
            cy = np.where(hit, self.yc[at], 0)
            twice_u = int(np.dot(xc, 2 * self.ycum[pos] + cy))
            lone_y = np.ones(self.yv.size, dtype=bool)
            lone_y[at[hit]] = False
            ties = _tie_sum(np.concatenate((xc + cy, self.yc[lone_y])))
        dz = twice_u / 2 - self.nx * self.ny / 2
        nx, ny = self.nx, self.ny
        sigma = math.sqrt((nx * ny / 12) * ((nx + ny + 1) - ties / ((nx + ny) * (nx + ny - 1))))
        return _z_ratio(dz, sigma)


class _SignedRankZ:
    """R's ``W(d)`` of the one-sample interval: Z of the signed-rank test of x - d.

    Zeros of x - d dropped, ties and continuity corrected, as in wilcox.test.default.
    """

    def __init__(self, xs: np.ndarray, *, small: bool | None = None):
        self.xv, self.xc = _tally(xs)
        self.small = _rank_steps.small(self.xv.size, xs.size) if small is None else small
        self.lists = (self.xv.tolist(), self.xc.tolist())

    def __call__(self, d: float) -> float:
        if self.small:  # the same numbers on Python floats (``_rank_steps``)
            twice_v, nonzero, ties = _rank_steps.signed_rank_parts(*self.lists, d)
            nx = float(nonzero)
        else:
            twice_v, nx, ties = self._parts(d)
        zd = twice_v / 2 - nx * (nx + 1) / 4
        sigma = math.sqrt(max(nx * (nx + 1) * (2 * nx + 1) / 24 - ties / 48, 0.0))
        return _z_ratio(zd, sigma)

    def _parts(self, d: float) -> tuple[int, float, float]:
        xv, xc = _tally_counts(self.xv - d, self.xc)
        keep = xv != 0
        xv, xc = xv[keep], xc[keep]
        neg = xv < 0
        nv, nc = -xv[neg][::-1], xc[neg][::-1]  # |negative values|, ascending
        pv, pc = xv[~neg], xc[~neg]
        pos, hit, at = _match(pv, nv)
        cn = np.where(hit, nc[at], 0) if nv.size else np.zeros(pv.size, dtype=np.int64)
        below = (np.cumsum(pc) - pc) + np.concatenate(([0], np.cumsum(nc)))[pos]
        nx = float(xc.sum())
        twice_v = int(np.dot(pc, 2 * below + pc + cn + 1))  # twice the sum of midranks
        lone_n = np.ones(nv.size, dtype=bool)
        lone_n[at[hit]] = False
        ties = _tie_sum(np.concatenate((pc + cn, nc[lone_n])))
        return twice_v, nx, ties


def _tally_counts(values: np.ndarray, counts: np.ndarray):
    """Merge neighbours of an ascending array that became equal (after x - d rounding)."""
    if values.size < 2 or not np.any(values[1:] == values[:-1]):
        return values, counts
    first = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return values[first], np.add.reduceat(counts, first)


def _uniroot(z_of, zq: float, lower: float, upper: float, f_lower: float, f_upper: float):
    """R's ``uniroot(W(d) - zq, lower, upper, f.lower, f.upper, tol = tol.root)``."""

    def f(d):
        return finite_for_zeroin(z_of(d) - zq)

    return zeroin(
        f, lower, upper, finite_for_zeroin(f_lower), finite_for_zeroin(f_upper), _TOL_ROOT
    )


def _rank_sum_root_interval(xs: np.ndarray, ys: np.ndarray, alpha: float):
    """R's asymptotic two-sample interval, by R's own root finder on R's own Z(d).

    Used when a sample has ties: Z(d) then has a d-dependent tie correction and the
    closed-form order statistic can be one step away from R. Bracket endpoints
    are returned when the root lies outside, as R does.
    """
    z_of = _RankSumZ(xs, ys)
    mumin, mumax = float(xs[0] - ys[-1]), float(xs[-1] - ys[0])
    w_min, w_max = z_of(mumin), z_of(mumax)

    def root(zq):
        if w_min - zq <= 0:
            return mumin
        if w_max - zq >= 0:
            return mumax
        return _uniroot(z_of, zq, mumin, mumax, w_min - zq, w_max - zq)

    return root(qnorm(alpha / 2, lower_tail=False)), root(qnorm(alpha / 2))


def _step_rank(z_of_rank, zq: float, guess: float, total: int) -> int:
    """The smallest rank r in [1, total] at which R's step function Z drops to <= zq.

    ``z_of_rank(r)`` is Z(d) for d strictly between the r-th and (r+1)-th order
    statistics; the root sits at the r-th. ``guess`` is the closed form; the exact
    predicate settles rounding at the boundary.
    """
    k = min(max(math.ceil(guess), 0), total)
    while k > 0 and z_of_rank(k - 1) - zq <= 0:
        k -= 1
    while k < total and z_of_rank(k) - zq > 0:
        k += 1
    return max(k, 1)


def _step_ranks(total: int, center: float, sigma: float, alpha: float) -> tuple[int, int]:
    """Ranks of R's asymptotic interval ends among ``total`` ordered values, without ties.

    Between the r-th and (r+1)-th value the statistic is total - r, so
    Z = (total - r - center - CC)/sigma and the roots are at the k-th value with
    k = ceil(total/2 - 1/2 -+ z sigma).
    """

    def z_of_rank(r):
        return _z_ratio((total - r) - center, sigma)

    z = qnorm(alpha / 2, lower_tail=False)
    low = _step_rank(z_of_rank, z, total / 2 - 0.5 - z * sigma, total)
    high = _step_rank(z_of_rank, qnorm(alpha / 2), total / 2 + 0.5 + z * sigma, total)
    return low, high


def _rank_sum_step_ranks(n: int, m: int, alpha: float) -> tuple[int, int]:
    """Ranks of R's asymptotic interval ends when neither sample has ties (U = nm - r)."""
    nx, ny = float(n), float(m)
    sigma = math.sqrt((nx * ny / 12) * (nx + ny + 1))  # R's SIGMA.CI with no ties
    return _step_ranks(n * m, nx * ny / 2, sigma, alpha)


def _signed_rank_normal_interval(walsh, xs: np.ndarray, level: float):
    """R's asymptotic one-sample interval (with its alpha-doubling rule) and the pseudomedian."""
    n, total = xs.size, walsh.size
    middle = walsh.select(_middle_ranks(total)) / 2.0
    est = _median_of(middle)
    z_of = _SignedRankZ(xs)
    mumin, mumax = float(xs[0]), float(xs[-1])
    w_min = z_of(mumin)
    w_max = z_of(mumax) if math.isfinite(w_min) else math.nan
    if not math.isfinite(w_max):
        undefined = note("rank-interval-undefined",
                         "cannot compute a confidence interval when all non-zero differences are tied")
        return est, math.nan, math.nan, math.nan, (undefined,)
    alpha = 1.0 - level
    while w_min - qnorm(alpha / 2, False) < 0 or w_max - qnorm(alpha / 2) > 0:
        alpha *= 2
    notes = []
    achieved = level
    if alpha >= 1 or 1 - level < alpha * 0.75:
        achieved = 1 - min(1.0, alpha)
        notes.append(note(
            "confidence-not-achievable",
            f"requested confidence {level:g} not achievable with n = {n}; R lowers it to {achieved:.4g}",
            requested=level, achieved=achieved,
        ))
    if alpha >= 1:
        low = high = float(np.median(xs))
    elif _has_ties(xs, is_sorted=True):
        zl, zu = qnorm(alpha / 2, False), qnorm(alpha / 2)
        low = _uniroot(z_of, zl, mumin, mumax, w_min - zl, w_max - zl)
        high = _uniroot(z_of, zu, mumin, mumax, w_min - zu, w_max - zu)
        low, high = walsh.nearest(2 * low) / 2, walsh.nearest(2 * high) / 2
    else:
        low, high = _signed_rank_step_interval(walsh, n, alpha)
    notes += _edge_notes(low, high, mumin, mumax, "difference")
    return est, float(low), float(high), achieved, tuple(notes)


def _signed_rank_step_interval(walsh, n: int, alpha: float):
    """Walsh-average order statistics of R's asymptotic interval when x has no ties."""
    nx = float(n)
    sigma = math.sqrt(nx * (nx + 1) * (2 * nx + 1) / 24)  # R's SIGMA.CI with no ties
    low, high = _step_ranks(walsh.size, nx * (nx + 1) / 4, sigma, alpha)
    lo_v, hi_v = walsh.select([low, high]) / 2.0
    return lo_v, hi_v
