"""A harness program whose output cannot be read: the benchmark is named with its side, the harness,
the file and the line, what was measured before is kept, and the other benchmarks go on.

The programs here are shell scripts that answer like a Go test binary (``-test.list``, a run with
``-test.bench``) but print one benchmark's line wrongly, as a harness of another version or a
broken one might: real Go binaries never print such lines, so no real one can stand in."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke

pytestmark = pytest.mark.e2e

SCRIPT = r"""#!/bin/sh
case "$*" in
  *-test.list*) printf 'BenchmarkGood\nBenchmarkBad\n'; exit 0 ;;
esac
n=1
k=1
p=""
while [ $# -gt 0 ]; do
  case "$1" in
    -test.benchtime) n="${2%x}"; shift ;; -test.bench) pattern="$2"; shift ;; -test.count) k="$2"; shift ;;
    -test.cpu) [ "$2" -gt 1 ] && p="-$2"; shift ;;
  esac
  shift
done
echo "goos: linux"
case "$pattern" in
  *Good*) i=0; while [ $i -lt "$k" ]; do echo "BenchmarkGood$p   $n   $((1000 + $$ % 7)) ns/op"; i=$((i + 1)); done ;;
esac
case "$pattern" in
  *Bad*) echo "BenchmarkBad$p   $n   fast ns/op" ;;
esac
echo PASS
"""


@pytest.fixture
def hostile(tmp_path) -> str:
    path = tmp_path / "broken.test"
    path.write_text(SCRIPT)
    path.chmod(0o755)
    return str(path)


def test_output_the_adapter_cannot_read_names_the_benchmark_side_harness_and_line(hostile, tmp_path):
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", "--harness", "go", "--seed", "3", "-q", "--runs", "12", "--sample-time", "1ms",
                          "--json", str(result), hostile)
    assert code == 3
    assert "BenchmarkBad" in err and "line 2" in err and "'fast' is not a number" in err
    assert "(go test -bench output)" in err and "on 'broken.test'" in err and f"{hostile} -test.run" in err
    document = json.loads(result.read_text())
    good = [s for s in document["series"] if document["benchmarks"][s["benchmark"]]["name"] == "BenchmarkGood"]
    # 12 rounds of one invocation each, its first repetition a warmup and the other 7 measured
    numbers = [r for r, w in zip(good[0]["metrics"]["repetition"], good[0]["samples"]["warmup"], strict=True)
               if not w]
    assert numbers == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0] * 12
