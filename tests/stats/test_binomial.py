"""The sign test's Binomial(n, 1/2) on the standard library (``stats._binomial``), against scipy.

The stopping path runs without scipy, so its binomial is computed by pairbench;
these tests hold it to ``scipy.stats.binom`` and ``scipy.stats.binomtest`` (and,
for small n, to exact fractions) at test time.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats as sps

from pairbench.stats import _binomial
from pairbench.stats._order import median_interval_ranks

LARGE_N = [1001, 1500, 4096, 20_000, 123_457, 1_000_000, 10_000_000]


def _ks(n: int) -> list[int]:
    """k from 0 to n: the ends, the middle, and the lower tail in steps of the standard deviation."""
    spread = [int(n / 2 - z * n**0.5 / 2) for z in (0.5, 1, 2, 3, 4, 6, 8, 12, 20, 30)]
    return sorted({k for k in (0, 1, 2, n // 2 - 1, n // 2, n // 2 + 1, n - 1, n, *spread) if 0 <= k <= n})


@pytest.mark.parametrize("n", [1, 2, 3, 7, 30, 101, 500, 1000])
def test_the_cdf_up_to_a_thousand_is_the_exact_fraction_rounded_once(n):
    below = 0
    for k in range(n + 1):
        below += comb(n, k)
        assert _binomial.cdf(k, n) == float(Fraction(below, 2**n))


@pytest.mark.parametrize("n", LARGE_N)
def test_the_cdf_beyond_a_thousand_agrees_with_scipy_to_one_part_in_ten_to_the_eleven(n):
    for k in _ks(n):
        ours, reference = _binomial.cdf(k, n), float(sps.binom.cdf(k, n, 0.5))
        if reference > 1e-300:  # beyond, both are subnormal or zero
            assert ours == pytest.approx(reference, rel=1e-11, abs=0.0), (n, k)


def test_the_cdf_is_zero_below_zero_and_one_from_n_on_and_takes_numpy_integers():
    assert _binomial.cdf(-1, 10) == 0.0 and _binomial.cdf(10, 10) == 1.0 and _binomial.cdf(11, 10) == 1.0
    assert _binomial.cdf(np.int64(3), np.int64(2000)) == _binomial.cdf(3, 2000)


@pytest.mark.parametrize("n", [0, 1, 5, 6, 17, 40, 999, 1000, 2001, 50_000])
def test_the_two_sided_p_value_is_scipys_binomtest(n):
    for k in sorted({0, 1, n // 3, n // 2, (n + 1) // 2, n - 1, n} & set(range(n + 1))):
        expected = float(sps.binomtest(k, n, 0.5).pvalue) if n else 1.0
        assert _binomial.two_sided_pvalue(k, n) == pytest.approx(expected, rel=1e-11, abs=1e-300), (n, k)


def _rank_by_scipy(n: int, tail: float) -> int:
    """The largest k with P(X <= k - 1) <= tail, by bisection on scipy's CDF."""
    lo, hi = 0, (n + 1) // 2 + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if sps.binom.cdf(mid - 1, n, 0.5) <= tail else (lo, mid)
    return lo


@pytest.mark.parametrize("tail", [0.5e-9, 0.5e-6, 0.0005, 0.005, 0.025, 0.05, 0.25, 0.4999])
def test_the_sign_tests_rank_is_the_one_scipys_cdf_gives(tail):
    ns = [*range(1, 200), *range(200, 1300, 7), *np.random.default_rng(7).integers(1300, 10_000_000, 25).tolist()]
    assert [_binomial.largest_rank_within(n, tail) for n in ns] == [_rank_by_scipy(n, tail) for n in ns]


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_the_median_intervals_ranks_and_coverage_are_scipys(confidence):
    """What ``median_interval_ranks`` computed with ``scipy.stats.binom`` before it ran without scipy."""
    for n in [*range(1, 120), 1000, 1001, 5000, 250_000]:
        found = median_interval_ranks(n, confidence)
        k = _rank_by_scipy(n, (1.0 - confidence) / 2.0)
        if k < 1:
            assert found is None, n
            continue
        assert (found.low, found.high) == (k, n - k + 1), n
        coverage = 1.0 - 2.0 * float(sps.binom.cdf(k - 1, n, 0.5))
        assert found.achieved_confidence == pytest.approx(coverage, rel=1e-12), n


def _rank_by_exact_sums(n: int, tail: float) -> int:
    """``largest_rank_within`` from the exactly rounded tail sum alone (what it was before the rough
    sum came first)."""
    z = __import__("statistics").NormalDist().inv_cdf(min(tail, 0.5))
    k = min(max(int(n / 2.0 + z * n**0.5 / 2.0), 1), (n + 1) // 2)
    return _binomial._step_to_rank(k, n, tail, _binomial.cdf(k - 1, n), 0.0)


def test_the_rough_tail_sum_steps_to_the_exact_sums_rank_even_at_the_cdfs_own_values():
    rng = np.random.default_rng(40)
    ns = [1001, 1227, 4889, 9772, 78_131, 1_250_006, 10_000_000, *rng.integers(1001, 10_000_000, 60).tolist()]
    for n in ns:
        tails = [0.5e-9, 0.0005, 0.005, 0.025, 0.05]
        k = _binomial.largest_rank_within(n, 0.005)
        for j in (k - 2, k - 1, k):  # a tail equal to a CDF value, and its neighbours: too close to call
            exact = _binomial.cdf(j, n)
            tails += [exact, np.nextafter(exact, 0.0), np.nextafter(exact, 1.0), exact * (1 + 1e-12)]
        for tail in tails:
            assert _binomial.largest_rank_within(n, float(tail)) == _rank_by_exact_sums(n, float(tail)), (n, tail)
    rough, exact = _binomial._rough_tail_sum(4_995_000, 10_000_000), _binomial._tail_sum(4_995_000, 10_000_000)
    assert abs(rough - exact) <= 4e-12 * exact


def test_from_a_hundred_to_a_thousand_the_rough_sums_rank_is_the_exact_cdfs():
    for n in range(_binomial.ROUGH_FROM, _binomial.EXACT_N + 1, 3):
        k = _binomial._exact_rank(n, 0.005, (n + 1) // 2)
        tails = [1e-12, 0.0005, 0.005, 0.025, 0.4999, 0.5, 0.7]
        for j in (k - 2, k - 1, k):  # a tail equal to a CDF value, and its neighbours
            exact = _binomial.cdf(j, n)
            tails += [exact, np.nextafter(exact, 0.0), np.nextafter(exact, 1.0)]
        for tail in tails:
            expected = _binomial._exact_rank(n, float(tail), (n + 1) // 2)
            assert _binomial.largest_rank_within(n, float(tail)) == expected, (n, tail)
