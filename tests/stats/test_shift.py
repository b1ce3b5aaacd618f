"""Behaviour of quantile_ranks, quantile_ci and shift_function.

All magic numbers are from R 4.2.2 (``tests/reference/shift.R`` wrote
``shift_reference.json``): qbinom/pbinom for the order-statistic ranks and their
exact coverage, quantile(type = 7) for the estimates, sort(x)[k] for the bounds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.stats.shift import DECILES, quantile_ci, quantile_ranks, shift_function

REF = json.loads((Path(__file__).parents[1] / "reference" / "shift_reference.json").read_text())
CASES = {case["name"]: case for case in REF["shift"]}


def test_quantile_ranks_match_r_qbinom_and_cover_at_least_the_requested_confidence():
    for row in REF["ranks"]:
        ranks = quantile_ranks(row["n"], row["p"], row["conf"])
        where = f"n={row['n']} p={row['p']} conf={row['conf']}"
        assert (ranks.low, ranks.high) == (row["low"], row["high"]), where
        assert math.isclose(ranks.achieved_confidence, row["achieved"], rel_tol=1e-10, abs_tol=1e-14), where
        if ranks.low >= 1 and ranks.high <= row["n"]:
            assert ranks.achieved_confidence >= row["conf"] - 1e-12, where


@pytest.mark.parametrize("name", sorted(CASES))
def test_shift_function_matches_r(name):
    case = CASES[name]
    sf = shift_function(case["x"], case["y"], confidence=case["conf"])
    assert sf.quantiles == DECILES
    assert np.allclose([b.estimate for b in sf.baseline], case["baseline_estimate"], rtol=1e-13)
    assert np.allclose([c.estimate for c in sf.candidate], case["candidate_estimate"], rtol=1e-13)
    assert np.allclose(sf.difference, case["difference"], rtol=1e-12, atol=1e-9)
    assert [b.low for b in sf.baseline] == case["baseline_low"]
    assert [b.high for b in sf.baseline] == case["baseline_high"]
    assert [c.low for c in sf.candidate] == case["candidate_low"]
    assert [c.high for c in sf.candidate] == case["candidate_high"]
    for got, want in zip(sf.low + sf.high, case["low"] + case["high"], strict=True):
        assert (got is None and want is None) or math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-9)
    assert sf.pure_shift_excluded == case["pure_shift_excluded"]
    assert math.isclose(sf.interval_confidence, 1 - (1 - case["conf"]) / 18)


def test_shift_function_sees_a_tail_change_that_a_single_shift_cannot_explain():
    assert shift_function(CASES["tail_change"]["x"], CASES["tail_change"]["y"]).pure_shift_excluded
    assert not shift_function(CASES["pure_shift"]["x"], CASES["pure_shift"]["y"]).pure_shift_excluded


def test_shift_function_warns_when_samples_are_too_few_for_bounded_intervals():
    sf = shift_function(CASES["tiny"]["x"], CASES["tiny"]["y"])
    assert all(v is None for v in sf.low + sf.high)
    assert not sf.pure_shift_excluded
    assert sf.warnings and "18 of 18" in str(sf.warnings[0])


def test_simultaneous_intervals_rarely_reject_a_pure_shift_under_the_null():
    rng = np.random.default_rng(7)
    rejections = sum(
        shift_function(rng.lognormal(0, 0.5, 120), 0.3 + rng.lognormal(0, 0.5, 120),
                       confidence=0.9).pure_shift_excluded
        for _ in range(300)
    )
    assert rejections <= 30  # at most alpha = 10% by construction (Bonferroni is conservative)


def test_quantile_ci_median_equals_the_sign_test_interval():
    x = np.arange(1.0, 21.0)
    ci = quantile_ci(x, 0.5, 0.95)
    assert (ci.low, ci.high, ci.estimate) == (6.0, 15.0, 10.5)  # R: qbinom(.025, 20, .5) = 6


def test_shift_function_handles_a_million_samples():
    # speed: benchmarks/report_size.py (the HTML report computes it at 1e6)
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(0, 0.2, 1_000_000), rng.lognormal(0.01, 0.2, 1_000_000)
    sf = shift_function(a, b)
    assert all(lo < d < hi for d, lo, hi in zip(sf.difference, sf.low, sf.high, strict=True))


@pytest.mark.parametrize(("args", "message"), [
    ((0, 0.5), "`n` must be a positive integer, got 0"),
    ((10, 1.0), "`p` must be in (0, 1), got 1.0"),
    ((10, 0.5, 1.5), "`confidence` must be in (0, 1), got 1.5"),
])
def test_quantile_ranks_reject_bad_arguments_naming_them(args, message):
    with pytest.raises(StatisticsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        quantile_ranks(*args)


def test_shift_function_rejects_empty_and_bad_quantiles():
    with pytest.raises(NotEnoughData, match="candidate must hold at least 1 value"):
        shift_function([1.0, 2.0], [])
    with pytest.raises(StatisticsError, match="`quantiles` must be numbers in"):
        shift_function([1.0, 2.0], [1.0, 2.0], quantiles=(0.5, 1.0))


@pytest.mark.parametrize("n", [1, 7, 30, 31, 200, 1000])
def test_the_ranks_coverage_is_the_binomial_cdf_at_the_ranks_it_settled_on(n):
    from pairbench.stats import _special
    from pairbench.stats.shift import _ranks

    ps = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99])
    for confidence in (0.9, 0.99, 1 - 0.01 / 18):
        low, high, achieved = _ranks(n, ps, confidence)
        below = np.where(low >= 1, [_special.bdtr(k - 1, n, p) for k, p in zip(low, ps, strict=True)], 0.0)
        upto = np.where(high <= n, [_special.bdtr(k - 1, n, p) for k, p in zip(high, ps, strict=True)], 1.0)
        assert np.array_equal(achieved, upto - below)  # the same numbers, each p on its own
