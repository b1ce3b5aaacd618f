"""``pairbench bench`` on a real criterion.rs bench binary (cargo bench --no-run): criterion's own
estimate of an iteration per invocation, with CRITERION_HOME in a directory of pairbench's."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke

from pairbench.measure.executor import OutputPolicy
from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.criterion import Criterion
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.spawner import SpawnerExecutor

pytestmark = pytest.mark.e2e


def test_criterion_lists_its_benchmarks_by_their_ids(criterion, tmp_path):
    found = Criterion().discover(Program((criterion.baseline,), text="chains"), tmp_path, 120)
    assert found.names == ("same", "chain/work/2000", "--quiet", "--list") and not found.explicit_iterations


@pytest.mark.slow
def test_a_criterion_suite_is_compared_and_the_slower_benchmark_found(criterion, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # criterion's default home is ./target/criterion: nothing may land there
    result = tmp_path / "r.json"
    # as in test_go_suite: the rule may stop from 12 rounds on, and stops at 24 the equal benchmark, whose
    # verdict is not asserted (equivalent took it 113 rounds from bench's 32 on)
    code, out, err = invoke("bench", "--seed", "5", "-q", "--sample-time", "10ms", "--max-time", "10s", "--min-runs",
                            "12", "--max-runs", "24", "-k", "^[a-z]", "--json", str(result), "--fail-on", "slower",
                            criterion.baseline, criterion.candidate)
    assert code == 1, err
    document = json.loads(result.read_text())
    verdicts = {c["benchmark"]["name"]: c["verdict"] for c in document["comparisons"]}
    assert verdicts == {"chain/work/2000": "slower", "same": verdicts["same"]}
    assert "criterion" in out and not (tmp_path / "target").exists()  # nothing written beside us


@pytest.mark.parametrize("name", ["--quiet", "--list"])
def test_an_id_that_reads_as_an_option_runs_that_benchmark_alone(criterion, tmp_path, name):
    """The audit's G17: ``--exact --quiet`` made criterion take the id for its flag and run every
    benchmark in each invocation (and ``--list`` only listed them); after ``--`` it is the filter."""
    executor = SpawnerExecutor(output=OutputPolicy("file", str(tmp_path / "output")))
    try:
        target = HarnessTarget(Criterion(), Program((criterion.baseline,), text="chains"), "base", name, 0, None,
                               2_000_000, tmp_path, OutputFile(tmp_path / "output"))
        (row,) = target.execute(executor, timeout_ns=None)
    finally:
        executor.close()
    assert row.execution.status == 0, row.detail
    saved = {json.loads(p.read_text())["full_id"] for p in (tmp_path / "criterion").rglob("new/benchmark.json")}
    assert saved == {name}


def test_without_max_time_a_criterion_benchmark_gets_what_criterion_spends_on_it(criterion, tmp_path):
    """16 s a benchmark (criterion's default 3 s warm-up and 5 s measurement, both sides), not bench's 5 s."""
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", "--seed", "5", "-q", "--sample-time", "10ms", "--runs", "12", "-k", "^same$",
                          "--json", str(result), criterion.baseline, criterion.candidate)
    assert code == 0, err
    assert json.loads(result.read_text())["settings"]["sampling"]["max_time_ns"] == 16_000_000_000
