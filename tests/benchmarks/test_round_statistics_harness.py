"""The pure parts of benchmarks/round_statistics.py: its scheduler model, its per-round statistics and
its vectorised decision, held against pairbench's own stopping path (no timing here)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scripts import benchmark_script

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, verdict_of
from pairbench.stats.sequential import RunningSequence

study = benchmark_script("round_statistics")


def looked_one_round_at_a_time(values: np.ndarray, min_rounds: int) -> tuple[str, int]:
    """compare's rule, round by round: the running sequence and ``verdict_of`` from ``min_rounds`` on."""
    criteria = Criteria(alpha=study.ALPHA, threshold=study.THRESHOLD_PCT, tuned=study.T_OPT)
    running = RunningSequence(criteria.level_alpha, criteria.t_opt)
    for n, value in enumerate(values, start=1):
        running.extend([value])
        if n >= min_rounds:
            verdict, _, _ = verdict_of(lambda: anytime_effect(running), criteria)
            if verdict.decided:
                return verdict.verdict, n
    return "inconclusive", values.size


@pytest.mark.parametrize("shift", [0.0, 0.004, 0.01, -0.02])
def test_the_vectorised_decision_is_the_stopping_rules_round_by_round(shift):
    rng = np.random.default_rng(7)
    values = shift + rng.standard_t(3, (40, 150)) * 0.01
    ends = np.tile(np.arange(1, 151) * 0.1, (40, 1))
    found = study.sign_verdicts(values, np.ones(values.shape, dtype=bool), ends, budget_s=1e9)
    for i in range(40):
        assert (found["verdict"][i], found["rounds"][i]) == looked_one_round_at_a_time(values[i], study.MIN_ROUNDS)


def test_rounds_a_trim_leaves_out_do_not_count_toward_the_sequence():
    rng = np.random.default_rng(8)
    kept_values = 0.02 + rng.normal(0.0, 0.005, 60)
    values = np.full(120, -5.0)
    values[1::2] = kept_values  # every other round is wildly negative, and dropped
    kept = np.zeros(120, dtype=bool)
    kept[1::2] = True
    found = study.sign_verdicts(values[None], kept[None], np.arange(1, 121)[None] * 0.1, budget_s=1e9,
                                min_rounds=1)
    verdict, n = looked_one_round_at_a_time(kept_values, 1)
    assert found["verdict"][0] == verdict == "slower" and found["rounds"][0] == 2 * n


def test_the_budget_ends_the_looks_with_the_first_round_started_after_it():
    values = np.tile([0.5, -0.5], 25)[None]  # wide noise: never decided
    ends = (np.arange(1, 51) * 1.0)[None]
    found = study.sign_verdicts(values, np.ones_like(values, dtype=bool), ends, budget_s=20.0)
    assert found["verdict"][0] == "inconclusive" and found["rounds"][0] == 21  # round 21 started at 20 s


def test_a_sample_is_its_cpu_time_plus_other_tasks_slices_counted_as_switches():
    rng = np.random.default_rng(9)
    machine = study.Machine()
    need = np.full(4000, 25e6)
    alone = study.sample(rng, machine, need, np.zeros(4000, dtype=np.int64))
    crowded = study.sample(rng, machine, need, np.full(4000, 4))
    assert np.all(alone.wall >= alone.cpu) and np.all(crowded.wall >= crowded.cpu)
    assert np.median(alone.wall / alone.cpu) < 1.01 and np.median(alone.switches) <= 1
    # two competitors on its CPU: it waits two slices per slice it runs, one switch each
    assert 2.7 < np.median(crowded.wall / crowded.cpu) < 3.3
    assert 7 <= np.median(crowded.switches) <= 9
    assert abs(np.median(np.log(crowded.cpu / alone.cpu))) < 0.01


@pytest.mark.parametrize("name", ["wall", "wall min-k", "wall median-k", "cpu median-k", "wall, fewer switches"])
def test_every_statistic_is_symmetric_about_zero_when_nothing_changed(name):
    rng = np.random.default_rng(10)
    k = 1 if study.STATISTICS[name][0] == "1" else 3
    rounds = study.simulate(rng, study.Machine(), study.LOADS["phased+2"], 25e6, 0.0, 60, k, budget_s=6.0)
    values, kept = study.STATISTICS[name][1](rounds)
    positive = int(np.sum(values[kept] > 0))
    assert sps.binomtest(positive, int(kept.sum()), 0.5).pvalue > 0.001


def test_a_ramp_rises_to_two_busy_tasks_and_drops_back():
    rng = np.random.default_rng(11)
    busy = study.shape_over_time(rng, study.LOADS["ramp+2"], 200, int(study.RAMP_S / study.STEP_S))
    assert busy.min() == 0 and busy.max() == 2
    assert math.isclose(busy.mean(), 1.0, abs_tol=0.05)
