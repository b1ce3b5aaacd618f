"""holm and benjamini_hochberg against R 4.2.2 p.adjust.

Reference values: tests/reference/power_multiple.R -> power_multiple_reference.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.stats.multiple import benjamini_hochberg, holm

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "reference" / "power_multiple_reference.json").read_text()
)


@pytest.mark.parametrize("case", REFERENCE["p_adjust"], ids=lambda c: f"m{len(c['p'])}")
def test_holm_matches_r_p_adjust(case):
    np.testing.assert_allclose(holm(case["p"]), case["holm"], rtol=1e-14, atol=0)


@pytest.mark.parametrize("case", REFERENCE["p_adjust"], ids=lambda c: f"m{len(c['p'])}")
def test_benjamini_hochberg_matches_r_p_adjust(case):
    np.testing.assert_allclose(benjamini_hochberg(case["p"]), case["bh"], rtol=1e-14, atol=0)


def test_adjustments_reproduce_statistics_md_example():
    p = [0.01, 0.04, 0.03, 0.005, 0.20]
    np.testing.assert_allclose(benjamini_hochberg(p), [0.025, 0.05, 0.05, 0.025, 0.2])
    np.testing.assert_allclose(holm(p), [0.04, 0.09, 0.09, 0.025, 0.2])


def test_holm_keeps_input_order_and_never_decreases_along_sorted_p():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=50) ** 3
    adjusted = holm(p)
    order = np.argsort(p)
    assert np.all(np.diff(adjusted[order]) >= 0)
    assert np.all(adjusted >= p) and np.all(adjusted <= 1)


@pytest.mark.parametrize("adjust", [holm, benjamini_hochberg])
@pytest.mark.parametrize(
    ("pvalues", "error", "message"),
    [
        ([], NotEnoughData, "pvalues must hold at least 1 value to adjust, got 0"),
        ([0.1, float("nan")], StatisticsError, "pvalues holds 1 NaN"),
        ([0.1, 1.2], StatisticsError, "pvalues must lie in [0, 1], got 1.2 at index 1"),
        ([-0.01], StatisticsError, "pvalues must lie in [0, 1], got -0.01 at index 0"),
        ([[0.1, 0.2]], StatisticsError, "pvalues must be one-dimensional"),
    ],
)
def test_adjustments_reject_bad_pvalues_naming_them(adjust, pvalues, error, message):
    with pytest.raises(error) as info:
        adjust(pvalues)
    assert message in str(info.value)
