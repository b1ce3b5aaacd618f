"""A suite's summary as ``show``, ``report --format markdown`` and ``diff`` print it, against golden
files (a suite built by hand: regressions, an improvement, equivalent and inconclusive benchmarks,
some added and removed, validation findings)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from cli_runner import invoke
from golden import assert_golden
from runs import make_run, series, side

from pairbench.model import BenchmarkKey
from pairbench.notes import Note, Subject
from pairbench.store import shards
from pairbench.store.resultfile import write_result

GOLDEN = Path(__file__).parent / "golden"


def suite_file(tmp_path) -> Path:
    rng = np.random.default_rng(11)
    ratios = {"BM_parse": rng.normal(0.10, 0.01, 48), "BM_encode": rng.normal(0.025, 0.004, 48),
              "BM_hash": rng.normal(-0.055, 0.005, 48), "BM_copy": rng.normal(0, 0.001, 300),
              "BM_noisy": rng.normal(0, 0.2, 40)}
    samples = {}
    for b, values in enumerate(ratios.values()):
        samples[(b, 0)] = series(np.full(len(values), 2_000_000), start_seq=0, stride=2)
        samples[(b, 1)] = series(2_000_000 * np.exp(values), start_seq=1, stride=2)
    notes = (Note("benchmarks-added", {"side": "new", "count": 1, "names": ["BM_zip"]}),
             Note("benchmarks-removed", {"side": "old", "count": 2, "names": ["BM_old", "BM_older"]}),
             Note("benchmark-elided-body", {"per_iteration_ns": 0.3, "pvalue": 0.5, "growing": False,
                                            "harness": "gbench"}, Subject("BM_copy", "new")))
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(n) for n in ratios]).replace(
        notes=notes, stopped_because="measured 5 benchmarks", suite=shards.suite_record(list(ratios), None, "gbench"))
    path = tmp_path / "suite.json"
    write_result(run, path)
    return path


def test_show_prints_a_suite_as_its_summary_in_reading_order(tmp_path):
    code, out, err = invoke("show", str(suite_file(tmp_path)))
    assert code == 0, err
    assert_golden(GOLDEN / "suite.txt", out)


def test_show_details_prints_every_benchmark_of_a_suite(tmp_path):
    code, out, _ = invoke("show", "--details", str(suite_file(tmp_path)))
    assert code == 0 and out.count("Hodges-Lehmann shift") == 5


def test_the_markdown_report_of_a_suite_opens_with_its_summary(tmp_path):
    code, out, err = invoke("report", "--format", "markdown", str(suite_file(tmp_path)))
    assert code == 0, err
    assert_golden(GOLDEN / "suite.md", out)


def _saved_for_diff(tmp_path, name: str, factor: float, started: str) -> Path:
    """A run of BM_a (``factor`` times 1 ms) and BM_b (3 ms), 20 unpaired samples each."""
    rng = np.random.default_rng(5)
    samples = {(b, 0): series(np.floor(1e6 * scale * factor ** (b == 0) * rng.lognormal(0, 0.01, 20)),
                              pairs=[-1] * 20) for b, scale in enumerate((1.0, 3.0))}
    run = make_run("run", [side("app")], samples, benchmarks=[BenchmarkKey("BM_a"), BenchmarkKey("BM_b")])
    path = tmp_path / name
    write_result(run.replace(started_at=started, environment={"host": "ci-1"}), path)
    return path


def test_diff_prints_the_caveat_before_the_differences(tmp_path):
    old = _saved_for_diff(tmp_path, "old.json", 1.0, "2026-11-20T10:00:00+00:00")
    new = _saved_for_diff(tmp_path, "new.json", 1.1, "2026-11-21T10:00:00+00:00")
    code, out, err = invoke("diff", str(old), str(new))
    assert code == 0, err
    assert_golden(GOLDEN / "diff.txt", out.replace(str(tmp_path), "TMP"))


def test_diff_fails_the_gate_when_a_benchmark_is_slower_and_says_how_many(tmp_path):
    old = _saved_for_diff(tmp_path, "old.json", 1.0, "2026-11-20T10:00:00+00:00")
    new = _saved_for_diff(tmp_path, "new.json", 1.1, "2026-11-21T10:00:00+00:00")
    code, _, err = invoke("diff", str(old), str(new), "--fail-on", "slower")
    assert code == 1 and "--fail-on slower: 1 benchmark(s) matched" in err
    code, _, err = invoke("diff", str(old), str(new), "--fail-on", "faster")
    assert code == 0 and "--fail-on" not in err


def _go_output(path: Path, times: list[float], allocs: tuple[int, int]) -> Path:
    """`go test -bench -benchmem -count N` text: BenchmarkSame and BenchmarkAlloc (16 B per alloc)."""
    lines = ["goos: linux", "goarch: amd64", "pkg: example.com/x"]
    for t in times:
        for name, n in zip(("BenchmarkSame-2", "BenchmarkAlloc-2"), allocs, strict=True):
            lines.append(f"{name} \t 1000000\t {t:.1f} ns/op\t {16 * n} B/op\t {n} allocs/op")
    path.write_text("\n".join(lines + ["PASS", ""]))
    return path


def test_diff_of_two_imported_go_outputs_shows_a_table_per_unit_as_benchstat_does(tmp_path):
    times = [1000.0 + 3 * i for i in range(10)]
    for name, allocs in (("old", (2, 1)), ("new", (2, 3))):
        code, _, err = invoke("convert", str(_go_output(tmp_path / f"{name}.txt", times, allocs)),
                              "--json", str(tmp_path / f"{name}.json"))
        assert code == 0, err
    code, out, err = invoke("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 0, err
    assert_golden(GOLDEN / "diff-units.txt", re.sub(r"\(\d{4}-\d\d-\d\dT[^)]*\)", "(TIMES)",
                                                    out.replace(str(tmp_path), "TMP")))
    code, out, _ = invoke("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--json", "-")
    tables = json.loads(out)["unit_tables"]
    assert [(t["unit"], [d["verdict"] for d in t["differences"]]) for t in tables] == [
        ("B/op", ["same", "higher"]), ("allocs/op", ["same", "higher"])]


def test_the_html_report_of_a_suite_opens_with_its_summary(tmp_path):
    page = tmp_path / "suite.html"
    code, _, err = invoke("report", str(suite_file(tmp_path)), "-o", str(page))
    assert code == 0, err
    html = page.read_text()
    suite = html[html.index('<section id="suite">'):html.index('<section id="verdict">')]
    assert "Holm&#39;s step-down procedure over the suite&#39;s 5 comparisons" in suite
    groups = re.findall(r"<h3>(\w+) \((\d+)\)</h3>", suite)
    assert [name for name, _ in groups] == ["Regressions", "Improvements", "Equivalent", "Inconclusive"]
    regressions = suite[suite.index("<h3>Regressions"):suite.index("<h3>Improvements")]
    assert regressions.index("BM_parse") < regressions.index("BM_encode")  # largest first
    assert "Geometric mean of the changes over 5 benchmarks" in suite
    assert "Removed, only the baseline has them (2): BM_old, BM_older." in suite
    assert "<summary>Validation (1 finding)</summary>" in suite and "WARN  BM_copy · new" in suite
    assert 'class="verdicts"' not in html  # the groups replace the flat verdict table


LONG = "BenchmarkFormatFloat/ShorterIntervalCase32/with_a_long_sub_benchmark_name"


def _long_named(tmp_path, name: str, factor: float, kind: str = "run") -> Path:
    rng = np.random.default_rng(5)
    if kind == "run":
        samples = {(0, 0): series(np.floor(1e6 * factor * rng.lognormal(0, 0.01, 20)), pairs=[-1] * 20)}
        run = make_run("run", [side("app")], samples, benchmarks=[BenchmarkKey(LONG)])
    else:
        samples = {(b, s): series(np.floor(1e6 * (1 + 0.1 * s) * rng.lognormal(0, 0.01, 40)), start_seq=s,
                                  stride=2) for b in range(2) for s in range(2)}
        run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                       benchmarks=[BenchmarkKey(LONG), BenchmarkKey(LONG + "_too")]).replace(
            suite=shards.suite_record([LONG, LONG + "_too"], None, "go"))
    path = tmp_path / name
    write_result(run, path)
    return path


def test_long_benchmark_names_stay_whole_on_one_line_in_the_diff_and_suite_tables(tmp_path):
    code, diffed, err = invoke("diff", str(_long_named(tmp_path, "a.json", 1.0)),
                               str(_long_named(tmp_path, "b.json", 1.1)))
    assert code == 0, err
    code, suite, err = invoke("show", str(_long_named(tmp_path, "s.json", 1.0, kind="bench")))
    assert code == 0, err
    for out in (diffed, suite):
        rows = [line for line in out.splitlines() if LONG in line]
        assert rows, out
        assert all(re.search(r"\S\s{2,}\S", line[line.index(LONG) + len(LONG):]) for line in rows)


def test_the_counts_line_counts_benchmarks_never_measured_once_apart_from_inconclusive(tmp_path):
    rng = np.random.default_rng(4)
    samples = {(0, 0): series(np.full(40, 2e6), start_seq=0, stride=2),
               (0, 1): series(2e6 * np.exp(rng.normal(0, 0.2, 40)), start_seq=1, stride=2),
               **{(b, s): series([]) for b in (1, 2) for s in (0, 1)}}
    names = ["BM_noisy", "BM_late", "BM_later"]
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(n) for n in names]).replace(
        notes=(Note("suite-budget-spent", {"count": 2, "names": names[1:], "budget_ns": 60_000_000_000}),),
        suite=shards.suite_record(names, None, "go"))
    path = tmp_path / "suite.json"
    write_result(run, path)
    code, out, err = invoke("show", str(path))
    assert code == 0, err
    assert "0 regressions, 0 improvements, 0 equivalent, 1 inconclusive, 2 not measured." in out
    assert "Not measured, --suite-time was spent (2): BM_late, BM_later." in out


def test_a_worker_suite_says_its_rounds_and_warm_up_and_that_they_are_not_compares_defaults(tmp_path):
    rng = np.random.default_rng(4)
    samples = {(0, s): series(2e6 * np.exp(rng.normal(0, 0.01, 40)), start_seq=s, stride=2) for s in (0, 1)}
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey("BM_a")]).replace(suite=shards.suite_record(["BM_a"], None, "pairbench"))
    path = tmp_path / "workers.json"
    write_result(run, path)
    code, out, err = invoke("show", str(path))
    assert code == 0, err
    assert ("Each benchmark: at least 32 rounds (--min-runs), up to 5 s (--max-time), after 16 warm-up rounds "
            "(--warmup) (bench's defaults; compare's are at least 10 rounds after 1 warm-up round).") in out
    tuned = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                     benchmarks=[BenchmarkKey("BM_a")], min_runs=12, warmup=2).replace(
        suite=shards.suite_record(["BM_a"], None, "pairbench"))
    write_result(tuned, path)
    code, out, err = invoke("show", str(path))
    assert "Each benchmark: at least 12 rounds (--min-runs), up to 5 s (--max-time), after 2 warm-up rounds " \
           "(--warmup)." in out


def test_diff_gates_on_a_harness_unit_that_got_worse_and_names_a_unit_no_benchmark_reported(tmp_path):
    times = [1000.0 + 3 * i for i in range(10)]
    for name, allocs in (("old", (2, 1)), ("new", (2, 3))):
        invoke("convert", str(_go_output(tmp_path / f"{name}.txt", times, allocs)), "--json", str(tmp_path / f"{name}.json"))
    old, new = str(tmp_path / "old.json"), str(tmp_path / "new.json")
    code, _, err = invoke("diff", old, new, "--fail-on-metric", "allocs/op", "--fail-on-metric", "MB/s")
    assert code == 1 and "--fail-on-metric: 1 comparison(s) worse in allocs/op" in err
    assert "--fail-on-metric MB/s: no benchmark reported this unit (units reported: B/op, allocs/op)" in err
    code, _, err = invoke("diff", new, old, "--fail-on-metric", "all")  # fewer allocations: better, not worse
    assert code == 0 and "worse" not in err
