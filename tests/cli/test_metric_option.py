"""`compare --metric`: the default (auto) decides a CPU-bound command on CPU time and says so; wall time
on the same samples does not; a metric that does not exist is a usage error (scripted executor)."""

from __future__ import annotations

import numpy as np
from cli_runner import invoke
from fakes import FakeExecutor
from stored import comparisons

from pairbench.errors import EXIT_USAGE

BASE, CAND = "sleep 0.1", "sleep 0.2"  # real programs, so the commands parse; what they cost is scripted


def preempted(ratio: float, seed: int = 0):
    """CAND needs ``ratio`` times BASE's CPU time; every sample also waits 0-200% of its CPU time while
    other tasks run their time slices (8 involuntary switches), so its wall time is mostly noise."""
    rng = np.random.default_rng(seed)

    def sample(command, index, clock_ns):
        cpu_ns = 25_000_000 * (ratio if command.text == CAND else 1.0) * float(np.exp(rng.normal(0.0, 0.002)))
        waited = cpu_ns * float(rng.uniform(0.0, 2.0))
        return {"wall_ns": round(cpu_ns + waited), "user_ns": round(0.95 * cpu_ns), "sys_ns": round(0.05 * cpu_ns),
                "involuntary_cs": 8}

    return sample


def test_the_default_finds_a_slowdown_hidden_by_preemption_on_cpu_time_and_says_so(use_executor, tmp_path):
    use_executor(FakeExecutor(preempted(1.02, seed=1)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "1", "--max-time", "20s", "--json", str(out), BASE, CAND)
    assert result.code == 0, result.err
    (comparison,) = comparisons(out)
    assert comparison["verdict"] == "slower" and comparison["metric"] == "cpu"
    assert "the verdict is on CPU time (--metric auto)" in result.out


def test_on_wall_time_the_same_samples_do_not_say_slower(use_executor, tmp_path):
    use_executor(FakeExecutor(preempted(1.02, seed=1)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "1", "--max-time", "20s", "--metric", "wall", "--json", str(out), BASE, CAND)
    assert result.code == 0, result.err
    (comparison,) = comparisons(out)
    assert comparison["metric"] == "wall" and comparison["verdict"] == "inconclusive", result.out
    assert comparison["rounds"] > 11  # far more rounds than CPU time's (decided at the first allowed)


def test_a_metric_that_does_not_exist_is_a_usage_error():
    result = invoke("compare", "--metric", "cycles", BASE, CAND)
    assert result.code == EXIT_USAGE
    assert "--metric" in result.err
