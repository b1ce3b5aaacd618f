"""A harness's numbers are data from a stranger: each is range-checked before any arithmetic, and a
report no real harness writes (finite factors whose product overflows, counts of thousands of digits,
negative times, a directory or a link where a report goes) fails that one benchmark, named, while the
others are measured, in ``bench``; in ``import`` it is one line and exit 4 (the red-team audit's G12
and G13, which ended the whole suite, or ``import``, with exit 70, or imported negative times).

The programs are ``tests/support/fake_harness.py``: real harnesses never print these."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.errors import ResultFileError
from pairbench.measure.harnesses import criterion, gbench, gotest, hyperfine, pytest_benchmark
from pairbench.measure.harnesses.base import FormatError
from pairbench.store.imports import read_import

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_harness.py"
GOOD = {"gbench": {"good_a", "good_b"}, "go": {"BenchmarkGoodA", "BenchmarkGoodB"},
        "criterion": {"good_a", "good_b"}}


def bench_fake(tmp_path: Path, kind: str, mode: str, *options: str):
    """``bench`` of the fake harness: Python without ``site`` (``-S``; the fake needs only the standard
    library), which halves what each of its ~37 processes a run costs."""
    result = tmp_path / "r.json"
    outcome = invoke("bench", "--harness", kind, f"{sys.executable} -S {FAKE} {kind} {mode}", "--runs", "3",
                     "--seed", "1", "--sample-time", "2ms", "-q", "--no-store", "--json", str(result), *options)
    return outcome, result


def rounds_measured(series: dict) -> int:
    """The rounds a stored series measured: its successful measured samples, but one per Go invocation,
    whose repetitions are samples of their own (its first measured one is repetition 2)."""
    samples = series["samples"]
    numbers = series["metrics"].get("repetition", [2.0] * len(samples["warmup"]))
    return sum(1 for w, st, n in zip(samples["warmup"], samples["status"], numbers, strict=True)
               if not w and st == 0 and n == 2.0)


@pytest.mark.e2e
@pytest.mark.parametrize(("kind", "mode", "said"), [
    ("gbench", "real_huge", "a sample's time must be positive"),
    ("gbench", "iterations_huge", "whole number from 1 to 2**53 - 1"),
    ("gbench", "out_dir", "not a regular file"),
    ("go", "ns_huge", "a sample's time must be positive"),
    ("go", "count_5000", "an iteration count of 5000 digits"),
    ("criterion", "iters_huge", "beyond 2**53 - 1"),
    ("criterion", "slope_huge", "a sample's time must be positive"),
])
def test_a_report_no_harness_writes_fails_only_its_benchmark_and_the_others_are_measured(tmp_path, kind, mode, said):
    (code, out, err), result = bench_fake(tmp_path, kind, mode)
    assert code == 3, err
    assert "internal error" not in err and said in err
    assert "'bad'" in err or "'BenchmarkBad'" in err
    document = json.loads(result.read_text())
    measured = {document["benchmarks"][s["benchmark"]]["name"] for s in document["series"] if rounds_measured(s) == 3}
    assert measured == GOOD[kind]
    assert invoke("show", str(result)).code == 0


@pytest.mark.e2e
def test_a_criterion_home_left_as_a_link_is_removed_without_touching_what_it_points_to(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "victim").write_text("kept")
    monkeypatch.setenv("FAKE_HARNESS_LINK", str(target))
    (code, _, err), result = bench_fake(tmp_path, "criterion", "home_link")
    assert code == 3 and "internal error" not in err, err
    assert (target / "victim").read_text() == "kept"


@pytest.mark.e2e
def test_a_counter_named_value_never_replaces_the_measured_time(tmp_path):
    (code, _, err), result = bench_fake(tmp_path, "gbench", "counter_value", "-k", "bad")
    assert code == 0, err
    (series,) = json.loads(result.read_text())["series"]
    measured = [v for v, w in zip(series["metrics"]["value"], series["samples"]["warmup"], strict=True) if not w]
    assert min(measured) > 1.0  # the time over the iterations, ns, not the counter's 1e-3
    assert set(series["metrics"]["value (reported)"]) == {1e-3}


# --------------------------------------------------------------------------- the parsers


def gbench_entry(**fields) -> str:
    entry = {"name": "BM_x", "run_type": "iteration", "iterations": 1000, "real_time": 1000.0, "cpu_time": 1000.0,
             "time_unit": "ns", **fields}
    return json.dumps({"context": {}, "benchmarks": [entry]})


@pytest.mark.parametrize("fields", [
    {"real_time": 1e308, "time_unit": "s"}, {"cpu_time": 1e308, "time_unit": "s"}, {"iterations": 1e30},
    {"iterations": 10**400}, {"iterations": 2**53}, {"real_time": -5.0}, {"real_time": 0.0}, {"cpu_time": -1.0},
])
def test_google_benchmark_numbers_out_of_range_are_a_format_error(fields):
    with pytest.raises(FormatError):
        gbench.parse_json(gbench_entry(**fields), "r.json")


@pytest.mark.parametrize("line", [
    "BenchmarkA-2  1000  1e999 ns/op", "BenchmarkA-2  1000  1e308 ns/op", "BenchmarkA-2  1000  -1234 ns/op",
    "BenchmarkA-2  0  5 ns/op", "BenchmarkA-2  " + "9" * 400 + "  5 ns/op", "BenchmarkA-2  " + "9" * 5000 + "  5 ns/op",
    "BenchmarkA-2  1000  5 ns/op  1e999 MB/s", "BenchmarkA-2  1000  5 ns/op  1e306 B/op",
])
def test_go_numbers_out_of_range_are_a_format_error_naming_the_line(line):
    with pytest.raises(FormatError, match="line 2"):
        gotest.parse_text("goos: linux\n" + line + "\n", "go.txt", None)


def pytest_document(**stats) -> dict:
    return {"machine_info": {}, "benchmarks": [{"fullname": "t.py::test_x", "stats": {
        "rounds": 5, "iterations": 10, "mean": 1e-6, "data": [1e-6] * 5, **stats}}]}


@pytest.mark.parametrize("stats", [
    {"mean": 1e300}, {"rounds": 10**400}, {"iterations": 1e30}, {"rounds": 2**40, "iterations": 2**20},
    {"data": [1e300] * 5}, {"data": [-1e-6] * 5}, {"mean": -1e-6},
])
def test_pytest_benchmark_numbers_out_of_range_are_a_format_error(stats):
    with pytest.raises(FormatError):
        pytest_benchmark.parse_document(pytest_document(**stats), "p.json")


@pytest.mark.parametrize("times", [[1e300], [-1.0], [1e8]])
def test_hyperfine_times_out_of_range_are_a_format_error(times):
    with pytest.raises(FormatError):
        hyperfine.parse_document({"results": [{"command": "a", "times": times}]}, "h.json")


def test_criterion_iterations_whose_sum_overflows_are_a_format_error(tmp_path):
    (tmp_path / "sample.json").write_text(json.dumps({"iters": [1e308, 1e308], "times": [1.0, 2.0]}))
    with pytest.raises(FormatError, match="beyond 2"):
        criterion.sample_arrays(tmp_path / "sample.json")


# --------------------------------------------------------------------------- import


@pytest.mark.parametrize(("name", "text"), [
    ("go.txt", "BenchmarkA-2  1000  1e999 ns/op\n"),
    ("neg.txt", "BenchmarkA-2  1000  -1234 ns/op\n"),
    ("big.txt", "BenchmarkA-2  " + "9" * 5000 + "  5 ns/op\n"),
    ("g.json", gbench_entry(real_time=1e308, time_unit="s")),
    ("g0.json", gbench_entry(real_time=-3.0)),
    ("p.json", json.dumps(pytest_document(rounds=10**400))),
    ("p0.json", json.dumps(pytest_document(data=[0.0] * 5))),
    ("h.json", json.dumps({"results": [{"command": "a", "times": [1e300]}]})),
    ("hneg.json", json.dumps({"results": [{"command": "a", "times": [-1.0]}]})),
])
def test_import_of_numbers_out_of_range_is_one_error_naming_the_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ResultFileError, match=name):
        read_import(str(path))
    code, out, err = invoke("convert", "--json", str(tmp_path / "out.json"), str(path))
    assert code == 4 and "internal error" not in err, err


def test_import_of_a_date_whose_offset_overflows_falls_back_to_the_files_time(tmp_path):
    path = tmp_path / "g.json"
    document = json.loads(gbench_entry())
    document["context"]["date"] = "0001-01-01T00:00:00+23:59"
    path.write_text(json.dumps(document))
    assert read_import(str(path)).started_at.startswith("20")


def test_hyperfine_runs_of_0_s_are_kept_as_1_ns_with_a_note_saying_so(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"results": [{"command": "true", "times": [0.0, 0.0, 0.001]}]}))
    run = read_import(str(path))
    (note,) = [n for n in run.notes if n.code == "import-zero-times"]
    assert note.data["count"] == 2 and note.subject.side == "true"


def test_hyperfine_commands_repeated_with_a_numbered_twin_are_all_kept_distinct(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"results": [{"command": c, "times": [0.001]} for c in ("a", "a", "a (2)")]}))
    assert len({side.name for side in read_import(str(path)).sides}) == 3
