"""The terminal report: names are text, never rich markup; the spread line says what its numbers are."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pairbench.report.text import render_compare, render_run
from pairbench.units import format_percent

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _renamed(analysis, **names):
    """``analysis`` with its comparisons' side names replaced (as a run with such names would have)."""
    return dataclasses.replace(analysis, comparisons=tuple(
        dataclasses.replace(c, **names) for c in analysis.comparisons))


@pytest.mark.parametrize("baseline", ["[/]", "[red]old", "[bold]x[/bold]", "old\\", "[link=http://e]y"])
def test_a_baseline_named_like_rich_markup_is_printed_as_text_in_the_table_header(
        compare_run, compare_analysis, baseline):
    analysis = _renamed(compare_analysis, baseline=baseline)
    for color in (False, True):
        text = render_compare(compare_run, analysis, color=color)
        header = next(line for line in ANSI.sub("", text).splitlines() if "min Δ" in line)
        assert header.startswith(f"vs {baseline}")
        assert f"{baseline} wall min" in header and f"{baseline} wall mean" in header  # its name, as text


def test_a_markup_baseline_is_not_styled(compare_run, compare_analysis):
    text = render_compare(compare_run, _renamed(compare_analysis, baseline="[red]old"), color=True)
    assert "\x1b[1;31mold" not in text and "[red]old" in text


def test_names_and_methods_that_look_like_markup_are_shown_as_text(compare_run, compare_analysis):
    text = render_compare(compare_run, _renamed(compare_analysis, candidate="[b]new"))
    assert "[b]new" in text
    several = dataclasses.replace(compare_analysis, comparisons=(
        *_renamed(compare_analysis, baseline="[i]a").comparisons,
        *_renamed(compare_analysis, baseline="[/i]b").comparisons))
    text = render_compare(compare_run, several)
    assert "vs [i]a" in text and "vs [/i]b" in text
    summaries = tuple(dataclasses.replace(s, mean_method="[/]") for s in compare_analysis.summaries)
    analysis = dataclasses.replace(compare_analysis, summaries=summaries)
    assert "(standard error, [/]" in render_compare(compare_run, analysis)


def test_the_spread_line_calls_the_mean_min_gap_a_share_of_the_mean(single_run, single_analysis):
    summary = single_analysis.summaries[0]
    gap = format_percent(100 * summary.mean_min_gap, signed=False)
    text = render_run(single_run, single_analysis)
    assert f"mean-min gap {gap} of the mean" in text
    assert "above min" not in text
    # (mean - min) / mean, the figure stats.describe reports, not (mean - min) / min
    assert summary.mean_min_gap == pytest.approx((summary.mean - summary.min) / summary.mean)


@pytest.mark.parametrize("name", ["echo :x: done", ":thumbs_up:", "a :smile: b"])
def test_a_name_with_an_emoji_code_is_printed_as_its_text_not_an_emoji(compare_run, compare_analysis, name):
    for color in (False, True):
        text = ANSI.sub("", render_compare(compare_run, _renamed(compare_analysis, candidate=name, baseline=name),
                                           color=color))
        assert f"vs {name}" in text and text.count(name) >= 2
        assert not {"❌", "👍", "😄"} & set(text)
