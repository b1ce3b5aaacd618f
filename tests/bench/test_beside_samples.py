"""``bench`` never runs its own work beside a sample: no thread of pairbench's is alive beside one
with one job, and with several each job's thread runs only on the CPU its samples run on.

Checked on real worker processes (``tests/support/protocol_worker.py``), never by timing: a script
runs ``bench`` through ``main`` with ``Worker.sample`` noting, at each sample, which thread asks
for it, the CPUs that thread may run on, the CPU its worker is pinned to, the threads alive and the
modules loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pairbench.measure.harnesses.adapters import adapter_for
from pairbench.measure.spawner import SpawnerExecutor
from pairbench.sessions.lanes import HarnessLane

pytestmark = pytest.mark.e2e

WORKER = Path(__file__).resolve().parents[1] / "support" / "protocol_worker.py"

NOTING = """
import io, json, os, sys, threading
from pairbench.cli import main
from pairbench.measure.worker import Worker
seen = []
original = Worker.sample
def noting(self, name, iterations):
    seen.append({"thread": threading.current_thread().name, "allowed": sorted(os.sched_getaffinity(0)),
                 "worker_cpu": self.spec.cpu, "threads": sorted(t.name for t in threading.enumerate()),
                 "modules": len(sys.modules)})
    return original(self, name, iterations)
Worker.sample = noting
code = main(sys.argv[1:], stdout=io.StringIO(), stderr=io.StringIO(), environment=lambda *a, **k: {})
print(json.dumps({"code": code, "seen": seen}))
"""


def _bench(*args: str) -> list[dict]:
    worker = f"{sys.executable} {WORKER}"
    done = subprocess.run([sys.executable, "-c", NOTING, "bench", "-q", "--seed", "3", "--runs", "10",
                           "--sample-time", "200us", *args, worker, worker],
                          capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["code"] == 0 and found["seen"]
    return found["seen"]


def test_with_one_job_no_thread_of_pairbench_is_alive_beside_any_sample_and_nothing_is_imported():
    seen = _bench("-k", "^add$")
    assert all(s["threads"] == ["MainThread"] for s in seen)
    assert all(s["modules"] == seen[0]["modules"] for s in seen)  # the statistics loaded before


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="a platform limit: no CPU affinity")
def test_with_several_jobs_each_jobs_thread_runs_only_on_the_cpu_its_samples_run_on():
    seen = _bench("--jobs", "2", "-k", "spin")
    assert {s["thread"] for s in seen} <= {"pairbench-job-0", "pairbench-job-1"}
    assert all(s["allowed"] == [s["worker_cpu"]] for s in seen)
    assert all(set(s["threads"]) <= {"MainThread", "pairbench-job-0", "pairbench-job-1"} for s in seen)
    assert all(s["modules"] == seen[0]["modules"] for s in seen)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="a platform limit: no CPU affinity")
def test_a_harness_jobs_executor_runs_its_invocations_on_the_jobs_cpu(tmp_path):
    cpu = max(os.sched_getaffinity(0))
    executor = SpawnerExecutor()
    try:
        lane = HarnessLane(adapter_for("gbench"), [], executor, tmp_path / "output",
                           explicit_iterations=True, cpu=cpu)
        assert lane.cpu == cpu and os.sched_getaffinity(executor.spawner_pid) == {cpu}
    finally:
        executor.close()
