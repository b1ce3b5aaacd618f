"""``pairbench bench`` on real pytest-benchmark tests, each side importing its own tree; tests without the
fixture are not benchmarks. By default one pytest worker per side serves a block of rounds (the tests run
once to record their ``benchmark`` calls, which are then timed in the worker); with ``--harness
pytest-benchmark-processes`` each sample is one pytest run of one test (by its node id)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke

pytestmark = pytest.mark.e2e


def test_pytest_benchmark_tests_are_served_by_a_worker_per_side_and_block(pybench_files, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--seed", "5", "-q", "--runs", "40", "-k", "work", "--json", str(result),
                            pybench_files.baseline, pybench_files.candidate)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert document["suite"]["harness"] == "pytest-benchmark"
    assert document["settings"]["sampling"]["max_time_ns"] == 60_000_000_000  # two pytest starts a block
    assert [b["name"] for b in document["benchmarks"]] == ["test_chain.py::test_work"]
    (comparison,) = document["comparisons"]
    assert comparison["rounds"] == 40
    base, cand = (s["median"] for s in document["summaries"])
    assert cand > 1.5 * base  # sixteen times the work
    counts = []
    for series in document["series"]:  # the rounds' samples came from a few worker processes, not one each
        samples = series["samples"]
        blocks = {b for b, warm in zip(series["metrics"]["block"], samples["warmup"], strict=True) if not warm}
        assert 1 < len(blocks) <= 40 // 8
        counts.append(sorted(n for n, warm in zip(samples["iterations"], samples["warmup"], strict=True) if not warm))
    # each sample times the calls in a loop whose count is the same on both sides (how many calls a loaded
    # machine's pilot allows is not asserted: one preempted call can make it one)
    assert counts[0] == counts[1] and all(n >= 1 for n in counts[0])
    assert "2 workers · pytest-benchmark" in out


@pytest.mark.slow
def test_with_processes_each_sample_is_one_pytest_run_of_one_test(pybench_files, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--harness", "pytest-benchmark-processes", "--seed", "5", "-q", "--runs", "3",
                            "--sample-time", "5ms", "-k", "work", "--json", str(result), pybench_files.baseline,
                            pybench_files.candidate)
    assert code == 0, err
    document = json.loads(result.read_text())
    assert document["suite"]["harness"] == "pytest-benchmark-processes"
    assert document["settings"]["sampling"]["max_time_ns"] == 5_000_000_000
    (comparison,) = document["comparisons"]
    assert comparison["rounds"] == 3  # too few for a verdict, enough to see sixteen times the work:
    base, cand = (s["median"] for s in document["summaries"])
    assert cand > 1.5 * base
    assert "2 programs · pytest-benchmark" in out


def test_only_tests_that_take_the_benchmark_fixture_are_listed(pybench_files, tmp_path):
    from pairbench.measure.harnesses.pytest_benchmark import PytestBenchmark, program_for

    found = PytestBenchmark().discover(program_for(pybench_files.baseline), tmp_path, 120)
    assert found.names == ("test_chain.py::test_work", "test_chain.py::test_same")


def test_a_test_under_a_directory_named_like_an_option_is_listed_and_run(tmp_path, lean_pytest):
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
PEDANTIC = '''
import mylib

def test_pedantic(benchmark):
    assert benchmark.pedantic(mylib.chain, args=(300,), rounds=5, iterations=2) > 0

def consume(data):
    assert data == [3, 1, 2], "not prepared afresh"
    data.sort()

def test_fresh_setup(benchmark):
    benchmark.pedantic(consume, setup=lambda: (([3, 1, 2],), {}), rounds=5)
'''


def test_pedantic_calls_are_served_and_a_setup_prepares_every_call_afresh(tmp_path, lean_pytest):
    (tmp_path / "mylib.py").write_text("def chain(n):\n    x = 1\n    for _ in range(n):\n        x = x * 3 % 1000003\n"
                                       "    return x\n")
    (tmp_path / "test_ped.py").write_text(PEDANTIC)
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--seed", "5", "-q", "--runs", "12", "--harness", "pytest-benchmark",
                            "--json", str(result), str(tmp_path / "test_ped.py"), str(tmp_path / "test_ped.py"))
    assert code == 0, err + out
    document = json.loads(result.read_text())
    assert [b["name"] for b in document["benchmarks"]] == ["test_ped.py::test_pedantic", "test_ped.py::test_fresh_setup"]
    fresh = [s for s in document["series"] if s["benchmark"] == 1]
    assert all(max(s["samples"]["iterations"]) > 1 for s in fresh)  # many calls a sample, each prepared afresh


def test_against_a_revision_each_worker_imports_its_own_tree(pybench_files, lean_pytest, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    test = repo / "test_chain.py"
    test.write_text(Path(pybench_files.baseline).read_text())
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run([*git, *args], cwd=repo, check=True)
    test.write_text(Path(pybench_files.candidate).read_text())
    result = tmp_path / "r.json"
    code, _, err = invoke("bench", "--seed", "5", "-q", "--runs", "24", "-k", "work", "--against", "HEAD",
                          "--pass-env", lean_pytest, "--json", str(result), str(test))
    assert code == 0, err
    base, cand = (s["median"] for s in json.loads(result.read_text())["summaries"])
    assert cand > 1.5 * base
