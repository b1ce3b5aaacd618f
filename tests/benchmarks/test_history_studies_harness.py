"""The pure parts of benchmarks/history_steps.py, history_spans.py and suite_geomean.py: scores, noise
laws, a tiny run.

The studies themselves are run by hand (benchmarks/RESULTS.md, issue 27)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scripts import benchmark_script

steps = benchmark_script("history_steps")
geomean = benchmark_script("suite_geomean")
spans = benchmark_script("history_spans")

FEW_HISTORIES = 4


@pytest.fixture
def few_histories(monkeypatch):
    """The steps, spans and miss studies on at most 4 histories a cell instead of their floor of 20: a tiny
    run asserts no figure, only that every cell is drawn, detected, scored and printed (the figures
    are the studies' own, run by hand). The scripts' own ``count_for`` still decides each count."""
    counted = steps.count_for
    few = lambda cell, scale: min(FEW_HISTORIES, counted(cell, scale))  # noqa: E731
    monkeypatch.setattr(steps, "count_for", few)  # history_short_misses reads it as study.count_for
    monkeypatch.setattr(spans, "count_for", few)  # imported by name from history_steps


def test_a_step_cell_counts_a_step_within_one_commit_and_the_others_apart():
    cell = steps.Cell("step", "iid", 100, 0.03, 3.0)
    cell.truth = [40, 60]
    cell.found["m"] = [([41, 80], 0), ([57], 0)]
    s = steps.score(cell, "m")
    assert (s["found_1"], s["found_2"]) == (0.5, 0.5) and s["others_per_1000"] == pytest.approx(10.0)
    cell.found["m"] = [([40], 0), ([61], 0)]
    assert (steps.score(cell, "m")["found_0"], steps.score(cell, "m")["found_1"]) == (0.5, 1.0)


def test_a_null_and_a_drift_cell_count_false_steps_and_single_steps():
    null = steps.Cell("null", "ar", 50, 0.01)
    null.found["m"] = [([10], 0), ([], 1)]
    assert steps.score(null, "m")["per_1000"] == pytest.approx(10.0)
    drift = steps.Cell("drift", "iid", 50, 0.01, 5.0)
    drift.found["m"] = [([25], 0), ([], 1), ([10, 30], 0), ([25], 1)]
    assert steps.score(drift, "m")["one_step"] == 0.25 and steps.score(drift, "m")["drift"] == 0.5


@pytest.mark.parametrize("kind", ["iid", "ar", "t3", "ar-t3"])
def test_the_model_noises_have_sd_one(kind):
    z = steps.model_noise(kind, 200_000, np.random.default_rng(1))
    assert np.std(z) == pytest.approx(1.0, rel=0.03)


@pytest.mark.slow
def test_a_tiny_study_runs_end_to_end(capsys, few_histories):
    assert steps.main(["--lengths", "30", "--scale", "0.01"]) == 0
    assert "| null iid n=30 cv=1% |" in capsys.readouterr().out


def test_a_tiny_calibration_runs_with_and_without_the_evidence_pass(capsys):
    assert steps.main(["--calibrate", "--lengths", "30", "--scale", "0.05", "--scenarios", "step",
                       "--noises", "iid", "--evidences", "none,3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 3 | 20 |")]
    assert [row.split(" | ")[4] for row in rows[-2:]] == ["None", "3.0"]  # the table after the progress


def test_a_span_holds_a_step_when_the_true_step_lies_in_it_and_near_counts_steps_within_ten():
    found = [[(41, 38, 44)], [(57, 56, 58)], [(70, None, None)], [], [(30, 30, 30), (90, 88, 91)]]
    s = spans.score_steps(found, [40, 60, 62, 50, 90])
    assert (s["on"], s["within_1"], s["near"], s["spanned"]) == (0.2, 0.4, 0.8, 0.4)
    assert s["held_near"] == 0.5 and s["unspanned"] == 0.25
    assert (s["width_median"], s["width_p90"]) == (4.0, pytest.approx(6.4))


@pytest.mark.slow
def test_a_tiny_span_study_runs_end_to_end(capsys, few_histories):
    assert spans.main(["--lengths", "30", "--scale", "0.02", "--scenarios", "step,drift"]) == 0
    out = capsys.readouterr().out
    assert "| step 3 SD iid n=30 cv=3% [" in out and "| drift +5% ar n=30 cv=1% [" in out


@pytest.mark.parametrize("kind", geomean.NOISES)
def test_the_geomean_noises_have_median_zero_sd_one_and_the_stated_mean(kind):
    """The mean is the closed form (lognormal: (e^(s^2/2) - 1) / sd; Exp(1) - ln 2: 1 - ln 2)."""
    e = geomean.noise(kind, 2_000_000, np.random.default_rng(2))
    assert abs(np.median(e)) < 0.005 and np.std(e) == pytest.approx(1.0, rel=0.05 if kind == "t3" else 0.01)
    assert np.mean(e) == pytest.approx(geomean.noise_mean(kind), abs=0.01)
    assert geomean.noise_mean("exponential") == pytest.approx(1 - math.log(2))


def test_the_store_studys_detector_timing_finds_no_step_in_the_flat_series_and_one_in_the_other():
    store = benchmark_script("history_store")
    found = store.detector(n=400, repeats=1)
    assert (found["no step: steps"], found["one step: steps"]) == (0, 1)
    assert found["no step"] > 0 and found["one step"] > 0


def test_the_placement_oracle_finds_a_step_without_noise_and_whitening_recovers_the_innovations():
    bound = benchmark_script("history_placement_bound")
    y = np.where(np.arange(100) >= 37, bound.STEP_SDS, 0.0)[None, :]
    assert [int(v[0]) for v in bound.oracle(y, 0.5)] == [37, 37, 37, 37, 37]
    rng = np.random.default_rng(3)
    e = rng.standard_normal(50)
    ar = np.empty(50)
    ar[0] = e[0] / np.sqrt(1 - 0.25)
    for t in range(1, 50):
        ar[t] = 0.5 * ar[t - 1] + e[t]
    assert np.allclose(bound.whitened(ar, 0.5), e)
    assert bound.interval(95, 100)[0] < 0.95 < bound.interval(95, 100)[1]


def test_the_small_history_tests_find_a_clean_step_at_its_place_and_run_end_to_end(capsys):
    small = benchmark_script("history_small_detection")
    y = np.where(np.arange(30) >= 11, 3.0, 0.0)[None, :] + 0.01 * np.random.default_rng(4).standard_normal((1, 30))
    t2, t2_at, gls, gls_at = small.oracle_statistics(y, 0.5)
    estimated, estimated_at = small.estimated_statistic(y)
    assert (int(t2_at[0]), int(gls_at[0]), int(estimated_at[0])) == (11, 11, 11)
    assert t2[0] > 20 and gls[0] > t2[0] and estimated[0] > 50
    assert small.threshold(np.arange(101.0)) == pytest.approx(97.0)
    assert small.main(["--histories", "10"]) == 0  # every part, on the fewest histories a threshold is read from
    assert "| AR(1) phi 0.5 | 10 |" in capsys.readouterr().out


evidence = benchmark_script("history_step_evidence")


def test_the_evidence_marginal_likelihood_is_the_integral_over_the_level_and_sd():
    """p(y | phi) with a flat prior on the level and 1 / sd on the SD, by scipy's numerical
    integration of the AR(1) normal density (its covariance sd^2 phi^|i - j| / (1 - phi^2)), written
    out from its definition (scipy's multivariate_normal gives the same integral, 50 times slower)."""
    from scipy import integrate

    n, phi = 6, 0.4
    y = np.random.default_rng(3).standard_normal(n)
    i = np.arange(n)
    cov = phi ** np.abs(i[:, None] - i[None, :]) / (1 - phi * phi)
    inverse, log_det = np.linalg.inv(cov), np.linalg.slogdet(cov)[1]

    def density(mu: float, s: float) -> float:  # N(y; mu 1, s^2 cov) times the prior 1 / s
        r = y - mu
        return math.exp(-0.5 * float(r @ inverse @ r) / (s * s) - n * math.log(s) - 0.5 * log_det
                        - 0.5 * n * math.log(2 * math.pi)) / s

    expected, _ = integrate.dblquad(density, 0.05, 20, -20, 20, epsabs=1e-13)
    w, x = evidence.whitened(y[None, :], phi), evidence.whitened(np.ones((1, n)), phi)
    assert math.exp(evidence._log_marginal(w, x, phi)[0]) == pytest.approx(expected, rel=1e-3)


def test_the_evidence_favours_a_clear_step_and_places_it():
    y = evidence.noise("ar", 60, 2, np.random.default_rng(4))
    y[0, 30:] += 4.0
    log_bf, place = evidence.evidence(y)
    assert log_bf[0] > 10 > log_bf[1] and abs(int(place[0]) - 30) <= 1


misses = benchmark_script("history_short_misses")


def test_a_miss_is_put_down_to_the_stage_that_lost_it():
    from pairbench.stats import Segmentation

    none, drift, step = Segmentation((), (False,)), Segmentation((), (True,)), Segmentation((14,), (False, False))
    seen = {"pelt": none, "breaks": (), "level": 4.0, "line": 1.0, "lasting": 5.0}
    assert misses.cause(seen, 15) == "PELT none, evidence below"
    assert misses.cause({**seen, "level": 6.0, "line": -0.5}, 15) == "PELT none, a line as likely"
    assert misses.cause({**seen, "level": 6.0, "breaks": (5,)}, 15) == "PELT none, split elsewhere"
    assert misses.cause({**seen, "pelt": drift}, 15) == "PELT drift"
    assert misses.cause({**seen, "pelt": step, "breaks": (13,)}, 15) == "placed 2+ off"
    assert misses.cause({**seen, "pelt": step, "breaks": (16,)}, 15) == "found"
    assert misses.cause({**seen, "pelt": Segmentation((5,), (False, False)), "breaks": (5,)}, 15) == "other"


def test_a_tiny_miss_study_runs_end_to_end(capsys, few_histories):
    assert misses.main(["--scale", "0.02", "--noises", "iid"]) == 0
    out = capsys.readouterr().out
    assert f"**step 3 SD iid n=30 cv=3%** ({FEW_HISTORIES} histories)" in out and "**null iid n=30 cv=1%**" in out


def test_a_tiny_ramp_study_runs_every_part_and_counts_one_step_only_among_single_breaks(capsys):
    ramps = benchmark_script("history_ramps")
    cell = ramps.ramp_cell("iid", 2.0, 20, 4, 46)
    assert 0.0 <= cell["one"] <= cell["before"] <= 1.0 and cell["spread"] > 0.0
    ramps.main(["--parts", "ramp,step,null", "--noises", "iid", "--sds", "2", "--widths", "20", "--lengths", "50",
                "--histories", "2"])
    out = capsys.readouterr().out
    assert "| iid | 2 SD | 20 commits |" in out and "| step | iid | 50 |" in out and "| null | iid | 50 |" in out


def test_the_short_history_study_gives_its_null_rate_an_interval_from_the_histories_counts():
    short = benchmark_script("history_short")
    # 2 breaks in 4 histories of 10 commits: 50 per 1,000; the counts' SD 0.577, so 1.96 x 1000 x 0.577 / 2 / 10
    said = short.interval(np.array([0, 1, 0, 1]), 10)
    assert said == "2 in 40 commits: 50.000 per 1,000 (95% -6.580-106.580)"


def test_the_short_history_study_runs_a_threshold_again_only_where_the_defaults_found_a_break():
    short = benchmark_script("history_short")
    false = short.null_by_threshold("ar5t3", 30, 60, np.random.default_rng(3), (short.SHORT_EVIDENCE, 9.0))
    assert (false[:, 1] == false[:, 0]).all()  # the default threshold again: the same breaks
    assert (false[:, 2] <= false[:, 0]).all() and (false[false[:, 0] == 0, 1:] == 0).all()
