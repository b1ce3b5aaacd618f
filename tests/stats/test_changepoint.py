"""PELT and the noise scale: the same breakpoints as ruptures (the reference), exact on clean steps."""

from __future__ import annotations

import numpy as np
import pytest
import ruptures

from pairbench import stats
from pairbench.errors import StatisticsError


def _series(rng, n: int) -> np.ndarray:
    y = rng.standard_t(3, size=n)
    for start in rng.integers(5, n - 5, size=rng.integers(0, 4)):
        y[start:] += rng.normal(0, 3)
    return y


@pytest.mark.parametrize("seed", range(40))
def test_pelt_finds_the_breakpoints_ruptures_finds(seed):
    """ruptures.Pelt(model="l2", jump=1) is the reference implementation of the same search."""
    rng = np.random.default_rng(seed)
    n, min_size = int(rng.integers(12, 160)), int(rng.integers(1, 6))
    y, penalty = _series(rng, n), float(rng.uniform(0.5, 25))
    expected = ruptures.Pelt(model="l2", min_size=min_size, jump=1).fit(y).predict(pen=penalty)[:-1]
    assert list(stats.pelt(y, penalty, min_size)) == expected


def test_pelt_finds_clean_steps_exactly_and_nothing_in_a_constant_series():
    y = np.concatenate([np.zeros(30), np.full(20, 5.0), np.full(25, 2.0)])
    assert stats.pelt(y, 1.0, 3) == (30, 50)
    assert stats.pelt(np.ones(100), 1.0, 3) == ()
    assert stats.pelt(np.arange(5.0), 1.0, 3) == ()  # shorter than two segments


def test_pelt_is_exact_on_a_large_offset():
    """Sums of squares are taken about the median, so a level of 1e9 loses nothing."""
    y = 1e9 + np.concatenate([np.zeros(40), np.full(40, 1.0)]) + np.tile([0.1, -0.1], 40)
    assert stats.pelt(y, 2.0, 2) == (40,)


@pytest.mark.parametrize(("y", "penalty", "min_size", "message"), [
    ([1.0, np.nan, 2.0], 1.0, 1, "finite"),
    ([[1.0, 2.0]], 1.0, 1, "one-dimensional"),
    ([1.0, 2.0], 0.0, 1, "penalty"),
    ([1.0, 2.0], 1.0, 0, "min_size"),
])
def test_pelt_refuses_what_it_cannot_segment(y, penalty, min_size, message):
    with pytest.raises(StatisticsError, match=message):
        stats.pelt(y, penalty, min_size)


def test_the_noise_scale_is_the_sd_of_normal_noise_and_ignores_steps():
    rng = np.random.default_rng(5)
    y = rng.normal(0, 2.0, 20_000)
    assert stats.noise_scale(y) == pytest.approx(2.0, rel=0.03)
    y[5_000:] += 50.0
    y[12_000:] -= 80.0
    assert stats.noise_scale(y) == pytest.approx(2.0, rel=0.03)
    with pytest.raises(StatisticsError, match="at least 3"):
        stats.noise_scale([1.0, 2.0])
