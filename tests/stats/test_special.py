"""The summary's special functions on numpy and the standard library (``stats._special``), against
R and scipy.

Expected values are R's (``tests/reference/special_reference.json``, written by
``tests/reference/special.R`` with R 4.2.2: pbeta, qbeta, qt, pbinom, qbinom, pchisq, qnorm) and,
at test time, ``scipy.special``'s over dense grids. Where scipy's own inverse loses precision (the
incomplete beta function's inverse with a or b beyond 10^4, or below y = 1e-100) the check is R's
value or the round trip through ``scipy.special.betainc``.
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from scipy import special as sc

from pairbench.stats import _special
from pairbench.stats.modality import hd_quantiles
from pairbench.stats.shift import _qbinom

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "special_reference.json"
SHAPES = np.array([1e-3, 0.1, 0.5, 1, 2, 3.7, 10, 31, 100, 1000, 1e4, 1e5, 5e5])
XS = np.concatenate([[1e-300, 1e-100, 1e-10, 1e-5, 0.001, 0.01], np.linspace(0.02, 0.98, 25),
                     [0.99, 0.999, 1 - 1e-5, 1 - 1e-10]])
FUZZ = 1 - 64 * np.finfo(float).eps  # R's qbinom fuzz, as shift._qbinom applies it


def _number(v):
    return float(v.replace("Inf", "inf")) if isinstance(v, str) else float(v)


@lru_cache(maxsize=1)
def _reference() -> dict:
    doc = json.loads(REFERENCE.read_text())
    return {key: np.array([[_number(v) for v in row] for row in rows]) for key, rows in doc.items()
            if isinstance(rows, list)}


def _relative(ours, reference, floor=1e-300):
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    return np.abs(ours - reference) / np.maximum(np.abs(reference), floor)


# ------------------------------------------------------------------ against R


def test_the_incomplete_beta_function_agrees_with_rs_pbeta():
    a, b, x, expected = _reference()["pbeta"].T
    ours = _special.betainc(a, b, x)
    assert np.all((_relative(ours, expected) <= 5e-11) | (np.abs(ours - expected) <= 1e-300))


def test_its_inverse_agrees_with_rs_qbeta_down_to_the_smallest_probabilities():
    a, b, y, expected = _reference()["qbeta"].T
    # R warns (and its bpser underflows) at y = 1e-300 once a >= 1e4: those rows are not references
    keep = ~((y < 1e-290) & (a >= 1e4))
    assert keep.sum() > 500
    ours = _special.betaincinv(a[keep], b[keep], y[keep])
    assert np.all((_relative(ours, expected[keep]) <= 1e-11) | (np.abs(ours - expected[keep]) <= 1e-300))


def test_students_t_quantile_agrees_with_rs_qt_from_one_to_a_million_degrees_of_freedom():
    df, p, expected = _reference()["qt"].T
    # R's own qt is 7.6e-9 off at p = 1e-300, df = 3 and 4.5 (R's pt gives back 0.99999998e-300 at
    # it, 1e-300 to 3e-14 at ours): those two rows are not references; df = 1, 2 are closed forms
    keep = ~((p < 1e-290) & (df > 2))
    df, p, expected = df[keep], p[keep], expected[keep]
    errors = _relative(_special.stdtrit(df, p), expected)
    assert np.all(errors[df <= 1e4] <= 1e-11)
    assert np.all(errors <= 2e-11)  # 1.2e-11 at df = 10^6 (a = 5e5 in the incomplete beta function)


def test_the_binomial_tails_agree_with_rs_pbinom_up_to_a_hundred_thousand_trials():
    k, n, p, below, above = _reference()["pbinom"].T
    assert np.all(_relative(_special.bdtr(k, n, p), below) <= 1e-11)
    assert np.all(_relative(_special.bdtrc(k, n, p), above) <= 1e-11)


def test_the_shift_functions_binomial_quantile_is_rs_qbinom():
    target, n, p, expected = _reference()["qbinom"].T
    for t in np.unique(target):
        rows = target == t
        for size in np.unique(n[rows]):
            at = rows & (n == size)
            assert _qbinom(float(t), int(size), p[at])[0].tolist() == expected[at].astype(int).tolist()


def test_the_chi_square_survival_function_agrees_with_rs_pchisq():
    df, q, expected = _reference()["pchisq_upper"].T
    ours = [_special.chdtrc(int(d), float(v)) for d, v in zip(df, q, strict=True)]
    assert np.all(_relative(ours, expected) <= 1e-12)


def test_the_normal_quantile_agrees_with_rs_qnorm():
    p, expected = _reference()["qnorm"].T
    assert np.all(_relative([_special.ndtri(v) for v in p], expected) <= 1e-15)


# ------------------------------------------------------------------ against scipy, over dense grids


def test_the_incomplete_beta_function_agrees_with_scipy_over_a_dense_grid():
    a, b, x = (v.ravel() for v in np.meshgrid(SHAPES, SHAPES, XS, indexing="ij"))
    ours, theirs = _special.betainc(a, b, x), sc.betainc(a, b, x)
    # below 1e-250 scipy's own value loses digits (R's pbeta(1e-10, 31, 31) is ours to 1e-15)
    normal = theirs > 1e-250
    small = normal & (np.maximum(a, b) <= 1e4)
    assert np.all(_relative(ours[small], theirs[small]) <= 2e-11)  # 1.5e-11 at a = 10, b = 0.001
    assert np.all(_relative(ours[normal], theirs[normal]) <= 5e-11)  # 2.9e-11 at a = 5e5, b = 3.7
    assert np.all(ours[~normal] <= 1e-240)


def test_a_few_points_one_at_a_time_give_what_the_vectorised_kernel_gives():
    """Up to 16 elements run on Python floats, more on numpy arrays: the same formulas, two codes."""
    a, b, x = (v.ravel() for v in np.meshgrid(SHAPES[2:11], SHAPES[2:11], XS[2:-1], indexing="ij"))
    together = _special.betainc(a, b, x)  # thousands: numpy
    alone = np.array([_special.betainc(*point) for point in zip(a, b, x, strict=True)])
    assert np.all(_relative(alone, together) <= 1e-13)
    y = np.tile([1e-15, 0.025, 0.5, 0.975], a.size // 4 + 1)[:a.size]
    together = _special.betaincinv(a, b, y)
    alone = np.array([_special.betaincinv(*point) for point in zip(a, b, y, strict=True)])
    assert np.all(_relative(alone, together) <= 1e-13)


@pytest.mark.parametrize("x, expected", [(0.0, 0.0), (-0.5, 0.0), (1.0, 1.0), (2.0, 1.0)])
def test_the_incomplete_beta_function_is_certain_at_and_beyond_the_ends(x, expected):
    assert _special.betainc(2.5, 31.0, x) == expected


def test_the_incomplete_beta_function_is_nan_for_shapes_that_are_not_positive():
    assert np.isnan(_special.betainc(0.0, 1.0, 0.5)) and np.isnan(_special.betainc(1.0, -1.0, 0.5))


def test_its_inverse_agrees_with_scipy_where_scipys_is_accurate_and_round_trips_everywhere():
    ys = np.array([1e-100, 1e-15, 1e-10, 1e-5, 0.001, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999, 1 - 1e-10])
    a, b, y = (v.ravel() for v in np.meshgrid(SHAPES, SHAPES, ys, indexing="ij"))
    ours = _special.betaincinv(a, b, y)
    theirs = sc.betaincinv(a, b, y)  # beyond 10^4 or near underflow scipy's loses digits (R: above)
    moderate = (np.maximum(a, b) <= 1e4) & (ours < 1) & (theirs > 1e-290)
    assert np.all(_relative(ours[moderate], theirs[moderate]) <= 1e-11)
    # the round trip: scipy's forward function at our root gives y back, as far as x's last bit allows
    inside = (ours > 1e-300) & (ours < 1)  # not where the root lies below the smallest double
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # the density at x: inf at 0
        slope = np.exp((a - 1) * np.log(ours) + (b - 1) * np.log1p(-ours) - sc.betaln(a, b))
    relative = np.where(np.maximum(a, b) <= 1e4, 1e-12, 5e-11)  # scipy's betainc: 8e-12 off at b = 5e5
    relative = np.where(np.minimum(a, b) < 0.01, 2e-11, relative)  # ours, 6e-12 off R's at a = 0.001
    with np.errstate(over="ignore", invalid="ignore"):
        allowed = relative * np.minimum(y, 1 - y) + 4e-15 * y + 2 * slope * np.spacing(ours)
    assert np.all(np.abs(sc.betainc(a, b, ours) - y)[inside] <= allowed[inside])


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 10, 28, 100, 1e3, 1e4, 1e5, 1e6])
def test_students_t_quantile_agrees_with_scipy_at_whole_and_fractional_degrees_of_freedom(df):
    ps = np.array([1e-20, 1e-10, 1e-5, 0.05 / 30, 0.025, 0.1, 0.4, 0.5, 0.6, 0.975, 0.999999])
    assert np.all(_relative(_special.stdtrit(df, ps), sc.stdtrit(df, ps), floor=1e-12) <= 1e-10)


def test_students_t_quantile_is_zero_at_the_median_and_infinite_at_the_ends():
    assert _special.stdtrit(7.0, 0.5) == 0.0
    assert _special.stdtrit(7.0, 0.0) == -np.inf and _special.stdtrit(7.0, 1.0) == np.inf


@pytest.mark.parametrize("n", [1, 2, 3, 10, 30, 101, 1000, 12_345, 100_000])
def test_the_binomial_tails_agree_with_scipy_for_every_kind_of_count(n):
    # scipy's bdtr (Cephes) drifts by up to 2e-10 at n = 10^5, where R's pbinom agrees with ours to
    # 1.4e-12 (the R test above holds those n to 1e-11); so 1e-11 up to n = 1000, 5e-10 beyond
    tolerance = 1e-11 if n <= 1000 else 5e-10
    ks = np.unique(np.clip(np.concatenate([np.arange(-1, 5), np.linspace(0, n, 41).astype(int), [n - 1, n]]), -1, n))
    k, p = (v.ravel() for v in np.meshgrid(ks, [1e-4, 0.01, 0.1, 0.37, 0.5, 0.9, 0.999], indexing="ij"))
    for ours, theirs in ((_special.bdtr(k, n, p), sc.bdtr(k, n, p)), (_special.bdtrc(k, n, p), sc.bdtrc(k, n, p))):
        meaningful = theirs > 1e-280
        assert np.all(_relative(ours[meaningful], theirs[meaningful]) <= tolerance)
        assert np.all(ours[~meaningful & (k >= 0)] <= 1e-270)


@pytest.mark.parametrize("n", [1, 2, 5, 17, 30, 64, 100, 333])
def test_the_binomial_quantile_picks_the_integer_the_exact_binomial_cdf_gives(n):
    # exact rational CDFs, not scipy's: at n = 999, p = 1/2 scipy's bdtr(499) is 0.4999999999998
    # where the exact value (and R's) is 1/2, so its quantile at 1/2 would be one too high
    ps = [0.001, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.999]
    for p in ps:
        exact_p = Fraction(p)
        term, below, cdfs = (1 - exact_p) ** n, Fraction(0), []
        for j in range(n + 1):
            below += term
            cdfs.append(below)
            term = term * (n - j) * exact_p / ((j + 1) * (1 - exact_p)) if j < n else term
        for target in (0.025, 0.975, 0.05 / 36, 1 - 0.05 / 36, 0.5):
            goal = Fraction(target * FUZZ)
            expected = next(j for j, c in enumerate(cdfs) if c >= goal)
            assert _qbinom(target, n, np.array([p]))[0].tolist() == [expected]


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 31, 100, 1001, 10_000, 1_000_000])
def test_the_chi_square_survival_function_agrees_with_scipy(df):
    qs = np.concatenate([[1e-8, 0.1], df * np.array([0.01, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 4.0]) + 1])
    for q in qs:  # scipy's is 1.2e-11 off R's at df = 10^4, q = 15001 (5e-208); ours 4e-13
        theirs = float(sc.chdtrc(df, q))
        if theirs > 1e-280:
            assert _relative(_special.chdtrc(df, q), theirs) <= (1e-12 if theirs > 1e-100 else 3e-11)


def test_the_chi_square_survival_function_is_one_at_zero_and_nan_without_degrees_of_freedom():
    assert _special.chdtrc(3, 0.0) == 1.0 and np.isnan(_special.chdtrc(0, 1.0))


def test_the_normal_quantile_agrees_with_scipy_and_is_infinite_at_the_ends():
    ps = np.concatenate([[1e-300, 1e-20], np.linspace(0.001, 0.999, 199), [1 - 1e-12]])
    assert np.all(_relative([_special.ndtri(p) for p in ps], sc.ndtri(ps), floor=1e-300) <= 1e-14)
    assert _special.ndtri(0.0) == -np.inf and _special.ndtri(1.0) == np.inf


# ------------------------------------------------------------------ the callers


def test_the_quadratures_nodes_and_weights_are_gauss_legendres():
    nodes, weights = np.polynomial.legendre.leggauss(8)
    assert np.allclose(_special._GL_NODES, nodes, rtol=0, atol=1e-15)
    assert np.allclose(_special._GL_WEIGHTS, weights, rtol=0, atol=1e-15)


@pytest.mark.parametrize("a, b, low, high", [(50.0, 950.0, 0.02, 0.09), (500.0, 501.0, 0.45, 0.55),
                                             (20.0, 5000.0, 0.0, 0.01), (2500.0, 2501.0, 0.48, 0.52)])
def test_beta_cell_masses_are_the_incomplete_beta_functions_differences(a, b, low, high):
    edges = np.linspace(low, high, 300)
    masses = _special.beta_masses(a, b, edges[:-1], edges[1:])
    differences = np.diff(sc.betainc(a, b, edges))
    # where a difference holds more than 1e-4 of the mass, its own error (the CDF's 1e-15 over the
    # difference) is below about 1e-11: 5.8e-12 measured at a = 20, b = 5000
    held = differences > 1e-4 * differences.sum()
    assert np.all(_relative(masses[held], differences[held]) <= 3e-11)
    assert _relative(masses.sum(), sc.betainc(a, b, high) - sc.betainc(a, b, low)) <= 1e-13


@pytest.mark.parametrize("n", [2, 5, 30, 101, 2000, 5000, 20_000])
def test_harrell_davis_quantiles_agree_with_scipys_hdquantiles(n):
    from scipy.stats import mstats

    values = np.sort(np.random.default_rng(n).lognormal(0.0, 0.5, n))
    probs = np.linspace(0.05, 0.95, 19)
    expected = np.asarray(mstats.hdquantiles(values, prob=probs))
    assert np.all(_relative(hd_quantiles(values, probs), expected) <= 1e-10)


def test_beta_cell_masses_of_a_grid_are_beta_masses_pair_by_pair():
    rng = np.random.default_rng(7)
    a, b = rng.uniform(20.0, 400.0, 5), rng.uniform(20.0, 400.0, 5)
    edges = np.arange(301) / 300
    rows, cells = np.repeat(np.arange(5), 300), np.tile(np.arange(300), 5)
    grid = _special.beta_cell_masses(a, b, edges[:-1], edges[1:], rows, cells)
    one_by_one = _special.beta_masses(a[rows], b[rows], edges[cells], edges[cells + 1])
    assert np.array_equal(grid, one_by_one)  # the same numbers, not merely close
    differences = np.diff(sc.betainc(a[:, None], b[:, None], edges[None, :]), axis=1).ravel()
    held = differences > 1e-4
    assert np.all(_relative(grid[held], differences[held]) <= 3e-11)


@pytest.mark.parametrize("n", [30, 200, 6000])
def test_samples_of_one_size_share_harrell_davis_weights_without_changing_quantiles(n):
    from scipy.stats import mstats

    from pairbench.stats import modality

    rng = np.random.default_rng(n)
    first, second = (np.sort(rng.lognormal(0.0, 0.3, n)) for _ in range(2))
    probs = np.arange(101) / 100
    modality._weight_table.cache_clear()
    alone = hd_quantiles(second, probs)
    hd_quantiles(first, probs)
    after_first = hd_quantiles(second, probs)
    assert modality._weight_table.cache_info().hits >= 1
    assert np.array_equal(after_first, alone)
    inner = probs[1:-1]
    expected = np.asarray(mstats.hdquantiles(second, prob=inner))
    assert np.all(_relative(after_first[1:-1], expected) <= 1e-10)
    assert all(not w.flags.writeable for *_, w, _ in modality._weight_table(n, tuple(probs.tolist())))
