"""Change points in skewed noise: the skewness test, the two-piece pseudo-values, a step placed by
the noise's density, and a segment's robust fit. Expected values are worked by hand or by the
standard library, not by this code."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy.signal import lfilter

from pairbench import stats
from pairbench.stats import skewed


def _one_sided(rng, n: int) -> np.ndarray:
    """A tight normal bulk (SD 0.5), 30% of it slowed by a long exponential tail (mean 4): timings
    beside a busy tenant, as skewed as this machine's real result noise."""
    z = 0.5 * rng.normal(size=n)
    slow = rng.random(n) < 0.3
    z[slow] += rng.exponential(4.0, int(slow.sum()))
    return z


def test_the_running_median_is_each_windows_median_with_the_ends_padded():
    y = np.array([5.0, 1.0, 4.0, 2.0, 8.0, 3.0, 7.0])
    padded = [y[0]] * 2 + list(y) + [y[-1]] * 2
    expected = [statistics.median(padded[k:k + 5]) for k in range(y.size)]
    assert stats.running_median(y, 5).tolist() == expected


def test_quantile_skewness_of_a_long_upper_tail_is_worked_by_hand():
    y = np.concatenate((np.arange(90.0), np.full(10, 1000.0)))
    # q10 = 9.9, q50 = 49.5, q90 = 89 + 0.1 * 911 = 180.1 (linear interpolation between order statistics)
    assert skewed.quantile_skewness(y) == pytest.approx((180.1 + 9.9 - 99.0) / (180.1 - 9.9), rel=1e-12)
    assert skewed.quantile_skewness(np.arange(101.0)) == pytest.approx(0.0, abs=1e-12)
    assert skewed.quantile_skewness(np.ones(10)) == 0.0


@pytest.mark.parametrize("kind", ["normal", "ar1", "t3"])
def test_symmetric_noise_is_seldom_read_as_skewed(kind):
    passed = 0
    for seed in range(200):
        rng = np.random.default_rng([31, seed])
        e = rng.standard_t(3, 100) if kind == "t3" else rng.normal(size=100)
        y = lfilter([1.0], [1.0, -0.5], e) if kind == "ar1" else e
        passed += stats.is_skewed(y, 5, 3.5)
    assert passed <= 4  # measured 0-0.75% in benchmarks/history_steps.py's histories


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_one_sided_noise_is_read_as_skewed_whichever_side_its_tail_is_on(sign):
    passed = sum(stats.is_skewed(sign * _one_sided(np.random.default_rng([32, seed]), 100), 5, 3.5)
                 for seed in range(100))
    assert passed >= 90


def test_two_piece_scales_the_heavier_sides_residuals_to_the_lighter_sides_scale():
    fit = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    y = fit + np.array([-1.0, -1.0, -1.0, 2.0, 4.0, 6.0])
    # median distances: up 4, down 1, so the residuals above are divided by 4
    assert stats.two_piece(y, fit).tolist() == pytest.approx([0.0, 0.0, 0.0, 2.5, 3.0, 3.5])


def test_two_piece_leaves_values_with_fewer_than_three_residuals_on_a_side():
    y = np.array([0.0, 1.0, 2.0, 9.0, 3.0])
    assert stats.two_piece(y, np.full(5, 2.5)).tolist() == y.tolist()


def test_a_step_in_one_sided_noise_placed_off_is_moved_to_its_commit_by_the_noises_density():
    moved = 0
    for seed in range(20):
        rng = np.random.default_rng([33, seed])
        y = _one_sided(rng, 100)
        y[40:] += 3.0
        fit = np.where(np.arange(100) < 43, np.median(y[:43]), np.median(y[43:]))
        [place] = stats.placed_by_density(y, fit, (43,), (False, False), 3)
        moved += abs(place - 40) <= 1
    assert moved >= 18


def test_a_step_beside_a_drift_and_a_history_without_steps_keep_their_places():
    y = _one_sided(np.random.default_rng(34), 60)
    fit = np.zeros(60)
    assert stats.placed_by_density(y, fit, (30,), (True, False), 3) == (30,)
    assert stats.placed_by_density(y, fit, (), (False,), 3) == ()
    assert stats.placed_by_density(np.ones(60), np.ones(60), (30,), (False, False), 3) == (30,)


def test_a_segments_robust_fit_is_its_median_or_its_median_plus_its_slope():
    y = np.array([1.0, 9.0, 2.0, 10.0, 11.0, 12.0, 13.0])
    fit = stats.median_fitted(y, stats.Segmentation((3,), (False, True)))
    # the level 2 (median of 1, 9, 2); the line through 10..13 has slope 1 and median 11.5
    assert fit.tolist() == pytest.approx([2.0, 2.0, 2.0, 10.0, 11.0, 12.0, 13.0])


def test_midranks_are_scipys_rankdata_ties_included():
    from scipy.stats import rankdata

    rng = np.random.default_rng(35)
    for y in (rng.normal(size=50), rng.integers(0, 5, 40).astype(float), np.ones(7), np.array([3.0])):
        assert stats.midranks(y).tolist() == rankdata(y).tolist()


def test_the_kernel_log_density_is_scipys_gaussian_kde():
    from scipy.stats import gaussian_kde

    from pairbench.stats.skewed import _log_density

    r = _one_sided(np.random.default_rng(36), 300)
    x = np.linspace(-3.0, 30.0, 50)
    assert _log_density(r)(x) == pytest.approx(gaussian_kde(r).logpdf(x), rel=1e-9)


def test_two_breaks_drawn_to_one_step_do_not_cross_or_meet():
    for seed in range(20):
        y = _one_sided(np.random.default_rng([38, seed]), 80)
        y[33:] += 6.0
        segmentation = stats.Segmentation((30, 36), (False, False, False))
        first, second = stats.placed_by_density(y, stats.median_fitted(y, segmentation), segmentation.breaks,
                                                segmentation.sloped, 3)
        assert 30 <= first <= 34 and second >= first + 3  # both went to 33 in 17 of 20 before the fix
