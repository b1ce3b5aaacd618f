"""``pairbench bench`` on real pytest-benchmark tests: each sample is one pytest run of one test (by
its node id), each side importing its own tree; tests without the fixture are not benchmarks."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke

pytestmark = pytest.mark.e2e


def test_pytest_benchmark_tests_are_listed_and_compared_by_node_id(pybench_files, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--seed", "5", "-q", "--runs", "3", "--sample-time", "20ms", "-k", "work",
                            "--json", str(result), pybench_files.baseline, pybench_files.candidate)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert document["suite"]["harness"] == "pytest-benchmark"
    assert [b["name"] for b in document["benchmarks"]] == ["test_chain.py::test_work"]
    (comparison,) = document["comparisons"]
    assert comparison["rounds"] == 3  # too few for a verdict, enough to see sixteen times the work:
    base, cand = (s["median"] for s in document["summaries"])
    assert cand > 1.5 * base
    assert "pytest-benchmark" in out


def test_only_tests_that_take_the_benchmark_fixture_are_listed(pybench_files, tmp_path):
    from pairbench.measure.harnesses.pytest_benchmark import PytestBenchmark, program_for

    found = PytestBenchmark().discover(program_for(pybench_files.baseline), tmp_path, 120)
    assert found.names == ("test_chain.py::test_work", "test_chain.py::test_same")


def test_a_test_under_a_directory_named_like_an_option_is_listed_and_run(tmp_path):
    """A node id that starts with ``-`` (a directory ``-x``) is given as ``./-x/...``: as it is, pytest
    reads it as its option ``-x``."""
    import subprocess

    from pairbench.measure.harnesses.pytest_benchmark import PytestBenchmark, program_for

    tree, scratch = tmp_path / "tree", tmp_path / "scratch"
    (tree / "-x").mkdir(parents=True)
    scratch.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / "-x" / "test_m.py").write_text("def test_a(benchmark):\n    benchmark(sum, range(100))\n")
    program = program_for(str(tree / "-x"))
    found = PytestBenchmark().discover(program, scratch, 120)
    assert found.names == ("-x/test_m.py::test_a",)
    code, _, err = invoke("bench", "-q", "--runs", "3", "--sample-time", "5ms", "--no-store", str(tree / "-x"))
    assert code == 0, err
