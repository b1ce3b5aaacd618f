"""The few special functions a run's or a compare's summary needs, on numpy and the standard library.

Hand-written rather than called from ``scipy.special``: importing ``scipy.special`` costs about
0.27 s of wall time after the last sample (0.16 s of it its vendored ``array_api_compat.numpy``
running ``from numpy import *``, which loads ``numpy.f2py``, ``numpy.testing``, ``numpy.ma``,
``numpy.polynomial``), most of what still separated ``compare --runs 30`` of a 20 ms command from
``hyperfine -N --runs 30`` (1.39x quiet, 1.46x beside a busy loop, 2026-11-29;
``benchmarks/results/startup.md``). The summary needs seven functions of it; they are:

* the normal quantile: the standard library's ``statistics.NormalDist().inv_cdf`` (Wichura's AS 241);
* the regularized incomplete beta function I_x(a, b) (``betainc``): the continued fraction of
  Numerical Recipes' ``betacf`` (Cephes ``incbcf``) by the modified Lentz method, on the side of
  the mean where it converges fast (the other tail from I_{1-x}(b, a)), its prefactor
  x^a (1 - x)^b / B(a, b) computed as R's ``dbinom_raw`` computes it (Loader 2000, "Fast and
  accurate computation of binomial probabilities": Stirling's error and ``bd0``, so nothing
  cancels for large a and b);
* its inverse (``betaincinv``): Newton's method on the log of the nearer tail in the logit of x,
  kept inside a bracket that bisection narrows when a step leaves it, so that x and 1 - x both
  keep their relative precision; started from Numerical Recipes' ``invbetai`` guess;
* Student's t quantile (``stdtrit``) from that inverse: t^2 = df (1 - x) / x for
  x = I^{-1}_{2q}(df / 2, 1 / 2), q the smaller tail; closed forms at df = 1 and 2;
* a Beta distribution's mass over narrow cells (``beta_masses``, for the Harrell-Davis weights of
  large samples): 8-point Gauss-Legendre on the density, in the same Loader form;
* the binomial CDF and survival function (``bdtr``, ``bdtrc``) as incomplete beta functions, and
  Cornish-Fisher's start for the binomial quantile (R's ``qbinom`` starts there too);
* the chi-square survival function at whole degrees of freedom (``chdtrc``): the Poisson sum
  (even df) or erfc and a half-integer Poisson sum (odd df), each term by Loader's formula.

``tests/stats/test_special.py`` compares each with ``scipy.special`` over dense grids at test
time and with R's ``pbeta``, ``qbeta``, ``qt``, ``pbinom``, ``qbinom``, ``pchisq`` and ``qnorm``
(``tests/reference/special.R``). Relative errors against R: about 1e-15 to 1e-12 for shapes
between 0.5 and 10^4 (the summary's), up to 1.5e-11 for a shape of 0.001 (the tail 1 - I loses
digits to the prefactor's rounding) and 3e-11 at 5e5 (the continued fraction's rounding over its
thousand terms). scipy's own ``bdtr`` and ``betaincinv`` are further from R than these at 10^5.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

from pairbench.stats._binomial import STIRLING_SERIES, bd0, stirling_series

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TINY = 1e-300  # the modified Lentz method's stand-in for a zero denominator
_CF_EPS = 1e-15  # a continued fraction has converged when a step changes it by less than this
_LOGIT_RANGE = (-745.0, 37.0)  # the logits of the smallest positive double and of 1 - 2^-53
_NEWTON_STEPS = 200  # bisection alone narrows the logit range below 1e-14 in 56 steps
_lgamma = np.frompyfunc(math.lgamma, 1, 1)
_S0, _S1, _S2, _S3, _S4 = STIRLING_SERIES
_GL_NODES = np.array([-0.9602898564975362316835609, -0.7966664774136267395915539, -0.5255324099163289858177390,
                      -0.1834346424956498049394761, 0.1834346424956498049394761, 0.5255324099163289858177390,
                      0.7966664774136267395915539, 0.9602898564975362316835609])  # Gauss-Legendre, 8 points
_GL_WEIGHTS = np.array([0.1012285362903762591525314, 0.2223810344533744705443560, 0.3137066458778872873379622,
                        0.3626837833783619829651504, 0.3626837833783619829651504, 0.3137066458778872873379622,
                        0.2223810344533744705443560, 0.1012285362903762591525314])
SCALAR_MAX = 16  # up to this many elements the kernels run on Python floats, one at a time


def ndtri(p: float) -> float:
    """The standard normal's p-quantile (``scipy.special.ndtri``): -inf at 0, inf at 1."""
    p = float(p)
    if p <= 0.0 or p >= 1.0:
        return -math.inf if p == 0.0 else math.inf if p == 1.0 else math.nan
    return statistics.NormalDist().inv_cdf(p)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), broadcast over its arguments (0 for
    x <= 0, 1 for x >= 1; NaN unless a, b > 0)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    lower, _ = _betainc_tails(a.ravel(), b.ravel(), x.ravel(), 1.0 - x.ravel())
    return _shaped(lower, a.shape)


def betaincinv(a, b, y):
    """The x with I_x(a, b) = y, broadcast over its arguments (0 at y = 0, 1 at y = 1; NaN unless
    a, b > 0 and 0 <= y <= 1)."""
    a, b, y = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, y)))
    x, _ = _betaincinv_pair(a.ravel(), b.ravel(), y.ravel())
    return _shaped(x, a.shape)


def stdtrit(df, p):
    """Student's t p-quantile with ``df`` (> 0, not necessarily whole) degrees of freedom, broadcast
    (``scipy.special.stdtrit``)."""
    df, p = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (df, p)))
    flat_df, flat_p = df.ravel(), p.ravel()
    q = np.minimum(flat_p, 1.0 - flat_p)  # the smaller tail: P(|T| > t) = 2q
    # I^{-1}_{2q}(df / 2, 1 / 2) = df / (df + t^2): x and 1 - x each with their own precision
    x, x_complement = _betaincinv_pair(flat_df / 2.0, np.full_like(flat_df, 0.5), 2.0 * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.sqrt(flat_df) * np.sqrt(x_complement) / np.sqrt(x)
    with np.errstate(divide="ignore", invalid="ignore"):  # the closed forms, exact where x underflows
        t = np.where(flat_df == 1.0, 1.0 / np.tan(np.pi * q), t)  # Cauchy: tan(pi (1/2 - q))
        t = np.where(flat_df == 2.0, (1.0 - 2.0 * q) / np.sqrt(2.0 * q * (1.0 - q)), t)
    t = np.where(flat_p < 0.5, -t, t)
    t = np.where(flat_p == 0.5, 0.0, t)
    t = np.where((flat_df > 0) & (flat_p >= 0) & (flat_p <= 1), t, np.nan)
    return _shaped(t, df.shape)


def bdtr(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p), broadcast (``scipy.special.bdtr``; k rounded down)."""
    return _binomial_tail(k, n, p, upper=False)


def bdtrc(k, n, p):
    """P(X > k) for X ~ Binomial(n, p), broadcast (``scipy.special.bdtrc``; k rounded down)."""
    return _binomial_tail(k, n, p, upper=True)


def binomial_quantile_start(target: float, n: int, ps) -> np.ndarray:
    """A start for the smallest k with P(X <= k) >= ``target``, X ~ Binomial(n, p) for each p of
    ``ps``: the Cornish-Fisher expansion R's ``qbinom`` starts from, within a few steps of the
    answer, which the caller settles exactly with ``bdtr``."""
    ps = np.asarray(ps, dtype=np.float64)
    z = ndtri(float(target)) if 0.0 < target < 1.0 else (-math.inf if target <= 0.0 else math.inf)
    if not math.isfinite(z):
        return np.full(ps.shape, 0 if z < 0 else int(n), dtype=np.int64)
    q = 1.0 - ps
    sigma = np.sqrt(n * ps * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(sigma > 0, (q - ps) / np.where(sigma > 0, sigma, 1.0), 0.0)
    guess = np.floor(n * ps + sigma * (z + gamma * (z * z - 1.0) / 6.0) + 0.5)
    return np.clip(np.nan_to_num(guess, nan=0.0), 0, n).astype(np.int64)


def chdtrc(df: int, x: float) -> float:
    """P(X > x) for X ~ chi-square with ``df`` (a whole number >= 1) degrees of freedom
    (``scipy.special.chdtrc``): with h = x / 2, e^-h sum_{k < df/2} h^k / k! for even df and
    erfc(sqrt(h)) + e^-h sum_{k = 1..(df-1)/2} h^(k - 1/2) / Gamma(k + 1/2) for odd df."""
    df, x = int(df), float(x)
    if df < 1 or math.isnan(x):
        return math.nan
    if x <= 0.0:
        return 1.0
    h = x / 2.0
    if df % 2 == 0:
        terms = _poisson_terms(np.arange(df // 2, dtype=np.float64), h)
        return min(1.0, math.fsum(terms))
    terms = _poisson_terms(np.arange(1, (df - 1) // 2 + 1, dtype=np.float64) - 0.5, h)
    return min(1.0, math.erfc(math.sqrt(h)) + math.fsum(terms))


# ------------------------------------------------------------------ the incomplete beta function


def beta_masses(a, b, low, high):
    """P(low < X < high) for X ~ Beta(a, b), broadcast: 8-point Gauss-Legendre on the density (Loader's
    form, as ``betainc``'s prefactor), for cells at most a fifth of the distribution's SD wide with
    a, b >= 20 (no singular end), where it gives differences of ``betainc`` to about 1e-13 without
    their cancellation, at a tenth of the cost."""
    a, b, low, high = (v.ravel() for v in np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (a, b, low, high))))
    every = np.arange(a.size)
    return beta_cell_masses(a, b, low, high, every, every)


def beta_cell_masses(a, b, low, high, rows, cells):
    """``beta_masses`` for the pairs i of a grid: P(low[cells[i]] < X < high[cells[i]]) for X ~
    Beta(a[rows[i]], b[rows[i]]), 1-d arrays. What depends on the distribution alone (its constant)
    is computed once per row, what depends on the cell alone (the nodes' logarithms) once per cell:
    the same numbers as ``beta_masses`` pair by pair, for a fraction of its logarithms."""
    n = a + b
    constant = (0.5 * np.log(a * b / n) - _LN_SQRT_2PI + _stirlerr(n) - _stirlerr(a) - _stirlerr(b))[rows]
    middle, half = (low + high) / 2.0, (high - low) / 2.0
    nodes = middle[:, None] + half[:, None] * _GL_NODES[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_t, log_rest = np.log(nodes), np.log1p(-nodes)
        t, a, b, n = nodes[cells], a[rows][:, None], b[rows][:, None], n[rows][:, None]
        # constant - bd0(a, n t) - bd0(b, n (1 - t)) - ln t - ln(1 - t), in place, on a fifth of the
        # memory of building each term as a new array
        log_density = _bd0_inside_exp_into(a, np.multiply(n, t), np.empty_like(t))
        np.subtract(constant[:, None], log_density, out=log_density)
        np.subtract(1.0, t, out=t)
        log_density -= _bd0_inside_exp_into(b, np.multiply(n, t, out=t), np.empty_like(t))
        log_density -= log_t[cells]
        log_density -= log_rest[cells]
        np.exp(log_density, out=log_density)
    return half[cells] * (log_density @ _GL_WEIGHTS)


def _betainc_tails(a, b, x, y):
    """(I_x(a, b), 1 - I_x(a, b)) over 1-d arrays, y = 1 - x given with its own precision: the tail
    the continued fraction gives directly keeps its relative precision, the other is 1 minus it."""
    lower = np.full(a.shape, np.nan)
    upper = np.full(a.shape, np.nan)
    valid = (a > 0) & (b > 0) & ~np.isnan(x) & ~np.isnan(y)
    lower[valid & (x <= 0)], upper[valid & (x <= 0)] = 0.0, 1.0
    lower[valid & (y <= 0)], upper[valid & (y <= 0)] = 1.0, 0.0
    inner = np.flatnonzero(valid & (x > 0) & (y > 0))
    if 0 < inner.size <= SCALAR_MAX:  # a few: plain floats cost a tenth of numpy's per-call overhead
        for i in inner:
            lower[i], upper[i], _ = _scalar_tails(float(a[i]), float(b[i]), float(x[i]), float(y[i]))
    elif inner.size:
        ai, bi, xi, yi = a[inner], b[inner], x[inner], y[inner]
        front = np.exp(_log_beta_front(ai, bi, xi, yi))
        direct = xi < (ai + 1.0) / (ai + bi + 2.0)  # below the mean: the fraction for I_x(a, b)
        fraction = _betacf(np.where(direct, ai, bi), np.where(direct, bi, ai), np.where(direct, xi, yi))
        near = front * fraction / np.where(direct, ai, bi)  # the tail computed directly
        lower[inner] = np.where(direct, near, 1.0 - near)
        upper[inner] = np.where(direct, 1.0 - near, near)
    return lower, upper


def _log_beta_front(a, b, x, y):
    """ln(x^a y^b / B(a, b)), y = 1 - x: with n = a + b, ln sqrt(ab / (2 pi n)) + stirlerr(n) -
    stirlerr(a) - stirlerr(b) - bd0(a, nx) - bd0(b, ny) (Loader 2000, section 4, for real a, b)."""
    n = a + b
    return (0.5 * np.log(a * b / n) - _LN_SQRT_2PI + _stirlerr(n) - _stirlerr(a) - _stirlerr(b)
            - _bd0(a, n * x) - _bd0(b, n * y))


def _betacf(a, b, x):
    """The continued fraction of I_x(a, b) (Numerical Recipes 6.4, ``betacf``) by the modified Lentz
    method, all elements together, each keeping its value at its first converged step (it needs
    O(sqrt(max(a, b))) terms near the mean, far fewer in the tails). Converged elements leave the
    working set once a quarter of it has converged: they cost less to carry a few steps (their
    values are kept, nothing they compute is read) than to leave it one at a time."""
    out = np.empty_like(x)
    where = np.arange(x.size)
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 / _nonzero(1.0 - qab * x / qap)
    h = d.copy()
    done = np.zeros(x.size, dtype=bool)
    steps = 100 + int(20.0 * math.sqrt(float(np.max(np.maximum(a, b)))))
    for m in range(1, steps + 1):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))  # the even step
        d = 1.0 / _nonzero(1.0 + aa * d)
        c = _nonzero(1.0 + aa / c)
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))  # the odd step
        d = 1.0 / _nonzero(1.0 + aa * d)
        c = _nonzero(1.0 + aa / c)
        delta = d * c
        h *= delta
        converged = np.abs(delta - 1.0) <= _CF_EPS
        converged &= ~done
        if converged.any():
            out[where[converged]] = h[converged]
            done |= converged
            left = ~done
            remaining = np.count_nonzero(left)
            if not remaining:
                return out
            if 4 * remaining <= 3 * left.size:
                where, a, b, x, qab, qap, qam, c, d, h, done = (
                    v[left] for v in (where, a, b, x, qab, qap, qam, c, d, h, done))
    raise ArithmeticError(f"the incomplete beta function's continued fraction did not converge in {steps} steps")


def _nonzero(v):
    """``v`` (a fresh array, changed in place) with every element nearer 0 than _TINY set to _TINY."""
    v[np.abs(v) < _TINY] = _TINY
    return v


# ------------------------------------------------------------------ its inverse


def _betaincinv_pair(a, b, y):
    """(x, 1 - x) with I_x(a, b) = y over 1-d arrays, each with its own relative precision."""
    x = np.full(a.shape, np.nan)
    x_complement = np.full(a.shape, np.nan)
    valid = (a > 0) & (b > 0) & (y >= 0) & (y <= 1)
    x[valid & (y == 0)], x_complement[valid & (y == 0)] = 0.0, 1.0
    x[valid & (y == 1)], x_complement[valid & (y == 1)] = 1.0, 0.0
    inner = np.flatnonzero(valid & (y > 0) & (y < 1))
    if 0 < inner.size <= SCALAR_MAX:
        starts = _invbetai_guess(a[inner], b[inner], y[inner])
        u = np.array([_scalar_solve_logit(float(a[i]), float(b[i]), float(y[i]), float(start))
                      for i, start in zip(inner, starts, strict=True)])
        x[inner], x_complement[inner] = _expit(u), _expit(-u)
    elif inner.size:
        u = _solve_logit(a[inner], b[inner], y[inner])
        x[inner], x_complement[inner] = _expit(u), _expit(-u)
    return x, x_complement


def _solve_logit(a, b, y):
    """The logit u = ln(x / (1 - x)) of the root of I_x(a, b) = y (0 < y < 1): Newton's method on
    the log of the tail nearer y (I for y <= 1/2, 1 - I above), whose derivative in u is
    +-front / tail, with bisection of the bracket whenever a step would leave it."""
    lower_tail = y <= 0.5
    log_target = np.log(np.where(lower_tail, y, 1.0 - y))
    sign = np.where(lower_tail, 1.0, -1.0)  # the matched tail rises (I) or falls (1 - I) with u
    u = np.clip(_invbetai_guess(a, b, y), *_LOGIT_RANGE)
    lo, hi = np.full_like(u, _LOGIT_RANGE[0]), np.full_like(u, _LOGIT_RANGE[1])
    active = np.arange(u.size)
    for _ in range(_NEWTON_STEPS):
        ua = u[active]
        x, x_complement = _expit(ua), _expit(-ua)
        below, above = _betainc_tails(a[active], b[active], x, x_complement)
        tail = np.where(lower_tail[active], below, above)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            g = sign[active] * (np.log(tail) - log_target[active])  # rises with u, 0 at the root
            slope = np.exp(_log_beta_front(a[active], b[active], x, x_complement)) / tail
            step = g / slope
        lo[active] = np.where(g <= 0, ua, lo[active])
        hi[active] = np.where(g >= 0, ua, hi[active])
        proposal = ua - step
        inside = np.isfinite(proposal) & (proposal > lo[active]) & (proposal < hi[active])
        proposal = np.where(inside, proposal, (lo[active] + hi[active]) / 2.0)
        u[active] = proposal
        done = (np.abs(proposal - ua) <= 1e-15 * np.maximum(1.0, np.abs(ua))) | (g == 0) \
            | (hi[active] - lo[active] <= 1e-15 * np.maximum(1.0, np.abs(ua)))
        active = active[~done]
        if not active.size:
            return u
    raise ArithmeticError(f"the inverse incomplete beta function did not converge in {_NEWTON_STEPS} steps")


def _invbetai_guess(a, b, y):
    """Numerical Recipes' first guess for the inverse (``invbetai``, 6.4), as a logit: a normal
    approximation when a, b >= 1, a power law at the nearer end otherwise."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        pp = np.where(y < 0.5, y, 1.0 - y)
        t = np.sqrt(-2.0 * np.log(pp))
        z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        z = np.where(y < 0.5, -z, z)  # as in invbetai: positive in the lower tail
        al = (z * z - 3.0) / 6.0
        h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0))
        w = z * np.sqrt(al + h) / h - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0)) * (al + 5.0 / 6.0 - 2.0 / (3.0 * h))
        normal = np.log(a) - np.log(b) - 2.0 * w
        lna, lnb = np.log(a / (a + b)), np.log(b / (a + b))
        ta, tb = np.exp(a * lna) / a, np.exp(b * lnb) / b
        left = y < ta / (ta + tb)
        log_x = np.log(a * (ta + tb) * y) / a  # x = (a w y)^(1/a) near 0
        log_x_complement = np.log(b * (ta + tb) * (1.0 - y)) / b  # 1 - x = (b w (1 - y))^(1/b) near 1
        power = np.where(left, log_x - np.log1p(-np.exp(np.minimum(log_x, -1e-16))),
                         np.log1p(-np.exp(np.minimum(log_x_complement, -1e-16))) - log_x_complement)
        guess = np.where((a >= 1) & (b >= 1), normal, power)
    return np.where(np.isfinite(guess), guess, 0.0)


def _expit(u):
    """1 / (1 + e^-u) without overflow, with its relative precision for very negative u."""
    e = np.exp(-np.abs(u))
    return np.where(u >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


# ------------------------------------------------------------------ Loader's pieces, for real arguments


def _stirlerr(z):
    """ln Gamma(z + 1) - ln(sqrt(2 pi z) (z / e)^z) for z > 0 (R's ``stirlerr``): through
    ``math.lgamma`` up to 15 (once per distinct value: the callers' arrays repeat a few), its
    asymptotic series beyond (Loader 2000, section 2)."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    small = z <= 15.0
    if np.any(small):
        zs = z[small]
        distinct, where = np.unique(zs, return_inverse=True)
        out[small] = _lgamma(distinct + 1.0).astype(np.float64)[where] - (zs + 0.5) * np.log(zs) + zs - _LN_SQRT_2PI
    rest = ~small
    for terms, above in enumerate((500.0, 80.0, 35.0, None)):  # the last: 15 < z <= 35 (and NaN)
        part = rest if above is None else rest & (z > above)
        rest = rest & ~part
        if np.any(part):
            zl = z[part]
            zz = zl * zl
            out[part] = _stirling_terms(zl, zz, terms)
    return out


def _stirling_terms(zl, zz, terms: int):
    """Stirling's error's series with 2 + ``terms`` of its coefficients, as R's ``stirlerr`` nests it."""
    if terms == 0:
        return (_S0 - _S1 / zz) / zl
    if terms == 1:
        return (_S0 - (_S1 - _S2 / zz) / zz) / zl
    if terms == 2:
        return (_S0 - (_S1 - (_S2 - _S3 / zz) / zz) / zz) / zl
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 / zz) / zz) / zz) / zz) / zl


def _bd0(x, m):
    """x ln(x / m) + m - x for x, m > 0 without cancellation (R's ``bd0``): a series in
    v = (x - m) / (x + m) where x is near m."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(m, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xn, mn = x[near], m[near]
        v = (xn - mn) / (xn + mn)
        s = (xn - mn) * v
        ej, v2 = 2.0 * xn * v, v * v
        for j in range(1, 1000):
            ej = ej * v2
            s_next = s + ej / (2 * j + 1)
            if np.all(s_next == s):
                break
            s = s_next
        out[near] = s
    return out


def _bd0_inside_exp_into(x, m, out):
    """bd0 without its series, x log1p((x - m) / m) - (x - m): its absolute error, about eps x |x - m| / m,
    is all that matters inside exp(), and it needs no loop. Computed in ``m`` and ``out`` (both
    overwritten; returns ``out``)."""
    np.subtract(x, m, out=out)  # x - m
    np.divide(out, m, out=m)  # (x - m) / m
    np.log1p(m, out=m)
    np.multiply(x, m, out=m)  # x log1p(...)
    return np.subtract(m, out, out=out)  # x log1p(...) - (x - m)


def _poisson_terms(ks, h: float) -> np.ndarray:
    """h^k e^-h / Gamma(k + 1) for each (real, >= 0) k of ``ks``: e^-h at 0, else
    e^(-stirlerr(k) - bd0(k, h)) / sqrt(2 pi k) (R's ``dpois_raw``)."""
    out = np.empty_like(ks)
    zero = ks == 0
    out[zero] = math.exp(-h)
    k = ks[~zero]
    out[~zero] = np.exp(-_stirlerr(k) - _bd0(k, np.full_like(k, h))) / np.sqrt(2.0 * math.pi * k)
    return out


# ------------------------------------------------------------------ the same, on Python floats


def _scalar_tails(a: float, b: float, x: float, y: float) -> tuple[float, float, float]:
    """``_betainc_tails`` for one point (0 < x < 1), with the log of the prefactor it used."""
    n = a + b
    log_front = (0.5 * math.log(a * b / n) - _LN_SQRT_2PI + _scalar_stirlerr(n) - _scalar_stirlerr(a)
                 - _scalar_stirlerr(b) - _scalar_bd0(a, n * x) - _scalar_bd0(b, n * y))
    direct = x < (a + 1.0) / (a + b + 2.0)
    p, q, z = (a, b, x) if direct else (b, a, y)
    near = math.exp(log_front) * _scalar_betacf(p, q, z) / p
    return (near, 1.0 - near, log_front) if direct else (1.0 - near, near, log_front)


def _scalar_betacf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) >= _TINY else _TINY)
    h = d
    steps = 100 + int(20.0 * math.sqrt(max(a, b)))
    for m in range(1, steps + 1):  # the even and the odd step, written out (no tuple per step)
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + even * d
        d = 1.0 / (d if abs(d) >= _TINY else _TINY)
        c = 1.0 + even / c
        c = c if abs(c) >= _TINY else _TINY
        h *= d * c
        d = 1.0 + odd * d
        d = 1.0 / (d if abs(d) >= _TINY else _TINY)
        c = 1.0 + odd / c
        c = c if abs(c) >= _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= _CF_EPS:
            return h
    raise ArithmeticError(f"the incomplete beta function's continued fraction did not converge in {steps} steps")


def _scalar_solve_logit(a: float, b: float, y: float, u: float) -> float:
    """``_solve_logit`` for one root, from the start ``u``."""
    lower_tail = y <= 0.5
    log_target = math.log(y if lower_tail else 1.0 - y)
    sign = 1.0 if lower_tail else -1.0
    lo, hi = _LOGIT_RANGE
    u = min(max(u, lo), hi)
    for _ in range(_NEWTON_STEPS):
        below, above, log_front = _scalar_tails(a, b, _scalar_expit(u), _scalar_expit(-u))
        tail = below if lower_tail else above
        if tail <= 0.0:
            g, step = -sign * math.inf, math.nan
        else:
            g = sign * (math.log(tail) - log_target)
            ratio = math.log(tail) - log_front  # ln(tail / front): the step is g tail / front
            step = g * math.exp(ratio) if ratio < 700.0 else math.nan
        if g == 0.0:
            return u
        lo, hi = (u, hi) if g < 0 else (lo, u)
        proposal = u - step
        if not (math.isfinite(proposal) and lo < proposal < hi):
            proposal = (lo + hi) / 2.0
        if abs(proposal - u) <= 1e-15 * max(1.0, abs(u)) or hi - lo <= 1e-15 * max(1.0, abs(u)):
            return proposal
        u = proposal
    raise ArithmeticError(f"the inverse incomplete beta function did not converge in {_NEWTON_STEPS} steps")


def _scalar_expit(u: float) -> float:
    e = math.exp(-abs(u))
    return 1.0 / (1.0 + e) if u >= 0 else e / (1.0 + e)


def _scalar_stirlerr(z: float) -> float:
    if z <= 15.0:
        return math.lgamma(z + 1.0) - (z + 0.5) * math.log(z) + z - _LN_SQRT_2PI
    return stirling_series(z)


def _scalar_bd0(x: float, m: float) -> float:
    return math.inf if m <= 0.0 else bd0(x, m)


# ------------------------------------------------------------------ the binomial distribution


def _binomial_tail(k, n, p, *, upper: bool):
    """P(X <= k) or P(X > k), X ~ Binomial(n, p): 1 - I_p(k + 1, n - k) and I_p(k + 1, n - k) for
    0 <= k < n (Abramowitz & Stegun 26.5.24), the certain ends outside."""
    k, n, p = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, n, p)))
    shape = k.shape
    k, n, p = np.floor(k.ravel()), n.ravel(), p.ravel()
    out = np.full(k.shape, np.nan)
    valid = (n >= 0) & (p >= 0) & (p <= 1) & ~np.isnan(k)
    out[valid & (k < 0)] = 1.0 if upper else 0.0
    out[valid & (k >= n)] = 0.0 if upper else 1.0
    inner = np.flatnonzero(valid & (k >= 0) & (k < n))
    if inner.size:
        below, above = _betainc_tails(k[inner] + 1.0, n[inner] - k[inner], p[inner], 1.0 - p[inner])
        out[inner] = below if upper else above
    return _shaped(out, shape)


def _shaped(flat: np.ndarray, shape):
    """``flat`` reshaped to ``shape``, a float for a scalar shape."""
    return float(flat[0]) if shape == () else flat.reshape(shape)
