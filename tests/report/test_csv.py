"""CSV exports: golden files, one row per sample in execution order, a parseable summary."""

from __future__ import annotations

import csv
import io

import numpy as np
from report_helpers import HOSTILE, assert_golden, two_benchmark_run

from pairbench.analysis import analyse
from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Side
from pairbench.parsers import parse_settings
from pairbench.report.csvfile import (
    SAMPLE_HEADER,
    SUMMARY_HEADER,
    render_samples_csv,
    render_summary_csv,
    summary_path,
)
from pairbench.report.safe import visible


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def one_side_run(name: str, samples: Samples) -> Run:
    settings = parse_settings("run", ["a"], {"seed": 1})
    return Run("run", (Side(name, Command("a", ("a",))),), settings, "0", "", samples={(0, 0): samples})


def test_samples_csv_matches_the_golden_file(compare_run):
    assert_golden("compare.samples.csv", render_samples_csv(compare_run))


def test_summary_csv_matches_the_golden_file(compare_run, compare_analysis):
    assert_golden("compare.summary.csv", render_summary_csv(compare_run, compare_analysis))


def test_samples_csv_has_every_sample_with_every_column_in_execution_order(compare_run):
    parsed = rows(render_samples_csv(compare_run))
    assert tuple(parsed[0]) == SAMPLE_HEADER == ("benchmark", "side", "label", *SAMPLE_COLUMNS)
    assert len(parsed) == sum(len(s) for _, _, s in compare_run.all_series()) == 82  # 2 x (40 + 1 warmup)
    assert [int(r["seq"]) for r in parsed] == list(range(82))
    assert {r["side"] for r in parsed} == {"old build", visible(HOSTILE)}  # quotes survive, the newline is shown
    assert {r["benchmark"] for r in parsed} == {"command"}
    base = compare_run.series(0, [side.name for side in compare_run.sides].index("old build"))
    mine = [r for r in parsed if r["side"] == "old build"]
    for column in SAMPLE_COLUMNS:
        assert [int(r[column]) for r in mine] == base[column].tolist(), column
    assert sum(r["warmup"] == "1" for r in parsed) == 2


def test_summary_csv_has_a_row_per_series_and_the_comparison_on_the_candidate(compare_run, compare_analysis):
    parsed = rows(render_summary_csv(compare_run, compare_analysis))
    assert tuple(parsed[0]) == SUMMARY_HEADER
    base, cand = parsed
    assert (base["side"], base["label"], base["verdict"], base["unit"]) == ("old build", "baseline", "", "ns")
    assert (cand["side"], cand["verdict"], cand["baseline"]) == (visible(HOSTILE), "slower", "old build")
    comparison = compare_analysis.comparisons[0]
    assert float(cand["change_pct"]) == comparison.effect.estimate  # exact round trip
    assert float(cand["pvalue"]) == comparison.pvalue
    summary = compare_analysis.summaries[0]
    assert float(base["median"]) == summary.median and int(base["n"]) == 40
    assert "beyond Grubbs' 5% critical value" in base["notes"] and "Tukey fence" in base["notes"]


def test_a_two_benchmark_run_exports_both_benchmarks_with_their_units_and_metrics():
    run = two_benchmark_run()
    samples = rows(render_samples_csv(run))
    assert tuple(samples[0])[-2:] == ("value", "allocs")  # float metrics after the sample columns
    assert [r["benchmark"] for r in samples[:4]] == ["sort[n=1000]", "alloc", "sort[n=1000]", "alloc"]
    assert [int(r["seq"]) for r in samples] == list(range(120))
    alloc_old = [r for r in samples if (r["benchmark"], r["side"]) == ("alloc", "old")]
    assert [float(r["value"]) for r in alloc_old] == run.series(1, 0).metrics["value"].tolist()  # exact
    assert all(r["allocs"] == "3072.0" for r in alloc_old)
    assert all(r["value"] == r["allocs"] == "" for r in samples if r["benchmark"] == "sort[n=1000]")
    assert all(r["allocs"] == "" and r["value"] for r in samples if (r["benchmark"], r["side"]) == ("alloc", "new"))
    summary = rows(render_summary_csv(run, analyse(run)))
    assert [(r["benchmark"], r["side"], r["unit"], r["verdict"]) for r in summary] == [
        ("sort[n=1000]", "old", "ns", ""), ("sort[n=1000]", "new", "ns", "slower"),
        ("alloc", "old", "B", ""), ("alloc", "new", "B", "equivalent")]
    assert 1450 < float(summary[0]["median"]) < 1550  # ns per operation, not per sample of 1024
    assert 4000 < float(summary[2]["median"]) < 4200  # bytes per operation


def test_summary_path_sits_beside_the_samples_file():
    assert str(summary_path("out/samples.csv")) == "out/samples.summary.csv"
    assert str(summary_path("out/samples.CSV")) == "out/samples.summary.csv"
    assert str(summary_path("samples.txt")) == "samples.txt.summary.csv"


def test_an_empty_run_gives_just_the_header():
    run = one_side_run("a", Samples.empty())
    assert render_samples_csv(run) == ",".join(SAMPLE_HEADER) + "\n"


def test_large_runs_export_every_row_with_its_quoted_prefix():
    n = 200_000  # benchmarks/report_size.py times 1e6
    columns = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
    columns["wall_ns"] = np.arange(1, n + 1, dtype=np.int64) * 1000
    columns["seq"] = np.arange(n, dtype=np.int64)
    text = render_samples_csv(one_side_run("a,b", Samples(columns)))
    assert text.count("\n") == n + 1 and text.splitlines()[1].startswith('command,"a,b",,1000,')


def test_names_with_line_breaks_are_shown_with_the_breaks_visible_in_one_field():
    for name in ("for i in 1 2; do\n  true\ndone", "a\rb", "x\r\ny"):
        columns = {c: np.zeros(3, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns["seq"] = np.arange(3, dtype=np.int64)
        columns["iterations"] = np.ones(3, dtype=np.int64)
        run = one_side_run(name, Samples(columns))
        text = render_samples_csv(run)
        assert "\r" not in text and text.count("\n") == 4
        assert [r["side"] for r in rows(text)] == [visible(name)] * 3
        summary = rows(render_summary_csv(run, analyse(run)))
        assert [r["side"] for r in summary] == [visible(name)]


def test_text_cells_that_a_spreadsheet_would_run_as_formulas_are_neutralised_and_numbers_stay_numbers():
    # OWASP, "CSV Injection": a cell starting with = + - @ tab or carriage return is prefixed with '
    names = ("=HYPERLINK(\"http://evil.example\",\"x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
             "\tx", "\rx", "plain")
    sides = tuple(Side(name, Command(name, ("true",)), "baseline" if i == 0 else "candidate")
                  for i, name in enumerate(names))
    rng = np.random.default_rng(3)
    samples = {}
    for i in range(len(names)):
        columns = {c: np.zeros(12, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns.update(wall_ns=(1_000_000 * rng.lognormal(0, 0.05, 12)).astype(np.int64),
                       seq=len(names) * np.arange(12) + i, pair=np.arange(12), iterations=np.ones(12, np.int64))
        samples[(0, i)] = Samples(columns)
    settings = parse_settings("compare", list(names), {"seed": 1, "runs": 12, "names": list(names)})
    run = Run("compare", sides, settings, "0", "", samples=samples)
    expected = ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+cmd|' /C calc'!A0", "'-2+3", "'@SUM(A1:A9)",
                "'\\tx", "'\\rx", "plain"]
    summary = rows(render_summary_csv(run, analyse(run)))
    assert [r["side"] for r in summary] == expected
    assert [r["command"] for r in summary] == expected
    assert [r["baseline"] for r in summary[1:]] == [expected[0]] * (len(names) - 1)
    assert any(float(r["change_pct"]) < 0 for r in summary[1:])  # negative numbers are written as numbers
    assert all(not r["change_pct"].startswith("'") for r in summary[1:])
    samples_rows = rows(render_samples_csv(run))
    assert {r["side"] for r in samples_rows} == set(expected)
    assert all(r["start_ns"] == "0" and r["pair"].isdigit() for r in samples_rows)
