"""The pure parts of benchmarks/metric_sign_test.py: its vectorised stopping on the time's verdict,
held against pairbench's own stopping path round by round, and its count of false verdicts against
scipy's binomial test (no timing here)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from scripts import benchmark_script

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, verdict_of
from pairbench.stats.sequential import RunningSequence

study = benchmark_script("metric_sign_test")


def stopped_one_round_at_a_time(values: np.ndarray, first: int) -> int:
    """The round at which ``verdict_of`` on the running sequence first decides, from ``first`` on."""
    criteria = Criteria(alpha=study.ALPHA, threshold=1.0)
    running = RunningSequence(criteria.level_alpha, criteria.t_opt)
    for n, value in enumerate(values, start=1):
        running.extend([value])
        if n >= first and verdict_of(lambda: anytime_effect(running), criteria)[0].decided:
            return n
    return values.size


@pytest.mark.parametrize("shift", [0.0, 0.005, -0.02])
def test_the_vectorised_stop_is_the_time_verdict_s_round_by_round(shift):
    rng = np.random.default_rng(11)
    values = shift + rng.standard_t(3, (30, 160)) * 0.01
    stops = study.stopping_rounds(values, 32, study.ALPHA)
    assert [int(n) for n in stops] == [stopped_one_round_at_a_time(v, 32) for v in values]


def test_a_false_verdict_is_a_binomial_test_at_alpha_on_the_rounds_so_far():
    rng = np.random.default_rng(12)
    base, cand = rng.poisson(1.0, (200, 60)), rng.poisson(1.0, (200, 60))
    rounds = rng.integers(10, 61, 200)
    expected = np.mean([sps.binomtest(int(np.sum(c[:n] > b[:n])), int(np.sum(c[:n] != b[:n])), 0.5).pvalue <= 0.2
                        for b, c, n in zip(base, cand, rounds, strict=True)])
    assert study.false_rate(base, cand, rounds, 0.2) == pytest.approx(expected)
    assert 0 < expected < 0.2
