"""Exact selection of pairwise differences and Walsh averages, against brute force.

Expected values come from materialising every difference (``np.subtract.outer``,
``np.sort``, ``np.median``), which is exact for these small sizes. The private
``cap``/``sample`` knobs are shrunk so that the band-narrowing rounds, not just the
final partition, are exercised on small inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.stats import hodges_lehmann
from pairbench.stats._select import (
    kth_pairwise_difference,
    kth_walsh_average,
    pairwise_differences,
    walsh_sums,
)

# (cap, sample) settings: tiny ones force many narrowing rounds; None = production defaults
KNOBS = [(2, 4), (8, 16), (64, 32), (None, None)]


def _data(kind: str, n: int, seed: int) -> np.ndarray:
    """Test data shaped like timings: skewed, tied (coarse timer), heavy-tailed, large offset."""
    rng = np.random.default_rng(seed)
    if kind == "lognormal":
        return rng.lognormal(5, 0.2, n)
    if kind == "ticks":  # a coarse timer: few distinct values, heavy ties
        return rng.integers(100, 104, n).astype(float)
    if kind == "cauchy":  # heavy tails on a large offset
        return rng.standard_cauchy(n) * 1e-3 + 1e6
    if kind == "offset":  # 1 s in ns plus sub-ns jitter: differences suffer cancellation
        return 1e9 + rng.random(n) * 1e-6
    raise ValueError(kind)


KINDS = ["lognormal", "ticks", "cauchy", "offset"]


def _all_differences(x, y):
    return np.sort(np.subtract.outer(x, y), axis=None)


def _all_walsh_averages(x):
    i, j = np.triu_indices(len(x))
    return np.sort((x[i] + x[j]) / 2)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 40),
    m=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    knobs=st.sampled_from(KNOBS),
)
def test_every_pairwise_difference_rank_matches_brute_force(kind, n, m, seed, knobs):
    x, y = _data(kind, n, seed), _data(kind, m, seed + 1)
    expected = _all_differences(x, y)
    ks = np.arange(1, expected.size + 1)
    got = pairwise_differences(np.sort(x), np.sort(y)).select(ks, cap=knobs[0], sample=knobs[1])
    np.testing.assert_array_equal(got, expected)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 50),
    seed=st.integers(0, 2**32 - 1),
    knobs=st.sampled_from(KNOBS),
)
def test_every_walsh_average_rank_matches_brute_force(kind, n, seed, knobs):
    x = _data(kind, n, seed)
    expected = _all_walsh_averages(x)
    ks = np.arange(1, expected.size + 1)
    got = walsh_sums(np.sort(x)).select(ks, cap=knobs[0], sample=knobs[1]) / 2
    np.testing.assert_array_equal(got, expected)


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    x=st.lists(finite, min_size=1, max_size=30),
    y=st.lists(finite, min_size=1, max_size=30),
    knobs=st.sampled_from(KNOBS),
)
def test_differences_of_arbitrary_floats_match_brute_force(x, y, knobs):
    # arbitrary magnitudes mix, so t - a_i rounds differently from a_i + b_j: the fix-up
    x, y = np.array(x), np.array(y)
    expected = _all_differences(x, y)
    ks = sorted({1, expected.size, (expected.size + 1) // 2, expected.size // 2 + 1})
    got = pairwise_differences(np.sort(x), np.sort(y)).select(ks, cap=knobs[0], sample=knobs[1])
    np.testing.assert_array_equal(got, expected[np.array(ks) - 1])


@settings(derandomize=True, max_examples=80, deadline=None)
@given(
    x=st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=40),
    y=st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=40),
)
def test_hodges_lehmann_estimate_is_the_median_of_all_differences_with_heavy_ties(x, y):
    expected = np.median(np.subtract.outer(x, y))
    assert hodges_lehmann(x, y).estimate == expected


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n, m", [(1, 1), (2, 7), (60, 45), (200, 150)])
def test_hodges_lehmann_estimate_equals_numpy_median_exactly(kind, n, m):
    x, y = _data(kind, n, 11), _data(kind, m, 12)
    assert hodges_lehmann(x, y).estimate == np.median(np.subtract.outer(x, y))


@pytest.mark.parametrize("kind", KINDS)
def test_public_kth_functions_match_brute_force_at_the_extremes_and_middle(kind):
    x, y = _data(kind, 300, 5), _data(kind, 250, 6)
    diffs, walsh = _all_differences(x, y), _all_walsh_averages(x)
    for k in (1, 2, diffs.size // 40, diffs.size // 2, diffs.size // 2 + 1, diffs.size):
        assert kth_pairwise_difference(x, y, k) == diffs[k - 1]
    for k in (1, walsh.size // 3, (walsh.size + 1) // 2, walsh.size):
        assert kth_walsh_average(x, k) == walsh[k - 1]


def test_selection_is_exact_whatever_the_random_seed():
    x, y = _data("lognormal", 120, 1), _data("lognormal", 90, 2)
    expected = _all_differences(x, y)[[0, 99, 5399, 10799]]
    pairs = pairwise_differences(np.sort(x), np.sort(y))
    for seed in range(10):
        got = pairs.select([1, 100, 5400, 10800], seed=seed, cap=32, sample=64)
        np.testing.assert_array_equal(got, expected)


def test_one_tied_value_filling_the_matrix_is_found_without_materialising_it():
    # 1e8 differences, 98% of them exactly 0: the tie exit must end the search
    x = np.r_[np.full(9_900, 5.0), np.linspace(0, 1, 100)]
    y = np.r_[np.full(9_900, 5.0), np.linspace(9, 10, 100)]
    pairs = pairwise_differences(np.sort(x), np.sort(y))
    assert pairs.select([pairs.size // 2], cap=1 << 14).tolist() == [0.0]


def test_large_inputs_are_selected_from_a_band_not_materialised():
    rng = np.random.default_rng(3)
    x, y = rng.lognormal(5, 0.2, 20_000), rng.lognormal(5, 0.2, 20_000)
    pairs = pairwise_differences(np.sort(x), np.sort(y))
    k = pairs.size // 2
    value = float(pairs.select([k])[0])
    # k-th smallest: fewer than k values lie below it and at least k at or below it
    assert int(pairs.count(value, strict=True).sum()) < k <= int(pairs.count(value).sum())


@pytest.mark.parametrize("bad", [0, -1, 13, 2.0, True, "3"])
def test_kth_pairwise_difference_rejects_ranks_outside_one_to_nm(bad):
    with pytest.raises(StatisticsError, match="`k`"):
        kth_pairwise_difference([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], bad)


def test_kth_walsh_average_rejects_ranks_outside_one_to_n_n_plus_one_over_two():
    with pytest.raises(StatisticsError, match=r"`k` must be in \[1, 6\]"):
        kth_walsh_average([1.0, 2.0, 3.0], 7)


def test_kth_functions_reject_empty_and_non_finite_input_naming_the_parameter():
    with pytest.raises(NotEnoughData, match="y"):
        kth_pairwise_difference([1.0], [], 1)
    with pytest.raises(StatisticsError, match="x holds 1 NaN"):
        kth_walsh_average([1.0, np.nan], 1)
    with pytest.raises(StatisticsError, match="y holds 1 NaN or infinite"):
        kth_pairwise_difference([1.0], [np.inf], 1)


@pytest.mark.parametrize("kind", KINDS)
def test_nearest_cell_matches_brute_force(kind):
    x, y = _data(kind, 40, 21), _data(kind, 30, 22)
    diffs, sums = _all_differences(x, y), 2 * _all_walsh_averages(x)
    pairs, walsh = pairwise_differences(np.sort(x), np.sort(y)), walsh_sums(np.sort(x))
    rng = np.random.default_rng(4)
    probes = np.r_[diffs[[0, 7, 600, -1]], rng.uniform(diffs[0] - 1, diffs[-1] + 1, 20)]
    for t in probes:
        gaps = np.abs(diffs - t)
        assert pairs.nearest(t) == diffs[np.flatnonzero(gaps == gaps.min())[0]]
    for t in np.r_[sums[[0, 5, -1]], rng.uniform(sums[0], sums[-1], 20)]:
        gaps = np.abs(sums - t)
        assert walsh.nearest(t) == sums[np.flatnonzero(gaps == gaps.min())[0]]
