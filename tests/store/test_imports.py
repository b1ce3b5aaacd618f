"""``pairbench import``: real results saved by hyperfine, Google Benchmark, go test, pytest-benchmark
and criterion become pairbench results that show, report and diff read; a file in no known format,
or cut short, is refused naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.errors import ResultFileError
from pairbench.store.imports import read_import
from pairbench.store.resultfile import read_result

DATA = Path(__file__).resolve().parents[1] / "adapters" / "data"


def test_a_google_benchmark_report_becomes_one_side_with_a_sample_per_repetition():
    run = read_import(str(DATA / "gbench-1.7.1.json"))
    assert run.kind == "import" and len(run.sides) == 1
    assert [k.label for k in run.benchmarks] == ["BM_same", "BM_counters", "BM_error"]
    same = run.series(0, 0)
    raw = json.loads((DATA / "gbench-1.7.1.json").read_text())["benchmarks"][0]
    assert len(same.measured()) == 2 and same["pair"].tolist() == [-1, -1]
    assert same.values()[0] == pytest.approx(raw["real_time"])
    assert len(run.series(2, 0).failed()) == 2  # the benchmark's own errors: stored, not analysed
    assert run.environment["import"]["format"] == "gbench"
    assert run.started_at[:10] == json.loads((DATA / "gbench-1.7.1.json").read_text())["context"]["date"][:10]


def test_go_text_becomes_a_sample_per_line_with_its_metrics():
    run = read_import(str(DATA / "go-count2.txt"))
    assert run.sides[0].name == "example.com/pairbench/gobench"
    alloc = run.series([k.label for k in run.benchmarks].index("BenchmarkAlloc"), 0)
    assert len(alloc) == 2 and alloc.values()[0] == pytest.approx(50.25)
    assert alloc.per_operation("allocs/op").tolist() == [1.0, 1.0]


def test_pytest_benchmark_rounds_and_criterion_samples_become_samples():
    pb = read_import(str(DATA / "pytest-benchmark-5.3.1.json"))
    raw = json.loads((DATA / "pytest-benchmark-5.3.1.json").read_text())["benchmarks"][0]["stats"]
    assert pb.series(0, 0).values() == pytest.approx([v * 1e9 for v in raw["data"]])
    crit = read_import(str(DATA / "criterion-0.5.1"))
    sample = json.loads((DATA / "criterion-0.5.1" / "sum_100" / "new" / "sample.json").read_text())
    series = crit.series([k.label for k in crit.benchmarks].index("sum_100"), 0)
    assert series.values() == pytest.approx([t / n for t, n in zip(sample["times"], sample["iters"], strict=True)])


def test_hyperfine_commands_become_sides_named_with_their_parameters():
    run = read_import(str(DATA / "hyperfine-1.15.json"))
    assert [s.name for s in run.sides] == ["sleep 0.001 [t=1]", "sleep 0.001 [t=1] (2)", "sleep 0.001 [t=2]",
                                           "sleep 0.002 [t=2]"]
    assert all(len(run.series(0, s)) == 5 for s in range(4))


def test_an_imported_result_is_written_shown_and_diffed_like_any_other(tmp_path):
    out = tmp_path / "imported.json"
    code, shown, err = invoke("convert", "--json", str(out), str(DATA / "go-count2.txt"))
    assert code == 0, err
    assert read_result(out).kind == "import"
    code, again, _ = invoke("show", str(out))
    assert code == 0 and "BenchmarkSizes/n=400" in again
    assert "Imported from go test -bench" in again and "not interleaved by pairbench" in again
    code, diffed, err = invoke("diff", str(out), str(out))
    assert code == 0, err
    assert diffed.index("Not paired") < diffed.index("BenchmarkWork") and "pairbench bench" in diffed


@pytest.mark.parametrize(("name", "content", "problem"), [
    ("cut.json", '{"context": {}, "benchmarks": [{"name": "BM_x", "itera', "malformed JSON at line 1"),
    ("other.json", '{"hello": [1, 2]}', "a JSON document of no format pairbench imports"),
    ("notes.txt", "just some text\n", "not a result pairbench can import"),
    ("empty.json", "", "the file is empty"),
])
def test_a_file_of_unknown_or_truncated_format_is_refused_naming_it(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ResultFileError) as error:
        read_import(str(path))
    assert str(error.value).startswith(str(path)) and problem in str(error.value)
    code, _, err = invoke("convert", "--json", str(tmp_path / "out.json"), str(path))
    assert code == 4 and problem in err and not (tmp_path / "out.json").exists()


def test_pytest_benchmark_saved_without_its_rounds_is_refused_saying_how_to_save_them(tmp_path):
    document = json.loads((DATA / "pytest-benchmark-5.3.1.json").read_text())
    for benchmark in document["benchmarks"]:
        del benchmark["stats"]["data"]
    path = tmp_path / "0001_saved.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ResultFileError, match="--benchmark-save-data"):
        read_import(str(path))


def test_a_criterion_directory_with_an_unreadable_file_is_refused_naming_the_file(tmp_path):
    copy = tmp_path / "criterion"
    shutil.copytree(DATA / "criterion-0.5.1", copy)
    (copy / "grp" / "sum" / "10" / "new" / "sample.json").write_text('{"iters": [1], "times": [')
    with pytest.raises(ResultFileError, match=r"grp/sum/10/new/sample.json, line 1: not JSON"):
        read_import(str(copy))


def test_convert_prints_a_short_summary_of_what_it_read_and_where_it_wrote_it(tmp_path):
    out = tmp_path / "imported.json"
    code, shown, err = invoke("convert", "--json", str(out), str(DATA / "go-count2.txt"))
    assert code == 0, err
    assert shown.splitlines() == [
        f"pairbench convert · go test -bench · {DATA / 'go-count2.txt'}",
        "4 benchmarks on 1 side (example.com/pairbench/gobench), 8 samples, as go test -bench recorded them "
        "(not interleaved).",
        f"Written to {out}.",
        f"Show it: pairbench show {out} (every benchmark: show --details); compare two: pairbench diff OLD NEW.",
    ]
    assert err == ""


def test_the_old_name_import_still_converts_and_says_the_new_name(tmp_path):
    out, again = tmp_path / "old-name.json", tmp_path / "new-name.json"
    code, shown, err = invoke("import", "--json", str(out), str(DATA / "go-count2.txt"))
    assert code == 0 and err == ("note: `pairbench import` is now `pairbench convert`; the old name will go in a "
                                 "later version\n")
    assert invoke("convert", "--json", str(again), str(DATA / "go-count2.txt")).out == shown.replace(
        str(out), str(again))
    assert "import" not in invoke("--help").out.split("Commands:")[1].split()


def test_what_a_tool_never_recorded_is_shown_as_unknown_not_as_a_measured_zero(tmp_path):
    out = tmp_path / "go.json"
    assert invoke("convert", "--json", str(out), str(DATA / "go-count2.txt")).code == 0
    assert read_result(out).environment["import"]["recorded"] == []
    code, shown, err = invoke("show", str(out))
    assert code == 0, err
    assert "CPU user —, sys —   max RSS —   context switches —" in shown
    assert "0 ns" not in shown.replace("SD 0 ns", "") and "0 KiB" not in shown


def test_hyperfine_mean_cpu_times_are_kept_and_its_unrecorded_memory_is_unknown(tmp_path):
    out = tmp_path / "hf.json"
    assert invoke("convert", "--json", str(out), str(DATA / "hyperfine-1.15.json")).code == 0
    run = read_result(out)
    assert run.environment["import"]["recorded"] == ["user_ns", "sys_ns"]
    raw = json.loads((DATA / "hyperfine-1.15.json").read_text())["results"][0]
    assert set(run.series(0, 0)["user_ns"].tolist()) == {round(raw["user"] * 1e9)}
    code, shown, err = invoke("show", str(out))
    assert code == 0, err
    assert "CPU user 322.4 µs, sys 528.0 µs   max RSS —   context switches —" in shown


def test_an_import_written_before_it_said_what_was_recorded_shows_none_of_its_zeros(tmp_path):
    out = tmp_path / "hf.json"
    assert invoke("convert", "--json", str(out), str(DATA / "hyperfine-1.15.json")).code == 0
    document = json.loads(out.read_text())
    del document["environment"]["import"]["recorded"]
    out.write_text(json.dumps(document))
    code, shown, err = invoke("show", str(out))
    assert code == 0, err
    assert "CPU user —, sys —   max RSS —   context switches —" in shown


@pytest.mark.parametrize(("name", "tool"), [("hyperfine-1.15.json", "hyperfine"), ("gbench-1.7.1.json", "Google Benchmark"),
                                            ("go-count2.txt", "go test -bench"),
                                            ("pytest-benchmark-5.3.1.json", "pytest-benchmark")])
def test_diff_of_another_tools_own_file_says_to_import_it_first(tmp_path, name, tool):
    code, _, err = invoke("diff", str(DATA / name), str(DATA / name))
    assert code == 4
    assert f"this is {tool}'s own result, not a pairbench result: run `pairbench convert --json" in err
    assert "unsupported format" not in err
