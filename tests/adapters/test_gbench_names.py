"""Google Benchmark filters that match one benchmark, whatever its name, with the real library
(Debian's libbenchmark 1.7.1, whose ``std::regex`` refuses ``\\]`` and ``\\}``: the red-team audit's
G16, where a benchmark named ``BM_y[2]`` could never run)."""

from __future__ import annotations

import json
import subprocess

import pytest
from cli_runner import invoke

from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.gbench import Gbench, filter_for

pytestmark = pytest.mark.e2e


def listed(program: str, *options: str) -> list[str]:
    done = subprocess.run([program, "--benchmark_list_tests=true", *options], capture_output=True, text=True,
                          timeout=60, check=False)
    assert "Could not compile" not in done.stderr, done.stderr
    return [line for line in done.stdout.split("\n") if line]


def test_each_benchmarks_filter_matches_it_alone_in_the_real_library(gbench_names):
    names = listed(gbench_names)
    assert len(names) == 24 and "BM_y[2]" in names and "BM_]]" in names
    for name in names:
        assert listed(gbench_names, f"--benchmark_filter={filter_for(name)}") == [name], name


@pytest.mark.slow
def test_benchmarks_named_with_brackets_and_braces_are_measured(gbench_names, tmp_path):
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", gbench_names, "-k", r"^BM_(y\[2\]|z\{3\})$", "--runs", "8",
                          "--seed", "1", "--sample-time", "2ms", "-q", "--no-store", "--json", str(result))
    assert code == 0, err
    document = json.loads(result.read_text())
    labels = {document["benchmarks"][s["benchmark"]]["name"] for s in document["series"]}
    assert labels == {"BM_y[2]", "BM_z{3}"}


def test_a_library_that_only_warns_of_an_iteration_count_is_given_sample_times(gbench_lenient, gbench_names,
                                                                            tmp_path):
    # libbenchmark 1.7 cannot run "--benchmark_min_time=8x"; a main without ReportUnrecognizedArguments
    # exits 0 after its warning, and counts passed to it would be ignored (every sample 0.5 s)
    lenient = Gbench().discover(Program((gbench_lenient,), text="lenient"), tmp_path, 60)
    strict = Gbench().discover(Program((gbench_names,), text="strict"), tmp_path, 60)
    assert len(lenient.names) == 24
    assert not lenient.explicit_iterations and not strict.explicit_iterations
