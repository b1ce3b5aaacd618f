"""A Go test binary's CPU time is its process's own, less what an invocation costs besides its loops:
the cost is read from the validation invocations of both sides together (so an A/A stays symmetric),
each repetition of a round's invocation carries its share of the rest, and ``--metric auto`` decides on
it although the Go runtime's threads give up the CPU hundreds of times an invocation."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from pairbench.analysis.comparison import Criteria, compare, cpu_use_of, metric_of
from pairbench.analysis.pairing import Pairing, paired_values
from pairbench.analysis.process_cpu import fixed_cpu_ns
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.executor import Execution
from pairbench.measure.harnesses.base import Program, Report
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import Row
from pairbench.model import (
    CPU_METRIC,
    FIXED_CPU_METRIC,
    PRIMARY_METRIC,
    REPETITION_METRIC,
    BenchmarkKey,
)


def test_the_fixed_cost_is_the_theil_sen_intercept_of_cpu_time_on_iterations():
    iterations = np.array([1, 2, 4, 8] * 6, dtype=float) * 65_536
    rng = np.random.default_rng(4)
    cpu = 5_000_000 + 25.0 * iterations + rng.normal(0, 50_000, iterations.size)
    cpu[3] += 40_000_000  # one invocation another task slowed
    expected = sps.theilslopes(cpu, iterations).intercept
    assert fixed_cpu_ns(iterations, cpu) == expected
    assert abs(expected - 5_000_000) < 400_000  # the outlier moved it little
    assert fixed_cpu_ns(iterations, 25.0 * iterations - 1e6) == 0.0  # a cost is never negative
    assert fixed_cpu_ns([65_536] * 8, [7e6] * 8) is None  # one iteration count: no line
    assert fixed_cpu_ns([1, 2, 4], [3, 4, 6]) is None  # too few invocations


def test_each_repetition_carries_its_share_of_the_process_s_cpu_time_less_the_fixed_cost(tmp_path):
    target = HarnessTarget(None, Program(("x.test",)), "A", "BenchmarkX", 0, 1000, 10_000_000, tmp_path,
                           OutputFile(tmp_path / "out"), repetitions=4, warmups=1, fixed_cpu_ns=5_000_000)
    execution = Execution(wall_ns=200_000_000, start_ns=0, user_ns=40_000_000, sys_ns=5_000_000)
    rows = [target.repetition_row(execution, Report("BenchmarkX", 1000, 9_000_000.0, {}), j, 4) for j in range(1, 5)]
    assert [r.metrics[CPU_METRIC] for r in rows] == [10_000_000.0] * 4  # (45 - 5) ms over 4 repetitions
    assert {r.metrics[FIXED_CPU_METRIC] for r in rows} == {5_000_000.0}
    assert [r.priming for r in rows] == [True, False, False, False]
    plain = HarnessTarget(None, Program(("x.test",)), "A", "BenchmarkX", 0, 1000, 10_000_000, tmp_path,
                          OutputFile(tmp_path / "out"), repetitions=4, warmups=1)
    assert CPU_METRIC not in plain.repetition_row(execution, Report("BenchmarkX", 1000, 9e6, {}), 2, 4).metrics


class GoLike:
    """A Go invocation of 4 repetitions, 3 measured: its process gives up the CPU 80 times (the runtime's
    threads), is interrupted twice, and has the CPU 90% of its wall time; its loops' wall times vary."""

    def __init__(self, name: str, cpu_per_op: float, rng, fixed: float | None):
        self.name, self.cpu_per_op, self.rng, self.fixed = name, cpu_per_op, rng, fixed

    def execute(self, executor, *, timeout_ns=None) -> tuple[Row, ...]:
        loops = 4 * 1000 * self.cpu_per_op
        cpu = int(5_000_000 + loops * (1 + self.rng.normal(0, 0.002)))
        execution = Execution(wall_ns=int(cpu / 0.9), start_ns=executor.now_ns(), user_ns=cpu, voluntary_cs=80,
                              involuntary_cs=2)
        rows = []
        for j in range(1, 5):
            metrics = {PRIMARY_METRIC: 1000 * self.cpu_per_op * self.rng.lognormal(0, 0.3), REPETITION_METRIC: float(j)}
            if self.fixed is not None:
                metrics |= {CPU_METRIC: max(cpu - self.fixed, 0) / 4, FIXED_CPU_METRIC: self.fixed}
            rows.append(Row(0, execution, 1000, metrics, priming=j == 1))
        return tuple(rows)


class Clock:
    t = 0

    def now_ns(self) -> int:
        self.t += 1_000_000
        return self.t


def go_like(fixed: float | None, rounds: int = 40):
    rng = np.random.default_rng(9)
    rule = StoppingRule(Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1, metric="auto"), 0, [1])
    plan = SamplingPlan(targets=(GoLike("a", 20.0, rng, fixed), GoLike("b", 20.0, rng, fixed)), stop=StopRule(runs=rounds),
                        seed=3)
    sampler = Sampler(Clock(), plan, sinks=[rule])
    sampler.run()
    series = sampler.series()
    return rule, Pairing(BenchmarkKey("BenchmarkX"), "A", "B", series[(0, 0)], series[(0, 1)])


def test_auto_decides_a_go_benchmark_on_its_process_cpu_time_and_the_stopping_rule_agrees():
    rule, pairing = go_like(fixed=5_000_000)
    metric, use = metric_of(pairing, Criteria(metric="auto"))
    assert metric == "cpu" and use.kind == "unknown" and not use.waits  # the runtime's 80 switches: no waits
    assert rule._metric[(0, 0, 1)] == "cpu"
    base, cand = paired_values(pairing.base, pairing.cand, "cpu")
    assert np.allclose(base, base[0], rtol=0.02) and np.allclose(cand, cand[0], rtol=0.02)  # steady, unlike wall
    found, _ = compare(pairing, Criteria(metric="auto"))
    assert (found.metric, found.verdict.verdict) == ("cpu", "equivalent")  # where wall time spreads 30%
    (note,) = [n for n in found.notes if n.code == "repeated-invocations"]
    assert note.data["fixed_cpu_ns"] == 5_000_000


def test_without_the_process_s_own_cpu_time_the_runtime_s_switches_still_count_as_waiting():
    rule, pairing = go_like(fixed=None)
    metric, use = metric_of(pairing, Criteria(metric="auto"))
    assert (metric, use.kind) == ("wall", "waits") and rule._metric[(0, 0, 1)] == "wall"
    assert cpu_use_of((pairing.base, np.arange(3))).waits
