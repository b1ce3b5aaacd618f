"""A step whose place is unsure: the history's text, Markdown and JSON say where it may lie, and offer
confirm and bisect over that span."""

from __future__ import annotations

import json

import numpy as np
from scipy.signal import lfilter

from pairbench.analysis.history import (
    History,
    Point,
    benchmark_history,
    group_change_points,
    with_bisects,
)
from pairbench.model import BenchmarkKey
from pairbench.report.history import render_history, render_history_json, render_history_markdown

KEY = BenchmarkKey("parse")


def _unsure_history() -> tuple[History, str, str]:
    """100 commits, AR(1) noise of phi 0.5 and SD 3%, a step of 3 SDs at commit 50 that is placed at 51
    with a span of commits 50..55 (seed 338), and is one step: one step beats a ramp there by the
    Bayes evidence (with seed 117 the span was 45..58, and a ramp explained it as well)."""
    e = np.random.default_rng(338).standard_normal(400)
    y = 0.03 * np.sqrt(0.75) * lfilter([1.0], [1.0, -0.5], e)[300:] + np.where(np.arange(100) >= 50, 0.09, 0.0)
    commits = [f"{k:040x}"[::-1] for k in range(100)]  # distinct in their first characters
    points = [Point(c, f"2026-02-01T00:{k // 60:02d}:{k % 60:02d}+00:00", "main", False, "", 1, float(v), None,
                    None, (f"u{k}",)) for k, (c, v) in enumerate(zip(commits, np.exp(np.log(1e6) + y), strict=True))]
    h = benchmark_history(KEY, points)
    [step] = h.steps
    good, bad = step.between
    assert (step.span.first, step.span.last) == (50, 55) and (good, bad) == (commits[49], commits[55])
    assert not step.spread
    return with_bisects(History("m", (h,), group_change_points([h])), {(good, bad): 14}), good, bad


def test_the_text_says_where_an_unsure_step_may_lie_and_offers_confirm_and_bisect_over_it():
    history, good, bad = _unsure_history()
    out = render_history(history)
    assert f"95% between {good[:10]}..{bad[:10]} (6 points)" in out
    assert f"confirm it: pairbench confirm {good[:10]} {bad[:10]}" in out
    assert f"find its commit among 14: pairbench bisect {good[:10]} {bad[:10]} -k '^parse$'" in out


def test_the_json_carries_the_span_and_markdown_the_bisect_over_it():
    history, good, bad = _unsure_history()
    [step] = json.loads(render_history_json(history))["benchmarks"][0]["steps"]
    assert step["span"] == {"first": 50, "last": 55, "before": good, "after": bad, "level": 0.95}
    assert step["bisect"]["good"] == good and step["bisect"]["bad"] == bad
    markdown = render_history_markdown(history)
    assert f"pairbench bisect {good[:10]} {bad[:10]} -k '^parse$'" in markdown
    assert f", 95% between {good[:10]}..{bad[:10]} (6 points) | parse |" in markdown


def test_the_trend_chart_tints_the_commits_an_unsure_step_may_lie_between():
    from pairbench.report.trend import trend_chart

    history, _, _ = _unsure_history()
    [h] = history.histories
    shapes = trend_chart("t", h, {}).figure["layout"]["shapes"]
    [tint] = [s for s in shapes if s["type"] == "rect"]
    assert (tint["x0"], tint["x1"]) == (49.5, 54.5)
