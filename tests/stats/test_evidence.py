"""The Bayes evidence of one step against a level and a line, AR(1) noise of unknown phi."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import toeplitz
from scipy.special import gammaln, logsumexp

from pairbench import stats
from pairbench.errors import StatisticsError
from pairbench.stats.changepoint import whitened
from pairbench.stats.evidence import PHIS, _log_marginal


def _dense_log_marginal(y: np.ndarray, x: np.ndarray, phi: float) -> float:
    """log p(y | phi) by generalised least squares on the AR(1) correlation matrix itself (its
    inverse taken densely, no whitening): with C = phi^|i - j| / (1 - phi^2) the covariance of unit
    innovations, p = |C|^-1/2 |X'C^-1 X|^-1/2 rss^-(m-k)/2 Gamma((m-k)/2) pi^-(m-k)/2 / 2."""
    m, k = x.shape
    c = toeplitz(phi ** np.arange(m)) / (1.0 - phi * phi)
    inverse = np.linalg.inv(c)
    gram = x.T @ inverse @ x
    beta = np.linalg.solve(gram, x.T @ inverse @ y)
    r = y - x @ beta
    rss = float(r @ inverse @ r)
    return (-0.5 * np.linalg.slogdet(c)[1] - 0.5 * np.linalg.slogdet(gram)[1] - 0.5 * (m - k) * math.log(rss)
            + gammaln((m - k) / 2) - 0.5 * (m - k) * math.log(math.pi) - math.log(2.0))


def test_each_models_marginal_likelihood_is_the_dense_generalised_least_squares_one_summed_over_phi():
    rng = np.random.default_rng(11)
    m = 17
    y = rng.standard_normal(m) + np.where(np.arange(m) >= 9, 1.5, 0.0)
    y = y - np.median(y)
    t = np.arange(m, dtype=float)
    one = np.ones((m, 1))
    line = np.column_stack([np.ones(m), (t - (m - 1) / 2) / m])
    places = np.arange(3, m - 3 + 1)
    level = logsumexp([_dense_log_marginal(y, one, phi) for phi in PHIS]) - math.log(PHIS.size)
    drift = logsumexp([_dense_log_marginal(y, line, phi) for phi in PHIS]) - math.log(PHIS.size)
    steps = np.array([[_dense_log_marginal(y, np.column_stack([t < q, t >= q]).astype(float), phi)
                       for q in places] for phi in PHIS])
    posterior = logsumexp(steps, axis=0) - math.log(PHIS.size)
    found = stats.step_evidence(y, 3)
    assert found.level == pytest.approx(level, rel=1e-9)
    assert found.line == pytest.approx(drift, rel=1e-9)
    assert found.posterior == pytest.approx(posterior, rel=1e-9)
    assert found.step == pytest.approx(logsumexp(posterior) - math.log(places.size), rel=1e-9)
    assert found.places.tolist() == places.tolist()


def test_the_lasting_evidence_is_the_dense_generalised_least_squares_one_with_a_free_shock_column():
    """Each place q: the level and the step each with one more column, an innovation at q as the
    raw values carry it (phi^(t - q) from q on), fitted on the dense AR(1) covariance; summed over
    phi and q. No whitening and no dropped row: an independent route to the same marginals."""
    rng = np.random.default_rng(12)
    m = 16
    y = rng.standard_normal(m) + np.where(np.arange(m) >= 8, 2.0, 0.0)
    y[4] += 5.0  # one wild value
    y = y - np.median(y)
    t = np.arange(m, dtype=float)
    places = np.arange(3, m - 3 + 1)
    levels, steps = [], []
    for phi in PHIS:
        for q in places:
            shock = np.where(t >= q, phi ** np.maximum(t - q, 0), 0.0)
            levels.append(_dense_log_marginal(y, np.column_stack([np.ones(m), shock]), phi))
            steps.append(_dense_log_marginal(y, np.column_stack([t < q, t >= q, shock]).astype(float), phi))
    each = math.log(PHIS.size * places.size)
    found = stats.lasting_evidence(y, 3)
    assert found.level == pytest.approx(logsumexp(levels) - each, rel=1e-9)
    assert found.step == pytest.approx(logsumexp(steps) - each, rel=1e-9)
    assert found.against_level == pytest.approx(logsumexp(steps) - logsumexp(levels), rel=1e-9)


def test_one_wild_value_is_evident_as_a_jump_but_not_as_a_step_that_lasts():
    """AR(1) noise with one innovation of 8 SDs: a model of high phi reads it as a step's jump and its
    decay, so the evidence against a level is strong; with the innovation at the place left free
    nothing lasts. A step of the same size lasts."""
    from scipy.signal import lfilter

    e = np.random.default_rng(7).standard_normal(40)
    noise = lfilter([1.0], [1.0, -0.5], e)
    shocked = noise + 8.0 * np.where(np.arange(40) >= 20, 0.5 ** np.maximum(np.arange(40) - 20, 0), 0.0)
    stepped = noise + np.where(np.arange(40) >= 20, 4.0, 0.0)
    wild, step = stats.step_evidence(shocked), stats.step_evidence(stepped)
    assert wild.against_level > 3 and stats.lasting_evidence(shocked).against_level < 1  # below e: no sign it lasts
    assert step.against_level > 5 and stats.lasting_evidence(stepped).against_level > 5


def test_a_levels_marginal_likelihood_is_the_integral_over_the_level_and_sd():
    """p(y | phi) with a flat prior on the level and 1 / sd on the SD, by scipy's numerical
    integration of the AR(1) normal density (covariance sd^2 phi^|i - j| / (1 - phi^2)), written out
    from its definition (scipy's multivariate_normal gives the same integral, 50 times slower)."""
    from scipy import integrate

    n, phi = 6, 0.4
    y = np.random.default_rng(3).standard_normal(n)
    cov = toeplitz(phi ** np.arange(n)) / (1 - phi * phi)
    inverse, log_det = np.linalg.inv(cov), np.linalg.slogdet(cov)[1]

    def density(mu: float, s: float) -> float:  # N(y; mu 1, s^2 cov) times the prior 1 / s
        r = y - mu
        return math.exp(-0.5 * float(r @ inverse @ r) / (s * s) - n * math.log(s) - 0.5 * log_det
                        - 0.5 * n * math.log(2 * math.pi)) / s

    expected, _ = integrate.dblquad(density, 0.05, 20, -20, 20, epsabs=1e-13)
    got = _log_marginal(whitened(y, phi), whitened(np.ones(n), phi)[None, :], phi)
    assert math.exp(got) == pytest.approx(expected, rel=1e-3)


def test_a_clear_step_is_evident_against_a_level_and_a_line_and_placed_at_its_commit():
    rng = np.random.default_rng(4)
    y = rng.standard_normal(60) + np.where(np.arange(60) >= 30, 4.0, 0.0)
    found = stats.step_evidence(y)
    assert found.against_level > 10 and found.against_line > 5
    assert int(found.places[np.argmax(stats.window_scores(found.posterior, 0.2))]) == 30


def test_a_straight_line_is_likelier_a_line_than_a_step_and_noise_alone_shows_no_step():
    rng = np.random.default_rng(5)
    noise = rng.standard_normal(80)
    assert stats.step_evidence(noise + np.linspace(0.0, 6.0, 80)).against_line < 0
    assert stats.step_evidence(noise).against_level < 3


def test_an_exact_step_without_noise_is_infinitely_evident():
    found = stats.step_evidence(np.r_[np.zeros(10), np.ones(10)])
    assert found.against_level == math.inf and int(found.places[np.argmax(found.posterior)]) == 10


@pytest.mark.parametrize(("y", "code"), [(np.arange(6.0), "not-enough-data"), (np.r_[np.arange(9.0), np.nan], ""),
                                         (np.ones(12), "no-variance")])
def test_a_stretch_too_short_not_finite_or_constant_is_refused(y, code):
    with pytest.raises(StatisticsError) as refused:
        stats.step_evidence(y)
    assert refused.value.code == code


def _shortest_run_by_enumeration(log_posterior, level):
    """Every run of consecutive places, by brute force: the shortest holding ``level``, then the most mass."""
    mass = np.exp(np.asarray(log_posterior) - np.max(log_posterior))
    mass /= mass.sum()
    runs = [(j - i, -mass[i:j + 1].sum(), i, j) for i in range(mass.size) for j in range(i, mass.size)
            if mass[i:j + 1].sum() >= level - 1e-9]
    return min(runs)[2:]


@pytest.mark.parametrize("seed", range(12))
def test_the_credible_places_are_the_shortest_run_holding_the_level_as_enumeration_finds(seed):
    rng = np.random.default_rng(seed)
    logs = rng.normal(0.0, 3.0, int(rng.integers(1, 40)))
    for level in (0.5, 0.8, 0.95, 0.99):
        assert stats.credible_places(logs, level) == _shortest_run_by_enumeration(logs, level)


def test_the_credible_places_of_a_steps_posterior_hold_its_place_and_widen_with_the_noise():
    rng = np.random.default_rng(3)
    noise = rng.standard_normal(60)
    widths = []
    for size in (8.0, 2.0):
        found = stats.step_evidence(noise + np.where(np.arange(60) >= 30, size, 0.0))
        first, last = stats.credible_places(found.posterior, 0.95)
        assert found.places[first] <= 30 <= found.places[last]
        widths.append(last - first + 1)
    assert widths[0] == 1 and widths[1] > 3


def test_places_of_infinite_likelihood_share_the_mass_and_a_posterior_that_is_not_one_is_refused():
    assert stats.credible_places([-math.inf, math.inf, 0.0, math.inf], 0.95) == (1, 3)
    assert stats.credible_places([-math.inf] * 4, 0.5) == (0, 1)  # all underflowed: uniform
    for bad in ([], [math.nan, 0.0], [[0.0, 1.0]]):
        with pytest.raises(StatisticsError):
            stats.credible_places(bad)
    with pytest.raises(StatisticsError):
        stats.credible_places([0.0, 1.0], 1.0)
