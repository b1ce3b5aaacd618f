"""Ports of the R routines ``wilcox.test`` depends on, so that ``ranks`` matches R step for step.

Hand-written because no library reproduces them bit for bit: R's exact null
distributions and their p/q loops (nmath/wilcox.c, nmath/signrank.c, including
R's 10-eps fuzz), R's ``qnorm`` (Wichura's AS 241, operation for operation) and
R's root finder ``R_zeroin2`` (on a step function the point Brent's method
returns depends on the exact sequence of trial points, so scipy's ``brentq``
lands elsewhere). Used by ``pairbench.stats.ranks`` only, for its intervals and, through
``pwilcox`` and ``psignrank``, for the exact p-values it computes without importing
``scipy.stats`` (see the comment above ``ranks._rank_sum_pvalue``).
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from pairbench.errors import StatisticsError

_DBL_EPS = sys.float_info.epsilon


# Exact routes: R's pwilcox/qwilcox (nmath/wilcox.c) and psignrank/qsignrank (signrank.c)

@functools.lru_cache(maxsize=256)
def wilcox_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, n) rankings give U = u, u = 0..mn (exact integers).

    Coefficients of the Gaussian binomial prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)
    (Andrews, *The Theory of Partitions*, 1976, ch. 3), the generating function of
    the Mann-Whitney null distribution.
    """
    # int64 while twice the largest count fits (every coefficient along the way is at most one
    # count, times 2 just after a multiplication), Python integers beyond
    exact = np.int64 if math.comb(m + n, n) < 2**61 else object
    poly = np.zeros(m * n + m + n + 1 + m, dtype=exact)  # + m: room to cut it into rows of i
    poly[:] = 0
    poly[0] = 1
    deg = 0
    for i in range(1, m + 1):
        s = n + i
        poly[s : deg + s + 1] = poly[s : deg + s + 1] - poly[: deg + 1].copy()  # * (1 - q^s)
        deg += s
        rows = poly[: -(-(deg + 1) // i) * i].reshape(-1, i)  # / (1 - q^i): running sums along
        np.cumsum(rows, axis=0, out=rows)  # stride i, each column of the rows (zeros past deg)
        deg -= i
    return tuple(poly[: m * n + 1].tolist())


@functools.lru_cache(maxsize=64)
def signrank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2^n sign vectors give V = v, v = 0..n(n+1)/2: prod (1 + q^i)."""
    poly = np.zeros(n * (n + 1) // 2 + 1, dtype=np.int64)
    poly[0] = 1
    for i in range(1, n + 1):
        poly[i:] = poly[i:] + poly[:-i]
    return tuple(int(v) for v in poly)


def cdf_sum(counts, scale: float, q: float, top: int, *, divide: bool, lower_tail: bool = True) -> float:
    """R's p-function loop: P(stat <= q) (P(stat > q) with ``lower_tail=False``), summing the
    shorter tail in R's order and returning as R's ``R_DT_val`` does."""
    q = math.floor(q + 1e-7)
    if q < 0:
        return 0.0 if lower_tail else 1.0
    if q >= top:
        return 1.0 if lower_tail else 0.0

    def term(i):
        return counts[i] / scale if divide else counts[i] * scale

    p = 0.0
    if q <= top / 2:
        for i in range(int(q) + 1):
            p += term(i)
    else:
        for i in range(int(top - q)):
            p += term(i)
        lower_tail = not lower_tail
    return p if lower_tail else 0.5 - p + 0.5


def quantile_sum(counts, scale: float, x: float, top: int, *, divide: bool) -> int:
    """R's q-function loop: the smallest q with P(stat <= q) >= x (with R's 10 eps fuzz)."""
    if x == 0.0:
        return 0
    if x == 1.0:
        return top
    p, q = 0.0, 0
    if x <= 0.5:
        x = x - 10 * _DBL_EPS
        while True:
            p += counts[q] / scale if divide else counts[q] * scale
            if p >= x:
                return q
            q += 1
    x = 1 - x + 10 * _DBL_EPS
    while True:
        p += counts[q] / scale if divide else counts[q] * scale
        if p > x:
            return top - q
        q += 1


def pwilcox(q: float, m: int, n: int, lower_tail: bool = True) -> float:
    return cdf_sum(wilcox_counts(m, n), float(math.comb(m + n, n)), q, m * n, divide=True,
                   lower_tail=lower_tail)


def qwilcox(p: float, m: int, n: int) -> int:
    return quantile_sum(wilcox_counts(m, n), float(math.comb(m + n, n)), p, m * n, divide=True)


def psignrank(q: float, n: int, lower_tail: bool = True) -> float:
    f = math.exp(-n * math.log(2.0))  # R: exp(-n * M_LN2)
    return cdf_sum(signrank_counts(n), f, q, n * (n + 1) // 2, divide=False, lower_tail=lower_tail)


def qsignrank(p: float, n: int) -> int:
    f = math.exp(-n * math.log(2.0))
    return quantile_sum(signrank_counts(n), f, p, n * (n + 1) // 2, divide=False)


# Normal route: R's qnorm and R's uniroot (R_zeroin2)


def qnorm(p: float, lower_tail: bool = True) -> float:
    """R 4.2.2's ``qnorm(p, lower.tail=)``: Wichura's AS 241 (Appl. Statist. 37:477, 1988).

    A port, operation for operation, so that R's root finder sees the same target
    bit for bit (scipy's ndtri differs in the last place).
    """
    p_ = p if lower_tail else 0.5 - p + 0.5
    q = p_ - 0.5
    if abs(q) <= 0.425:
        r = 0.180625 - q * q
        num = (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r + 45921.953931549871457) * r + 13731.693765509461125) * r + 1971.5909503065514427) * r + 133.14166789178437745) * r + 3.387132872796366608)  # fmt: skip
        den = (((((((r * 5226.495278852854561 + 28729.085735721942674) * r + 39307.89580009271061) * r + 21213.794301586595867) * r + 5394.1960214247511077) * r + 687.1870074920579083) * r + 42.313330701600911252) * r + 1.0)  # fmt: skip
        return q * num / den
    r = math.sqrt(-math.log((0.5 - p + 0.5 if lower_tail else p) if q > 0 else p_))
    if r <= 5.0:
        r += -1.6
        num = (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r + 1.27045825245236838258) * r + 3.64784832476320460504) * r + 5.7694972214606914055) * r + 4.6303378461565452959) * r + 1.42343711074968357734)  # fmt: skip
        den = (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r + 0.14810397642748007459) * r + 0.68976733498510000455) * r + 1.6763848301838038494) * r + 2.05319162663775882187) * r + 1.0)  # fmt: skip
    else:
        r += -5.0
        num = (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r + 0.026532189526576123093) * r + 0.29656057182850489123) * r + 1.7848265399172913358) * r + 5.4637849111641143699) * r + 6.6579046435011037772)  # fmt: skip
        den = (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r + 7.868691311456132591e-4) * r + 0.0148753612908506148525) * r + 0.13692988092273580531) * r + 0.59983220655588793769) * r + 1.0)  # fmt: skip
    val = num / den
    return -val if q < 0.0 else val


def zeroin(f, ax: float, bx: float, fa: float, fb: float, tol: float, maxit: int = 1000):
    """Brent's root finder as R's ``R_zeroin2`` (stats/src/zeroin.c) runs it, step for step.

    (Forsythe, Malcolm & Moler, *Computer Methods for Mathematical Computations*,
    1977.) Ported rather than replaced by ``scipy.optimize.brentq`` because on a step
    function the point returned depends on the exact sequence of trial points.
    """
    a, b, c, fc = ax, bx, ax, fa
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    for _ in range(maxit + 1):
        prev_step = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol_act = 2 * _DBL_EPS * abs(b) + tol / 2
        new_step = (c - b) / 2
        if abs(new_step) <= tol_act or fb == 0.0:
            return b
        if abs(prev_step) >= tol_act and abs(fa) > abs(fb):
            cb = c - b
            if a == c:  # linear interpolation
                t1 = fb / fa
                p, q = cb * t1, 1.0 - t1
            else:  # inverse quadratic interpolation
                q, t1, t2 = fa / fc, fb / fc, fb / fa
                p = t2 * (cb * q * (q - t1) - (b - a) * (t1 - 1.0))
                q = (q - 1.0) * (t1 - 1.0) * (t2 - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if p < (0.75 * cb * q - abs(tol_act * q) / 2) and p < abs(prev_step * q / 2):
                new_step = p / q
        if abs(new_step) < tol_act:
            new_step = tol_act if new_step > 0 else -tol_act
        a, fa = b, fb
        b += new_step
        fb = f(b)
        if (fb > 0 and fc > 0) or (fb < 0 and fc < 0):
            c, fc = a, fa
    return b


def finite_for_zeroin(value: float) -> float:
    """R's fcn2 (optimize.c): +-Inf become +-DBL_MAX; NaN is an error."""
    if math.isnan(value):
        raise StatisticsError("the rank statistic is undefined (all values tied)")
    return max(min(value, sys.float_info.max), -sys.float_info.max)
