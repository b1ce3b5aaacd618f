"""The suite's geometric mean when each benchmark's rounds stopped by the sequence: it rests on
each benchmark's first rounds, those it took whatever its values said, so when it stopped does not
bias it (``analysis.suite.unstopped``)."""

from __future__ import annotations

import numpy as np
import pytest
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, verdict_of
from pairbench.analysis.suite import unstopped
from pairbench.model import BenchmarkKey
from pairbench.stats.sequential import RunningSequence
from pairbench.store import shards

BASE = 1_000_000.0


def stopped(values: np.ndarray, criteria: Criteria, min_rounds: int) -> np.ndarray:
    """The rounds compare's path takes of ``values``: from ``min_rounds`` on, until decided."""
    rs = RunningSequence(criteria.level_alpha, criteria.t_opt)
    rs.extend(values[:min_rounds - 1])
    for i in range(min_rounds - 1, values.size):
        rs.extend(values[i:i + 1])
        if verdict_of(lambda: anytime_effect(rs), criteria)[0].decided:
            return values[:i + 1]
    return values


def suite(ratios: list[np.ndarray], min_runs: int):
    samples = {}
    for b, values in enumerate(ratios):
        samples[(b, 0)] = series(np.full(len(values), BASE), start_seq=0, stride=2)
        samples[(b, 1)] = series(BASE * np.exp(values), start_seq=1, stride=2)
    names = [f"BM_{b}" for b in range(len(ratios))]
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(n) for n in names], min_runs=min_runs)
    return run.replace(suite=shards.suite_record(names, None, "gbench"))


def test_the_geometric_mean_of_rounds_stopped_by_the_sequence_is_not_biased_by_when_they_stopped():
    # 60 benchmarks, none changed, whose candidate has occasional slow rounds (+20% in 10% of rounds,
    # centred: the mean log-ratio is exactly 0), each stopped as compare stops it. The mean of every
    # round taken was -0.46% [-0.70%, -0.21%], missing the true 0: a benchmark stops sooner when its
    # first rounds hold fewer slow ones. Its first rounds give -0.16% [-0.53%, +0.22%].
    k, min_runs = 60, 10
    criteria = Criteria(alpha=0.01, threshold=1.0, family=k)
    rng = np.random.default_rng(702)
    ratios = [stopped(0.01 * rng.standard_normal(200) + 0.2 * (rng.random(200) < 0.1) - 0.02, criteria, min_runs)
              for _ in range(k)]
    g = analyse(suite(ratios, min_runs)).suite.geometric_mean
    assert g.low <= 0.0 <= g.high and abs(g.estimate) < 0.25
    assert g.method.startswith("studentized bootstrap of each benchmark's first rounds")


def test_the_first_rounds_are_those_before_the_run_could_stop_or_every_round_with_fixed_rounds():
    criteria = Criteria(alpha=0.01, threshold=1.0, family=30)
    values = np.arange(100.0)
    first = criteria.first_verdict_round()
    assert unstopped(values, 100, criteria, 10).size == first > 10  # the sequence is not bounded before
    assert unstopped(values, 100, criteria, 64).size == 64
    assert unstopped(values, 800, criteria, 64).size == first  # block medians of 8 rounds: 8 blocks < first
    assert unstopped(values[:5], 5, criteria, 64).size == 5  # stopped by the clock before: all of them
    fixed = Criteria(alpha=0.01, threshold=1.0, family=30, anytime=False)
    assert unstopped(values, 100, fixed, 64).size == 100
    assert pytest.approx(criteria.first_verdict_round()) == first
