"""Histories of values no timing has, as a store others write may hold: every format renders them, and
a change beyond the float range is shown as unknown, never as an overflow."""

from __future__ import annotations

import json
import math

from pairbench.analysis.history import History, Point, benchmark_history, group_change_points
from pairbench.model import BenchmarkKey
from pairbench.report.history import (
    render_history,
    render_history_csv,
    render_history_json,
    render_history_markdown,
)
from pairbench.report.trend import render_history_html


def _history(values) -> History:
    points = [Point(f"{k:040x}"[::-1], "2026-02-01T00:00:00+00:00", "main", False, "", 1, float(v), None, None,
                    (f"u{k}",)) for k, v in enumerate(values)]
    h = benchmark_history(BenchmarkKey("parse", (), "ns"), points)
    return History("m", (h,), group_change_points([h]))


def test_a_step_by_a_ratio_beyond_the_float_range_is_an_unknown_change_in_every_format():
    history = _history([1e-300] * 10 + [1e300] * 10)
    [step] = history.histories[0].steps
    assert step.index == 10 and step.change == math.inf
    assert "step 1 at " in render_history(history) and "—" in render_history(history)
    assert json.loads(render_history_json(history))["benchmarks"][0]["steps"][0]["change_pct"] is None
    render_history_markdown(history), render_history_csv(history), render_history_html(history)


def test_the_html_page_of_a_noise_beyond_the_float_range_renders_without_its_band():
    """Its charts' JSON is written with no NaN or infinity allowed (``html.script_json``)."""
    assert "parse" in render_history_html(_history([1e-300, 1e300] * 40))


def test_values_near_the_float_range_are_shown_in_one_unit_without_an_overflow(recwarn):
    """The unit a history is shown in is chosen for its lower median: the mean of two 1e308 values
    overflowed (numpy warned, the unit fell back to nanoseconds)."""
    history = _history([1e308, 1.5e308, 1.2e308, 1.7e308])
    text, markdown, page = render_history(history), render_history_markdown(history), render_history_html(history)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    assert " ns" not in text.split("latest:")[1] and " ns " not in markdown
    assert "parse" in page
