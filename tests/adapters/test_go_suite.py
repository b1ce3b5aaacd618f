"""``pairbench bench`` on real Go test binaries (go test -c): sub-benchmarks found by running, exact
iteration counts, B/op and allocs/op kept, and a benchmark that panics named while the others go on."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke

from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.gotest import GoTest

pytestmark = pytest.mark.e2e

# samples of 10 ms, which a preemption stretches less in proportion; budgets a loaded machine needs (a
# verdict stops sampling long before on a quiet one)
QUICK = ("--seed", "5", "-q", "--sample-time", "10ms", "--max-time", "10s")
# the suite's verdict tests: the sequential rule may stop from 12 rounds on, not bench's default 32 (eight
# times the work is decided by then), and stops at 24 the equal benchmarks, whose verdicts are not asserted
# (equivalent took them 37 rounds, 10 s each); a round's process repeats a benchmark twice, a warmup and one
# kept, not 8 times (the repetitions test checks more)
DECIDING = ("--min-runs", "12", "--max-runs", "24", "--repetitions", "2")


def test_every_benchmark_and_sub_benchmark_is_listed_by_running_each_once(gotest, tmp_path):
    found = GoTest().discover(Program((gotest.baseline,), text="base.test"), tmp_path, 120)
    assert found.names == ("BenchmarkWork", "BenchmarkSame", "BenchmarkAlloc", "BenchmarkGarbage", "BenchmarkSizes/n=100",
                           "BenchmarkSizes/n=400", "BenchmarkPanic")
    assert found.explicit_iterations


@pytest.mark.slow
def test_a_go_suite_is_compared_with_equal_power_of_two_iterations_on_both_sides(gotest, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", *QUICK, *DECIDING, "-k", "Work|Same|n=100", "--json", str(result),
                            gotest.baseline, gotest.candidate)
    assert code == 0, err
    document = json.loads(result.read_text())
    verdicts = {c["benchmark"]["name"]: c["verdict"] for c in document["comparisons"]}
    assert verdicts["BenchmarkWork"] == "slower"
    assert set(verdicts) == {"BenchmarkWork", "BenchmarkSame", "BenchmarkSizes/n=100"}
    for series in document["series"]:
        counts = {n for n, warm in zip(series["samples"]["iterations"], series["samples"]["warmup"], strict=True)
                  if not warm}
        (count,) = counts
        assert count & (count - 1) == 0
    assert "go test -bench" in out


def test_bytes_and_allocations_per_operation_are_kept_as_totals(gotest, tmp_path):
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", *QUICK, "--runs", "12", "-k", "Alloc", "--json", str(result), gotest.baseline)
    assert code == 0, err
    (series,) = json.loads(result.read_text())["series"]
    metrics, iterations = series["metrics"], series["samples"]["iterations"]
    for i, n in enumerate(iterations):
        # one allocation an iteration; Go's first call of a benchmark allocates a few more (6 seen), which
        # go test divides by N and rounds down: at a handful of iterations (a loaded machine's pilot
        # chooses few) that is more than 1%
        assert n <= metrics["allocs/op"][i] <= n + max(0.01 * n, 16)
        assert metrics["B/op"][i] >= 64 * n and metrics["widgets/op"][i] == pytest.approx(3 * n)


def test_short_lived_garbage_growing_go_s_heap_is_not_called_memory_kept(gotest, tmp_path):
    # 4 KiB of garbage an iteration: each invocation's peak grows with its count until Go collects
    # (4.3 MiB then about 8 MiB from 2048 iterations on; 5 ms samples reach those counts, and the
    # rule, blind to the runtime, flagged 8 seeds of 8), which a C body would only do by keeping it
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", "--seed", "1", "-q", "--sample-time", "5ms", "--max-time", "2s", "-k", "Garbage",
                          "--json", str(result), gotest.baseline)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert document["benchmarks"][0]["name"] == "BenchmarkGarbage"
    assert "benchmark-peak-growth" not in {n["code"] for n in document["notes"]}


@pytest.mark.slow
def test_a_benchmark_that_panics_on_one_side_is_named_and_the_others_are_measured(gotest, tmp_path):
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", *QUICK, "--runs", "6", "--repetitions", "2", "-k", "Panic|Same", "--json",
                          str(result), gotest.baseline, gotest.candidate)  # 6 rounds: BenchmarkSame is measured
    assert code == 3
    assert "BenchmarkPanic" in err and "exit code 2" in err and "the fixture is broken" in err
    document = json.loads(result.read_text())
    assert [c["verdict"] for c in document["comparisons"] if c["benchmark"]["name"] == "BenchmarkSame"] != []


def test_a_round_runs_each_sides_go_process_once_with_its_repetitions_all_stored(gotest, tmp_path):
    from pairbench.analysis import analyse
    from pairbench.store.resultfile import read_result

    result = tmp_path / "r.json"
    code, out, err = invoke("bench", *QUICK, "--runs", "12", "--repetitions", "3", "-k", "Same", "--json",
                            str(result), gotest.baseline, gotest.same)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert document["settings"]["workers"]["repetitions"] == 3
    for series in document["series"]:
        samples, repetition = series["samples"], series["metrics"]["repetition"]
        rounds = [(p, r, w) for p, r, w in zip(samples["pair"], repetition, samples["warmup"], strict=True) if r]
        # the pilot and validation ran once (no repetition number); each of the 12 rounds three times, the
        # first a warmup (never paired), the two others sharing the round
        assert [r for _, r, _ in rounds] == [1.0, 2.0, 3.0] * 12
        assert [(p, w) for p, r, w in rounds if r == 1.0] == [(-1, 1)] * 12
        assert sorted(p for p, r, _ in rounds if r > 1) == sorted(list(range(12)) * 2)
    (comparison,) = document["comparisons"]
    assert comparison["rounds"] == 12
    # show recomputes the stored verdict from the stored repetitions
    (again,) = analyse(read_result(result)).comparisons
    assert again.rounds == 12 and again.verdict.verdict == comparison["verdict"]
    stored = comparison["effect"]
    assert (again.effect.low, again.effect.estimate, again.effect.high) == pytest.approx(
        (stored["low"], stored["estimate"], stored["high"]))
    assert "-test.count" in out or "repetition" in out
    # each repetition carries its share of its process's CPU time, less the cost of an invocation
    # besides its loops, read once from both sides' validation invocations
    fixed = {f for series in document["series"] for f, r in zip(series["metrics"]["fixed_cpu_ns"],
                                                                 series["metrics"]["repetition"], strict=True) if r}
    assert len(fixed) == 1 and fixed.pop() > 0


@pytest.mark.slow
def test_without_max_time_a_go_benchmark_gets_what_benchstat_s_users_spend_on_it(gotest, tmp_path):
    """20 s a benchmark (benchstat's recommended -count 10 at Go's 1 s benchtime, both sides), not
    bench's 5 s: a round repeating the benchmark in each process costs too much for 5 s to reach a verdict."""
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--seed", "5", "--sample-time", "10ms", "--runs", "3", "--repetitions", "2",
                            "-k", "Same", "--json", str(result), gotest.baseline, gotest.same)
    assert code == 0, err
    assert json.loads(result.read_text())["settings"]["sampling"]["max_time_ns"] == 20_000_000_000
    code, _, err = invoke("bench", "--seed", "5", "-q", "--sample-time", "10ms", "--runs", "3", "--max-time", "3s",
                          "-k", "Same", "--json", str(result), gotest.baseline, gotest.same)
    assert code == 0, err
    assert json.loads(result.read_text())["settings"]["sampling"]["max_time_ns"] == 3_000_000_000  # given: kept
