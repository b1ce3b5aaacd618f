"""Behaviour of line_fit and trend_fit (``stats/regression.py``), the fits benchmark validation uses.

Expected values come from R 4.2.2 via ``tests/reference/regression.R``
(``regression_reference.json``): ``lm`` and ``pt``/``qt`` for the least-squares
line, Theil-Sen's slope and Sen's (1968) interval written in R from the paper,
and ``cor.test(method = "kendall")`` for Kendall's tau and its one-sided test.
The cases are shaped like validation samples: iteration counts at 1/8..1 of a
sample, repeated (ties in x), with preempted samples and a body that does not grow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairbench.errors import StatisticsError
from pairbench.stats.regression import line_fit, trend_fit

REF = json.loads((Path(__file__).parents[1] / "reference" / "regression_reference.json").read_text())
CASES = {case["name"]: case for case in REF["cases"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_line_fit_matches_r_lm(name):
    case = CASES[name]
    fit = line_fit(case["x"], case["y"])
    got = (fit.slope, fit.intercept, fit.slope_se, fit.intercept_se, fit.slope_ci, fit.intercept_ci,
           fit.r_squared, fit.pvalue)
    expected = tuple(case[k] for k in ("slope", "intercept", "slope_se", "intercept_se", "slope_ci",
                                       "intercept_ci", "r_squared", "p_two_sided"))
    assert got == pytest.approx(expected, rel=1e-9)
    assert fit.n == len(case["x"])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(("alternative", "key"), [("greater", "p_greater"), ("less", "p_less")])
def test_line_fit_one_sided_pvalues_match_r(name, alternative, key):
    case = CASES[name]
    assert line_fit(case["x"], case["y"], alternative).pvalue == pytest.approx(case[key], rel=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_trend_fit_matches_theil_sen_and_kendall_in_r(name):
    case = CASES[name]
    fit = trend_fit(case["x"], case["y"])
    assert (fit.slope, fit.slope_low, fit.slope_high) == pytest.approx(
        (case["theil_slope"], case["theil_low"], case["theil_high"]), rel=1e-12)
    assert (fit.tau, fit.pvalue) == pytest.approx((case["tau"], case["tau_p"]), rel=1e-9)


def test_a_few_preempted_samples_sway_least_squares_but_not_the_trend():
    case = CASES["preempted"]
    assert line_fit(case["x"], case["y"], "greater").pvalue > 0.5
    assert trend_fit(case["x"], case["y"]).pvalue < 0.001


@pytest.mark.parametrize(("x", "y"), [([1, 2], [3, 4]), ([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [5, 5, 5])])
def test_no_line_through_too_few_points_or_a_constant(x, y):
    assert line_fit(x, y) is None and trend_fit(x, y) is None


def test_line_fit_rejects_an_unknown_alternative_and_unpaired_data():
    with pytest.raises(ValueError, match="alternative"):
        line_fit([1, 2, 3], [1, 2, 4], "bigger")
    with pytest.raises(StatisticsError):
        line_fit([1, 2, 3], [1, 2])
