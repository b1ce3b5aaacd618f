"""The verdict logic of benchmarks/spawner.py: the per-block ratio interval against a t interval
computed by hand, and the three outcomes of the "no worse than hyperfine -N" target."""

from __future__ import annotations

import math

import pytest
from scripts import benchmark_script


@pytest.fixture(scope="module")
def spawner_study():
    return benchmark_script("spawner")


def test_the_block_interval_is_a_t_interval_on_the_log_ratios(spawner_study):
    # logs e^-0.02, e^0, e^0.02: mean 0, sd 0.02, t(0.975, 2) = 4.302652729749464 (R: qt(0.975, 2))
    centre, low, high = spawner_study.block_ratio_interval([math.exp(-0.02), 1.0, math.exp(0.02)])
    half = 4.302652729749464 * 0.02 / math.sqrt(3)
    assert centre == pytest.approx(1.0)
    assert (low, high) == pytest.approx((math.exp(-half), math.exp(half)))


def test_one_block_has_no_interval(spawner_study):
    centre, low, high = spawner_study.block_ratio_interval([1.02])
    assert centre == pytest.approx(1.02) and math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize(("pooled", "upper", "outcome"), [
    (0.99, 1.01, "met"),
    (1.015, 1.05, "not distinguishable from the target"),
    (1.03, 0.999, "MISSED"),
    (1.03, float("nan"), "MISSED"),
])
def test_the_ratio_target_is_met_indistinguishable_or_missed(spawner_study, pooled, upper, outcome):
    assert spawner_study.ratio_outcome(pooled, upper) == outcome
