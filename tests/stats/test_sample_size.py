"""power and samples_needed against R 4.2.2 power.t.test.

All magic numbers come from R: tests/reference/power_multiple.R generated
tests/reference/power_multiple_reference.json (n per group for two-sample,
pairs for paired; two-sided, strict = FALSE).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pairbench.errors import StatisticsError
from pairbench.stats.sample_size import RANK_TEST_ARE, power, samples_needed

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "reference" / "power_multiple_reference.json").read_text()
)
# R's uniroot(tol = .Machine$double.eps^0.25): R's printed n is within this of the root.
R_UNIROOT_TOL = REFERENCE["uniroot_tol"]


def _case_id(case):
    return f"{case['type']}-d{case['effect']:.4g}-sd{case['sd']:.4g}-a{case['alpha']}-p{case['power']}"


@pytest.mark.parametrize("case", REFERENCE["solve_n"], ids=_case_id)
def test_samples_needed_matches_r_power_t_test(case):
    n = samples_needed(
        case["effect"], case["sd"], alpha=case["alpha"], power=case["power"],
        paired=case["type"] == "paired", nonparametric=False,
    )  # fmt: skip
    # against R's root solved to 1e-12 ...
    assert n == pytest.approx(case["n_exact"], rel=1e-9)
    # ... and within uniroot's own tolerance of the n R prints by default
    assert abs(n - case["n_r"]) <= R_UNIROOT_TOL


@pytest.mark.parametrize(
    "case", REFERENCE["solve_power"], ids=lambda c: f"{c['type']}-n{c['n']}-d{c['effect']}"
)
def test_power_matches_r_power_t_test(case):
    p = power(case["n"], case["effect"], case["sd"], alpha=case["alpha"],
              paired=case["type"] == "paired")  # fmt: skip
    # R's pnt and scipy's nct (Boost) agree to ~1e-10 relative
    assert p == pytest.approx(case["power"], rel=1e-8, abs=1e-300)


def test_power_reproduces_statistics_md_known_values():
    # statistics.md section 4: power.t.test(n=20, delta=1) -> 0.8689528; (power=.9, delta=1) -> 22.02110
    assert power(20, 1, 1, alpha=0.05) == pytest.approx(0.8689528, abs=5e-8)
    assert samples_needed(1, 1, alpha=0.05, power=0.9, nonparametric=False) == pytest.approx(
        22.02110, abs=R_UNIROOT_TOL
    )


def test_samples_needed_reproduces_seed_000_plan():
    # seed 000: power.t.test(delta=50, sd=1912, sig.level=0.01, power=0.95) -> n = 52100.88,
    # then "1.15 * n" rounded up to 60000
    n_t = samples_needed(50, 1912, nonparametric=False)
    assert n_t == pytest.approx(52100.88, abs=0.005)
    n_rank = samples_needed(50, 1912)
    assert n_rank == pytest.approx(n_t / 0.864)
    assert 1.15 < n_rank / n_t < 1.16
    assert math.ceil(n_rank / 1000) * 1000 == 61000  # 0.864 is a little stricter than 1.15


def test_samples_needed_and_power_are_inverse():
    for paired in (False, True):
        n = samples_needed(0.4, 1.3, alpha=0.01, power=0.9, paired=paired, nonparametric=False)
        assert power(n, 0.4, 1.3, alpha=0.01, paired=paired) == pytest.approx(0.9, abs=1e-9)


def test_samples_needed_ignores_the_sign_of_the_effect():
    assert samples_needed(-0.5, 1) == samples_needed(0.5, 1)
    assert power(10, -0.5, 1) == power(10, 0.5, 1)


def test_samples_needed_extends_below_two_like_r_for_huge_effects():
    # R 4.2.2: power.t.test(delta=10, power=.9) -> n = 1.762908 (uniroot extends the interval)
    n = samples_needed(10, 1, alpha=0.05, power=0.9, nonparametric=False)
    assert n == pytest.approx(1.762908, abs=R_UNIROOT_TOL)
    assert RANK_TEST_ARE == 0.864


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"effect": 0, "sd": 1}, "`effect` must be a finite non-zero number, got 0"),
        ({"effect": float("nan"), "sd": 1}, "`effect` must be a finite non-zero number"),
        ({"effect": 1, "sd": 0}, "`sd` must be a finite positive number, got 0"),
        ({"effect": 1, "sd": -2.0}, "`sd` must be a finite positive number, got -2.0"),
        ({"effect": 1, "sd": float("inf")}, "`sd` must be a finite positive number"),
        ({"effect": 1, "sd": 1, "alpha": 0}, "`alpha` must be in (0, 1), got 0"),
        ({"effect": 1, "sd": 1, "alpha": 1.5}, "`alpha` must be in (0, 1), got 1.5"),
        ({"effect": 1, "sd": 1, "power": 1.0}, "`power` must be in (0, 1), got 1.0"),
        ({"effect": "x", "sd": 1}, "`effect` must be a finite non-zero number, got 'x'"),
    ],
)
def test_samples_needed_rejects_bad_input_naming_the_parameter(kwargs, message):
    with pytest.raises(StatisticsError) as info:
        samples_needed(**kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize("n", [1, 0.5, -3, float("nan"), float("inf"), "ten"])
def test_power_rejects_n_of_one_or_less_naming_it(n):
    with pytest.raises(StatisticsError, match="`n` must be"):
        power(n, 1, 1)


def test_samples_needed_refuses_an_effect_too_small_to_ever_detect():
    with pytest.raises(StatisticsError, match="more than 1e15 samples"):
        samples_needed(1e-9, 1, nonparametric=False)


def test_power_stays_the_function_whatever_was_imported_first():
    import pairbench.stats as stats

    stats.samples_needed(1, 1)  # imports the submodule that defines power
    assert stats.power(20, 1, 1, alpha=0.05) == pytest.approx(0.8689528, abs=5e-8)


def test_a_tiny_sd_gives_a_small_n_without_nan_or_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n = samples_needed(0.00995, 1e-8, alpha=0.01, power=0.95, paired=True, nonparametric=False)
    # scipy's noncentral t returns NaN at this ncp (~1e6 at n = 2); the effect is a
    # million SDs, so any n > 1 has the power and the root lies in (1, 2).
    assert 1.0 < n < 2.0
