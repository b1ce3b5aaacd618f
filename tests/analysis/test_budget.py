"""What budget would decide a suite's undecided benchmarks (the suite summary's last words)."""

from __future__ import annotations

import numpy as np
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.model import BenchmarkKey
from pairbench.notes import Note
from pairbench.report.sentences import verdict_sentence
from pairbench.report.suite import counts_line

ROUNDS = 40
RNG = np.random.default_rng(5)


def timed(walls, offset_ns: int, k: int):
    """Samples of one side: round r starts at r x 25 ms (+ offset), each lasting its wall time."""
    return series(walls, start_ns=np.arange(ROUNDS) * 25_000_000 + offset_ns, start_seq=k, stride=2)


def suite_run(notes=()):
    noisy = 10_000_000 * np.exp(RNG.normal(0.0, 0.01, (2, ROUNDS)))  # too noisy for ±1% in 40 rounds
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


# --------------------------------------------------------------------------- out of reach, blocks (R6, R10)


def noisy_run(sd: float, environment=None, rounds: int = ROUNDS, change: float = 1.03):
    """One benchmark whose sides vary by ``sd`` (log scale) from round to round, the candidate ``change``
    times as slow."""
    rng = np.random.default_rng(11)
    walls = 10_000_000 * np.exp(rng.normal(0.0, sd, (2, rounds))) * np.array([[1.0], [change]])
    samples = {(0, s): series(walls[s], start_ns=np.arange(rounds) * 25_000_000 + 12_000_000 * s, start_seq=s,
                              stride=2) for s in range(2)}
    return make_run("bench", [side("A", "baseline"), side("B", "candidate")], samples, runs=rounds,
                    environment=environment or {})


def test_a_benchmark_far_beyond_its_budget_is_said_out_of_reach_with_the_load_and_each_side_s_spread():
    analysis = analyse(noisy_run(0.4, {"load_average": [7.1, 6.0, 5.0]}))
    (c,) = analysis.comparisons
    assert c.verdict.verdict == "inconclusive" and c.rounds_needed > 15 * c.rounds
    (note,) = [n for n in c.notes if n.code == "budget-out-of-reach"]
    assert note.data["load"] == 7.1 and note.data["factor"] == 16 and note.data["metric"] == "wall"
    walls = [run_values for run_values in (analysis.comparison_figures[0].baseline, analysis.comparison_figures[0].candidate)]
    assert [cv for _, cv in note.data["spreads"]] == [100 * np.std(w, ddof=1) / np.mean(w) for w in walls]
    sentence = verdict_sentence(c)
    assert "try --runs" not in sentence and "over 16 times these" in sentence
    budget = analysis.suite.budget
    assert (budget.decidable, budget.out_of_reach, budget.undecidable, budget.more_ns) == (0, 1, 0, 0)
    line = counts_line(analysis.suite)
    assert "At load 7.1, this machine's noise is too high to decide 1 of the 1 inconclusive at any reasonable budget" in line
    assert "more sampling" not in line and "--suite-time" not in line  # no "about 220000 s more"


def test_a_benchmark_within_reach_is_given_its_rounds_and_budget():
    analysis = analyse(noisy_run(0.03, change=1.0))
    (c,) = analysis.comparisons
    assert c.verdict.verdict == "inconclusive" and 0 < c.rounds_needed <= 15 * c.rounds
    assert f"try --runs {c.rounds + c.rounds_needed}" in verdict_sentence(c)
    assert "budget-out-of-reach" not in [n.code for n in c.notes]


def test_a_nearly_decided_comparison_in_blocks_of_fresh_workers_is_priced_not_called_undecidable():
    # 880 rounds of workers in blocks of 8: the verdict rests on 110 block medians, and its interval
    # is a little too wide for "equivalent"; more blocks would decide it (the merged shard's
    # sort[n=64], -0.10% [-1.5%, +0.94%] after 881 rounds, was "More rounds would not decide")
    rounds, per_block = 880, 8
    rng = np.random.default_rng(3)
    walls = 10_000_000 * np.exp(rng.normal(0.0, 0.05, (2, rounds)))
    blocks = np.repeat(np.arange(rounds // per_block), per_block).astype(float)
    samples = {(0, s): series(walls[s], start_ns=np.arange(rounds) * 25_000_000 + 12_000_000 * s, start_seq=s,
                              stride=2, metrics={"block": blocks}) for s in range(2)}
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples)
    analysis = analyse(run)
    (c,) = analysis.comparisons
    assert c.verdict.verdict == "inconclusive" and c.effect.high - c.effect.low < 4
    assert c.rounds_needed is not None and c.rounds_needed % per_block == 0  # whole blocks, as rounds
    budget = analysis.suite.budget
    assert (budget.decidable, budget.undecidable) == (1, 0)
    assert "More rounds would not decide" not in counts_line(analysis.suite)
