"""``bench``'s verdicts and its ``--fail-on`` gate on scripted workers (``fakes.FakeWorkers``, a
virtual clock): a slowdown is decided by the rule, not by what else the machine runs. The real
workers' tests (``test_bench_command.py``) check running, parsing and misbehaviour; the harness
suites' tests (``tests/adapters``) decide real slowdowns of real programs."""

from __future__ import annotations

import json

from cli_runner import invoke
from fakes import FakeWorkers

# tests/support/protocol_worker.py's benchmarks: a spin loop of n additions, ~10 ns each
SPINS = {"spin[n=200]": {"per_iteration_ns": 2_000.0}, "spin[n=2000]": {"per_iteration_ns": 20_000.0},
         "add": {"per_iteration_ns": 200.0}}


def test_a_benchmark_eight_times_slower_is_found_slower_and_fails_the_gate(worker_programs):
    workers = FakeWorkers({"./bench-old": SPINS,
                           "./bench-new": {**SPINS, "spin[n=200]": {"per_iteration_ns": 8 * 2_000.0}}}, seed=1)
    code, out, err = invoke("bench", "--harness", "pairbench", "--max-time", "10s", "--sample-time", "200us",
                            "--seed", "7", "-q", "-k", "spin", "--fail-on", "slower", "--json", "r.json",
                            "./bench-old", "./bench-new", workers=workers)
    assert code == 1, err
    assert "spin[n=200]" in out and "slower" in out
    document = json.loads((worker_programs / "r.json").read_text())
    assert document["kind"] == "bench"
    verdicts = {(c["benchmark"]["name"], c["benchmark"]["params"].get("n")): c["verdict"]
                for c in document["comparisons"]}
    assert verdicts[("spin", "200")] == "slower"
    assert verdicts[("spin", "2000")] != "slower"
    assert set(verdicts) == {("spin", "200"), ("spin", "2000")}  # -k spin: add left out
