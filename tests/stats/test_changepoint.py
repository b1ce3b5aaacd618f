"""PELT and the noise scale: the same breakpoints as ruptures (the reference), exact on clean steps."""

from __future__ import annotations

import numpy as np
import pytest
import ruptures

from pairbench import stats
from pairbench.errors import StatisticsError
from pairbench.stats import changepoint


def _series(rng, n: int) -> np.ndarray:
    y = rng.standard_t(3, size=n)
    for start in rng.integers(5, n - 5, size=rng.integers(0, 4)):
        y[start:] += rng.normal(0, 3)
    return y


@pytest.mark.parametrize("seed", range(40))
def test_pelt_finds_the_breakpoints_ruptures_finds(seed):
    """ruptures.Pelt(model="l2", jump=1) is the reference implementation of the same search."""
    rng = np.random.default_rng(seed)
    n, min_size = int(rng.integers(12, 160)), int(rng.integers(1, 6))
    y, penalty = _series(rng, n), float(rng.uniform(0.5, 25))
    expected = ruptures.Pelt(model="l2", min_size=min_size, jump=1).fit(y).predict(pen=penalty)[:-1]
    assert list(stats.pelt(y, penalty, min_size)) == expected


def test_pelt_finds_clean_steps_exactly_and_nothing_in_a_constant_series():
    y = np.concatenate([np.zeros(30), np.full(20, 5.0), np.full(25, 2.0)])
    assert stats.pelt(y, 1.0, 3) == (30, 50)
    assert stats.pelt(np.ones(100), 1.0, 3) == ()
    assert stats.pelt(np.arange(5.0), 1.0, 3) == ()  # shorter than two segments


def test_pelt_is_exact_on_a_large_offset():
    """Sums of squares are taken about the median, so a level of 1e9 loses nothing."""
    y = 1e9 + np.concatenate([np.zeros(40), np.full(40, 1.0)]) + np.tile([0.1, -0.1], 40)
    assert stats.pelt(y, 2.0, 2) == (40,)


@pytest.mark.parametrize(("y", "penalty", "min_size", "message"), [
    ([1.0, np.nan, 2.0], 1.0, 1, "finite"),
    ([[1.0, 2.0]], 1.0, 1, "one-dimensional"),
    ([1.0, 2.0], 0.0, 1, "penalty"),
    ([1.0, 2.0], 1.0, 0, "min_size"),
])
def test_pelt_refuses_what_it_cannot_segment(y, penalty, min_size, message):
    with pytest.raises(StatisticsError, match=message):
        stats.pelt(y, penalty, min_size)


def test_the_noise_scale_is_the_sd_of_normal_noise_and_ignores_steps():
    rng = np.random.default_rng(5)
    y = rng.normal(0, 2.0, 20_000)
    assert stats.noise_scale(y) == pytest.approx(2.0, rel=0.03)
    y[5_000:] += 50.0
    y[12_000:] -= 80.0
    assert stats.noise_scale(y) == pytest.approx(2.0, rel=0.03)
    with pytest.raises(StatisticsError, match="at least 3"):
        stats.noise_scale([1.0, 2.0])


# --------------------------------------------------------------------------- lines, noise, placement


def _rss(y: np.ndarray, line: bool) -> float:
    """Squared deviations from the mean or the least-squares line, by numpy's polyfit (the reference)."""
    if not line:
        return float(np.sum((y - y.mean()) ** 2))
    t = np.arange(y.size, dtype=float)
    return float(np.sum((y - np.polyval(np.polyfit(t, y, 1), t)) ** 2))


def _best_by_enumeration(y, breaks, penalty, min_length):
    """Every subset of ``breaks`` and every level/line choice of each part: the cheapest (exact)."""
    import itertools

    best = (np.inf, None)
    for k in range(len(breaks) + 1):
        for kept in itertools.combinations(breaks, k):
            edges = [0, *kept, y.size]
            parts = list(zip(edges[:-1], edges[1:], strict=True))
            for lines in itertools.product((False, True), repeat=len(parts)):
                if any(line and b - a < min_length for (a, b), line in zip(parts, lines, strict=True)):
                    continue
                cost = sum(_rss(y[a:b], line) + penalty * (1 + line) for (a, b), line in zip(parts, lines, strict=True))
                if cost < best[0] - 1e-9:
                    best = (cost, stats.Segmentation(tuple(kept), lines))
    return best[1]


@pytest.mark.parametrize("seed", range(25))
def test_joining_segments_into_lines_is_the_cheapest_choice_by_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 60))
    y = rng.normal(0, 1, n) + rng.uniform(-0.3, 0.3) * np.arange(n)
    cuts = sorted(rng.choice(np.arange(3, n - 2), size=int(rng.integers(0, 5)), replace=False).tolist())
    cuts = [c for i, c in enumerate(cuts) if not i or c - cuts[i - 1] >= 3]
    penalty, min_length = float(rng.uniform(1, 15)), int(rng.integers(3, 12))
    found = stats.with_lines(y, stats.Segmentation(tuple(cuts), (False,) * (len(cuts) + 1)), penalty, min_length)
    assert found == _best_by_enumeration(y, cuts, penalty, min_length)


def test_a_drift_cut_into_a_staircase_is_one_line_and_a_step_stays_a_step():
    t = np.arange(60, dtype=float)
    staircase = stats.Segmentation((15, 30, 45), (False,) * 4)
    drift = stats.with_lines(0.1 * t + np.tile([0.05, -0.05], 30), staircase, 1.0, 10)
    assert drift == stats.Segmentation((), (True,))
    step = stats.with_lines(np.where(t >= 30, 5.0, 0.0) + np.tile([0.05, -0.05], 30), staircase, 1.0, 10)
    assert step == stats.Segmentation((30,), (False, False))


def _ar1(rng, n: int, phi: float, sd: float) -> np.ndarray:
    from scipy.signal import lfilter

    return sd * np.sqrt(1 - phi * phi) * lfilter([1.0], [1.0, -phi], rng.standard_normal(n + 500))[500:]


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.8])
def test_the_serial_noise_is_the_ar1_process_simulated_whatever_the_steps(phi):
    """The reference is the simulation's own parameters: SD 2, the given phi, long-run SD
    2 sqrt((1 + phi) / (1 - phi)); three steps of 10 SDs, given as the segmentation."""
    rng = np.random.default_rng(11)
    y = _ar1(rng, 40_000, phi, 2.0)
    y[10_000:] += 20.0
    y[20_000:] -= 35.0
    y[30_000:] += 50.0
    noise = stats.serial_noise(y, stats.Segmentation((10_000, 20_000, 30_000), (False,) * 4))
    assert noise.sd == pytest.approx(2.0, rel=0.03) and noise.phi == pytest.approx(phi, abs=0.02)
    assert noise.long_run_sd == pytest.approx(2.0 * np.sqrt((1 + phi) / (1 - phi)), rel=0.06)


def test_the_serial_noise_of_a_drifting_segment_is_taken_about_its_line():
    rng = np.random.default_rng(12)
    y = _ar1(rng, 20_000, 0.3, 1.0) + np.linspace(0, 40, 20_000)
    noise = stats.serial_noise(y, stats.Segmentation((), (True,)))
    assert noise.sd == pytest.approx(1.0, rel=0.03) and noise.phi == pytest.approx(0.3, abs=0.02)


def test_the_fit_is_each_segments_mean_or_line():
    y = np.concatenate([np.full(5, 2.0), np.arange(6, dtype=float)])
    fit = changepoint.fitted(y, stats.Segmentation((5,), (False, True)))
    assert np.allclose(fit, y) and stats.slope(np.arange(6.0) * 3 + 1) == pytest.approx(3.0)


def test_a_clear_step_is_put_on_its_commit_not_beside_it():
    """A clean step at 40 under small AR(1) noise (20 SDs), given two commits late: it is put back
    on 40. The three likeliest places are then 39-41 as much as 40-42 (the neighbours' likelihood
    is nil): without the weight of the exact place the window's tie goes to the given side."""
    rng = np.random.default_rng(13)
    y = _ar1(rng, 80, 0.5, 0.05) + np.where(np.arange(80) >= 40, 1.0, 0.0)
    late = stats.Segmentation((42,), (False, False))
    assert stats.refined(y, late, stats.SerialNoise(0.05, 0.5)).breaks == (40,)
    assert stats.refined(y, late, stats.SerialNoise(0.05, 0.5), exact=0.0).breaks == (41,)


def _reference_loglik(y: np.ndarray, q: int, lines: tuple[bool, bool], noise) -> float:
    """The profile log-likelihood of a step at ``q`` under Gaussian AR(1) noise, from its full
    covariance matrix sd^2 phi^|i - j| (generalised least squares with the inverse covariance, not
    the whitening filter ``refined`` uses), up to a constant that does not depend on ``q``."""
    n = y.size
    i = np.arange(n)
    inverse = np.linalg.inv(noise.sd ** 2 * noise.phi ** np.abs(i[:, None] - i[None, :]))
    before = (i < q).astype(float)
    columns = [before, 1.0 - before] + [(i - (n - 1) / 2) * part for part, line in zip((before, 1.0 - before), lines,
                                                                                       strict=True) if line]
    x = np.column_stack(columns)
    r = y - x @ np.linalg.solve(x.T @ inverse @ x, x.T @ inverse @ y)
    return float(-0.5 * r @ inverse @ r)


def _reference_window_place(y, b, lines, noise, exact, reach=3, min_size=3):
    """The place within ``reach`` of ``b`` with the most likelihood summed over itself and its two
    neighbours, plus ``exact`` times its own (ties to the nearest ``b``), by enumeration with the
    full-covariance likelihood."""
    places = [q for q in range(b - reach - 1, b + reach + 2) if q >= min_size and y.size - q >= min_size]
    loglik = {q: _reference_loglik(y, q, lines, noise) for q in places}
    top = max(loglik.values())
    mass = {q: np.exp(v - top) for q, v in loglik.items()}
    centres = [q for q in places if abs(q - b) <= reach]
    return min(centres, key=lambda q: (-sum(mass.get(q + d, 0.0) for d in (-1, 0, 1)) - exact * mass[q], abs(q - b)))


@pytest.mark.parametrize("seed", range(20))
def test_a_step_goes_to_the_centre_of_its_likeliest_three_places_by_exact_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    n, phi, sd = int(rng.integers(14, 50)), float(rng.choice([0.0, 0.3, 0.5, 0.8])), float(rng.uniform(0.5, 2))
    tau = int(rng.integers(5, n - 5))
    lines = (bool(rng.integers(2)), bool(rng.integers(2)))
    y = _ar1(rng, n, phi, sd) + np.where(np.arange(n) >= tau, float(rng.uniform(1, 4)) * sd, 0.0)
    y += np.where(np.arange(n) < tau, 0.05, -0.03) * np.arange(n) * np.array(lines)[(np.arange(n) >= tau).astype(int)]
    b = int(np.clip(tau + rng.integers(-3, 4), 3, n - 3))
    noise, exact = stats.SerialNoise(sd, phi), float(rng.choice([0.0, 0.2, 1.0]))
    found = stats.refined(y, stats.Segmentation((b,), (lines[0], lines[1])), noise, exact=exact)
    assert found.breaks == (_reference_window_place(y, b, lines, noise, exact),)
    assert found.sloped == lines


def test_a_step_whose_likeliest_place_is_two_commits_off_is_placed_within_one():
    """AR(1) noise of phi 0.5 and SD 1, a step of 3 SDs at 30 of 60 (seed 25 of the 400 searched):
    the single likeliest place (maximum likelihood, phi and SD known) is 32, but the likelihood is
    flat over 30-32 and the three likeliest consecutive places are centred on 31."""
    rng = np.random.default_rng(25)
    y = _ar1(rng, 60, 0.5, 1.0) + np.where(np.arange(60) >= 30, 3.0, 0.0)
    noise = stats.SerialNoise(1.0, 0.5)
    likeliest = max(range(26, 35), key=lambda q: _reference_loglik(y, q, (False, False), noise))
    assert likeliest == 32
    assert stats.refined(y, stats.Segmentation((30,), (False, False)), noise).breaks == (31,)
    assert stats.refined(y, stats.Segmentation((32,), (False, False)), noise).breaks == (31,)


def test_without_noise_a_step_goes_to_its_single_best_place():
    y = np.where(np.arange(80) >= 40, 1.0, 0.0)
    late = stats.Segmentation((42,), (False, False))
    assert stats.refined(y, late, stats.SerialNoise(0.0, 0.0)).breaks == (40,)
    assert stats.refined(y, stats.Segmentation((), (False,)), stats.SerialNoise(1.0, 0.5)).breaks == ()


def test_a_window_of_an_exact_fit_takes_all_the_score_and_an_underflow_shares_it():
    scores = stats.window_scores(np.array([0.0, np.inf, -1.0, -np.inf]), 0.2)
    assert np.all(np.isfinite(scores)) and int(np.argmax(scores)) == 1
    assert np.all(stats.window_scores(np.full(4, -np.inf), 0.2)[1:3] == 3.2)
