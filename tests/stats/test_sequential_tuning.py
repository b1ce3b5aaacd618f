"""The confidence sequence without scipy: its log-beta, its tuning and its ranks, against scipy's.

``stats.sequential`` runs before the first sample, so it uses the standard
library's lgamma for ln B and ports of Brent's methods (``stats._minimize``,
``stats._rmath.zeroin``) for its tuning. Here they are compared with
``scipy.special.betaln`` and ``scipy.optimize`` at test time: the tuning to a
relative 1e-5 (the radius is flat at its minimum, so the minimiser's last digits
are noise in either), and the ranks exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize as sopt
from scipy import special as sp

from pairbench.stats import sequential
from pairbench.stats._minimize import fminbound

ALPHAS = [0.2, 0.05, 0.01, 0.01 / 7, 0.0025, 0.001, 1e-5]
TUNINGS = [11, 30, 50, 200, 1000]


@pytest.mark.parametrize(("func", "bounds", "xatol"), [
    (lambda x: (x - 1.3) ** 2, (-3.0, 5.0), 1e-5),
    (lambda x: math.cos(x) + 0.1 * x, (0.0, 9.0), 1e-10),
    (lambda x: abs(x - 0.25) ** 1.5 + math.sin(7 * x) / 50, (-1.0, 1.0), 1e-8),
    (lambda x: math.exp(x) - 2 * x, (-8.0, 16.0), 1e-8),
    (lambda x: 1.0, (0.0, 1.0), 1e-5),  # flat: the golden-section steps alone
])
def test_the_bounded_minimiser_takes_scipys_steps_to_the_same_point(func, bounds, xatol):
    expected = sopt.minimize_scalar(func, bounds=bounds, method="bounded", options={"xatol": xatol}).x
    assert fminbound(func, *bounds, xatol=xatol) == expected


def test_the_log_beta_is_scipys_betaln_to_the_last_digits_of_its_terms():
    rng = np.random.default_rng(5)
    p = np.concatenate([rng.uniform(0.05, 5, 200), rng.uniform(5, 5e4, 200), [0.5, 1.0, 3.0, 1e5]])
    q = np.concatenate([rng.uniform(0.05, 5e4, 400), [0.5, 2.0, 7.0, 1e5]])
    ours, reference = sequential._log_beta(p, q), sp.betaln(p, q)
    size = np.abs(sp.gammaln(p)) + np.abs(sp.gammaln(q)) + np.abs(sp.gammaln(p + q))
    assert np.all(np.abs(ours - reference) <= 1e-15 * size + 1e-14)


def _best_a_by_scipy(alpha: float, t_opt: int) -> float:
    t, threshold = float(t_opt), math.log(1.0 / alpha)

    def log_m(s, a):
        return t * math.log(2.0) + sp.betaln(a + s, a + t - s) - sp.betaln(a, a)

    def radius(log_a):
        a = math.exp(log_a)
        if log_m(t, a) < threshold:
            return t
        return sopt.brentq(lambda w: log_m(t / 2 + w, a) - threshold, 0.0, t / 2)

    return math.exp(sopt.minimize_scalar(radius, bounds=(-8.0, 16.0), method="bounded",
                                         options={"xatol": 1e-8}).x)


def _ranks_by_scipy(t: np.ndarray, alpha: float, a: float) -> np.ndarray:
    """The smallest s in [t/2, t] with ln M_t(s) >= ln(1/alpha) (+ the slack), else t + 1, by
    trying every s (``scipy.special.betaln``)."""
    threshold = math.log(1.0 / alpha) + sequential._LOG_SLACK
    out = []
    for n in t:
        s = np.arange(n // 2, n + 1, dtype=np.float64)
        crossing = np.flatnonzero(n * math.log(2.0) + sp.betaln(a + s, a + n - s) - sp.betaln(a, a) >= threshold)
        out.append(int(s[crossing[0]]) if crossing.size else n + 1)
    return np.array(out)


FEW = np.arange(1, 400)
MANY = np.random.default_rng(11).integers(400, 20_000, 40)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_mixture_is_tuned_where_scipy_tunes_it_and_gives_the_same_ranks(alpha):
    """The ranks of up to 399 rounds through ``upper_ranks`` (its table), those of up to 20,000
    through the bisection that fills the table (element by element, so the table holds what it
    gives for each round alone: the test below), which spares a table of 32,768 rounds per
    mixture (most of this test's time when each was built here)."""
    for t_opt in TUNINGS:
        a = sequential._best_a(alpha, t_opt)
        expected = _best_a_by_scipy(alpha, t_opt)
        assert a == pytest.approx(expected, rel=1e-5), t_opt
        ranks = sequential.upper_ranks(FEW, alpha, t_opt, "beta-binomial")
        assert np.array_equal(ranks, _ranks_by_scipy(FEW, alpha, expected)), t_opt
        ranks = sequential._beta_binomial_ranks(MANY, alpha, a)
        assert np.array_equal(ranks, _ranks_by_scipy(MANY, alpha, expected)), t_opt


def test_the_table_of_ranks_holds_what_the_bisection_gives_for_each_round_alone():
    alpha, t_opt = 0.01, 200
    t = np.array([*MANY, 1, 63, 64, 65, 399, 4097, 20_000])
    expected = sequential._beta_binomial_ranks(t, alpha, sequential._best_a(alpha, t_opt))
    assert np.array_equal(sequential.upper_ranks(t, alpha, t_opt, "beta-binomial"), expected)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_normal_mixtures_rho_is_where_scipy_puts_it(alpha):
    for t_opt in TUNINGS:
        expected = math.exp(sopt.minimize_scalar(
            lambda log_rho, t_opt=t_opt: float(sequential._normal_mixture_radius(float(t_opt), alpha,
                                                                                 math.exp(log_rho))),
            bounds=(-12.0, 16.0), method="bounded", options={"xatol": 1e-10}).x)
        assert sequential._best_rho(alpha, t_opt) == expected
