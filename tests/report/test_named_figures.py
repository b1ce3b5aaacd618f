"""Every table names the sides as the user named them and the time each figure is of; every chart
plots the verdict's time, on axes that show the bulk of the samples with the rest marked."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.model import BenchmarkKey
from pairbench.report import charts
from pairbench.report.html import build_page
from pairbench.report.markdown import render_markdown
from pairbench.report.suite import group_table
from pairbench.report.text import render_compare

ROUNDS = 40


def cpu_run(names=("A", "B"), *, slow_round: float | None = None, metric: str = "cpu"):
    """Sides ``names`` (A the baseline) whose wall times are noisy and whose CPU times are 3% apart;
    the candidate's round 7 ``slow_round`` times slower (an outlier), when given."""
    rng = np.random.default_rng(3)
    cpu = 1e6 * rng.lognormal(0, 0.002, ROUNDS)
    samples = {}
    for s, factor in enumerate((1.0, 1.03)):
        user = cpu * factor
        if s == 1 and slow_round:
            user = user.copy()
            user[7] *= slow_round
        walls = user * 1.4 * rng.lognormal(0, 0.05, ROUNDS)
        samples[(0, s)] = series(walls, start_seq=s, stride=2, user_ns=user, sys_ns=np.zeros(ROUNDS))
    sides = [side(names[0], "baseline"), side(names[1], "candidate")]
    return make_run("compare", sides, samples, runs=ROUNDS, metric=metric)


def test_the_comparison_table_names_the_sides_and_the_time_of_its_figures():
    run = cpu_run()
    text = render_compare(run, analyse(run))
    header = next(line for line in text.splitlines() if line.startswith("vs A"))
    assert re.findall(r"\S+ CPU (?:min|mean)", header) == ["A CPU min", "B CPU min", "A CPU mean", "B CPU mean"]
    assert "CPU change [interval]" in header
    assert not re.search(r"\b[BC] min\b", header.replace("B CPU min", ""))  # no baseline/candidate letters
    assert re.search(r"^A( \(\d\))* · wall time$", text, re.M) and re.search(r"^B( \(\d\))* · wall time$", text, re.M)


def test_the_markdown_tables_name_the_sides_and_the_time_of_each_figure():
    run = cpu_run(("old", "new"))
    text = render_markdown(run, analyse(run))
    assert "| Comparison | old wall median | new wall median | Change in CPU time (" in text
    assert "| Variant | n | Wall median \\[CI\\] | Wall mean ± SE | Wall min |" in text
    assert "CPU time: minimum" in text  # the details' minimum and mean are of the verdict's time


def test_a_suite_group_names_the_time_of_its_changes_and_each_row_when_they_differ():
    run = cpu_run()
    c = analyse(run).comparisons[0]
    wall = c.__class__(**{**c.__dict__, "metric": "wall"})
    assert group_table([c]).header[1] == "Change in CPU time [interval]"
    mixed = group_table([c, wall])
    assert mixed.header[1] == "Change [interval]"
    assert [row[2].split(" on ")[1] for row in mixed.rows] == ["CPU time", "wall time"]


def test_a_table_of_counts_names_no_time():
    run = make_run("compare", [side("old", "baseline"), side("new", "candidate")],
                   {(0, s): series(np.full(ROUNDS, 4096.0) * (1 + 0.01 * s), start_seq=s, stride=2,
                                   metrics={"value": np.full(ROUNDS, 4096.0)}) for s in range(2)},
                   benchmarks=[BenchmarkKey("alloc", (), "B")], runs=ROUNDS)
    text = render_markdown(run, analyse(run))
    assert "| Comparison | old median | new median | Change |" in text and "wall" not in text.split("<details>")[0]


def test_the_charts_plot_the_verdict_s_time_and_name_it():
    run = cpu_run()
    analysis = analyse(run)
    page = build_page(run, analysis)
    sequence = page.charts["run-sequence"]
    assert sequence["layout"]["yaxis"]["title"]["text"] == "CPU time (ms)"
    cpu = analysis.series_figures[0].of("cpu")
    assert sequence["data"][0]["y"] == (cpu / 1e6).tolist()  # CPU times, not the noisier wall times
    assert page.charts["comparison-0-ecdf"]["layout"]["xaxis"]["title"]["text"] == "CPU time (ms)"
    assert "CPU time" in page.charts["comparison-0-differences"]["layout"]["xaxis"]["title"]["text"]
    distribution = page.charts["variant-0-distribution"]["layout"]
    assert distribution["yaxis"]["title"]["text"] == "wall time (ms)"  # the summary's own time, named


def test_a_wall_time_verdict_draws_wall_time():
    run = cpu_run(metric="wall")
    page = build_page(run, analyse(run))
    assert page.charts["run-sequence"]["layout"]["yaxis"]["title"]["text"] == "wall time (ms)"


def test_an_outlier_round_leaves_the_effect_readable_and_is_marked_at_the_axis_edge():
    run = cpu_run(slow_round=8.0)  # one round +700%, the effect +3%
    analysis = analyse(run)
    page = build_page(run, analysis)
    differences = page.charts["comparison-0-differences"]
    low, high = differences["layout"]["xaxis"]["range"]
    assert -10 < low < 0 < 3 < high < 20  # the axis spans the bulk, not -100 .. +700
    overflow = [t for t in differences["data"] if t["name"].startswith("beyond the axis")]
    assert [t["y"] for t in overflow] == [[1]]  # the outlier is counted at the edge
    caption = next(ch.note for s in page.comparisons for ch in s.charts if ch.key == "comparison-0-differences")
    assert "1 rounds beyond the axis" in caption
    sequence = page.charts["run-sequence"]
    marks = [t for t in sequence["data"] if t["marker"].get("symbol")]
    assert len(marks) == 1 and marks[0]["marker"]["symbol"] == ["triangle-up"]
    assert marks[0]["customdata"][0] > sequence["layout"]["yaxis"]["range"][1]  # its real value, beyond
    ecdf = page.charts["comparison-0-ecdf"]
    assert ecdf["layout"]["xaxis"]["range"][1] < marks[0]["customdata"][0]
    assert "beyond the axis" in next(ch.note for s in page.comparisons for ch in s.charts
                                     if ch.key == "comparison-0-ecdf")


def test_without_outliers_the_axes_are_left_to_the_data():
    run = cpu_run()
    page = build_page(run, analyse(run))
    assert "range" not in page.charts["run-sequence"]["layout"]["yaxis"]
    assert not [t for t in page.charts["comparison-0-differences"]["data"] if t["name"].startswith("beyond")]


def test_confidence_levels_are_never_rounded_to_100_percent():
    run = cpu_run()
    analysis = analyse(run)
    page = build_page(run, analysis)
    captions = [ch.note for s in page.comparisons for ch in s.charts] + [ch.note for s in page.variants
                                                                        for ch in s.charts]
    assert not [c for c in captions if "100%" in c]
    shift = dataclasses.replace(analysis.comparison_figures[0].shift, confidence=0.995)
    caption = charts.shift_chart("shift", shift, charts.unit_axis("ns", 1e6), "B − A").note
    assert caption.startswith("Simultaneous 99.5% intervals")  # where ":.0%" printed "100%"


def test_labels_of_lines_close_together_are_moved_apart():
    lines = [(100.0, "solid", "median"), (99.8, "dot", "Q1"), (100.3, "dot", "Q3"), (140.0, "dash", "mean")]
    x = charts._staggered(lines, span=60.0)
    assert x[0] == 1.0 and x[3] == 1.0  # alone: at the edge
    assert len({x[0], x[1], x[2]}) == 3  # three lines within 1 unit of 60: three places
