"""Behaviour of describe, median_ci, mvalue, grubbs_critical and fence_excess_pvalue.

Expected values come from outside pairbench:

* R 4.2.2: ``tests/reference/describe.R`` wrote ``describe_reference.json``
  (quantile type 7, sd, mad, skewness by formula, Tukey fences, Grubbs by the
  t formula, the sign-test median interval from pbinom);
* perfolizer's ``MultimodalTests.cs`` (mvalue) and statistics.md section 7
  (the Grubbs table at alpha = 0.05); the lowland detector behind
  ``modality`` is checked against perfolizer in ``test_modality.py``;
* scipy's ``quantile_test(...).confidence_interval()`` for the median interval
  at n = 1e6;
* exact enumeration of the binomial tail in rationals (``fence_excess_pvalue``).
"""

from __future__ import annotations

import importlib
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, signal
from scipy import stats as sps

from pairbench import stats
from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.stats import descriptive

REF = json.loads((Path(__file__).parents[1] / "reference" / "describe_reference.json").read_text())
CASES = {case["name"]: case for case in REF["cases"]}
RTOL = 1e-12

SCALAR_FIELDS = (
    "min", "q1", "median", "q3", "max", "mean", "sd", "cv", "iqr", "mad", "mad_normal",
    "mean_min_gap", "max_sigma", "min_sigma", "grubbs_critical", "lower_fence", "upper_fence",
)  # fmt: skip


def close(actual, expected, rtol=RTOL, atol=0.0) -> bool:
    if expected is None:
        return actual is None
    return math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_describe_matches_r_on_reference_samples(name):
    case = CASES[name]
    d = stats.describe(case["x"])
    assert d.n == case["n"]
    for field in SCALAR_FIELDS:
        assert close(getattr(d, field), case[field]), field
    # skewness near 0 is compared absolutely: it is a ratio of small moments
    assert close(d.skewness, case["skewness"], atol=1e-13)
    assert list(d.below_fence) == case["below_fence"]
    assert list(d.above_fence) == case["above_fence"]
    assert d.quantile_method == "linear (R type 7)"


def test_stats_describe_stays_a_function_whatever_was_imported_first():
    importlib.import_module("pairbench.stats.descriptive")  # binds the submodule on the package
    assert isinstance(stats.describe([1.0, 2.0, 4.0]), stats.Description)


def test_tukey_fences_report_outliers_without_removing_them():
    case = CASES["spikes_200"]
    d = stats.describe(case["x"])
    assert d.above_fence == (16, 87) and d.below_fence == (149,)
    assert d.n == 200 and d.mean == pytest.approx(np.mean(case["x"]), rel=1e-15)
    assert any("reported, not removed" in str(w) for w in d.warnings)
    assert d.max_beyond_grubbs and d.min_beyond_grubbs
    assert d.max_sigma > 11


@pytest.mark.parametrize(
    ("name", "ci"),
    [(name, ci) for name in sorted(CASES) for ci in CASES[name]["median_ci"]],
    ids=lambda v: v if isinstance(v, str) else str(v["conf"]),
)
def test_median_ci_matches_r_sign_test_interval(name, ci):
    x = CASES[name]["x"]
    if not ci["ok"]:
        with pytest.raises(NotEnoughData, match="need at least"):
            stats.median_ci(x, ci["conf"])
        return
    m = stats.median_ci(x, ci["conf"])
    assert (m.low, m.high) == (ci["low"], ci["high"])
    assert (m.low_rank, m.high_rank) == (ci["low_rank"], ci["high_rank"])
    assert m.estimate == ci["estimate"]
    assert m.achieved_confidence == pytest.approx(ci["achieved"], rel=1e-14)
    assert m.achieved_confidence >= ci["conf"] and m.confidence == ci["conf"]


def test_median_ci_names_the_sample_size_it_needs():
    with pytest.raises(NotEnoughData) as info:
        stats.median_ci([3.0, 1.0, 4.0, 1.5], confidence=0.95)
    assert "need at least 6 values for a 95% interval of the median, got 4" in str(info.value)


@pytest.mark.parametrize("row", REF["median_ci_min_n"], ids=lambda r: str(r["confidence"]))
def test_median_ci_smallest_sample_matches_r(row):
    n, conf = row["n"], row["confidence"]
    assert stats.median_ci(np.arange(float(n)), conf).n == n
    with pytest.raises(NotEnoughData, match=f"need at least {n} values"):
        stats.median_ci(np.arange(float(n - 1)), conf)


def test_median_ci_agrees_with_scipy_quantile_test_on_a_million_values():
    x = np.random.default_rng(3).lognormal(13.0, 0.4, 1_000_000)
    m = stats.median_ci(x)
    ref = sps.quantile_test(x, q=1.0, p=0.5).confidence_interval(0.95)
    assert (m.low, m.high) == (ref.low, ref.high)
    assert m.estimate == np.median(x)


def test_median_ci_rejects_confidence_outside_0_1():
    with pytest.raises(StatisticsError, match="`confidence` must be in"):
        stats.median_ci(np.arange(10.0), confidence=95)


def test_median_ci_of_identical_values_is_a_point_with_a_warning():
    m = stats.median_ci([7.0] * 12)
    assert (m.low, m.estimate, m.high) == (7.0, 7.0, 7.0)
    assert any("no variance" in str(w) for w in m.warnings)


@pytest.mark.parametrize("row", REF["grubbs"], ids=lambda r: f"n{r['n']}-a{r['alpha']}")
def test_grubbs_critical_matches_r(row):
    assert descriptive.grubbs_critical(row["n"], row["alpha"]) == pytest.approx(row["value"], rel=1e-12)


@pytest.mark.parametrize(
    ("n", "published"), [(10, 2.18), (30, 2.75), (100, 3.21), (1000, 3.88), (10000, 4.42)]
)
def test_grubbs_critical_matches_the_statistics_brief_table(n, published):
    assert round(descriptive.grubbs_critical(n), 2) == published


@pytest.mark.parametrize(("n", "alpha"), [(2, 0.05), (10, 0.0), (10, 1.0), (2.5, 0.05)])
def test_grubbs_critical_rejects_unusable_arguments(n, alpha):
    with pytest.raises(StatisticsError):
        descriptive.grubbs_critical(n, alpha)


def _binomial_tail_exactly(above: int, n: int, rate: Fraction) -> float:
    """P(Binomial(n, rate) >= above) by exact enumeration in rationals (independent of scipy)."""
    return float(sum(math.comb(n, k) * rate**k * (1 - rate) ** (n - k) for k in range(above, n + 1)))


@pytest.mark.parametrize(("above", "n"), [(0, 10), (1, 10), (3, 10), (3, 20), (4, 30), (2, 50), (7, 200)])
def test_fence_excess_pvalue_matches_exact_enumeration(above, n):
    expected = _binomial_tail_exactly(above, n, Fraction(1, 50))
    assert stats.fence_excess_pvalue(above, n, 0.02) == pytest.approx(expected, rel=1e-12)


def test_fence_excess_flags_three_of_twenty_but_not_two_at_one_percent():
    assert stats.fence_excess_pvalue(3, 20, 0.02) < 0.01 < stats.fence_excess_pvalue(2, 20, 0.02)


@pytest.mark.parametrize(("above", "n", "rate"), [(-1, 10, 0.02), (11, 10, 0.02), (1, 0, 0.02), (1, 10, 0.0),
                                                  (1, 10, 1.0), (1, 2.5, 0.02)])
def test_fence_excess_pvalue_rejects_unusable_arguments(above, n, rate):
    with pytest.raises(StatisticsError):
        stats.fence_excess_pvalue(above, n, rate)


# perfolizer src/Perfolizer/Perfolizer.Tests/Mathematics/Histograms/MultimodalTests.cs
PERFOLIZER_CASE5 = [
    173, 147, 153, 141, 139, 117, 126, 145, 133, 181, 166, 139, 138, 146, 145, 142, 121, 108,
    128, 122, 149, 118, 113, 117, 129, 148, 124, 141, 143, 109, 144, 106, 98, 116, 129, 136,
    131, 179, 115, 142, 152, 148, 133, 138, 114, 142, 151, 151, 144, 160, 151, 134, 133, 135,
    109, 126, 123, 140, 141, 136, 122, 134, 148, 141, 133, 132, 166, 134, 112, 158, 135, 95,
    141, 113, 105, 137, 150, 152, 151, 114, 142, 132, 112, 159, 119, 141, 129, 122, 102, 135,
    137, 147, 131, 107, 135, 133, 120, 166, 132, 122, 144, 127,
]  # fmt: skip
PERFOLIZER_CASE6 = [
    1173, 147, 153, 141, 139, 117, 126, 145, 133, 181, 166, 139, 138, 148, 124, 141, 143, 109,
    144, 106, 98, 116, 129, 136, 131, 179, 115, 142, 152, 197, 148, 133, 138, 114, 196, 142,
    151, 151, 144, 160, 151, 134, 133, 135, 109, 126, 123, 140, 141, 136, 219, 122, 134, 148,
    226, 199, 221, 141, 132, 133, 166, 134, 112, 158, 135, 95, 141, 113, 105, 189, 150, 137,
    152, 151, 114, 142, 132, 112, 132, 122, 144, 127,
]  # fmt: skip


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1] * 6, 2.0),
        ([1] * 5 + [2] * 5, 4.0),
        ([1] * 9 + [2] * 9 + [3] * 9, 6.0),
        ([1, 2, 3, 3, 3, 4, 5, 10, 11, 11, 11, 12, 40, 41, 41, 41, 42], 2.8333),
        (PERFOLIZER_CASE5, 2.4516),
        (PERFOLIZER_CASE6, 2.2143),
    ],
    ids=["case1", "case2", "case3", "case4", "case5", "case6"],
)
def test_mvalue_matches_perfolizer_multimodal_tests(values, expected):
    assert round(stats.mvalue(values), 4) == expected


def test_mvalue_tells_one_two_and_three_modes_apart():
    rng = np.random.default_rng(8)
    one = rng.normal(1e6, 2e4, 600)
    two = np.concatenate([rng.normal(1e6, 1e4, 300), rng.normal(1.3e6, 1e4, 300)])
    three = np.concatenate([two, rng.normal(1.6e6, 1e4, 300)])
    assert stats.mvalue(one) == pytest.approx(2.0, abs=0.3)
    assert stats.mvalue(two) == pytest.approx(4.0, abs=0.3)
    assert stats.mvalue(three) == pytest.approx(6.0, abs=0.3)


def test_modality_comes_from_the_lowland_detector():
    d = stats.describe(CASES["bimodal_80"]["x"])  # R: N(1e6, 1e4) and N(1.3e6, 1e4), 40 each
    assert (d.modality, d.modes) == ("bimodal", 2)
    assert d.mode_locations == pytest.approx((1e6, 1.3e6), abs=2e4)
    assert any(str(w).startswith("the distribution looks bimodal: the lowland detector finds 2 modes")
               for w in d.warnings)  # fmt: skip
    spikes = stats.describe(CASES["spikes_200"]["x"])  # one mode and three far outliers
    assert (spikes.modality, spikes.modes) == ("unimodal", 1)


def test_a_skewed_unimodal_sample_is_not_called_bimodal_whatever_its_mvalue():
    # R: rlnorm(30, log(2e6), 0.25). The old mvalue label called it "bimodal".
    d = stats.describe(CASES["lognormal_30"]["x"])
    assert d.mvalue > 3.2
    assert (d.modality, d.modes) == ("unimodal", 1)
    assert not any("modes" in str(w) for w in d.warnings)
    poisson = stats.describe(np.random.default_rng(9).poisson(20, 1000).astype(float))
    assert poisson.mvalue > 8 and poisson.modality == "unimodal"


def test_modality_needs_twelve_values_and_thirty_to_say_unimodal():
    rng = np.random.default_rng(12)
    eleven = stats.describe(np.concatenate([rng.normal(0, 1, 6), rng.normal(100, 1, 5)]))
    assert (eleven.modality, eleven.modes, eleven.mode_locations) == (None, None, ())
    few = stats.describe(rng.normal(0, 1, 29))  # one mode found, too few values to say so
    assert (few.modality, few.modes) == (None, 1)
    assert stats.describe(rng.normal(0, 1, 30)).modality == "unimodal"
    split = np.concatenate([rng.normal(0, 1, 14), rng.normal(100, 1, 14)])
    assert stats.describe(split).modality == "bimodal"  # a found split is reported below 30


def test_describe_of_one_value_has_no_spread_and_says_so():
    d = stats.describe([42.0])
    assert (d.n, d.min, d.median, d.max, d.mean) == (1, 42.0, 42.0, 42.0, 42.0)
    assert d.sd is None and d.cv is None and d.skewness is None and d.max_sigma is None
    assert d.grubbs_critical is None and d.mean_min_gap == 0.0
    assert any("only 1 value" in str(w) for w in d.warnings)


def test_describe_of_identical_values_warns_no_variance():
    d = stats.describe([1000.0] * 20)
    assert d.sd == 0.0 and d.iqr == 0.0 and d.mad == 0.0
    assert d.max_sigma is None and d.skewness is None and not d.max_beyond_grubbs
    assert d.above_fence == () and d.mvalue == 2.0
    assert any(str(w).startswith("no variance") for w in d.warnings)


@pytest.mark.parametrize(
    ("x", "message"),
    [
        ([], "at least 1"),
        ([1.0, float("nan")], "NaN"),
        ([1.0, float("inf")], "NaN or infinite"),
        ([[1.0, 2.0], [3.0, 4.0]], "one-dimensional"),
    ],
    ids=["empty", "nan", "inf", "2d"],
)
def test_describe_rejects_unusable_input(x, message):
    with pytest.raises(StatisticsError, match=message):
        stats.describe(x)


def test_mean_min_gap_is_undefined_when_min_is_not_positive():
    d = stats.describe(CASES["signed_8"]["x"])
    assert d.mean_min_gap is None
    assert any("mean-min gap is undefined" in str(w) for w in d.warnings)


def test_describe_is_exact_on_large_offsets_with_tiny_jitter():
    """Wilkinson-style: 1e9 ns + a few ns of jitter describes like the jitter itself."""
    jitter = np.random.default_rng(5).poisson(20, 500).astype(float)
    big, small = stats.describe(1e9 + jitter), stats.describe(jitter)
    for field in ("sd", "iqr", "mad", "max_sigma", "min_sigma", "skewness", "q1", "q3"):
        if field in ("q1", "q3"):
            assert getattr(big, field) - 1e9 == getattr(small, field)
        else:
            assert getattr(big, field) == pytest.approx(getattr(small, field), rel=1e-12)
    assert big.mean - 1e9 == pytest.approx(small.mean, abs=1e-6)  # ulp(1e9) = 1.2e-7
    assert big.above_fence == small.above_fence
    assert (big.modality, big.modes) == (small.modality, small.modes) == ("unimodal", 1)
    assert big.mode_locations[0] - 1e9 == pytest.approx(small.mode_locations[0], abs=1e-6)
    # mvalue is not shift invariant by design: perfolizer's bins are never narrower
    # than 2% of the values, so 1e9 + a few ns is one mode however the ns scatter.


def test_describe_matches_wilkinson_big_exactly():
    d = stats.describe(np.arange(99999991.0, 100000000.0))  # Wilkinson's BIG
    assert d.mean == 99999995.0
    assert d.sd == math.sqrt(7.5)


# ------------------------------------------------ coverage of the median interval
# median_ci claims >= 95% coverage for independent samples from any continuous
# distribution (at n = 67 the sign-test ranks give exactly 95.02%); it makes no
# claim for serially dependent samples, where it undercovers.

REPS, N_MEDIAN = 400, 67


def _mixture_median() -> float:
    def cdf(v):
        return 0.8 * sps.norm.cdf(v, 10.0, 1.0) + 0.2 * sps.norm.cdf(v, 14.0, 1.5)

    return optimize.brentq(lambda v: cdf(v) - 0.5, 5.0, 20.0, xtol=1e-14)


def _coverage(data, truth, confidence=0.95) -> int:
    hits = 0
    for row in data:
        m = stats.median_ci(row, confidence)
        hits += m.low <= truth <= m.high
    return hits


def _consistent_with(hits, reps, low, high) -> bool:
    """Not significantly (binomial, 0.1% level) outside the band [low, high]."""
    return (
        sps.binomtest(hits, reps, low, alternative="less").pvalue >= 1e-3
        and sps.binomtest(hits, reps, high, alternative="greater").pvalue >= 1e-3
    )


def test_median_ci_covers_95_percent_on_skewed_and_bimodal_independent_data():
    rng = np.random.default_rng(20261122)
    lognormal = rng.lognormal(0.0, 0.5, (REPS, N_MEDIAN))
    pick = rng.random((REPS, N_MEDIAN)) < 0.8
    mixture = np.where(
        pick, rng.normal(10.0, 1.0, (REPS, N_MEDIAN)), rng.normal(14.0, 1.5, (REPS, N_MEDIAN))
    )
    assert stats.median_ci(lognormal[0]).achieved_confidence == pytest.approx(0.9502, abs=1e-4)
    for data, truth in ((lognormal, 1.0), (mixture, _mixture_median())):
        hits = _coverage(data, truth)
        assert _consistent_with(hits, REPS, 0.93, 0.97), hits / REPS


def test_median_ci_undercovers_autocorrelated_data():
    rng = np.random.default_rng(20261123)
    e = rng.normal(size=(REPS, N_MEDIAN + 200))
    ar1 = signal.lfilter([1.0], [1.0, -0.5], e, axis=1)[:, 200:]  # burn-in: stationary
    hits = _coverage(ar1, 0.0)  # about 0.85 at phi = 0.5, n = 67; lower for larger n
    assert sps.binomtest(hits, REPS, 0.93, alternative="less").pvalue < 1e-6, hits / REPS
