"""Several repetitions of a benchmark in one harness invocation (Go's ``-test.count``): every repetition
is a stored sample of the invocation's round, a round's value of a side is the median of its measured
repetitions, and the stopping rule, the stored samples and ``show`` all agree on it.

Driven by the real sampler and stopping rule, with a target that yields an invocation's repetitions as
the harness target does (no process runs: the times are scripted)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from pairbench.analysis.comparison import Criteria
from pairbench.analysis.pairing import paired_values, round_values
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.executor import Execution
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import Row
from pairbench.model import PRIMARY_METRIC, REPETITION_METRIC, Sample, Samples


@dataclass
class RepeatingTarget:
    """An invocation of ``repetitions`` repetitions (the first ``warmups`` stored as warmups), each of
    ``iterations`` iterations, taking the next times of ``times`` (ns per iteration)."""

    name: str
    times: list[float]
    repetitions: int = 4
    warmups: int = 1
    iterations: int = 100

    def execute(self, executor, *, timeout_ns=None) -> tuple[Row, ...]:
        start = executor.now_ns()
        execution = Execution(wall_ns=50_000_000, start_ns=start, user_ns=30_000_000, sys_ns=10_000_000)
        return tuple(Row(0, execution, self.iterations,
                         {PRIMARY_METRIC: self.times.pop(0) * self.iterations, REPETITION_METRIC: float(j)},
                         priming=j <= self.warmups)
                     for j in range(1, self.repetitions + 1))


class Clock:
    def __init__(self):
        self.t = 0

    def now_ns(self) -> int:
        self.t += 1_000_000
        return self.t


def sampled(base: list[float], cand: list[float], rounds: int, metric: str = "wall", **target):
    rule = StoppingRule(Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1, metric=metric), 0, [1])
    plan = SamplingPlan(targets=(RepeatingTarget("a", base, **target), RepeatingTarget("b", cand, **target)),
                        stop=StopRule(runs=rounds), seed=3)
    sampler = Sampler(Clock(), plan, sinks=[rule])
    sampler.run()
    series = sampler.series()
    return rule, series[(0, 0)], series[(0, 1)]


def test_every_repetition_is_stored_and_the_warmup_ones_are_never_paired():
    rng = np.random.default_rng(1)
    _, base, cand = sampled(list(rng.uniform(90, 110, 40)), list(rng.uniform(90, 110, 40)), 10)
    assert len(base) == len(cand) == 40
    warm = base["warmup"] == 1
    assert base[REPETITION_METRIC][warm].tolist() == [1.0] * 10 and set(base["pair"][warm]) == {-1}
    measured = base.measured()
    assert len(measured) == 30 and sorted(set(measured["pair"])) == list(range(10))
    assert measured.invocations() == 10 and base.invocations() == 10


def test_a_rounds_value_is_the_median_of_its_measured_repetitions():
    # round r: the warmup repetition far off, then three whose median is 100 + r (baseline) and 200 + r
    base = [v for r in range(6) for v in (1000.0, 99.0 + r, 100.0 + r, 130.0 + r)]
    cand = [v for r in range(6) for v in (5.0, 200.0 + r, 150.0 + r, 260.0 + r)]
    _, b, c = sampled(base, cand, 6)
    values_b, values_c = paired_values(b, c)
    assert values_b.tolist() == pytest.approx([100.0 + r for r in range(6)])
    assert values_c.tolist() == pytest.approx([200.0 + r for r in range(6)])


def test_the_stopping_rule_decides_on_the_values_the_stored_samples_give():
    rng = np.random.default_rng(7)
    base, cand = list(rng.lognormal(0, 0.05, 4 * 40) * 100), list(rng.lognormal(0.01, 0.05, 4 * 40) * 100)
    for metric in ("wall", "cpu"):
        rule, b, c = sampled(list(base), list(cand), 40, metric=metric)
        values_b, values_c = paired_values(b, c, metric)
        assert rule.values() == pytest.approx(np.log(values_c / values_b))


def test_a_and_a_swapped_give_the_negated_round_values():
    rng = np.random.default_rng(11)
    base, cand = list(rng.uniform(90, 110, 4 * 12)), list(rng.uniform(90, 110, 4 * 12))
    _, b, c = sampled(list(base), list(cand), 12)
    _, b2, c2 = sampled(list(cand), list(base), 12)
    forward = np.log(np.divide(*paired_values(b, c)[::-1]))
    backward = np.log(np.divide(*paired_values(b2, c2)[::-1]))
    assert forward == pytest.approx(-backward)


def test_samples_without_repetitions_keep_one_value_per_round():
    rows = [Sample(wall_ns=100 + i, pair=i, iterations=1) for i in range(5)]
    samples = Samples.from_rows(rows)
    assert round_values(samples, np.arange(5)).tolist() == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert samples.invocations() == 5


def test_round_values_group_a_rounds_repetitions_wherever_they_are_stored():
    # two rounds' repetitions interleaved in the stored order (as two jobs' journals could leave them)
    rows = [Sample(wall_ns=1, pair=p, iterations=1) for p in (1, 0, 1, 0, 1, 0)]
    samples = Samples.from_rows(rows, {PRIMARY_METRIC: [10, 1, 30, 3, 20, 2],
                                       REPETITION_METRIC: [1, 1, 2, 2, 3, 3]})
    first_of_each = np.array([1, 0])  # round 0's first sample is row 1, round 1's row 0
    assert round_values(samples, first_of_each).tolist() == [2.0, 20.0]
    assert samples.invocations() == 2
