"""Rank tests and Hodges-Lehmann intervals against R 4.2.2, exact enumeration and simulation.

All magic numbers are from R ``wilcox.test`` unless said otherwise:
``tests/reference/ranks_reference.json`` is written by ``tests/reference/ranks.R``
(R 4.2.2) and holds each case's input data, so these tests never run R.
"""

from __future__ import annotations

import itertools
import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.stats import hodges_lehmann, mann_whitney, signed_rank
from pairbench.stats._rmath import qnorm
from pairbench.stats._select import kth_pairwise_difference, kth_walsh_average

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "ranks_reference.json"
TOL_ROOT = 1e-4  # R's wilcox.test(tol.root = 1e-4): R's normal-route limits are uniroot roots
P_RTOL = 1e-12  # R's p-values: computed as R does (1.5e-14 apart at most), not bit for bit (erfc vs pnorm)


def _number(v):
    return float(v.replace("Inf", "inf").replace("NaN", "nan")) if isinstance(v, str) else v


@lru_cache(maxsize=1)
def _reference() -> dict:
    doc = json.loads(REFERENCE.read_text())
    for case in doc["two_sample"] + doc["one_sample"]:
        for key, value in case.items():
            if key not in ("name", "method", "warnings", "x", "y"):
                case[key] = _number(value)
    return doc


def _cases(kind: str, keep=lambda case: True):
    cases = [c for c in _reference()[kind] if keep(c)]
    return pytest.mark.parametrize("case", cases, ids=[c["name"] for c in cases])


def _r_exact(case) -> bool:
    return "exact" in case["method"]


def _has_ties(values) -> bool:
    return len(set(values)) < len(values)


def _two_tied(case) -> bool:
    return not _r_exact(case) and (_has_ties(case["x"]) or _has_ties(case["y"]))


def _one_tied(case) -> bool:
    d = np.array(case["x"]) - (0 if case["y"] is None else np.array(case["y"]))
    return not _r_exact(case) and _has_ties(d[d != 0].tolist())


def _assert_limit(got: float, r_value: float, tol: float):
    if math.isnan(r_value):
        assert math.isnan(got)
    else:
        assert abs(got - r_value) <= tol + 4 * np.finfo(float).eps * abs(r_value), (got, r_value)


def _assert_p(got: float, r_value: float):
    assert got == pytest.approx(r_value, rel=P_RTOL, abs=1e-300)


# ---------------------------------------------------------------------------------------
# Against R 4.2.2: Mann-Whitney and Hodges-Lehmann
# ---------------------------------------------------------------------------------------
@_cases("two_sample")
def test_mann_whitney_matches_r(case):
    res = mann_whitney(case["x"], case["y"])
    assert case["W"] == res.W
    _assert_p(res.pvalue, case["p"])
    assert res.method == ("exact" if _r_exact(case) else "normal")


@_cases("two_sample", _r_exact)
def test_hodges_lehmann_matches_r_exactly_on_the_exact_route(case):
    res = hodges_lehmann(case["x"], case["y"], case["conf"])
    assert (res.estimate, res.low, res.high) == (case["hl_median"], case["low"], case["high"])
    assert case["r_estimate"] == case["hl_median"]  # R's exact-route estimate is the HL median


@_cases("two_sample", lambda c: not _r_exact(c) and not _two_tied(c))
def test_hodges_lehmann_matches_r_on_the_normal_route_without_ties(case):
    res = hodges_lehmann(case["x"], case["y"], case["conf"])
    assert res.estimate == case["hl_median"]
    _assert_limit(res.low, case["low"], TOL_ROOT)
    _assert_limit(res.high, case["high"], TOL_ROOT)


@_cases("two_sample", _two_tied)
def test_hodges_lehmann_matches_r_on_tied_data(case):
    # R's interval here is uniroot on the tie-corrected statistic: tolerance tol.root
    res = hodges_lehmann(case["x"], case["y"], case["conf"])
    assert res.estimate == case["hl_median"]
    _assert_limit(res.low, case["low"], TOL_ROOT)
    _assert_limit(res.high, case["high"], TOL_ROOT)


def test_tied_interval_ends_are_the_differences_r_converges_to_in_order():
    # R's two roots of one step can come out reversed; we report the step itself
    case = next(c for c in _reference()["two_sample"] if "roots reversed" in c["name"])
    assert case["low"] > case["high"]
    res = hodges_lehmann(case["x"], case["y"], case["conf"])
    assert (res.low, res.high) == (0.0, 0.0)
    _assert_limit(res.low, case["low"], TOL_ROOT)
    _assert_limit(res.high, case["high"], TOL_ROOT)
    for case in filter(_two_tied, _reference()["two_sample"]):
        res = hodges_lehmann(case["x"], case["y"], case["conf"])
        diffs = set(np.subtract.outer(case["x"], case["y"]).ravel().tolist())
        assert res.low in diffs and res.high in diffs and res.low <= res.high


def test_tied_reference_cases_include_ones_where_the_closed_form_is_a_step_away_from_r():
    """The tied cases prove more than the closed form k = ceil(N/2 - 1/2 - z sigma) can."""
    off = []
    for case in filter(_two_tied, _reference()["two_sample"]):
        n, m = len(case["x"]), len(case["y"])
        z = qnorm((1 - case["conf"]) / 2, lower_tail=False)
        k = max(1, math.ceil(n * m / 2 - 0.5 - z * math.sqrt(n * m * (n + m + 1) / 12)))
        closed_form = kth_pairwise_difference(case["x"], case["y"], k)
        if abs(closed_form - case["low"]) > TOL_ROOT:
            off.append(case["name"])
            assert (
                abs(hodges_lehmann(case["x"], case["y"], case["conf"]).low - case["low"])
                <= TOL_ROOT
            )
    assert len(off) >= 10, off


def test_hodges_lehmann_estimate_differs_from_r_only_on_the_normal_route():
    normal = [c for c in _reference()["two_sample"] if not _r_exact(c)]
    assert sum(c["r_estimate"] != c["hl_median"] for c in normal) > len(normal) / 2
    # R's normal-route estimate is uniroot(W(d) = 0), W without continuity correction: W is
    # zero on the whole gap between the two middle differences, so R's value is some point
    # of [D_(N/2), D_(N/2+1)] (to tol.root), while the HL median is that gap's midpoint
    for c in normal:
        total = int(c["n"] * c["m"])
        lo = kth_pairwise_difference(c["x"], c["y"], (total + 1) // 2)
        hi = kth_pairwise_difference(c["x"], c["y"], total // 2 + 1)
        assert lo - TOL_ROOT <= c["r_estimate"] <= hi + TOL_ROOT, c["name"]


@_cases("two_sample", lambda c: any("not achievable" in str(w) for w in c["warnings"]))
def test_hodges_lehmann_warns_with_the_achieved_level_when_r_does(case):
    res = hodges_lehmann(case["x"], case["y"], case["conf"])
    assert any("not achievable" in str(w) for w in res.warnings)
    assert res.achieved_confidence == pytest.approx(case["conf_level"], abs=1e-12)


def test_hodges_lehmann_returns_the_bracket_ends_when_the_root_lies_outside():
    # wilcox.test(1, 2:60, conf.int=TRUE)$conf.int == c(-59, -1)
    res = hodges_lehmann([1.0], np.arange(2.0, 61.0))
    assert (res.low, res.high) == (-59.0, -1.0)
    assert any("reaches the smallest difference" in str(w) for w in res.warnings)


# ---------------------------------------------------------------------------------------
# Against R 4.2.2: signed rank (one sample and paired)
# ---------------------------------------------------------------------------------------
def _signed(case):
    return signed_rank(case["x"], case["y"], case["conf"])


@_cases("one_sample")
def test_signed_rank_statistic_and_p_value_match_r(case):
    res = _signed(case)
    assert case["V"] == res.V
    if math.isnan(case["p"]):  # R: every difference zero -> NaN; we say p = 1, no variance
        assert res.pvalue == 1.0 and "no variance" in str(res.warnings[0])
    else:
        _assert_p(res.pvalue, case["p"])
    assert res.method == ("exact" if _r_exact(case) else "normal")


@_cases("one_sample", _r_exact)
def test_signed_rank_interval_matches_r_exactly_on_the_exact_route(case):
    res = _signed(case)
    assert (res.estimate, res.low, res.high) == (case["pseudomedian"], case["low"], case["high"])


@_cases("one_sample", lambda c: not _r_exact(c) and not _one_tied(c))
def test_signed_rank_interval_matches_r_on_the_normal_route_without_ties(case):
    res = _signed(case)
    assert res.estimate == case["pseudomedian"]
    _assert_limit(res.low, case["low"], TOL_ROOT)
    _assert_limit(res.high, case["high"], TOL_ROOT)


@_cases("one_sample", _one_tied)
def test_signed_rank_interval_matches_r_on_tied_data(case):
    res = _signed(case)
    if not math.isnan(case["pseudomedian"]):
        assert res.estimate == case["pseudomedian"]
    _assert_limit(res.low, case["low"], TOL_ROOT)
    _assert_limit(res.high, case["high"], TOL_ROOT)


@_cases("one_sample", lambda c: any("not achievable" in str(w) for w in c["warnings"]))
def test_signed_rank_warns_with_the_achieved_level_when_r_does(case):
    res = _signed(case)
    assert any("not achievable" in str(w) for w in res.warnings)
    # R reports 1 - signif(achieved alpha, 2) on the exact route; we keep every digit
    assert res.achieved_confidence == pytest.approx(case["conf_level"], abs=0.005)


def test_tied_signed_rank_cases_include_ones_where_the_closed_form_is_a_step_away_from_r():
    off = 0
    for case in filter(_one_tied, _reference()["one_sample"]):
        if math.isnan(case["low"]) or case["conf_level"] != case["conf"]:
            continue
        d = np.array(case["x"]) - (0 if case["y"] is None else np.array(case["y"]))
        d = d[d != 0]
        n, total = d.size, d.size * (d.size + 1) // 2
        z = qnorm((1 - case["conf"]) / 2, lower_tail=False)
        half = z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        k_low = max(1, math.ceil(total / 2 - 0.5 - half))
        k_high = min(total, math.ceil(total / 2 + 0.5 + half))
        low, high = kth_walsh_average(d, k_low), kth_walsh_average(d, k_high)
        if max(abs(low - case["low"]), abs(high - case["high"])) > TOL_ROOT:
            off += 1
            res = _signed(case)
            assert max(abs(res.low - case["low"]), abs(res.high - case["high"])) <= TOL_ROOT
    assert off >= 3


# ---------------------------------------------------------------------------------------
# Pinned values (statistics.md, "Reference values to pin in tests")
# ---------------------------------------------------------------------------------------
def test_mann_whitney_matches_scipy_test_suite_values_from_r():
    # scipy tests/test_hypotests.py::TestMannWhitneyU; wilcox.test(x, y) (exact: n, m < 50)
    x = [210.052110, 110.190630, 307.918612]
    y = [436.08811482466416, 416.37397329768191, 179.96975939463582, 197.8118754228619,
         34.038757281225756, 138.54220550921517, 128.7769351470246, 265.92721427951852,
         275.6617533155341, 592.34083395416258, 448.73177590617018, 300.61495185038905,
         187.97508449019588]  # fmt: skip
    res = mann_whitney(x, y)
    assert (res.W, res.method) == (16.0, "exact")
    assert res.pvalue == pytest.approx(0.7035714285714, abs=1e-13)
    tied = mann_whitney([1, 2, 3, 4], [1, 2, 3, 4, 5])  # R: W = 8, p = 0.7086240584439
    assert (tied.W, tied.method) == (8.0, "normal")
    assert tied.pvalue == pytest.approx(0.7086240584439, abs=1e-13)


def test_r_help_page_examples():
    # ?wilcox.test: x, y below; wilcox.test(x, y, conf.int=TRUE): W = 35, p = 0.2544,
    # difference in location 0.305, 95% CI [-0.15, 0.76]
    x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
    y = [1.15, 0.88, 0.90, 0.74, 1.21]
    assert mann_whitney(x, y).W == 35.0
    assert mann_whitney(x, y).pvalue == pytest.approx(0.2544122544122544, rel=1e-12)
    hl = hodges_lehmann(x, y)
    assert (hl.estimate, hl.low, hl.high) == pytest.approx((0.305, -0.15, 0.76), abs=1e-12)
    # depression data, paired: V = 40, two-sided p = 2 * 0.01953125, pseudomedian 0.46,
    # 95% CI [0.01, 0.786]
    pre = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    post = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    sr = signed_rank(pre, post)
    assert (sr.V, sr.pvalue) == (40.0, 0.0390625)
    assert (sr.estimate, sr.low, sr.high) == pytest.approx((0.46, 0.01, 0.786), abs=1e-12)


def test_estimates_quoted_in_hypothesistests_jl_issue_363():
    # wilcox.test(c(1:8, 20, 30), conf.int=TRUE)$estimate == 6
    assert signed_rank(list(range(1, 9)) + [20, 30]).estimate == 6.0
    # wilcox.test(1:5, c(10, 11, 12, 40, 50), conf.int=TRUE)$estimate == -10
    assert hodges_lehmann([1, 2, 3, 4, 5], [10, 11, 12, 40, 50]).estimate == -10.0


def test_pseudomedian_is_reported_where_r_reports_its_uniroot_estimate():
    # DescTools #97: wilcox.test(c(0.7, 0.5, 0.5), exact=F, conf.int=T)$estimate = 0.5828427,
    # a root of a flat region; the pseudomedian (median of Walsh averages) is 0.55
    r_case = next(c for c in _reference()["one_sample"] if "DescTools" in c["name"])
    assert r_case["r_estimate"] == pytest.approx(0.5828427, abs=1e-7)
    assert signed_rank([0.7, 0.5, 0.5]).estimate == 0.55


# ---------------------------------------------------------------------------------------
# Exact enumeration (independent of R and scipy)
# ---------------------------------------------------------------------------------------
def _u_distribution(n: int, m: int) -> np.ndarray:
    """P(U = u), u = 0..nm, by enumerating every choice of the x ranks among n + m."""
    counts = np.zeros(n * m + 1)
    for xs in itertools.combinations(range(n + m), n):
        counts[sum(xs) - n * (n - 1) // 2] += 1  # U = rank sum - n(n+1)/2, ranks from 1
    return counts / counts.sum()


def _v_distribution(n: int) -> np.ndarray:
    """P(V = v), v = 0..n(n+1)/2, by enumerating all 2^n sign vectors."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[sum(r for r, s in zip(range(1, n + 1), signs, strict=True) if s)] += 1
    return counts / counts.sum()


def _two_sided(dist: np.ndarray, stat: float) -> float:
    u = int(stat)
    return min(1.0, 2 * min(dist[: u + 1].sum(), dist[u:].sum()))


SIZES = [(1, 1), (1, 4), (2, 3), (3, 3), (4, 5), (5, 7), (6, 6), (3, 9)]


@pytest.mark.parametrize("n, m", SIZES)
def test_mann_whitney_exact_p_values_equal_enumeration_of_all_splits(n, m):
    dist = _u_distribution(n, m)
    rng = np.random.default_rng(n * 100 + m)
    for shift in (0.0, 0.5, 2.0):
        x, y = rng.normal(shift, 1, n), rng.normal(0, 1, m)
        res = mann_whitney(x, y)
        assert res.method == "exact"
        assert res.pvalue == pytest.approx(_two_sided(dist, res.W), rel=1e-12)


@pytest.mark.parametrize("n, m", SIZES)
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_exact_hodges_lehmann_interval_uses_the_enumerated_quantile(n, m, confidence):
    cdf = np.cumsum(_u_distribution(n, m))
    alpha = 1 - confidence
    qu = max(int(np.argmax(cdf >= alpha / 2 - 1e-12)), 1)  # smallest u with P(U <= u) >= alpha/2
    rng = np.random.default_rng(7)
    x, y = rng.lognormal(0, 1, n), rng.lognormal(0, 1, m)
    diffs = np.sort(np.subtract.outer(x, y), axis=None)
    res = hodges_lehmann(x, y, confidence)
    assert (res.low, res.high) == (diffs[qu - 1], diffs[n * m - qu])
    assert res.achieved_confidence == pytest.approx(1 - 2 * cdf[qu - 1], abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 10, 12])
def test_signed_rank_exact_p_values_equal_enumeration_of_all_sign_vectors(n):
    dist = _v_distribution(n)
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.4, 1.5):
        res = signed_rank(rng.normal(shift, 1, n))
        assert res.method == "exact"
        assert res.pvalue == pytest.approx(_two_sided(dist, res.V), rel=1e-12)


@pytest.mark.parametrize("n", [3, 6, 9, 12])
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95])
def test_exact_signed_rank_interval_uses_the_enumerated_quantile(n, confidence):
    cdf = np.cumsum(_v_distribution(n))
    qu = max(int(np.argmax(cdf >= (1 - confidence) / 2 - 1e-12)), 1)
    d = np.random.default_rng(n).normal(0.3, 1, n)
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2)
    res = signed_rank(d, confidence=confidence)
    assert (res.low, res.high) == (walsh[qu - 1], walsh[walsh.size - qu])
    assert res.achieved_confidence == pytest.approx(1 - 2 * cdf[qu - 1], abs=1e-12)


# ---------------------------------------------------------------------------------------
# Closed-form interval at large offsets (timings in ns), against brute force
# ---------------------------------------------------------------------------------------
def test_normal_route_interval_is_the_order_statistic_on_large_offset_data():
    rng = np.random.default_rng(9)
    x = 1e9 + rng.random(120) * 1e3  # 1 s in ns, jitter of a microsecond
    y = 1e9 + 200 + rng.random(90) * 1e3
    diffs = np.sort(np.subtract.outer(x, y), axis=None)
    n, m, z = 120, 90, 1.959963984540054  # qnorm(0.975), R
    k = math.ceil(n * m / 2 - 0.5 - z * math.sqrt(n * m * (n + m + 1) / 12))
    res = hodges_lehmann(x, y)
    assert (res.low, res.high) == (diffs[k - 1], diffs[n * m - k])
    assert res.estimate == np.median(diffs)


# ---------------------------------------------------------------------------------------
# Coverage by simulation
# ---------------------------------------------------------------------------------------
def _lognormal(rng, n):
    return rng.lognormal(5, 0.2, n)


def _mixture(rng, n):
    """Seed 000's 70/20/10 lognormal mixture at 0, 1, 3 (x 2000), plus 1000, drawn iid.

    Seed 000's ``rmixed`` fixes each component's count (0.7 n, 0.2 n, 0.1 n); such
    stratified samples are not iid and make every interval over-cover (100% here), so
    the component of each value is drawn at random instead.
    """
    loc = rng.choice([0.0, 1.0, 3.0], size=n, p=[0.7, 0.2, 0.1])
    return 1000 + 2000 * (loc + rng.lognormal(0, 0.2, n))


@pytest.mark.parametrize("draw", [_lognormal, _mixture])
@pytest.mark.parametrize("n", [20, 60])  # exact route and normal route
def test_hodges_lehmann_95_percent_interval_covers_a_pure_shift_93_to_97_percent(draw, n):
    # Hodges-Lehmann's coverage claim holds under a location-shift model, y = x + delta in
    # distribution; here the two samples differ by exactly such a shift.
    rng = np.random.default_rng(2026)
    shift, reps, hits = 3.0, 1000, 0
    for _ in range(reps):
        res = hodges_lehmann(draw(rng, n) + shift, draw(rng, n))
        hits += res.low <= shift <= res.high
    assert 0.93 <= hits / reps <= 0.97


# ---------------------------------------------------------------------------------------
# Degenerate input and validation
# ---------------------------------------------------------------------------------------
def test_mann_whitney_on_identical_data_gives_p_one_with_a_no_variance_warning():
    res = mann_whitney([3.0] * 5, [3.0] * 7)
    assert (res.W, res.pvalue) == (17.5, 1.0)
    assert "no variance" in str(res.warnings[0])


def test_hodges_lehmann_on_two_constant_samples_gives_the_shift_and_no_interval():
    res = hodges_lehmann([5.0] * 60, [3.0] * 60)
    assert res.estimate == 2.0
    assert math.isnan(res.low) and math.isnan(res.high)
    assert any("no variance" in str(w) for w in res.warnings)


def test_signed_rank_of_all_zero_differences_gives_p_one_with_a_no_variance_warning():
    res = signed_rank([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (res.V, res.pvalue, res.estimate, res.zeros) == (0.0, 1.0, 0.0, 3)
    assert math.isnan(res.low) and "no variance" in str(res.warnings[0])


def test_warnings_are_returned_as_data_and_never_emitted(recwarn):
    hodges_lehmann([1.0, 1.0, 2.0], [1.0, 3.0, 3.0])
    signed_rank([0.7, 0.5, 0.5])
    assert len(recwarn) == 0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: mann_whitney([], [1.0]), NotEnoughData, "x must hold at least 1"),
        (lambda: hodges_lehmann([1.0], []), NotEnoughData, "y must hold at least 1"),
        (lambda: hodges_lehmann([1.0, math.nan], [1.0]), StatisticsError, "x holds 1 NaN"),
        (lambda: mann_whitney([1.0], [math.inf]), StatisticsError, "y holds 1 NaN or infinite"),
        (lambda: hodges_lehmann([1.0], [2.0], 1.5), StatisticsError, r"`confidence` must be in \(0, 1\), got 1.5"),
        (lambda: signed_rank([1.0, 2.0], confidence=0), StatisticsError, "`confidence`"),
        (lambda: signed_rank([1.0, 2.0], [1.0]), StatisticsError, "x: 2 and y: 1"),
        (lambda: signed_rank([1.0, 2.0], [1.0, -math.inf]), StatisticsError, "y holds"),
        (lambda: signed_rank([]), NotEnoughData, "x must hold"),
    ],
)  # fmt: skip
def test_invalid_input_is_rejected_naming_the_parameter(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------------------------------
# The p-values against scipy.stats, computed at test time: pairbench computes them as R's
# wilcox.test does without importing scipy.stats (ranks.py says why), and scipy computes the same
# test its own way, on the route (exact or normal) our rule chose. pairbench only asks for the
# two-sided alternative, so that is the one compared.
# ---------------------------------------------------------------------------------------
SCIPY_RTOL = 1e-11  # same formulas, different order of operations (and erfc against norm.sf)


def _scipy_rank_sum_p(x, y, method: str) -> tuple[float, float]:
    from scipy import stats as sps

    res = sps.mannwhitneyu(x, y, use_continuity=True, alternative="two-sided",
                           method="exact" if method == "exact" else "asymptotic")
    return float(res.statistic), float(res.pvalue)


def _scipy_signed_rank_p(d, method: str) -> float:
    import warnings

    from scipy import stats as sps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about small n and zeros; R does not
        return float(sps.wilcoxon(d, zero_method="wilcox", correction=True, alternative="two-sided",
                                  method="exact" if method == "exact" else "asymptotic").pvalue)


def _draw(rng, n: int, kind: str) -> np.ndarray:
    """``n`` timings: distinct ("continuous") or on a coarse timer's ticks ("ties")."""
    values = rng.lognormal(0.0, 0.3, n)
    return np.round(values, 1) if kind == "ties" else values


RANK_SUM_SIZES = [(1, 1), (1, 6), (2, 3), (5, 5), (12, 7), (30, 30), (49, 49), (49, 50), (50, 49), (80, 120),
                  (1500, 1000)]


@pytest.mark.parametrize("n, m", RANK_SUM_SIZES)
@pytest.mark.parametrize("kind", ["continuous", "ties"])
@pytest.mark.parametrize("shift", [0.0, 0.2, 1.0])
def test_rank_sum_p_value_equals_scipy_on_the_route_the_rule_chooses(n, m, kind, shift):
    rng = np.random.default_rng([n, m, int(10 * shift), kind == "ties"])
    x, y = _draw(rng, n, kind) * math.exp(shift), _draw(rng, m, kind)
    tied = len(np.unique(np.concatenate([x, y]))) < n + m
    res = mann_whitney(x, y)
    if len(np.unique(np.concatenate([x, y]))) == 1:
        assert (res.pvalue, res.method) == (1.0, "normal")  # no variance: p = 1 (R: NaN)
        return
    assert res.method == ("exact" if n < 50 and m < 50 and not tied else "normal")
    # the output says when ties forced the normal route; at n or m >= 50 it is the rule (docs)
    assert [w.code for w in res.warnings] == (["rank-ties"] if tied and n < 50 and m < 50 else [])
    statistic, pvalue = _scipy_rank_sum_p(x, y, res.method)
    assert statistic == res.W
    assert res.pvalue == pytest.approx(pvalue, rel=SCIPY_RTOL, abs=1e-300)


SIGNED_RANK_SIZES = [1, 2, 5, 10, 30, 49, 50, 100, 2000]


@pytest.mark.parametrize("n", SIGNED_RANK_SIZES)
@pytest.mark.parametrize("kind", ["continuous", "ties", "zeros"])
@pytest.mark.parametrize("shift", [0.0, 0.1, 0.5])
def test_signed_rank_p_value_equals_scipy_on_the_route_the_rule_chooses(n, kind, shift):
    rng = np.random.default_rng([n, int(10 * shift), ("continuous", "ties", "zeros").index(kind)])
    d = rng.normal(shift, 1.0, n)
    if kind == "ties":
        d = np.round(d, 1)
    if kind == "zeros":  # a third of the pairs took the same time: dropped, as R and scipy's "wilcox" do
        d[rng.random(n) < 1 / 3] = 0.0
    nonzero = d[d != 0]
    if nonzero.size == 0:
        assert signed_rank(d).pvalue == 1.0  # no variance: p = 1 (R: NaN)
        return
    res = signed_rank(d)
    tied = len(np.unique(np.abs(nonzero))) < nonzero.size
    assert res.zeros == d.size - nonzero.size
    assert res.method == ("exact" if nonzero.size < 50 and not tied and res.zeros == 0 else "normal")
    route_notes = {w.code for w in res.warnings} & {"rank-ties", "zero-differences"}
    assert route_notes == ({"rank-ties"} if tied and nonzero.size < 50 else set()) | (
        {"zero-differences"} if res.zeros else set())
    assert res.pvalue == pytest.approx(_scipy_signed_rank_p(d, res.method), rel=SCIPY_RTOL, abs=1e-300)


@pytest.mark.parametrize("seed", range(4))
def test_rank_sum_and_signed_rank_p_values_agree_with_scipy_on_random_samples(seed):
    rng = np.random.default_rng(seed)
    routes = set()
    for _ in range(60):
        n, m = (int(v) for v in rng.integers(2, 70, size=2))
        x, y = rng.normal(size=n) + rng.normal() * 0.5, rng.normal(size=m)
        if rng.random() < 0.5:  # a coarse timer: ties, the normal route
            x, y = np.round(x, 1), np.round(y, 1)
        mw = mann_whitney(x, y)
        statistic, pvalue = _scipy_rank_sum_p(x, y, mw.method)
        assert statistic == mw.W and mw.pvalue == pytest.approx(pvalue, rel=SCIPY_RTOL)
        d = np.round(x[:min(n, m)] - y[:min(n, m)], 1 if rng.random() < 0.5 else 12)
        if not np.any(d):
            continue
        sr = signed_rank(d)
        assert sr.pvalue == pytest.approx(_scipy_signed_rank_p(d, sr.method), rel=SCIPY_RTOL)
        routes |= {("rank sum", mw.method), ("signed rank", sr.method)}
    assert routes == {(test, method) for test in ("rank sum", "signed rank") for method in ("exact", "normal")}


def test_the_continuity_correction_moves_the_statistic_half_a_step_toward_its_mean():
    # Normal route by hand (R's wilcox.test, correct = TRUE): x = 1..60 against y = 31.5..90.5,
    # no ties; U = #{x_i > y_j}, z = (U - nm/2 + 1/2) / sqrt(nm(n+m+1)/12) below the mean
    x, y = np.arange(1.0, 61.0), np.arange(31.5, 91.5)
    u = float(sum(int(np.sum(xi > y)) for xi in x))
    z = (u - 60 * 60 / 2 + 0.5) / math.sqrt(60 * 60 * 121 / 12)
    res = mann_whitney(x, y)
    assert (res.W, res.method) == (u, "normal")
    assert res.pvalue == pytest.approx(math.erfc(-z / math.sqrt(2.0)), rel=1e-13)
    # signed rank, d = -2.5, -1.5, -0.5, 1..57 (60 values, no ties in |d|): V = sum of the ranks of d > 0
    d = np.concatenate([[-2.5, -1.5, -0.5], np.arange(1.0, 58.0)])
    ranks = np.argsort(np.argsort(np.abs(d), kind="stable")) + 1.0
    v, n = float(ranks[d > 0].sum()), d.size
    z = (v - n * (n + 1) / 4 - 0.5) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    res = signed_rank(d)
    assert (res.V, res.method) == (v, "normal")
    assert res.pvalue == pytest.approx(math.erfc(z / math.sqrt(2.0)), rel=1e-13)


def test_a_small_exact_upper_tail_p_value_is_rs_lower_tail_false_sum():
    # R 4.2.2: 2 * pwilcox(753, 32, 26, lower.tail = FALSE) = 7.3288183512481624e-09, as
    # wilcox.test computes it for W = 754; 1 - pwilcox(753, 32, 26) would give 7.32881844e-09
    from pairbench.stats._rmath import pwilcox

    assert 2 * pwilcox(753, 32, 26, lower_tail=False) == pytest.approx(7.3288183512481624e-09, rel=1e-14)


def _mann_whitney_counts_by_recurrence(m: int, n: int) -> list[int]:
    """f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u) (Mann & Whitney 1947), in Python integers."""
    table = {(0, j): [1] for j in range(n + 1)} | {(i, 0): [1] for i in range(m + 1)}
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            counts = [0] * (i * j + 1)
            for u, c in enumerate(table[i - 1, j]):
                counts[u + j] += c
            for u, c in enumerate(table[i, j - 1]):
                counts[u] += c
            table[i, j] = counts
    return table[m, n]


@pytest.mark.parametrize("m, n", [(1, 1), (3, 7), (12, 5), (30, 30), (31, 32), (33, 33), (20, 45)])
def test_the_mann_whitney_null_counts_are_the_recurrences_on_both_sides_of_int64(m, n):
    from math import comb

    from pairbench.stats._rmath import wilcox_counts

    wilcox_counts.cache_clear()
    counts = wilcox_counts(m, n)
    assert list(counts) == _mann_whitney_counts_by_recurrence(m, n)
    assert sum(counts) == comb(m + n, n) and all(type(c) is int for c in counts)


def _shifts(values: np.ndarray, others: np.ndarray) -> list[float]:
    """Shifts at every value and difference, between neighbours, and beyond the ends."""
    points = np.unique(np.concatenate([values, (values[:, None] + values[None, :]).ravel() / 2.0,
                                       (values[:, None] - others[None, :]).ravel()]))
    between = (points[1:] + points[:-1]) / 2.0
    return [*points.tolist(), *between.tolist(), float(points[0] - 1.0), float(points[-1] + 1.0), 0.0, -0.0]


@pytest.mark.parametrize("seed, scale", [(1, 1.0), (2, 1000.0), (3, 0.1), (4, 3.0)])
def test_the_rank_statistics_python_route_gives_numpys_numbers_at_every_shift(seed, scale):
    from pairbench.stats.ranks import _RankSumZ, _SignedRankZ

    rng = np.random.default_rng(seed)
    x = np.sort(np.rint(rng.normal(0.0, 4.0, 25)) * scale)  # rounded: many ties, at every shift
    y = np.sort(np.rint(rng.normal(1.0, 4.0, 20)) * scale)
    for small, large in ((_SignedRankZ(x, small=True), _SignedRankZ(x, small=False)),
                         (_RankSumZ(x, y, small=True), _RankSumZ(x, y, small=False))):
        for d in _shifts(x, y):
            got, expected = small(d), large(d)
            assert got == expected or (math.isnan(got) and math.isnan(expected)), d
