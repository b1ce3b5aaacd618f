"""`--metric instructions` end to end: the real CLI counts real programs under Callgrind (a command,
and a C worker's loop) and decides on the exact counts. A few seconds each; needs Valgrind
(``scripts/install-test-deps.sh`` installs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

INCLUDE = Path(__file__).resolve().parents[2] / "src" / "pairbench" / "worker" / "include"
SPIN = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    volatile unsigned long s = 0;
    for (long i = 0, n = atol(argv[1]); i < n; i++) s += (unsigned long)i * 3u;
    return 0;
}
"""
WORKER = r"""
#include "pairbench.h"
static unsigned long v = 1;
PAIRBENCH(spin) { for (int i = 0; i < ROUNDS; i++) v = v * 6364136223846793005u + 1u; pairbench_keep(v); }
PAIRBENCH_MAIN()
"""


@pytest.fixture(autouse=True)
def valgrind():
    if shutil.which("valgrind") is None or not Path("/usr/include/valgrind/callgrind.h").exists():
        pytest.fail("Valgrind is not installed: make test installs it (scripts/install-test-deps.sh)")


def pairbench(*args: str, cwd=None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pairbench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def build(tmp_path: Path, source: str, name: str, *flags: str) -> str:
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run(["cc", "-O2", *flags, str(tmp_path / f"{name}.c"), "-o", str(tmp_path / name)], check=True)
    return str(tmp_path / name)


def test_compare_counts_two_commands_and_decides_on_their_exact_counts(tmp_path):
    spin = build(tmp_path, SPIN, "spin")
    out = tmp_path / "r.json"
    result = pairbench("compare", "--metric", "instructions", "--seed", "4", "--json", str(out),
                       f"{spin} 20000", f"{spin} 20400")
    assert result.returncode == 0, result.stderr
    comparison = json.loads(out.read_text())["comparisons"][0]
    shown = {key: comparison.get(key) for key in ("verdict", "metric", "effect", "rounds")}
    assert comparison["verdict"] == "slower" and comparison["metric"] == "instructions", shown
    assert comparison["effect"]["method"].startswith("exact"), shown
    assert 0.5 < comparison["effect"]["estimate"] < 5, shown  # 400 more iterations of ~5 instructions
    assert comparison["rounds"] == 8, shown  # the exact rule at alpha 0.005: 2^-8 <= 0.005
    assert "on instructions" in result.stdout


def test_bench_counts_a_c_workers_loop_alone(tmp_path):
    old = build(tmp_path, WORKER, "old", "-I", str(INCLUDE), "-DROUNDS=100")
    new = build(tmp_path, WORKER, "new", "-I", str(INCLUDE), "-DROUNDS=105")
    out = tmp_path / "r.json"
    result = pairbench("bench", "--metric", "instructions", "--seed", "4", "--json", str(out), old, new)
    assert result.returncode == 0, result.stderr
    comparison = json.loads(out.read_text())["comparisons"][0]
    shown = {key: comparison.get(key) for key in ("verdict", "metric", "effect", "rounds")}
    # the loop alone: 5% more iterations of the body, not diluted by the worker's own work
    assert comparison["verdict"] == "slower" and 4.0 < comparison["effect"]["estimate"] < 5.5, shown


def test_a_harness_program_is_refused_with_the_reason(tmp_path):
    result = pairbench("bench", "--metric", "instructions", "--harness", "gbench", "/bin/true", "/bin/true")
    assert result.returncode == 2
    assert "calibrates and repeats its loop inside the process" in result.stderr
