"""The harnesses' output formats, read from real recorded output (``data/README.md`` says how each
was recorded), and every way such output can be wrong: each error names the file or stream, the line
when there is one, and the harness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pairbench.measure.harnesses import criterion, gbench, gotest, hyperfine, pytest_benchmark
from pairbench.measure.harnesses.base import DiscoveryError, FormatError, Program

DATA = Path(__file__).resolve().parent / "data"


# --------------------------------------------------------------------------- Google Benchmark


def test_google_benchmark_json_gives_each_repetition_and_skips_the_aggregates():
    report = gbench.parse_json((DATA / "gbench-1.7.1.json").read_text(), "gbench-1.7.1.json")
    assert [r.name for r in report.results] == ["BM_same", "BM_same", "BM_counters", "BM_counters", "BM_error",
                                                "BM_error"]
    raw = json.loads((DATA / "gbench-1.7.1.json").read_text())["benchmarks"]
    same = raw[0]
    assert report.results[0].iterations == same["iterations"]
    assert report.results[0].total_ns == pytest.approx(same["real_time"] * same["iterations"])
    assert report.results[0].metrics["cpu_ns"] == pytest.approx(same["cpu_time"] * same["iterations"])
    counters = report.results[2].metrics
    assert counters["widgets"] == 7 and counters["bytes_per_second"] > 0
    assert report.results[4].error == "the fixture is broken"
    assert report.context["library_build_type"] in ("debug", "release")


def test_google_benchmark_time_units_are_converted_to_nanoseconds():
    entry = {"name": "BM_x", "run_type": "iteration", "iterations": 10, "real_time": 2.5, "cpu_time": 2.0,
             "time_unit": "ms"}
    (result,) = gbench.parse_document({"benchmarks": [entry]}, "x.json").results
    assert result.total_ns == pytest.approx(2.5e6 * 10)


@pytest.mark.parametrize(("text", "problem"), [
    ('{"context": {}, "benchmarks": [{"name": "BM_x", "iter', "x.json, line 1: not JSON"),
    ('{"context": {}}', 'no "benchmarks" list'),
    ('{"context": {"library_version": "v9.0"}, "benchmarks": [{"name": "BM_x", "iterations": 1, '
     '"real_time": 1, "time_unit": "fs"}]}', "time_unit 'fs' is not one of ns, us, ms, s (library version v9.0"),
    ('{"benchmarks": [{"name": "BM_x", "iterations": true, "real_time": 1}]}', "iterations must be a whole number"),
    ('{"benchmarks": [{"name": "BM_x", "iterations": 3, "real_time": NaN}]}', "NaN is not a number JSON allows"),
])
def test_google_benchmark_output_pairbench_cannot_read_is_refused_naming_file_and_harness(text, problem):
    with pytest.raises(FormatError) as error:
        gbench.parse_json(text, "x.json")
    assert problem in str(error.value) and "(Google Benchmark output)" in str(error.value)


def test_a_google_benchmark_filter_escapes_regular_expression_characters():
    assert gbench.filter_for("BM_x<int>/8/real_time") == "^BM_x<int>/8/real_time$"
    assert gbench.filter_for("BM_(a|b).c") == r"^BM_\(a\|b\)\.c$"


# --------------------------------------------------------------------------- go test -bench


def test_go_benchmark_text_gives_each_line_with_per_operation_units_as_totals():
    report = gotest.parse_text((DATA / "go-count2.txt").read_text(), "go-count2.txt")
    assert [r.name for r in report.results] == ["BenchmarkWork"] * 2 + ["BenchmarkAlloc"] * 2 + \
        ["BenchmarkSizes/n=100"] * 2 + ["BenchmarkSizes/n=400"] * 2
    alloc = report.results[2]
    assert alloc.iterations == 1000 and alloc.total_ns == pytest.approx(50.25 * 1000)
    assert alloc.metrics == {"widgets/op": pytest.approx(3000.0), "B/op": 72_000.0, "allocs/op": 1000.0}
    assert report.config["pkg"] == "example.com/pairbench/gobench" and report.configs[0]["goos"] == "linux"


def test_the_gomaxprocs_suffix_given_is_removed_and_no_other():
    text = "BenchmarkA/n-2-4   10   5 ns/op\nBenchmarkB-4   10   5 ns/op\n"
    assert [r.name for r in gotest.parse_text(text, "t", "-4").results] == ["BenchmarkA/n-2", "BenchmarkB"]
    assert [r.name for r in gotest.parse_text(text, "t", "").results] == ["BenchmarkA/n-2-4", "BenchmarkB-4"]


@pytest.mark.parametrize(("line", "problem"), [
    ("BenchmarkX-2   100   abc ns/op   3 B/op", "'abc' is not a number (before 'ns/op')"),
    ("BenchmarkX-2   100   5 ns/op   3", "values and units do not pair up"),
])
def test_a_go_benchmark_line_pairbench_cannot_read_is_refused_naming_its_line(line, problem):
    text = f"goos: linux\npkg: example.com/x\n{line}\nPASS\n"
    with pytest.raises(FormatError) as error:
        gotest.parse_text(text, "old.txt")
    assert str(error.value).startswith("old.txt, line 3: ") and problem in str(error.value)
    assert "(go test -bench output)" in str(error.value)


def test_a_go_line_without_ns_per_op_is_a_time_of_zero_as_go_means_it():
    # the testing package leaves ns/op out when the time it measured is 0 (a stopped timer)
    text = "BenchmarkX-2   \t       1\t       0 B/op\t       0 allocs/op\nBenchmarkY-2   8   5 ms/op\n"
    x, y = gotest.parse_text(text, "t", "-2").results
    assert (x.name, x.iterations, x.total_ns, x.metrics) == ("BenchmarkX", 1, 0.0, {"B/op": 0.0, "allocs/op": 0.0})
    assert (y.total_ns, y.metrics) == (0.0, {"ms/op": 40.0})


def test_log_lines_after_a_benchmark_name_are_not_results():
    text = "BenchmarkX-2   \t--- FAIL: something\nBenchmarkY-2   10   7 ns/op\n"
    assert [r.name for r in gotest.parse_text(text, "t", "-2").results] == ["BenchmarkY"]


def test_a_go_pattern_anchors_and_quotes_each_level_of_a_name():
    assert gotest.pattern_for("BenchmarkSizes/n=100") == "^BenchmarkSizes$/^n=100$"
    assert gotest.pattern_for("BenchmarkA/x.y(z)") == r"^BenchmarkA$/^x\.y\(z\)$"


# --------------------------------------------------------------------------- criterion


def test_criterion_saved_results_give_the_typical_estimate_over_all_iterations():
    reports = {r.name: r for r in criterion.read_saved(DATA / "criterion-0.5.1")}
    assert set(reports) == {"grp/sum/10", "sum_100"}
    new = DATA / "criterion-0.5.1" / "grp" / "sum" / "10" / "new"
    sample = json.loads((new / "sample.json").read_text())
    slope = json.loads((new / "estimates.json").read_text())["slope"]["point_estimate"]
    report = reports["grp/sum/10"]
    assert report.iterations == round(sum(sample["iters"]))
    assert report.total_ns == pytest.approx(slope * report.iterations)


@pytest.mark.parametrize(("file", "content", "problem"), [
    ("sample.json", '{"iters": [1, 2], "times": [5]}', '"iters" and "times" must be lists of one length'),
    ("estimates.json", '{"mean": {"point_estimate": -1}}', 'no positive "slope" or "mean" point_estimate'),
    ("benchmark.json", '{"full_id": ', "not JSON"),
])
def test_criterion_files_pairbench_cannot_read_are_refused_naming_the_file(tmp_path, file, content, problem):
    copy = tmp_path / "saved"
    shutil.copytree(DATA / "criterion-0.5.1", copy)
    (copy / "sum_100" / "new" / file).write_text(content)
    with pytest.raises(FormatError) as error:
        criterion.read_saved(copy)
    assert problem in str(error.value) and file in str(error.value) and "(criterion output)" in str(error.value)


def test_a_criterion_listing_in_another_format_is_refused_naming_the_format(tmp_path):
    fake = tmp_path / "bench"
    fake.write_text("#!/bin/sh\necho 'sum_100: bench'\n")
    fake.chmod(0o755)
    with pytest.raises(DiscoveryError, match=r"line 1 of its --bench --list output is not \"ID: benchmark\""):
        criterion.Criterion().discover(Program((str(fake),), text="bench"), tmp_path, 30)


# --------------------------------------------------------------------------- pytest-benchmark and hyperfine


def test_pytest_benchmark_json_gives_each_benchmark_with_its_rounds():
    report = pytest_benchmark.parse_json((DATA / "pytest-benchmark-5.3.1.json").read_text(), "pb.json")
    assert [r.name for r in report.results] == ["test_b.py::test_sum[1000]", "test_b.py::test_other"]
    raw = json.loads((DATA / "pytest-benchmark-5.3.1.json").read_text())["benchmarks"][0]["stats"]
    first = report.results[0]
    assert first.iterations == raw["rounds"] * raw["iterations"]
    assert first.total_ns == pytest.approx(raw["mean"] * 1e9 * first.iterations)
    assert report.rounds[0] == tuple(raw["data"]) and report.version == "5.3.1"


def test_pytest_benchmark_json_without_stats_is_refused():
    with pytest.raises(FormatError, match=r'benchmarks\[0\] needs a "fullname" and a "stats" object'):
        pytest_benchmark.parse_json('{"benchmarks": [{"name": "t"}]}', "pb.json")


def test_hyperfine_json_gives_each_command_with_its_runs_and_exit_codes():
    document = json.loads((DATA / "hyperfine-1.15.json").read_text())
    results = hyperfine.parse_document(document, "hf.json")
    assert len(results) == 4 and results[0].command == "sleep 0.001" and results[0].parameters == {"t": "1"}
    assert results[0].times_ns == tuple(round(t * 1e9) for t in document["results"][0]["times"])
    assert results[0].exit_codes == (0,) * 5


def test_hyperfine_json_without_times_is_refused_naming_what_is_needed():
    with pytest.raises(FormatError, match=r'has no "times": each run\'s time is needed'):
        hyperfine.parse_document({"results": [{"command": "x", "mean": 1.0}]}, "hf.json")


def test_go_benchmarks_run_on_one_p_unless_gomaxprocs_says_otherwise(monkeypatch):
    monkeypatch.delenv("GOMAXPROCS", raising=False)
    adapter = gotest.GoTest()
    argv = adapter.repeated(Program(("x.test",), text="x.test"), "BenchmarkWork", 64, 3).command.argv
    assert argv[argv.index("-test.cpu") + 1] == "1" and adapter.suffix == ""  # no "-P" on the names
    assert [r.name for r in adapter.reports(adapter.repeated(Program(("x.test",)), "BenchmarkWork", 64, 1),
                                            b"BenchmarkWork   64   12 ns/op\n")] == ["BenchmarkWork"]
    monkeypatch.setenv("GOMAXPROCS", "4")  # a b.RunParallel benchmark's user asks for more
    assert gotest.GoTest().gomaxprocs == 4 and gotest.GoTest().suffix == "-4"
    monkeypatch.setenv("GOMAXPROCS", "none")
    assert gotest.GoTest().gomaxprocs == 1


def test_a_repeated_go_invocation_asks_for_its_count_and_reads_a_report_per_repetition():
    adapter = gotest.GoTest(gomaxprocs=2)
    invocation = adapter.repeated(Program(("x.test",), text="x.test"), "BenchmarkWork", 64, 3)
    argv = invocation.command.argv
    assert argv[argv.index("-test.count") + 1] == "3" and argv[argv.index("-test.benchtime") + 1] == "64x"
    assert invocation.repetitions == 3
    text = "".join(f"BenchmarkWork-2   64   {t} ns/op\nBenchmarkOther-2   64   9 ns/op\n" for t in (12, 10, 11))
    reports = adapter.reports(invocation, text.encode())
    assert [(r.name, r.iterations, r.total_ns) for r in reports] == [("BenchmarkWork", 64, 768.0),
                                                                      ("BenchmarkWork", 64, 640.0),
                                                                      ("BenchmarkWork", 64, 704.0)]


def test_a_repeated_go_invocation_with_a_repetition_missing_is_refused():
    adapter = gotest.GoTest(gomaxprocs=2)
    invocation = adapter.repeated(Program(("x.test",), text="x.test"), "BenchmarkWork", 64, 3)
    with pytest.raises(FormatError, match="2 result lines for 'BenchmarkWork', where -test.count 3 asked for 3"):
        adapter.reports(invocation, b"BenchmarkWork-2   64   12 ns/op\nBenchmarkWork-2   64   10 ns/op\n")
