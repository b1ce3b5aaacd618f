"""analyse(run): one summary per series, comparisons per benchmark, and every note said of its subject."""

from __future__ import annotations

import numpy as np
import pytest
from runs import compare_run, make_run, series, side

from pairbench.analysis import analyse
from pairbench.command import ExecutorInfo
from pairbench.model import BenchmarkKey
from pairbench.notes import Note, Subject

WALLS = 1_000_000 + 1_000 * np.arange(12)


def one_series_run(samples, environment=None, executor=None):
    return make_run("run", [side("x")], {(0, 0): samples}, environment=environment).replace(executor=executor)


def test_max_rss_within_the_margin_of_the_executor_floor_is_flagged_at_the_floor_with_one_note():
    samples = series(WALLS, max_rss_kib=[1_000] * 12)
    analysis = analyse(one_series_run(samples, executor=ExecutorInfo("SpawnerExecutor", 990)))
    assert analysis.summaries[0].max_rss_at_floor
    assert [n.data for n in analysis.notes if n.code == "rss-at-floor"] == [{"sides": ["x"], "floor_kib": 990}]


def test_worker_readings_far_below_the_floor_are_not_said_to_be_at_it():
    # a C worker's samples read 1.3 MiB while the run's executor kept a floor of 109 MiB (pairbench's
    # size when it started the workers, which a worker started by a small keeper never had)
    samples = series(WALLS, max_rss_kib=[1_331] * 12)
    analysis = analyse(one_series_run(samples, executor=ExecutorInfo("worker", 111_652)))
    assert not analysis.summaries[0].max_rss_at_floor
    assert "rss-at-floor" not in [n.code for n in analysis.notes]


@pytest.mark.parametrize("executor", [None, ExecutorInfo("FakeExecutor"), ExecutorInfo("SpawnerExecutor", 0)])
def test_no_executor_floor_flags_nothing(executor):
    (summary,) = analyse(one_series_run(series(WALLS, max_rss_kib=[1_000] * 12), executor=executor)).summaries
    assert summary.n == 12 and not summary.max_rss_at_floor


def test_too_few_samples_are_noted_with_what_each_statistic_needs():
    (summary,) = analyse(one_series_run(series([1_000_000]))).summaries
    needs = {n.data["purpose"]: (n.data["needed"], n.data["got"]) for n in summary.notes
             if n.code == "not-enough-data"}
    assert needs == {"median-interval": (6, 1), "the autoregressive error of the mean": (4, 1)}
    assert all(n.subject == Subject(side="x") for n in summary.notes)


def test_identical_samples_give_one_no_variance_note_and_no_interval():
    (summary,) = analyse(one_series_run(series([5_000_000] * 20))).summaries
    assert [n.code for n in summary.notes].count("no-variance") == 1
    assert summary.mean_se is None and summary.sd == 0.0


def test_a_sample_of_many_iterations_is_summarised_per_operation():
    (summary,) = analyse(one_series_run(series(WALLS * 4, iterations=4))).summaries
    assert summary.median == pytest.approx(np.median(WALLS))
    assert summary.min == WALLS.min()


def test_a_harness_reported_value_replaces_the_wall_time_as_what_is_measured():
    samples = series(WALLS, iterations=10, metrics={"value": [2.5 * 10] * 6 + [3.5 * 10] * 6})
    (summary,) = analyse(one_series_run(samples)).summaries
    assert (summary.min, summary.max) == (2.5, 3.5)


def test_every_benchmark_on_every_side_gets_a_summary_and_each_benchmark_its_comparison():
    keys = (BenchmarkKey("sort"), BenchmarkKey("alloc", unit="B"))
    rng = np.random.default_rng(1)
    base = 1e6 * np.exp(rng.normal(0, 0.01, 40))
    samples = {(0, 0): series(base), (0, 1): series(base * 1.1),
               (1, 0): series(base), (1, 1): series(base * 0.9)}
    run = make_run("compare", [side("old", "baseline"), side("new", "candidate")], samples, benchmarks=keys,
                   runs=40)
    analysis = analyse(run)
    assert [(s.benchmark.name, s.side) for s in analysis.summaries] == [
        ("sort", "old"), ("sort", "new"), ("alloc", "old"), ("alloc", "new")]
    assert [(c.benchmark.name, c.verdict.verdict) for c in analysis.comparisons] == [
        ("sort", "slower"), ("alloc", "faster")]
    assert analysis.comparisons[1].benchmark.unit == "B"
    assert all(n.subject.benchmark in ("sort", "alloc") for s in analysis.summaries for n in s.notes)


def test_an_aa_self_check_that_finds_a_change_says_so_in_the_analysis():
    base = 1e7 * np.exp(np.random.default_rng(2).normal(0, 0.002, 40))
    analysis = analyse(compare_run({"old": base, "new": base * 1.01, "old (copy)": base * 1.05}, runs=40))
    self_check = next(c for c in analysis.comparisons if c.self_check)
    assert self_check.verdict.verdict == "slower"
    assert Note("self-check-found-change", {"verdict": "slower"}, Subject(side="old (copy)", baseline="old")) \
        in self_check.notes
    assert len(analysis.real_comparisons) == 1 and analysis.real_comparisons[0].adjustment == "none"


def test_samples_other_tasks_interrupted_are_noted_on_their_series():
    switches = [0, 0] + [3] * 10
    (summary,) = analyse(one_series_run(series(WALLS, involuntary_cs=switches))).summaries
    (note,) = [n for n in summary.notes if n.code == "involuntary-switches"]
    assert note.data["affected"] == 10 and note.subject == Subject(side="x")


def test_the_machine_the_run_was_measured_on_is_noted_from_its_stored_metadata():
    environment = {"load_average": [1.7, 1.0, 0.5], "logical_cpus": 2, "online_cpus": [0, 1]}
    codes = [n.code for n in analyse(one_series_run(series(WALLS), environment)).notes]
    assert "machine-busy" in codes


def test_all_notes_lists_each_note_once_run_notes_first():
    environment = {"load_average": [1.7, 1.0, 0.5], "logical_cpus": 2, "online_cpus": [0, 1]}
    run = one_series_run(series([5_000_000] * 20), environment)
    run = run.replace(notes=(Note("renamed", {"name": "x", "copies": ["x (2)"]}),))
    notes = list(analyse(run).all_notes())
    assert notes[0].code == "renamed" and len(notes) == len({(n.code, repr(n.data), n.subject) for n in notes})


def test_the_error_rate_is_split_over_every_candidate_on_every_parameter_value_of_a_compare():
    from runs import make_run, series, side

    from pairbench.analysis import family_size
    from pairbench.model import BenchmarkKey

    sides = [side("old", "baseline"), side("new", "candidate"), side("newer", "candidate")]
    keys = (BenchmarkKey("sort", (("n", "10"),)), BenchmarkKey("sort", (("n", "1000"),)))
    samples = {(b, s): series([1000.0 + s] * 8) for b in range(2) for s in range(3)}
    run = make_run("compare", sides, samples, benchmarks=keys)
    assert family_size(run) == 2 * 2
    assert family_size(make_run("compare", sides, {k: v for k, v in samples.items() if k[0] == 0})) == 2
