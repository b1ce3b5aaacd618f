"""The charts and the renderers draw what the analysis computed; they compute no statistic."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from pairbench.report import charts
from pairbench.report.html import build_page
from pairbench.units import format_level

REPORT = Path(charts.__file__).resolve().parent
RENDERERS = ("charts.py", "csvfile.py", "html.py", "markdown.py", "tables.py")
FORBIDDEN = ("pairbench.stats", "pairbench.analysis.comparison", "pairbench.analysis.summary",
             "pairbench.analysis.rules", "pairbench.store")


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, absolute (``from pairbench import stats`` is pairbench.stats)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


@pytest.mark.parametrize("name", RENDERERS)
def test_renderers_import_no_statistics_and_no_result_file(name):
    found = [m for m in imported_modules(REPORT / name) if m.startswith(FORBIDDEN)]
    assert found == [], f"report/{name} imports {found}: the analysis computes, renderers draw"


def test_charts_never_import_the_statistics():
    modules = imported_modules(REPORT / "charts.py")
    assert not [m for m in modules if m == "pairbench.stats" or m.startswith("pairbench.stats.")]
    assert "stats" not in {m.rsplit(".", 1)[-1] for m in modules}


def _bar_heights(page, key: str) -> list[float]:
    return page.charts[key]["data"][0]["y"]


def test_correlograms_are_the_analysis_s_own(compare_run, compare_analysis):
    page = build_page(compare_run, compare_analysis)
    series = compare_analysis.series_figures[0].correlogram
    pairs = compare_analysis.comparison_figures[0].correlogram
    assert _bar_heights(page, "variant-0-correlogram") == np.asarray(series.acf).tolist()
    assert _bar_heights(page, "comparison-0-correlogram") == np.asarray(pairs.acf).tolist()


def test_a_chart_draws_whatever_correlogram_the_analysis_holds(compare_run, compare_analysis):
    figure = compare_analysis.series_figures[0]
    made_up = dataclasses.replace(figure.correlogram, acf=np.full_like(figure.correlogram.acf, 0.5))
    analysis = dataclasses.replace(compare_analysis, series_figures=(
        dataclasses.replace(figure, correlogram=made_up), *compare_analysis.series_figures[1:]))
    page = build_page(compare_run, analysis)
    assert set(_bar_heights(page, "variant-0-correlogram")) == {0.5}
    without = dataclasses.replace(analysis, series_figures=(
        dataclasses.replace(figure, correlogram=None), *analysis.series_figures[1:]))
    assert "variant-0-correlogram" not in build_page(compare_run, without).charts  # nothing to draw


def test_the_shift_function_is_drawn_at_the_analysis_s_level(compare_run, compare_analysis):
    page = build_page(compare_run, compare_analysis)
    shift = compare_analysis.comparison_figures[0].shift
    caption = next(c.note for s in page.comparisons for c in s.charts if c.key == "comparison-0-shift")
    assert caption.startswith(f"Simultaneous {format_level(shift.confidence)} intervals")
    assert page.charts["comparison-0-shift"]["data"][0]["y"] == pytest.approx(
        (np.asarray(shift.difference) / 1e6).tolist())  # drawn in ms


def test_the_box_plot_is_the_summary_s_quartiles_fences_and_mean(compare_run, compare_analysis):
    page = build_page(compare_run, compare_analysis)
    box = page.charts["variant-0-distribution"]["data"][0]
    s = compare_analysis.summaries[0]
    assert box["type"] == "box"
    assert [box[k][0] for k in ("q1", "median", "q3", "mean")] == pytest.approx(
        [v / 1e6 for v in (s.q1, s.median, s.q3, s.mean)])
    data = page.charts["variant-0-distribution"]["data"]
    beyond = [y for t in data if t["name"] == "beyond the fences" for y in t["y"]]
    beyond += [y for t in data if t["name"] == "beyond the axis" and t["x"][0] == 0 and "xaxis" not in t
               for y in t["customdata"]]
    assert len(beyond) == s.beyond_upper_fence + s.beyond_lower_fence  # within the axis, or marked at its edge
    assert all(y * 1e6 > s.upper_fence or y * 1e6 < s.lower_fence for y in beyond)


def test_the_differences_chart_shades_the_verdict_s_interval(compare_run, compare_analysis):
    page = build_page(compare_run, compare_analysis)
    c = compare_analysis.comparisons[0]
    rect = next(s for s in page.charts["comparison-0-differences"]["layout"]["shapes"] if s["type"] == "rect")
    assert (rect["x0"], rect["x1"]) == (c.effect.low, c.effect.high)
    caption = next(ch.note for s in page.comparisons for ch in s.charts if ch.key == "comparison-0-differences")
    assert f"({c.effect.confidence:.2%})" in caption
