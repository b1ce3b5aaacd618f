"""What budget would decide a suite's undecided benchmarks (the suite summary's last words)."""

from __future__ import annotations

import numpy as np
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.model import BenchmarkKey
from pairbench.notes import Note
from pairbench.report.suite import counts_line

ROUNDS = 40
RNG = np.random.default_rng(5)


def timed(walls, offset_ns: int, k: int):
    """Samples of one side: round r starts at r x 25 ms (+ offset), each lasting its wall time."""
    return series(walls, start_ns=np.arange(ROUNDS) * 25_000_000 + offset_ns, start_seq=k, stride=2)


def suite_run(notes=()):
    noisy = 10_000_000 * np.exp(RNG.normal(0.0, 0.03, (2, ROUNDS)))  # too noisy for ±1% in 40 rounds
    clear = 10_000_000 * np.exp(RNG.normal(0.0, 0.002, (2, ROUNDS))) * np.array([[1.0], [1.2]])
    samples = {(0, 0): timed(noisy[0], 0, 0), (0, 1): timed(noisy[1], 12_000_000, 1),
               (1, 0): timed(clear[0], 0, 0), (1, 1): timed(clear[1], 12_000_000, 1)}
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=(BenchmarkKey("noisy"), BenchmarkKey("clear")), runs=ROUNDS)
    return run.replace(notes=tuple(notes))


def test_the_time_that_would_decide_an_inconclusive_benchmark_is_its_rounds_needed_at_its_round_time():
    analysis = analyse(suite_run())
    noisy = next(c for c in analysis.comparisons if c.benchmark.name == "noisy")
    assert noisy.verdict.verdict == "inconclusive" and noisy.rounds_needed > 0
    budget = analysis.suite.budget
    round_ns = (39 * 25_000_000 + 12_000_000 + 10_000_000 * 1.05) / ROUNDS  # first start to last end, per round
    assert (budget.decidable, budget.undecidable, budget.not_measured) == (1, 0, 0)
    assert abs(budget.more_ns - noisy.rounds_needed * round_ns) < 0.06 * budget.more_ns
    line = counts_line(analysis.suite)
    assert line.startswith("1 regression, 0 improvements, 0 equivalent, 1 inconclusive. About ")
    assert f"--suite-time {int(np.ceil(budget.suite_ns / 1e9))}s) would decide about 1 of the 1 inconclusive." in line


def test_a_benchmark_the_budget_never_reached_is_counted_apart_and_priced_at_a_measured_ones_cost():
    spent = Note("suite-budget-spent", {"count": 1, "names": ["late"], "suite_time_ns": 2_000_000_000})
    analysis = analyse(suite_run([spent]))
    budget = analysis.suite.budget
    assert budget.not_measured == 1 and budget.more_ns > 990_000_000  # a measured benchmark took about 1 s
    assert "and measure the 1 not measured" in counts_line(analysis.suite)


def test_a_suite_with_everything_decided_says_nothing_of_a_budget():
    clear = 10_000_000 * np.exp(RNG.normal(0.0, 0.002, (2, ROUNDS)))
    samples = {(0, 0): timed(clear[0], 0, 0), (0, 1): timed(clear[1] * 1.2, 12_000_000, 1)}
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples, runs=ROUNDS)
    analysis = analyse(run)
    assert analysis.suite.budget is None and counts_line(analysis.suite).endswith("0 inconclusive.")


def test_a_benchmark_without_a_round_is_priced_as_not_measured_not_as_an_undecidable_inconclusive():
    spent = Note("suite-budget-spent", {"count": 1, "names": ["late"], "suite_time_ns": 2_000_000_000})
    run = suite_run([spent])
    run = make_run("bench", list(run.sides), {k: run.series(*k) for k in ((0, 0), (0, 1), (1, 0), (1, 1))},
                   benchmarks=(*run.benchmarks, BenchmarkKey("late")), runs=ROUNDS).replace(notes=(spent,))
    analysis = analyse(run)
    budget = analysis.suite.budget
    assert [c.benchmark.name for c in analysis.suite.unmeasured] == ["late"]
    assert (budget.decidable, budget.undecidable, budget.not_measured) == (1, 0, 1)
    assert "More rounds would not decide" not in counts_line(analysis.suite)
