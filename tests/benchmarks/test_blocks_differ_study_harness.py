"""The pure parts of benchmarks/blocks_differ_study.py: its noises are what it says they are, and its
rate counts the comparisons the note fired on (no timing here)."""

from __future__ import annotations

import numpy as np
import pytest
from scripts import benchmark_script

study = benchmark_script("blocks_differ_study")


@pytest.mark.parametrize("phi", [0.5, 0.8])
def test_the_ar1_noise_has_its_lag1_correlation_and_its_scale(phi):
    x = study.noise(f"ar{phi}", np.random.default_rng(1), 40, 2000, 0.05)
    lag1 = np.mean([np.corrcoef(row[1:], row[:-1])[0, 1] for row in x])
    assert lag1 == pytest.approx(phi, abs=0.02) and x.std() == pytest.approx(0.05, rel=0.05)


def test_the_skewed_noise_slows_about_a_quarter_of_the_rounds_on_either_side():
    x = study.noise("skewed", np.random.default_rng(2), 200, 200, 0.01)
    beyond = np.abs(x) > 0.04  # 4 SDs of the normal part: a slowed round whose exponential (mean 4)
    assert beyond.mean() == pytest.approx(0.25 * np.exp(-1.0), abs=0.01)  # passed 4: 0.25 e^-1
    assert np.mean(x[beyond] > 0) == pytest.approx(0.5, abs=0.03)


def test_the_quantized_noise_lies_on_a_grid():
    x = study.noise("quantized", np.random.default_rng(3), 10, 50, 0.05)
    assert np.allclose(x / 0.02, np.round(x / 0.02)) and np.unique(x).size < 20


def test_the_rate_is_the_share_of_comparisons_the_note_fired_on():
    rng = np.random.default_rng(4)
    assert study.fire_rate(rng, 20, 8, 10, study.differing("normal", 0.001, 8, 10, 0.5, 0.5)) >= 0.9
    assert study.fire_rate(rng, 20, 8, 10, study.agreeing("normal", 0.05, 8, 10)) == 0.0
    assert study.fire_rate(rng, 20, 8, 10, lambda rng: np.zeros((8, 10))) == 0.0
