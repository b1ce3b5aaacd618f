"""``pairbench bench`` on a real criterion.rs bench binary (cargo bench --no-run): criterion's own
estimate of an iteration per invocation, with CRITERION_HOME in a directory of pairbench's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.criterion import Criterion

pytestmark = pytest.mark.e2e


def test_criterion_lists_its_benchmarks_by_their_ids(criterion, tmp_path):
    found = Criterion().discover(Program((criterion.baseline,), text="chains"), tmp_path, 120)
    assert found.names == ("same", "chain/work/2000") and not found.explicit_iterations


def test_a_criterion_suite_is_compared_and_the_slower_benchmark_found(criterion, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--seed", "5", "-q", "--sample-time", "10ms", "--max-time", "10s",
                            "--json", str(result), "--fail-on", "slower", criterion.baseline, criterion.candidate)
    assert code == 1, err
    document = json.loads(result.read_text())
    verdicts = {c["benchmark"]["name"]: c["verdict"] for c in document["comparisons"]}
    assert verdicts == {"chain/work/2000": "slower", "same": verdicts["same"]}
    assert "criterion" in out and not list(Path.cwd().glob("target/criterion"))  # nothing written beside us
