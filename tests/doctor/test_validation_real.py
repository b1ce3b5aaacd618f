"""Validation of real commands: a known setup (a 50 ms sleep) and a known memory growth (10 MiB per iteration).

The built-in workloads run as real processes. Timing assertions are one-sided
(a sleep of 50 ms cannot take less) so a loaded CI machine cannot break them;
the memory slope is exact up to page accounting. The memory test runs the CLI
in a fresh process, whose max RSS floor (the size of the process that spawns
commands, see ``measure.posix``) is far below a test process with scipy loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pairbench.measure.posix import PosixExecutor
from pairbench.report.doctor import reading
from pairbench.sessions.doctor import validate_command
from pairbench.settings import ValidationPlan

pytestmark = pytest.mark.e2e  # real processes, timed for real

WORKLOADS = f"{sys.executable} {Path(__file__).parents[2] / 'examples' / 'workloads.py'}"


def by_check(report):
    return {f.check: f for f in report.findings}


def test_a_real_setup_of_fifty_milliseconds_is_found_as_setup_overhead():
    plan = ValidationPlan(f"{WORKLOADS} setup-then-spin 0.05 20000 {{iterations}}", runs=3,
                          warmup=0, seed=1)
    with PosixExecutor() as executor:
        report = validate_command(plan, executor)[1].doctor
    fit = report.details["time_fit"]
    smallest = min(e["wall_ns"] for e in report.details["samples"]["1"])
    assert smallest >= 50_000_000  # the sleep alone
    # the fixed cost is the 50 ms sleep plus Python's start-up (a loaded machine only adds to both)
    assert fit["intercept"] > 0
    assert fit["slope"] > 0
    setup = by_check(report)["setup-overhead"]
    assert setup.status in ("warn", "unknown")  # warn unless the machine is too loaded to tell
    assert setup.status == "warn" or "straddles" in reading(setup)
    assert by_check(report)["memory-growth"].status != "warn"  # its memory does not grow


def test_a_real_allocation_of_ten_mib_per_iteration_is_found_as_memory_growth(tmp_path):
    environment = tmp_path / "env.json"  # skip the machine checks: only the benchmark matters here
    environment.write_text(json.dumps({"load_average": [0.0, 0.0, 0.0], "logical_cpus": 2}))
    command = f"{WORKLOADS} alloc-each 10 {{iterations}}"
    result = subprocess.run(
        [sys.executable, "-m", "pairbench", "doctor", "--json", "--environment", str(environment),
         "--runs", "2", "--warmup", "0", "--iterations", "1,2,4,8,16", "--seed", "3", command],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    growth = {f["check"]: f for f in document["findings"]}["memory-growth"]
    assert growth["status"] == "warn", growth["reading"]
    assert growth["data"]["slope"] == pytest.approx(10240, rel=0.05)  # KiB per iteration
    assert growth["data"]["pvalue"] < 1e-6
