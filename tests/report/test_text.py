"""The terminal report: names are text, never rich markup; the spread line says what its numbers are."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pairbench.report.analysed import analyse
from pairbench.report.text import render_compare, render_run
from pairbench.units import format_percent

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _renamed(comparisons, **names) -> list[dict]:
    return [dict(c, **names) for c in comparisons]


@pytest.mark.parametrize("baseline", ["[/]", "[red]old", "[bold]x[/bold]", "old\\", "[link=http://e]y"])
def test_a_baseline_named_like_rich_markup_is_printed_as_text_in_the_table_header(compare_run, baseline):
    analysed = analyse(compare_run)
    comparisons = _renamed(analysed.comparisons, baseline=baseline)
    for color in (False, True):
        text = render_compare(compare_run, analysed.summaries, comparisons, color=color)
        header = next(line for line in ANSI.sub("", text).splitlines() if "B min" in line)
        assert header.startswith(f"vs {baseline}")


def test_a_markup_baseline_is_not_styled(compare_run):
    analysed = analyse(compare_run)
    comparisons = _renamed(analysed.comparisons, baseline="[red]old")
    text = render_compare(compare_run, analysed.summaries, comparisons, color=True)
    assert "\x1b[1;31mold" not in text and "[red]old" in text


def test_stored_verdicts_kinds_and_seeds_are_shown_as_text(compare_run):
    analysed = analyse(compare_run)
    comparisons = _renamed(analysed.comparisons, verdict="[/]", candidate="[b]new")
    run = dataclasses.replace(compare_run, options={**compare_run.options, "seed": "[/]"})
    text = render_compare(run, analysed.summaries, comparisons)
    assert "(seed [/])" in text and "[b]new" in text and "[/]" in text.split("verdict", 1)[1]
    several = _renamed(analysed.comparisons, baseline="[i]a") + _renamed(
        analysed.comparisons, baseline="[/i]b")
    text = render_compare(run, analysed.summaries, several)
    assert "vs [i]a" in text and "vs [/i]b" in text
    summaries = [dataclasses.replace(s, mean_method="[/]") for s in analysed.summaries]
    assert "(standard error, [/]" in render_compare(run, summaries, analysed.comparisons)


def test_the_spread_line_calls_the_mean_min_gap_a_share_of_the_mean(single_run):
    analysed = analyse(single_run)
    summary = analysed.summaries[0]
    gap = format_percent(100 * summary.mean_min_gap, signed=False)
    text = render_run(single_run, analysed.summaries)
    assert f"mean-min gap {gap} of the mean" in text
    assert "above min" not in text
    # (mean - min) / mean, the figure stats.describe reports, not (mean - min) / min
    assert summary.mean_min_gap == pytest.approx((summary.mean - summary.min) / summary.mean)
