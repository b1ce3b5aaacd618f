"""bootstrap_ci: coverage by simulation, the BCa guard, degenerate data, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pairbench.errors import NotEnoughData, NoVariance, StatisticsError
from pairbench.stats import BootstrapCI, bootstrap_ci, mean_of_means_ci
from pairbench.stats.resample import BCA_MAX_N


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_90_percent_interval_covers_lognormal_median(method):
    # scipy's own coverage test pattern (test_resampling.py): count the intervals that
    # contain the truth and require consistency with the nominal level by a binomial test.
    rng = np.random.default_rng(11)
    reps = 400
    covered = 0
    for i in range(reps):
        x = rng.lognormal(0.0, 1.0, 60)  # true median exp(0) = 1
        ci = bootstrap_ci(x, confidence=0.90, n_resamples=999, method=method, seed=i)
        covered += ci.low <= 1.0 <= ci.high
    assert stats.binomtest(covered, reps, 0.90).pvalue > 0.01
    assert 0.86 <= covered / reps <= 0.94


def test_bootstrap_percentile_interval_of_a_mean_agrees_with_the_normal_interval():
    rng = np.random.default_rng(5)
    x = rng.normal(10.0, 2.0, 4000)
    ci = bootstrap_ci(x, np.mean, method="percentile", n_resamples=4999)
    half = stats.norm.ppf(0.975) * x.std(ddof=1) / np.sqrt(x.size)
    assert ci.low == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert ci.high == pytest.approx(x.mean() + half, abs=0.1 * half)
    assert ci.standard_error == pytest.approx(x.std(ddof=1) / np.sqrt(x.size), rel=0.05)


def test_bootstrap_is_reproducible_for_a_seed_and_records_what_it_did():
    x = np.random.default_rng(0).lognormal(size=80)
    a = bootstrap_ci(x, n_resamples=999, seed=3)
    b = bootstrap_ci(x, n_resamples=999, seed=3)
    assert isinstance(a, BootstrapCI) and a == b
    assert (a.method, a.n_resamples, a.confidence, a.warnings) == ("BCa", 999, 0.95, ())
    assert a.low < np.median(x) < a.high


def test_bootstrap_auto_switches_to_percentile_above_the_bca_limit():
    x = np.random.default_rng(1).lognormal(size=BCA_MAX_N + 1)
    ci = bootstrap_ci(x, n_resamples=99)
    assert ci.method == "percentile"
    assert f"n = {BCA_MAX_N + 1} exceeds {BCA_MAX_N}" in str(ci.warnings[0])
    small = bootstrap_ci(x[:BCA_MAX_N], n_resamples=99)
    assert small.method == "BCa"


def test_bootstrap_refuses_explicit_bca_above_the_limit():
    x = np.ones(BCA_MAX_N + 1)
    x[0] = 2.0
    with pytest.raises(StatisticsError, match=r"method='BCa' with n = 10001 values: .*O\(n\^2\)"):
        bootstrap_ci(x, method="BCa")


def test_bootstrap_counts_all_samples_towards_the_bca_limit():
    rng = np.random.default_rng(2)
    x, y = rng.lognormal(size=BCA_MAX_N // 2 + 1), rng.lognormal(size=BCA_MAX_N // 2 + 1)

    def median_ratio(a, b, axis):
        return np.median(b, axis=axis) / np.median(a, axis=axis)

    ci = bootstrap_ci((x, y), median_ratio, n_resamples=49)
    assert ci.method == "percentile"


def test_bootstrap_reports_no_variance_for_constant_data():
    with pytest.raises(
        NoVariance, match=r"no variance: every value of the data is identical \(3.0\)"
    ):
        bootstrap_ci([3.0] * 20)


def test_bootstrap_falls_back_to_percentile_when_bca_is_undefined():
    # 40 of 45 values tie at the median: every jackknife median is 1, so BCa's acceleration
    # is 0/0 and scipy returns NaN; the percentile interval of the same resamples is given.
    x = np.concatenate([np.ones(40), [0.5, 2.0, 3.0, 4.0, 5.0]])
    ci = bootstrap_ci(x, n_resamples=999)
    assert ci.method == "percentile"
    assert (ci.low, ci.high) == (1.0, 1.0)
    assert "BCa is undefined for these data" in str(ci.warnings[0])
    assert len(ci.warnings) == 1


@pytest.mark.parametrize("extreme", [np.min, np.max, np.amin, np.amax, np.ptp, min, max])
def test_bootstrap_refuses_the_minimum_and_maximum(extreme):
    with pytest.raises(
        StatisticsError, match="naive bootstrap of a minimum or maximum is inconsistent"
    ):
        bootstrap_ci([1.0, 2.0, 3.0, 4.0], extreme)


def test_bootstrap_of_a_low_quantile_is_allowed_instead_of_the_minimum():
    x = np.random.default_rng(4).lognormal(size=200)
    ci = bootstrap_ci(x, lambda s, axis: np.percentile(s, 5, axis=axis), n_resamples=999)
    assert ci.low <= np.percentile(x, 5) <= ci.high


def test_bootstrap_paired_resamples_pairs():
    rng = np.random.default_rng(6)
    a = rng.lognormal(size=50)
    b = a * 1.1  # every pair differs by exactly +10%: the paired median ratio never varies

    def median_log_ratio(x, y, axis):
        return np.median(np.log(y / x), axis=axis)

    ci = bootstrap_ci((a, b), median_log_ratio, paired=True, n_resamples=199, method="percentile")
    assert ci.low == pytest.approx(np.log(1.1)) and ci.high == pytest.approx(np.log(1.1))


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (([],), {}, NotEnoughData, "data must hold at least 2 values to bootstrap, got 0"),
        (([1.0],), {}, NotEnoughData, "data must hold at least 2 values to bootstrap, got 1"),
        (([1.0, float("nan"), 2.0],), {}, StatisticsError, "data holds 1 NaN or infinite"),
        (((),), {}, StatisticsError, "non-empty tuple of samples, got ()"),
        ((([1.0, 2.0], [1.0, np.inf]),), {}, StatisticsError, "data[1] holds 1 NaN"),
        (
            (([1.0, 2.0, 3.0], [1.0, 2.0]),),
            {"paired": True},
            StatisticsError,
            "paired=True needs samples of equal length, got data[0]: 3, data[1]: 2",
        ),
        (
            ([1.0, 2.0],),
            {"confidence": 95},
            StatisticsError,
            "`confidence` must be in (0, 1), got 95",
        ),
        (
            ([1.0, 2.0],),
            {"n_resamples": 0},
            StatisticsError,
            "`n_resamples` must be a positive integer, got 0",
        ),
        (
            ([1.0, 2.0],),
            {"n_resamples": 9.5},
            StatisticsError,
            "`n_resamples` must be a positive integer",
        ),
        (([1.0, 2.0],), {"method": "bootstrap-t"}, StatisticsError, "got 'bootstrap-t'"),
        (([1.0, 2.0], "median"), {}, StatisticsError, "`statistic` must be callable, got 'median'"),
    ],
)
def test_bootstrap_rejects_bad_input_naming_it(args, kwargs, error, message):
    with pytest.raises(error) as info:
        bootstrap_ci(*args, **kwargs)
    assert message in str(info.value)


# --------------------------------------------------------------------------- the studentized mean of means


def test_the_mean_of_means_interval_centres_on_the_mean_of_means_with_its_standard_error():
    """Hand-computed with the statistics module: theta = (mean(a) + mean(b)) / 2,
    se = sqrt(var(a) / 4 + var(b) / 6) / 2."""
    import statistics

    a, b = [1.0, 2.0, 4.0, 7.0], [10.0, 10.5, 9.0, 12.0, 11.0, 8.0]
    ci = mean_of_means_ci((a, b), seed=3)
    theta = (statistics.mean(a) + statistics.mean(b)) / 2
    se = (statistics.variance(a) / 4 + statistics.variance(b) / 6) ** 0.5 / 2
    assert ci.standard_error == pytest.approx(se, rel=1e-12) and ci.method == "studentized"
    assert ci.low < theta < ci.high


def test_the_mean_of_means_interval_is_the_exact_studentized_bootstrap_of_small_samples():
    """Exact enumeration of all 27 x 27 equally likely resamples of two samples of three values:
    the quantiles of (theta* - theta) / se* (resamples of no spread left out) give the interval
    (or Student's t, at an end where it lies further out);
    the Monte-Carlo interval of 200,000 resamples must agree to 2% of its width."""
    import itertools

    a, b = np.array([1.0, 2.0, 6.0]), np.array([0.0, 3.0, 4.0])
    theta = (a.mean() + b.mean()) / 2
    se = np.sqrt(a.var(ddof=1) / 3 + b.var(ddof=1) / 3) / 2
    ts = []
    for ra in itertools.product(a, repeat=3):
        for rb in itertools.product(b, repeat=3):
            spread = np.sqrt(np.var(ra, ddof=1) / 3 + np.var(rb, ddof=1) / 3) / 2
            if spread > 0:
                ts.append(((np.mean(ra) + np.mean(rb)) / 2 - theta) / spread)
    q_low, q_high = np.quantile(ts, [0.05, 0.95])
    q_t = stats.t.ppf(0.95, 4)  # Student's t with the pooled 2 + 2 degrees of freedom, where further out
    exact = (theta - max(q_high, q_t) * se, theta - min(q_low, -q_t) * se)
    ci = mean_of_means_ci((a, b), confidence=0.90, n_resamples=200_000, seed=4)
    width = exact[1] - exact[0]
    assert ci.low == pytest.approx(exact[0], abs=0.02 * width) and ci.high == pytest.approx(exact[1], abs=0.02 * width)


def test_the_mean_of_means_interval_refuses_samples_that_cannot_vary():
    with pytest.raises(NoVariance):
        mean_of_means_ci(([1.0, 1.0], [2.0, 2.0, 2.0]))
    with pytest.raises(StatisticsError, match="at least 2"):
        mean_of_means_ci(([1.0, 2.0], [3.0]))
