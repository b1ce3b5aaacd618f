"""paired_effect and outlier_balance: exact small cases, coverage by simulation, boundaries.

Expected values are worked out by hand in the comments (binomial enumeration with
math.comb); coverage uses fixed seeds. The longer coverage study is
benchmarks/coverage_paired.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from pairbench.errors import NotEnoughData, NoVariance, StatisticsError
from pairbench.stats import OutlierBalance, PairedEffect, outlier_balance, paired_effect
from pairbench.stats._order import median_interval_ranks
from pairbench.stats.paired import log_ratios


def _two_sided_sign_p(k: int, n: int) -> float:
    """Exact two-sided sign-test p by enumeration: P(|X - n/2| >= |k - n/2|), X ~ Bin(n, 1/2)."""
    return sum(math.comb(n, j) for j in range(n + 1) if abs(j - n / 2) >= abs(k - n / 2)) / 2**n


# --- exact small cases ------------------------------------------------------------


def test_paired_effect_six_pairs_uses_the_extremes_at_96_9_percent():
    baseline = [10.0] * 6
    candidate = [11.0, 9.0, 12.0, 10.5, 13.0, 9.5]
    effect = paired_effect(baseline, candidate)
    assert isinstance(effect, PairedEffect)
    # n = 6, 95%: k = 1 since P(Bin(6, .5) <= 0) = 1/64 <= .025 < P(<= 1) = 7/64
    assert (effect.low_rank, effect.high_rank) == (1, 6)
    assert effect.achieved_confidence == pytest.approx(1 - 2 / 64)
    assert effect.low == pytest.approx(math.log(0.9))
    assert effect.high == pytest.approx(math.log(1.3))
    assert effect.estimate == pytest.approx((math.log(1.05) + math.log(1.1)) / 2)
    assert effect.estimate_pct == pytest.approx(100 * (math.sqrt(1.05 * 1.1) - 1))
    assert effect.low_pct == pytest.approx(-10.0)
    assert effect.high_pct == pytest.approx(30.0)
    assert (effect.n_slower, effect.n_faster, effect.n_tied) == (4, 2, 0)
    assert effect.p_value == pytest.approx(_two_sided_sign_p(4, 6))  # 44/64
    assert effect.p_value == pytest.approx(44 / 64)


def test_paired_effect_leaves_tied_pairs_out_of_the_sign_test_but_not_the_interval():
    baseline = [10.0] * 10
    candidate = [11.0] * 7 + [9.0, 10.0, 10.0]
    effect = paired_effect(baseline, candidate)
    assert (effect.n_slower, effect.n_faster, effect.n_tied) == (7, 1, 2)
    # sign test on 7 vs 1: 2 * (C(8,7) + C(8,8)) / 256 = 18/256
    assert effect.p_value == pytest.approx(18 / 256)
    # n = 10: k = 2 (P(Bin <= 1) = 11/1024 <= .025); sorted r = ln .9, 0, 0, ln 1.1 x 7
    assert (effect.low_rank, effect.high_rank) == (2, 9)
    assert effect.low == 0.0
    assert effect.high == pytest.approx(math.log(1.1))
    assert any("2 of 10 pairs are tied" in str(w) for w in effect.warnings)


def test_paired_effect_warns_when_ties_make_sign_test_and_interval_disagree():
    # 9 slower, 11 tied: sign test p = 2/2^9 = 0.0039, but the closed interval [r_(6), r_(15)]
    # = [0, ln 1.1] still touches 0: ties count against rejecting, as the proof requires.
    effect = paired_effect([10.0] * 20, [11.0] * 9 + [10.0] * 11)
    assert effect.p_value == pytest.approx(2 / 2**9)
    assert effect.low == 0.0 and effect.high == pytest.approx(math.log(1.1))
    assert any("interval counts them conservatively" in str(w) for w in effect.warnings)
    assert any("timer looks coarse" in str(w) for w in effect.warnings)


def test_paired_effect_at_99_percent_needs_eight_pairs():
    effect = paired_effect(np.ones(8), np.exp(np.arange(8) / 100.0), confidence=0.99)
    assert (effect.low_rank, effect.high_rank) == (1, 8)
    assert effect.achieved_confidence == pytest.approx(1 - 2 / 256)
    with pytest.raises(NotEnoughData, match="need at least 8 pairs for a 99% interval.*got 7"):
        paired_effect(np.ones(7), np.exp(np.arange(7) / 100.0), confidence=0.99)


def test_paired_effect_refuses_fewer_than_six_pairs_at_95_percent():
    with pytest.raises(NotEnoughData, match="need at least 6 pairs for a 95% interval.*got 5"):
        paired_effect([1, 2, 3, 4, 5], [1.1, 2.1, 3.1, 4.1, 5.1])


def test_paired_effect_reports_no_variance_when_every_pair_is_identical():
    with pytest.raises(NoVariance) as info:
        paired_effect([5.0] * 12, [5.0] * 12)
    assert str(info.value) == (
        "no variance: every pair is identical; is the timer resolution too coarse?"
    )



def test_paired_effect_of_a_constant_nonzero_ratio_is_the_sign_test_interval_at_that_ratio():
    # every pair 1.5 times slower: the interval [r, r] and the sign test's p = 2 * 0.5**12
    effect = paired_effect([2.0, 4.0] * 6, [3.0, 6.0] * 6)
    assert effect.low == effect.high == effect.estimate == pytest.approx(np.log(1.5))
    assert effect.p_value == pytest.approx(stats.binomtest(12, 12, 0.5).pvalue) == pytest.approx(2 * 0.5**12)
    assert "coarse-ratios" in [w.code for w in effect.warnings]


def test_paired_effect_keeps_precision_for_tiny_changes_in_large_nanosecond_counts():
    baseline = 1e9 + np.arange(10.0) * 1e3
    candidate = baseline + 1.0
    effect = paired_effect(baseline, candidate)
    expected = np.log1p(1.0 / baseline)
    assert effect.low == pytest.approx(expected.min(), rel=1e-12)
    assert effect.high == pytest.approx(expected.max(), rel=1e-12)


@pytest.mark.parametrize(
    ("baseline", "candidate", "kwargs", "message"),
    [
        (
            [1.0] * 6,
            [1.0] * 5 + [0.0],
            {},
            "candidate must hold positive durations, got 0.0 at index 5",
        ),
        (
            [1.0, -2.0] * 3,
            [1.0] * 6,
            {},
            "baseline must hold positive durations, got -2.0 at index 1",
        ),
        (
            [1.0] * 6,
            [1.0] * 7,
            {},
            "paired data need equal lengths, got baseline: 6 and candidate: 7",
        ),
        ([1.0] * 5 + [float("nan")], [1.0] * 6, {}, "baseline holds 1 NaN or infinite value(s)"),
        ([1.0] * 6, [1.0] * 5 + [float("inf")], {}, "candidate holds 1 NaN or infinite value(s)"),
        (
            [],
            [],
            {},
            "need at least 6 pairs for a 95% interval of the paired effect"
            " (2 * 0.5**n must be <= 0.05), got 0",
        ),
        ([1.0] * 6, [2.0] * 6, {"confidence": 1.0}, "`confidence` must be in (0, 1), got 1.0"),
        ([1.0] * 6, [2.0] * 6, {"confidence": 0}, "`confidence` must be in (0, 1), got 0"),
    ],
)
def test_paired_effect_rejects_bad_input_naming_parameter_and_value(
    baseline, candidate, kwargs, message
):
    with pytest.raises(StatisticsError) as info:
        paired_effect(baseline, candidate, **kwargs)
    assert message in str(info.value)


# --- coverage by simulation ---------------------------------------------------------


def _mixture_sample(rng, size):
    """Seed 000's rmixed (70/20/10 lognormal mixture, sdlog 0.2, scale 1 instead of 2000)."""
    component = rng.choice(3, size=size, p=[0.7, 0.2, 0.1])
    return np.array([0.0, 1.0, 3.0])[component] + rng.lognormal(0.0, 0.2, size)


def _mixture_median():
    def cdf(x):
        return sum(
            w * stats.lognorm.cdf(x - shift, 0.2)
            for w, shift in [(0.7, 0.0), (0.2, 1.0), (0.1, 3.0)]
        )

    return optimize.brentq(lambda x: cdf(x) - 0.5, 0.5, 3.0, xtol=1e-14)


MIXTURE_MEDIAN = _mixture_median()
TRUE_MEDIAN = 0.01  # ln-ratio, about 1% slower


def _log_ratios(kind, rng, n):
    """Per-pair log-ratios whose true median is TRUE_MEDIAN: skewed or multimodal."""
    if kind == "lognormal":  # right-skewed; median of exp(Z) is 1
        return TRUE_MEDIAN + 0.05 * (rng.lognormal(0.0, 1.0, n) - 1.0)
    return TRUE_MEDIAN + 0.05 * (_mixture_sample(rng, n) - MIXTURE_MEDIAN)


@pytest.mark.parametrize("kind", ["lognormal", "mixture"])
@pytest.mark.parametrize(("n", "reps"), [(10, 800), (30, 800), (100, 800), (1000, 1000)])
def test_paired_effect_95_percent_interval_covers_the_true_median(kind, n, reps):
    rng = np.random.default_rng([n, 0 if kind == "lognormal" else 1])
    covered = 0
    for _ in range(reps):
        baseline = rng.lognormal(np.log(1e6), 0.1, n)  # durations in ns
        candidate = baseline * np.exp(_log_ratios(kind, rng, n))
        effect = paired_effect(baseline, candidate)
        covered += effect.low <= TRUE_MEDIAN <= effect.high
    achieved = median_interval_ranks(n, 0.95).achieved_confidence
    # Exact levels: 97.9% at n = 10 (no sign-test interval is closer to 95%), 95.7% at 30,
    # 96.5% at 100, 95.1% at 1000. The count must be consistent with the exact level ...
    assert stats.binomtest(covered, reps, achieved).pvalue > 0.001
    # ... never below 93% ...
    assert covered / reps >= 0.93
    # ... and at most 97% where the exact level is close enough to 95% for the
    # replications to tell (benchmarks/coverage_paired.py runs 10x more)
    if achieved < 0.955:
        assert covered / reps <= 0.97


def test_paired_effect_interval_stays_conservative_with_coarse_timer_ties():
    # log-ratios on a lattice (timer ticks): P(r <= 0.01) = 0.55 and P(r >= 0.01) = 0.75,
    # so the unique median is the atom 0.01; closed intervals must cover it at >= achieved.
    # The atom is compared as paired_effect computes it (ln of exp(0.01) may round by 1 ulp).
    atom = log_ratios([1.0], [np.exp(0.01)])[0]
    values = np.array([-0.02, 0.0, 0.01, 0.02, 0.05])
    probs = np.array([0.15, 0.10, 0.30, 0.25, 0.20])
    rng = np.random.default_rng(7)
    n, reps = 30, 1000
    covered = 0
    for _ in range(reps):
        r = rng.choice(values, size=n, p=probs)
        if np.all(r == r[0]):
            continue
        effect = paired_effect(np.ones(n), np.exp(r))
        covered += effect.low <= atom <= effect.high
    achieved = median_interval_ranks(n, 0.95).achieved_confidence
    assert stats.binomtest(covered, reps, achieved, alternative="less").pvalue > 0.01
    assert covered / reps > achieved  # ties make it conservative, here markedly so


# --- outlier balance ----------------------------------------------------------------


def test_outlier_balance_counts_outliers_by_hand():
    # sorted d: -100 -3 -2 -1 0 0 1 2 3 50 90 -> median 0 (6th of 11); |d - 0| sorted:
    # 0 0 1 1 2 2 3 3 50 90 100 -> raw MAD 2; normal MAD = 2 / qnorm(0.75) = 2 * 1.482602218505602
    d = np.array([0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 50.0, 90.0, -100.0, 0.0])
    result = outlier_balance(d)
    assert isinstance(result, OutlierBalance)
    mad = 2 * 1.482602218505602
    assert result.median == 0.0
    assert result.mad == pytest.approx(mad)
    assert result.upper_fence == pytest.approx(3 * mad)  # 8.90: 50 and 90 above, -100 below
    assert result.lower_fence == pytest.approx(-3 * mad)
    assert (result.n_above, result.n_below) == (2, 1)
    # 2 vs 1 of 3: P(|X - 1.5| >= 0.5) = 1
    assert result.p_value == pytest.approx(_two_sided_sign_p(2, 3)) == pytest.approx(1.0)
    assert result.enabled and result.n == 11


def test_outlier_balance_reports_seven_slow_outliers_against_one_with_exact_p():
    # a core of 41 evenly spaced values in [-1, 1] (MAD ~ 0.75, fences ~ +-2.3) plus
    # 7 slow and 1 fast outlier: the statistics.md section 6 example
    core = np.linspace(-1.0, 1.0, 41)
    d = np.concatenate([core, [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, -47.0]])
    result = outlier_balance(d)
    assert (result.n_above, result.n_below) == (7, 1)
    # 2 * (C(8,7) + C(8,8)) / 2^8 = 18/256 = 0.0703
    assert result.p_value == pytest.approx(_two_sided_sign_p(7, 8)) == pytest.approx(18 / 256)
    assert result.n == 49


def test_outlier_balance_never_removes_data_and_reports_p_one_without_outliers():
    d = np.linspace(-1.0, 1.0, 21)
    result = outlier_balance(d)
    assert (result.n_above, result.n_below, result.p_value) == (0, 0, 1.0)
    assert result.n == 21 and result.warnings == ()


def test_outlier_balance_is_disabled_with_a_warning_when_mad_is_zero():
    result = outlier_balance([0.0] * 6 + [1.0, -5.0, 9.0])
    assert not result.enabled
    assert result.mad == 0.0 and result.p_value == 1.0
    assert "outlier check disabled: the MAD of the differences is 0" in str(result.warnings[0])


def test_outlier_balance_warns_that_few_outliers_cannot_show_imbalance():
    d = np.concatenate([np.linspace(-1, 1, 30), [30.0, 31.0, 32.0]])
    result = outlier_balance(d)
    assert (result.n_above, result.n_below) == (3, 0)
    assert result.p_value == pytest.approx(0.25)  # statistics.md section 6: 3 vs 0 gives p = .25
    assert "cannot reach p < 0.05 with fewer than 6" in str(result.warnings[0])


@pytest.mark.parametrize(
    ("differences", "k", "message"),
    [
        ([], 3.0, "differences must hold at least 1 value for an outlier check, got 0"),
        ([1.0, float("nan")], 3.0, "differences holds 1 NaN or infinite value(s)"),
        ([1.0, 2.0], 0.0, "`k` must be a positive finite number, got 0.0"),
        ([1.0, 2.0], float("inf"), "`k` must be a positive finite number, got inf"),
        ([1.0, 2.0], "three", "`k` must be a positive finite number, got 'three'"),
    ],
)
def test_outlier_balance_rejects_bad_input_naming_it(differences, k, message):
    with pytest.raises(StatisticsError) as info:
        outlier_balance(differences, k=k)
    assert message in str(info.value)


@pytest.mark.parametrize("n", [10, 2000, 100_000])
def test_no_median_interval_claims_full_confidence(n):
    # Even [x_(1), x_(n)] misses the median with probability 2^(1-n) > 0, so no sign-test
    # interval reaches confidence 1; at n = 2000 the binomial CDF underflows to 0 and once
    # gave ranks (198, 1803) "at 100%".
    assert median_interval_ranks(n, 1.0) is None


def test_median_interval_at_a_tiny_alpha_matches_exact_enumeration():
    # k is the largest with P(Binom(n, 1/2) <= k - 1) <= alpha / 2 (Conover 3.2), found here by
    # summing the lower tail exactly in integers, independent of scipy's CDF.
    from fractions import Fraction
    from math import comb

    n, alpha = 2000, 1e-12
    tail, k = Fraction(0), 0
    while tail + Fraction(comb(n, k), 2 ** n) <= Fraction(alpha) / 2:
        tail += Fraction(comb(n, k), 2 ** n)
        k += 1
    ranks = median_interval_ranks(n, 1.0 - alpha)
    assert (ranks.low, ranks.high) == (k, n - k + 1)


def test_the_normal_mad_scale_and_the_mads_are_scipys():
    """The MADs are computed with numpy (the stopping path runs without scipy) as scipy does."""
    from pairbench.stats import describe
    from pairbench.stats.paired import NORMAL_MAD_SCALE

    assert float(stats.norm.ppf(0.75)) == NORMAL_MAD_SCALE
    x = np.random.default_rng(3).lognormal(0.0, 0.5, 101)
    d = describe(x)
    assert d.mad == float(stats.median_abs_deviation(x, scale=1.0))
    assert d.mad_normal == float(stats.median_abs_deviation(x, scale="normal"))
    assert outlier_balance(x).mad == float(stats.median_abs_deviation(x, scale="normal"))


def test_the_median_the_stopping_path_takes_is_numpys():
    """``_order.middle`` (np.partition) is ``np.median`` without its import of numpy.ma."""
    from pairbench.stats._order import middle

    rng = np.random.default_rng(9)
    for n in [*range(1, 40), 100, 1001]:
        x = rng.lognormal(0.0, 1.0, n) * 10.0 ** rng.uniform(-9, 3)
        assert middle(x) == float(np.median(x)), n
