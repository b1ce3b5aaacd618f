"""The sign test's distribution, Binomial(n, 1/2), on the standard library and numpy.

Hand-written rather than ``scipy.stats.binom``: the sign test's ranks are what
the stopping rule asks for after every round, and importing ``scipy.stats``
costs 0.5-0.8 s of CPU, more than everything else pairbench does before its
first sample (``benchmarks/results/startup.md``). The one distribution the
stopping path needs is this one, at p = 1/2:

* n <= ``EXACT_N``: exact, in integers: P(X <= k) = sum_{j <= k} C(n, j) / 2^n,
  rounded once to a float (Python's integer division rounds correctly);
* larger n: P(X = k) by Loader's saddle-point expansion (Loader 2000, "Fast and
  accurate computation of binomial probabilities"; R's ``dbinom_raw`` with its
  ``stirlerr`` and ``bd0``), the tail summed from k down by the ratio of
  consecutive terms, j / (n - j + 1), until they no longer change the sum:
  relative error about 1e-13 up to n = 10^7.

``tests/stats/test_binomial.py`` compares both with ``scipy.stats.binom`` and
``scipy.stats.binomtest`` at test time.
"""

from __future__ import annotations

import functools
import math
import statistics

import numpy as np

EXACT_N = 1000
"""Up to this n the CDF is computed exactly in integers (1 ms at most per n, cached). Below 1022:
``_exact_rank`` scales by 2^-n, exact only while 2^-n is a normal float."""

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_CHUNK = 4096  # terms of the tail summed per numpy step


def cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): 0 below 0, 1 from n on."""
    k, n = int(k), int(n)  # numpy integers would overflow in the exact sums
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= EXACT_N:
        return _exact_cdfs(n)[k]
    if 2 * k + 1 > n:  # past the middle: the smaller tail is the other one (symmetry)
        return 1.0 - _tail_sum(n - k - 1, n)
    return _tail_sum(k, n)


def two_sided_pvalue(k: int, n: int) -> float:
    """The exact two-sided sign test of k successes in n trials against p = 1/2: the probability of
    an outcome no more likely than k, min(1, 2 P(X <= min(k, n - k))) by symmetry (what
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` gives); 1 for n = 0."""
    k, n = int(k), int(n)
    if n == 0:
        return 1.0
    low = min(k, n - k)
    if 2 * low == n:
        return 1.0
    return min(1.0, 2.0 * cdf(low, n))


def largest_rank_within(n: int, tail: float) -> int:
    """The largest k in 0..(n + 1) // 2 with P(X <= k - 1) <= ``tail`` (0 when even P(X <= 0)
    exceeds it): the rank of the sign-test interval's lower end.

    From the normal approximation's rank, one tail sum and then a step at a time (each step one
    ratio), since that rank is off by a few at most once n is large. The tail sum is the rough
    one (``_rough_tail_sum``): when no comparison with ``tail`` falls within its error, the exact
    CDF (``_exact_rank``'s up to ``EXACT_N``, the exactly rounded tail sum beyond) lies on the same
    side of ``tail`` at each step, and is not computed; when one does, it decides. Below
    ``ROUGH_FROM`` the exact CDF alone."""
    n = int(n)
    if n < ROUGH_FROM or (n <= EXACT_N and not tail > 0.0):
        return _exact_rank(n, tail, (n + 1) // 2)
    if not tail > 0.0:
        return 0
    z = statistics.NormalDist().inv_cdf(min(tail, 0.5))
    k = min(max(int(n / 2.0 + z * math.sqrt(n) / 2.0), 1), (n + 1) // 2)  # the guess, >= 1
    if 2 * (k - 1) + 1 <= n:  # cdf(k - 1, n) is the lower tail's sum
        try:
            return _step_to_rank(k, n, tail, _rough_tail_sum(k - 1, n), _ROUGH_MARGIN * tail)
        except _TooClose:
            pass
    if n <= EXACT_N:  # the exact CDFs' rank, which the rough sum's agrees with when it decides
        return _exact_rank(n, tail, (n + 1) // 2)
    return _step_to_rank(k, n, tail, cdf(k - 1, n), 0.0)


ROUGH_FROM = 100
"""From this n on the rank is first found from the rough tail sum (below, the exact CDF's integers
cost as little): where no comparison is too close to call, the exact CDFs, rounded once (up to
``EXACT_N``) or summed exactly rounded (beyond), lie on the same side of the tail."""


_ROUGH_MARGIN = 1e-9
"""How close (relative to the tail) a rough comparison may come before the exact sum decides: the
rough sum is within 4e-12 of the exact one (``_rough_tail_sum``), and a few steps add their
rounding."""


class _TooClose(Exception):
    """A comparison too close to call with the rough tail sum."""


def _step_to_rank(k: int, n: int, tail: float, below: float, margin: float) -> int:
    """``largest_rank_within``'s steps from the guess ``k``, ``below`` = P(X <= k - 1): down while
    that exceeds ``tail``, then up while the next rank still holds. With ``margin`` > 0 ``below`` is
    rough, and a comparison within ``margin`` of ``tail`` raises ``_TooClose``."""

    def exceeds(value: float) -> bool:
        if margin and abs(value - tail) <= margin:
            raise _TooClose
        return value > tail

    term = _pmf(k - 1, n)  # P(X = k - 1)
    while exceeds(below) and k > 0:  # too high: step down
        below -= term
        k -= 1
        term = term * k / (n - k + 1.0) if k > 0 else 0.0
    while k < (n + 1) // 2:  # step up while the next rank still holds
        term = term * (n - k + 1.0) / k if k > 0 else _pmf(0, n)  # P(X = k)
        if exceeds(below + term):
            break
        below += term
        k += 1
    return k


@functools.lru_cache(maxsize=64)
def _exact_cdfs(n: int) -> tuple[float, ...]:
    """P(X <= k) for k = 0..n - 1, each the exact sum of C(n, j) over 2^n rounded once."""
    total, term, out = 0, 1, []
    for j in range(n):
        total += term
        out.append(math.ldexp(float(total), -n))  # see _exact_rank
        term = term * (n - j) // (j + 1)
    return tuple(out)


def _exact_rank(n: int, tail: float, cap: int) -> int:
    """``min(bisect_right(_exact_cdfs(n), tail), cap)`` (n <= ``EXACT_N``), summing the CDF only up
    to the first value above ``tail`` or to ``cap``: under half of it for a sign-test interval.

    Each value is the sum over 2^n rounded once: ``float(total)`` rounds the integer correctly and
    scaling by 2^-n is exact while the result is a normal float, which 2^-1000 and above are; the
    same float as the integer division ``total / 2**n``, at half its cost."""
    total, term = 0, 1
    for j in range(min(n, cap)):
        total += term
        if tail < math.ldexp(float(total), -n):
            return j
        term = term * (n - j) // (j + 1)
    return min(n, cap)


def _tail_sum(k: int, n: int) -> float:
    """P(X <= k) for k < n / 2 (n > EXACT_N): its terms (``_tail_runs``) summed exactly rounded,
    until what is left cannot change the sum."""
    total = 0.0
    for run, rest in _tail_runs(k, n):
        kept = np.count_nonzero(run)  # the terms fall: those that underflowed to 0 are the last
        total += math.fsum(run[:kept].tolist())  # Python floats: 4x faster to iterate than numpy's
        if rest <= total * 2.0**-60:
            break
    return total


def _rough_tail_sum(k: int, n: int) -> float:
    """``_tail_sum(k, n)`` within 4e-12 of it, at a fraction of its cost: the same terms, chunk by
    chunk, summed by numpy instead of ``math.fsum`` (error below 2e-12 for 3 chunks of 4096), and
    stopped once what is left is below 2^-40 of the sum instead of 2^-60."""
    total = 0.0
    for run, rest in _tail_runs(k, n):
        total += float(run.sum())
        if rest <= total * 2.0**-40:
            break
    return total


def _tail_runs(k: int, n: int):
    """The terms of P(X <= k), k < n / 2, a chunk at a time: P(X = k), then each smaller term from the
    one above it (t_{j-1} = t_j j / (n - j + 1)); with each chunk a bound on the sum of all the terms
    after it (0 when none is left; the ratios fall as j does, so the rest is below t r / (1 - r) for
    the next term t and its ratio r)."""
    term, j = _pmf(k, n), k  # term: P(X = j), not yet given
    while term > 0.0:
        m = min(_CHUNK, j)
        js = np.arange(j, j - m, -1, dtype=np.float64)
        run = term * np.concatenate(([1.0], np.cumprod(js / (n - js + 1.0))))  # P(X = j) .. P(X = j - m)
        j -= m
        if j == 0:
            yield run, 0.0
            return
        r = j / (n - j + 1.0)
        term = float(run[-1]) * r  # P(X = j - 1)
        j -= 1
        yield run, term / (1.0 - r)


def _pmf(k: int, n: int) -> float:
    """P(X = k) for X ~ Binomial(n, 1/2): R's dbinom_raw (Loader 2000) at p = q = 1/2."""
    if k == 0 or k == n:
        return math.ldexp(1.0, -n)  # 2^-n, 0 once that underflows
    lc = _stirlerr(n) - _stirlerr(k) - _stirlerr(n - k) - bd0(k, n / 2.0) - bd0(n - k, n / 2.0)
    lf = 2.0 * _LN_SQRT_2PI + math.log(k) + math.log1p(-k / n)
    return math.exp(lc - 0.5 * lf)


STIRLING_SERIES = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)
"""The coefficients of Stirling's error's asymptotic series (R's stirlerr)."""


def _stirlerr(n: int) -> float:
    """ln(n!) - ln(sqrt(2 pi n) (n/e)^n), Stirling's error (R's stirlerr, at integers): exact
    through the factorial up to 15, the asymptotic series beyond (Loader 2000, section 2)."""
    if n <= 15:
        return math.log(math.factorial(n)) - (n + 0.5) * math.log(n) + n - _LN_SQRT_2PI
    return stirling_series(n)


def stirling_series(z: float) -> float:
    """Stirling's error at z > 15 by its asymptotic series, as many terms as z needs (R's stirlerr;
    ``stats._special`` uses it for real z)."""
    s0, s1, s2, s3, s4 = STIRLING_SERIES
    z = float(z)
    zz = z * z
    if z > 500:
        return (s0 - s1 / zz) / z
    if z > 80:
        return (s0 - (s1 - s2 / zz) / zz) / z
    if z > 35:
        return (s0 - (s1 - (s2 - s3 / zz) / zz) / zz) / z
    return (s0 - (s1 - (s2 - (s3 - s4 / zz) / zz) / zz) / zz) / z


def bd0(x: float, np_: float) -> float:
    """x ln(x / np) + np - x without cancellation (R's bd0, Loader 2000, section 3): a series in
    v = (x - np) / (x + np) when x is near np."""
    if abs(x - np_) < 0.1 * (x + np_):
        v = (x - np_) / (x + np_)
        s = (x - np_) * v
        ej, v = 2.0 * x * v, v * v
        for j in range(1, 1000):
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
    return x * math.log(x / np_) + np_ - x
