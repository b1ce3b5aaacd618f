"""The one Sampler: interleaved randomized rounds, targets of several benchmarks, and its events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fakes import FakeExecutor

from pairbench.command import Command
from pairbench.errors import CommandFailed, HelperCommandFailed
from pairbench.measure.sampler import Measured, RoundEnd, Sampler, SamplingPlan, Sink, StopRule
from pairbench.measure.targets import CommandTarget, Row

A, B, C = (Command(text, (text,)) for text in ("a", "b", "c"))


class Recorder(Sink):
    def __init__(self):
        self.samples: list[Measured] = []
        self.rounds: list[RoundEnd] = []

    def on_sample(self, measured):
        self.samples.append(measured)

    def on_round(self, end):
        self.rounds.append(end)


def plan(*commands, runs=4, warmup=0, seed=1, **options):
    targets = tuple(CommandTarget(c, c.text) for c in commands)
    return SamplingPlan(targets, StopRule(runs=runs), warmup_rounds=warmup, seed=seed, **options)


def test_every_round_runs_each_side_once_in_a_seeded_random_order():
    executor = FakeExecutor(default=0.01)
    sampler = Sampler(executor, plan(A, B, C, runs=6))
    assert sampler.run() == "completed the requested 6 rounds"
    rounds = [executor.texts[i:i + 3] for i in range(0, 18, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds) and len({tuple(r) for r in rounds}) > 1
    again = FakeExecutor(default=0.01)
    Sampler(again, plan(A, B, C, runs=6)).run()
    assert again.texts == executor.texts


@pytest.mark.parametrize("sides", [2, 3, 7])
def test_a_seed_draws_the_rounds_orders_numpys_permutation_draws(sides):
    # the orders are shuffled in a list (cheaper between samples): a seed's orders are those
    # Generator.permutation draws from the same seed, as stored results were measured in
    commands = [Command(f"c{i}", (f"c{i}",)) for i in range(sides)]
    executor = FakeExecutor(default=0.01)
    Sampler(executor, plan(*commands, runs=40, warmup=2, seed=11)).run()
    rng = np.random.default_rng(11)
    expected = [f"c{i}" for _ in range(42) for i in rng.permutation(sides)]
    assert executor.texts == expected


def test_samples_carry_their_round_slot_order_and_warmup_flag():
    sampler = Sampler(FakeExecutor(default=0.01), plan(A, B, runs=2, warmup=1))
    sampler.run()
    rows = sampler.rows[(0, 0)]
    assert [(s.warmup, s.pair) for s in rows] == [(1, -1), (0, 0), (0, 1)]
    seqs = sorted(s.seq for series in sampler.rows.values() for s in series)
    assert seqs == list(range(6))


def test_sinks_see_each_sample_as_it_arrives_and_each_round_as_it_ends():
    recorder = Recorder()
    Sampler(FakeExecutor(default=0.01), plan(A, B, runs=3, warmup=1), sinks=[recorder]).run()
    assert len(recorder.samples) == 8
    assert [(r.round, r.warmup, r.rounds, r.taken) for r in recorder.rounds] == [
        (-1, True, 0, 2), (0, False, 1, 4), (1, False, 2, 6), (2, False, 3, 8)]
    assert all(len(r.samples) == 2 for r in recorder.rounds)


@dataclass(frozen=True)
class TwoBenchmarks:
    """A target whose one execution measures two benchmarks, the second with a float metric."""

    name: str = "harness"

    def execute(self, executor, *, timeout_ns):
        ex = executor.run(A, timeout_ns=timeout_ns)
        return (Row(0, ex, iterations=8), Row(1, ex, iterations=2, metrics={"value": 123.5}))


def test_one_execution_may_yield_rows_for_several_benchmarks_with_iterations_and_metrics():
    recorder = Recorder()
    sampler = Sampler(FakeExecutor(default=0.004), SamplingPlan((TwoBenchmarks(),), StopRule(runs=2)),
                      sinks=[recorder])
    sampler.run()
    assert sorted(sampler.rows) == [(0, 0), (1, 0)]
    assert [s.iterations for s in sampler.rows[(0, 0)]] == [8, 8]
    assert sampler.metrics[(1, 0)] == {"value": [123.5, 123.5]}
    assert recorder.samples[0].value == 0.004e9 / 8 and recorder.samples[1].value == 123.5 / 2


def test_a_failing_sample_is_kept_and_ends_sampling_with_the_advice():
    executor = FakeExecutor({"a": 0.01, "b": [0.01, {"duration": 0.01, "status": 3}]})
    sampler = Sampler(executor, plan(A, B, runs=5))
    with pytest.raises(CommandFailed, match=r"command 'b' failed on sample 2: exit code 3\. Use --ignore-failure"):
        sampler.run()
    assert [s.status for s in sampler.rows[(0, 1)]] == [0, 3]


def test_with_ignore_failure_failing_samples_are_kept_and_sampling_goes_on():
    executor = FakeExecutor({"a": 0.01, "b": {"duration": 0.01, "status": 1}})
    sampler = Sampler(executor, plan(A, B, runs=3, ignore_failure=True))
    sampler.run()
    assert [s.status for s in sampler.rows[(0, 1)]] == [1, 1, 1]


def test_a_failing_prepare_command_stops_sampling_before_its_sample():
    prepare = Command("prep", ("prep",))
    target = CommandTarget(A, "a", prepare=prepare)
    sampler = Sampler(FakeExecutor({"a": 0.01, "prep": {"duration": 0.001, "status": 2}}),
                      SamplingPlan((target,), StopRule(runs=3), seed=1))
    with pytest.raises(HelperCommandFailed, match="--prepare command 'prep' failed: exit code 2"):
        sampler.run()
    assert sampler.rows == {}


def test_a_failing_conclude_stops_sampling_but_keeps_the_sample_it_followed():
    conclude = Command("conc", ("conc",))
    recorder = Recorder()
    target = CommandTarget(A, "a", conclude=conclude)
    sampler = Sampler(FakeExecutor({"a": 0.01, "conc": {"duration": 0.001, "status": 4}}),
                      SamplingPlan((target,), StopRule(runs=3), seed=1), sinks=[recorder])
    with pytest.raises(HelperCommandFailed, match="--conclude command 'conc' failed: exit code 4"):
        sampler.run()
    assert [s.wall_ns for s in sampler.rows[(0, 0)]] == [10_000_000]
    assert len(recorder.samples) == 1  # the journal was told too


def test_processes_left_running_are_noted_once_per_side():
    executor = FakeExecutor({"a": {"duration": 0.01, "leftover_processes": 2}, "b": 0.01})
    sampler = Sampler(executor, plan(A, B, runs=3))
    sampler.run()
    assert [(n.code, n.data) for n in sampler.notes] == [("leftover-processes", {"side": "a", "count": 2})]


def test_adaptive_sampling_asks_the_decision_rule_only_from_min_runs_on():
    asked = []
    sampler = Sampler(FakeExecutor(default=0.01),
                      SamplingPlan((CommandTarget(A, "a"),), StopRule(min_runs=4, max_runs=50)),
                      decide=lambda: asked.append(1) or ("decided" if len(asked) == 3 else None))
    assert sampler.run() == "decided" and sampler.rounds == 6


def test_adaptive_sampling_stops_at_the_time_budget():
    sampler = Sampler(FakeExecutor(default=0.5),
                      SamplingPlan((CommandTarget(A, "a"),), StopRule(min_runs=2, max_time_ns=3 * 10**9)))
    assert sampler.run() == "reached the time budget (--max-time 3.00 s)" and sampler.rounds == 6


def test_the_time_budget_covers_warmup_and_ends_it_with_a_note():
    recorder = Recorder()
    runaway = FakeExecutor(default=0.1)
    plan = SamplingPlan((CommandTarget(A, "a"),), StopRule(min_runs=3, max_time_ns=10**9),
                        warmup_rounds=10**9)

    class Bounded(Sink):  # a budget ignored would sample forever: fail instead of hanging
        def on_sample(self, measured):
            assert len(runaway.calls) < 1000, "the time budget did not end warmup"

    sampler = Sampler(runaway, plan, sinks=[recorder, Bounded()])
    assert sampler.run() == "reached the time budget (--max-time 1.00 s)"
    warmups = [m.sample.warmup for m in recorder.samples]
    assert warmups == [1] * 10 + [0] * 3  # 1 s of 0.1 s warmups, then --min-runs
    assert [(n.code, n.data) for n in sampler.notes] == [
        ("warmup-cut-short", {"done": 10, "asked": 10**9})]


def test_with_a_fixed_number_of_runs_every_warmup_round_runs_whatever_the_time_budget():
    sampler = Sampler(FakeExecutor(default=0.5),
                      SamplingPlan((CommandTarget(A, "a"),), StopRule(runs=2, max_time_ns=10**9),
                                   warmup_rounds=4))
    sampler.run()
    assert [s.warmup for s in sampler.rows[(0, 0)]] == [1, 1, 1, 1, 0, 0] and sampler.notes == []
