"""The adaptive stopping rule: stops early on a clear effect, not on noise, at a measured error rate.

Simulated with the scripted executor on a virtual clock: machine drift, phases and
autocorrelated noise that hit both arms of a round alike (common mode), plus
independent per-run noise. Seeds are fixed, so every figure here reproduces.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fakes import FakeExecutor
from scipy import stats as sps

from pairbench.analysis import analyse
from pairbench.analysis.comparison import Criteria
from pairbench.analysis.criteria import tuning_rounds
from pairbench.analysis.stopping import StoppingRule
from pairbench.command import Command
from pairbench.measure.sampler import Measured, RoundEnd, Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import CommandTarget
from pairbench.model import PRIMARY_METRIC, Sample, Samples

A = Command("a", ("a",))
B = Command("b", ("b",))


def drifting_machine(ratio: float, seed: int, *, phi: float = 0.9, phase_s: float = 3.0):
    """Durations of A and B on a machine with slow drift, load phases and AR(1) noise."""
    rng = np.random.default_rng(seed)
    state = {"ar": 0.0, "phase_end": 0.0, "load": 1.0}

    def duration(command, index, clock_ns):
        t = clock_ns / 1e9
        if t >= state["phase_end"]:  # background load changes at random every few seconds
            state["phase_end"] = t + rng.exponential(phase_s)
            state["load"] = rng.choice([1.0, 1.3, 1.8])
        state["ar"] = phi * state["ar"] + rng.normal(0.0, 0.02)  # autocorrelated machine state
        drift = 1.0 + 0.1 * np.sin(t / 20.0)
        own = float(np.exp(rng.normal(0.0, 0.02)))  # independent noise of this run
        factor = ratio if command is B or command.text == "b" else 1.0
        return 0.01 * drift * state["load"] * float(np.exp(state["ar"])) * own * factor

    return duration


def sampled(ratio: float, seed: int, *, alpha: float, max_runs: int = 400) -> tuple[StoppingRule, Sampler]:
    executor = FakeExecutor(drifting_machine(ratio, seed))
    rule = StoppingRule(Criteria(alpha=alpha, threshold=1.0, anytime=True, family=1), 0, [1])
    plan = SamplingPlan(targets=(CommandTarget(A, "a"), CommandTarget(B, "b")),
                        stop=StopRule(min_runs=10, max_runs=max_runs), seed=seed)
    sampler = Sampler(executor, plan, sinks=[rule], decide=rule.decide)
    sampler.run()
    return rule, sampler


def run_trial(ratio: float, seed: int, *, alpha: float, max_runs: int = 400):
    rule, sampler = sampled(ratio, seed, alpha=alpha, max_runs=max_runs)
    verdict, _ = rule.latest[(0, 0, 1)]
    return verdict, sampler.stopped_because, sampler.rounds


def test_identical_commands_on_a_drifting_machine_give_few_false_verdicts():
    """The seeded minimum that still tells the rule from peeking: 40 trials of up to 200 rounds give
    0 false changes here, and 8 when the rule looks at the fixed-n sign-test interval after every
    round instead (p = 0.0007 against alpha, so that defect fails this test). The error rates over
    thousands of trials are benchmarks/sequential_error.py's."""
    alpha, trials = 0.05, 40
    false_changes = sum(
        run_trial(1.0, seed, alpha=alpha, max_runs=200)[0].verdict in ("slower", "faster") for seed in range(trials)
    )
    # the rate must not exceed alpha beyond binomial noise: one-sided test at 1%
    assert sps.binomtest(false_changes, trials, alpha, alternative="greater").pvalue > 0.01, false_changes


def test_a_clear_slowdown_stops_early_on_the_right_side():
    results = [run_trial(1.05, seed, alpha=0.01) for seed in range(20)]
    assert all(v.verdict == "slower" for v, _, _ in results)
    assert all(reason == "the verdict was decided (slower)" for _, reason, _ in results)
    assert np.median([rounds for _, _, rounds in results]) < 60


def test_noise_alone_runs_to_the_cap_or_to_equivalence_never_to_a_change():
    verdict, reason, rounds = run_trial(1.0, seed=3, alpha=0.01, max_runs=150)
    assert verdict.verdict in ("equivalent", "inconclusive")
    if verdict.verdict == "inconclusive":
        assert reason == "reached --max-runs 150" and rounds == 150


@pytest.mark.parametrize("ratio", [0.97, 1.03])
def test_wrong_direction_verdicts_do_not_happen(ratio):
    wrong = "faster" if ratio > 1 else "slower"
    assert all(run_trial(ratio, seed, alpha=0.01)[0].verdict != wrong for seed in range(20))


@pytest.mark.parametrize("ratio", [1.0, 1.02, 1.05])
def test_the_verdict_a_run_stopped_on_is_the_one_its_samples_give(ratio):
    """The stopping rule and the analysis share one verdict path: what stopped sampling is what
    ``analyse`` finds in the stored samples."""
    from runs import compare_run

    rule, sampler = sampled(ratio, seed=4, alpha=0.01, max_runs=300)
    run = compare_run({"a": [1.0], "b": [1.0]})
    run = run.replace(samples={series: Samples.from_rows(rows) for series, rows in sampler.rows.items()})
    (comparison,) = analyse(run).comparisons
    stopped_on, effect = rule.latest[(0, 0, 1)]
    assert comparison.verdict == stopped_on
    assert (comparison.effect.low, comparison.effect.high) == (effect.low, effect.high)


def analyse_effect(sampler: Sampler) -> float:
    """The anytime effect the analysis gives on ``sampler``'s stored samples."""
    from pairbench.analysis.effect import anytime_effect
    from pairbench.stats.sequential import RunningSequence

    a, b = Samples.from_rows(sampler.rows[(0, 0)]), Samples.from_rows(sampler.rows[(0, 1)])
    ratios = np.log(b.measured().values() / a.measured().values())
    running = RunningSequence(0.01, tuning_rounds(0.01))
    running.extend(list(ratios))
    return anytime_effect(running)[0].estimate


def _bounded(ratio: float, seed: int, boundary, *, max_runs: int = 400):
    from pairbench.analysis.criteria import Boundary

    executor = FakeExecutor(drifting_machine(ratio, seed))
    rule = StoppingRule(Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1), 0, [1],
                        boundary=Boundary(*boundary))
    plan = SamplingPlan(targets=(CommandTarget(A, "a"), CommandTarget(B, "b")),
                        stop=StopRule(min_runs=10, max_runs=max_runs), seed=seed)
    sampler = Sampler(executor, plan, sinks=[rule], decide=rule.decide)
    sampler.run()
    return rule.boundary.side(rule.latest[(0, 0, 1)][1]), sampler.stopped_because, sampler.rounds


def test_with_a_boundary_a_slowdown_runs_until_its_interval_lies_above_the_boundary_not_above_zero():
    for seed in range(10):
        side, reason, rounds = _bounded(1.10, seed, (5.0,))
        assert (side, reason) == ("above", "the interval lies above +5%")
        _, verdict_reason, verdict_rounds = run_trial(1.10, seed, alpha=0.01)
        assert verdict_reason == "the verdict was decided (slower)" and verdict_rounds <= rounds


def test_with_a_boundary_no_change_stops_below_it():
    side, reason, _ = _bounded(1.0, 4, (5.0,))
    assert (side, reason) == ("below", "the interval lies below +5%")


def test_a_step_boundary_waits_for_the_interval_above_half_the_estimate():
    side, reason, _ = _bounded(1.10, 2, (1.0, 0.5))
    assert (side, reason) == ("above", "the interval lies above +1% and 0.5 of its estimate")


def test_a_change_at_the_boundary_runs_to_the_cap_undecided():
    side, reason, rounds = _bounded(1.05, 5, (4.88,), max_runs=60)
    assert (side, reason, rounds) == ("inconclusive", "reached --max-runs 60", 60)


def test_a_round_with_a_time_of_zero_gives_no_ratio_and_the_rule_goes_on():
    # a harness whose timer did not advance reports 0 ns: no log-ratio (no division by zero), and the
    # rule decides on the other rounds as if that one had not been
    def rule_after(rounds):
        rule = StoppingRule(Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1), 0, [1])
        for r, (base, cand) in enumerate(rounds):
            rule.on_round(RoundEnd(r, False, (_measured(0, base), _measured(1, cand)), r + 1, 2 * r + 2, 0))
        return rule

    rng = np.random.default_rng(8)
    rounds = [(50e6, 50e6 * 1.2 * float(np.exp(rng.normal(0, 0.01)))) for _ in range(30)]
    with_zeros = rule_after([(0.0, 50e6), *rounds[:10], (50e6, 0.0), *rounds[10:]])
    without = rule_after(rounds)
    assert with_zeros.decide() == without.decide() == "the verdict was decided (slower)"
    assert with_zeros.current() == without.current()


def _measured(side: int, value_ns: float) -> Measured:
    return Measured(side, 0, Sample(wall_ns=int(value_ns), start_ns=0), {PRIMARY_METRIC: value_ns})


def test_a_record_s_change_runs_on_until_its_size_is_known_within_a_factor_of_two():
    from pairbench.analysis.criteria import SizedChange

    longer = 0
    for seed in range(6):
        _, _, rounds = run_trial(1.03, seed, alpha=0.01)
        executor = FakeExecutor(drifting_machine(1.03, seed))
        rule = StoppingRule(Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1), 0, [1],
                            boundary=SizedChange())
        plan = SamplingPlan(targets=(CommandTarget(A, "a"), CommandTarget(B, "b")),
                            stop=StopRule(min_runs=10, max_runs=400), seed=seed)
        sampler = Sampler(executor, plan, sinks=[rule], decide=rule.decide)
        sampler.run()
        sized, effect = rule.latest[(0, 0, 1)]
        assert sampler.rounds >= rounds and sized.verdict == "slower"
        assert sampler.stopped_because == "the verdict was decided (slower)"
        assert math.log1p(effect.low / 100) > math.log1p(effect.estimate / 100) / 2
        longer += sampler.rounds > rounds
    assert longer >= 1  # where the verdict alone stopped with its size unknown
