"""``pairbench bench`` on real Google Benchmark binaries: verdicts per benchmark, the harness's own
metrics kept, a crash or an error of one benchmark named while the others are measured, a benchmark
the filter no longer matches, and shards of a suite merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.command import STATUS_NO_RESULT
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.harnesses.adapters import adapter_for
from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.spawner import SpawnerExecutor

pytestmark = pytest.mark.e2e

# samples of 10 ms, which a preemption stretches less in proportion; budgets a loaded machine needs (a
# verdict stops sampling long before on a quiet one)
QUICK = ("--seed", "5", "-q", "--sample-time", "10ms", "--max-time", "10s")
# as in test_go_suite: the verdict tests may stop from 12 rounds on, not bench's 32, and stop at 24 the equal
# benchmarks, whose verdicts are not asserted
DECIDING = ("--min-runs", "12", "--max-runs", "24")


def _verdicts(document: dict) -> dict[str, str]:
    return {c["benchmark"]["name"]: c["verdict"] for c in document["comparisons"]}


@pytest.mark.slow
def test_a_google_benchmark_suite_is_compared_benchmark_by_benchmark_and_summarized(gbench, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", *QUICK, *DECIDING, "-k", "work|same|counters", "--json", str(result),
                            "--fail-on", "slower", gbench.baseline, gbench.candidate)
    assert code == 1, err
    document = json.loads(result.read_text())
    verdicts = _verdicts(document)
    assert verdicts["BM_work"] == "slower" and set(verdicts) == {"BM_work", "BM_same", "BM_counters"}
    assert document["suite"]["harness"] == "gbench" and document["suite"]["benchmarks"] == 3
    assert {c["adjustment"] for c in document["comparisons"]} == {"holm"}
    assert document["suite_summary"]["regressions"][0] == "BM_work"  # largest first
    assert out.index("Regressions (") < out.index("Geometric mean") and "Holm's step-down procedure" in out
    assert "Google Benchmark" in out
    # the harness's own units, a table each: a user counter, equal in every round, and a rate (its
    # verdict is the machine's: only that lower is worse)
    units = {t["unit"]: t for t in document["metric_tables"]}
    assert set(units) == {"bytes_per_second", "widgets"} and units["bytes_per_second"]["worse"] == "lower"
    (widgets,) = units["widgets"]["comparisons"]
    assert (widgets["benchmark"]["name"], widgets["verdict"], widgets["baseline_median"]) == ("BM_counters", "same", 7)
    assert "widgets (Holm over 1 comparison" in out


def test_a_long_name_from_the_suite_itself_is_not_warned_about(gbench, tmp_path):
    # the name is the suite's, not given to pairbench: tables widen for it, and --name cannot rename it
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", *QUICK, "--runs", "8", "-k", "long_name", "--json", str(result), gbench.baseline)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert [b["name"] for b in document["benchmarks"]] == ["BM_long_name_of_a_suite_benchmark_nobody_here_chose"]
    assert "benchmark-name" not in {n["code"] for n in document["notes"]}
    assert "characters" not in out


def test_each_sample_keeps_the_harness_time_its_iterations_and_its_counters(gbench, tmp_path):
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", *QUICK, "--runs", "20", "-k", "counters", "--json", str(result), gbench.baseline)
    assert code == 0, err
    (series,) = json.loads(result.read_text())["series"]
    metrics, samples = series["metrics"], series["samples"]
    measured = [i for i, warm in enumerate(samples["warmup"]) if not warm]
    assert len(measured) == 20
    for i in measured:
        assert 0 < metrics["value"][i] < samples["wall_ns"][i]  # the harness's loop, not the process
    # the harness's own count (Google Benchmark 1.7 chooses it; one preempted first iteration ends it at 1)
    assert max(samples["iterations"][i] for i in measured) > 1
    for i in measured:
        assert metrics["widgets"][i] == 7
        assert metrics["bytes_per_second"][i] > 0 and metrics["cpu_ns"][i] > 0


def test_a_benchmark_that_crashes_on_one_side_is_named_and_the_others_are_measured(gbench, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", *QUICK, "--runs", "6", "-k", "crash|same", "--json", str(result), gbench.baseline,
                            gbench.candidate)  # 6 rounds: what is checked is that BM_same is measured
    assert code == 3
    assert "BM_crash" in err and "SIGABRT" in err and "on 'slower'" in err  # the side, by its default name
    document = json.loads(result.read_text())
    assert "BM_same" in _verdicts(document)  # measured, whatever the two builds' layouts make of it
    failed = [n for n in document["notes"] if n["code"] == "benchmark-failed"]
    assert [n["data"]["benchmark"] for n in failed] == ["BM_crash"]


def test_the_harness_own_error_for_a_benchmark_is_its_failure(gbench, tmp_path):
    code, _, err = invoke("bench", *QUICK, "-k", "error", gbench.baseline, gbench.candidate)
    assert code == 3 and "BM_error" in err and "the fixture is broken" in err


def test_a_benchmark_the_filter_no_longer_matches_is_said_to_be_renamed_or_removed(gbench, tmp_path):
    output = tmp_path / "output"
    executor = SpawnerExecutor(output=OutputPolicy("file", str(output)))
    try:
        target = HarnessTarget(adapter_for("gbench"), Program((gbench.baseline,), text=gbench.baseline), "old",
                               "BM_gone", 0, None, 2_000_000, tmp_path, OutputFile(output))
        (row,) = target.execute(executor, timeout_ns=None)
    finally:
        executor.close()
    assert row.execution.status == STATUS_NO_RESULT
    assert "matched no benchmark" in row.detail and "renamed or removed" in row.detail


@pytest.mark.slow
def test_shards_measured_apart_merge_into_one_suite_with_holm_across_all(gbench, tmp_path):
    shards = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        code, _, err = invoke("bench", *QUICK, *DECIDING, "-k", "work|same|counters", "--shard", f"{k}/2", "--json",
                              str(path), gbench.baseline, gbench.candidate)
        assert code == 0, err
        shards.append(json.loads(path.read_text()))
    names = [[b["name"] for b in shard["benchmarks"]] for shard in shards]
    assert sorted(names[0] + names[1]) == ["BM_counters", "BM_same", "BM_work"] and all(names)
    assert shards[0]["suite"]["digest"] == shards[1]["suite"]["digest"]
    merged_path = tmp_path / "suite.json"
    code, out, err = invoke("merge", "--json", str(merged_path), "--fail-on", "slower",
                            str(tmp_path / "shard-2.json"), str(tmp_path / "shard-1.json"))
    assert code == 1, err
    merged = json.loads(merged_path.read_text())
    assert merged["suite"]["merged"] == [1, 2] and merged["suite"]["shard"] is None
    assert sorted(b["name"] for b in merged["benchmarks"]) == ["BM_counters", "BM_same", "BM_work"]
    assert _verdicts(merged)["BM_work"] == "slower"
    assert "Merged from 2 shards" in out
    seqs = [s for series in merged["series"] for s in series["samples"]["seq"]]
    assert len(seqs) == len(set(seqs))


def test_the_harness_is_detected_from_each_kind_of_program(gbench, gotest, tmp_path):
    from pairbench.measure.harnesses.detect import detect_program, detect_python

    assert detect_program(gbench.baseline) == "gbench"
    assert detect_program(gotest.baseline) == "go"
    plain = tmp_path / "worker.py"
    plain.write_text("import pairbench\n\n@pairbench.benchmark\ndef f():\n    pass\n")
    fixture = tmp_path / "test_x.py"
    fixture.write_text("def test_sort(benchmark):\n    benchmark(sorted, [3, 1])\n")
    assert detect_python(str(plain)) == "pairbench" and detect_python(str(fixture)) == "pytest-benchmark"
    assert detect_program(str(Path("/bin/true").resolve())) == "pairbench"


def test_sides_of_different_harnesses_are_refused_until_the_harness_is_named(gbench, gotest):
    code, _, err = invoke("bench", "-q", gbench.baseline, gotest.baseline)
    assert code == 2 and "different harnesses" in err and "--harness" in err
