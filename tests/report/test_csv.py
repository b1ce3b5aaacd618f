"""CSV exports: golden files, one row per sample in execution order, a parseable summary."""

from __future__ import annotations

import csv
import io

import numpy as np
from report_helpers import HOSTILE, assert_golden

from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Variant
from pairbench.report.analysed import analyse
from pairbench.report.csvfile import (
    SAMPLE_HEADER,
    SUMMARY_HEADER,
    render_samples_csv,
    render_summary_csv,
    summary_path,
)


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_samples_csv_matches_the_golden_file(compare_run):
    assert_golden("compare.samples.csv", render_samples_csv(compare_run))


def test_summary_csv_matches_the_golden_file(compare_run):
    assert_golden("compare.summary.csv", render_summary_csv(analyse(compare_run)))


def test_samples_csv_has_every_sample_with_every_column_in_execution_order(compare_run):
    parsed = rows(render_samples_csv(compare_run))
    assert tuple(parsed[0]) == SAMPLE_HEADER == ("variant", "label", *SAMPLE_COLUMNS)
    assert len(parsed) == sum(len(v.samples) for v in compare_run.variants) == 82  # 2 x (40 + 1 warmup)
    assert [int(r["seq"]) for r in parsed] == list(range(82))
    assert {r["variant"] for r in parsed} == {"old build", HOSTILE}  # the newline and quotes survive
    base = compare_run.variant("old build").samples
    mine = [r for r in parsed if r["variant"] == "old build"]
    for column in SAMPLE_COLUMNS:
        assert [int(r[column]) for r in mine] == base[column].tolist(), column
    assert sum(r["warmup"] == "1" for r in parsed) == 2


def test_summary_csv_has_a_row_per_variant_and_the_comparison_on_the_candidate(compare_run):
    parsed = rows(render_summary_csv(analyse(compare_run)))
    assert tuple(parsed[0]) == SUMMARY_HEADER
    base, cand = parsed
    assert (base["variant"], base["label"], base["verdict"]) == ("old build", "baseline", "")
    assert (cand["variant"], cand["verdict"], cand["baseline"]) == (HOSTILE, "slower", "old build")
    comparison = compare_run.comparisons[0]
    assert float(cand["change_pct"]) == comparison["effect"]["estimate"]  # exact round trip
    assert float(cand["pvalue"]) == comparison["pvalue"]
    summary = compare_run.summaries[0]
    assert float(base["median"]) == summary["median"] and int(base["n"]) == 40


def test_summary_path_sits_beside_the_samples_file():
    assert str(summary_path("out/samples.csv")) == "out/samples.summary.csv"
    assert str(summary_path("out/samples.CSV")) == "out/samples.summary.csv"
    assert str(summary_path("samples.txt")) == "samples.txt.summary.csv"


def test_an_empty_run_gives_just_the_header():
    run = Run(kind="run", variants=(Variant("a", Command("a", ("a",)), samples=Samples.empty()),),
              tool_version="0", started_at="")
    assert render_samples_csv(run) == ",".join(SAMPLE_HEADER) + "\n"


def test_large_runs_export_every_row_with_its_quoted_prefix():
    n = 200_000  # benchmarks/report_size.py times 1e6
    columns = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
    columns["wall_ns"] = np.arange(1, n + 1, dtype=np.int64) * 1000
    columns["seq"] = np.arange(n, dtype=np.int64)
    run = Run(kind="run", variants=(Variant("a,b", Command("a", ("a",)), samples=Samples(columns)),),
              tool_version="0", started_at="")
    text = render_samples_csv(run)
    assert text.count("\n") == n + 1 and text.splitlines()[1].startswith('"a,b",,1000,')


def test_names_with_line_breaks_but_no_quotes_stay_inside_one_quoted_field():
    for name in ("for i in 1 2; do\n  true\ndone", "a\rb", "x\r\ny"):
        columns = {c: np.zeros(3, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns["seq"] = np.arange(3, dtype=np.int64)
        run = Run(kind="run", variants=(Variant(name, Command("a", ("a",)), samples=Samples(columns)),),
                  tool_version="0", started_at="")
        parsed = rows(render_samples_csv(run))
        assert [r["variant"] for r in parsed] == [name] * 3
        summary = rows(render_summary_csv(analyse(run)))
        assert [r["variant"] for r in summary] == [name]
