"""The history page in a real browser: headless Chromium, network off, every trend chart drawn with its
steps marked, and a hostile benchmark name shown as text."""

from __future__ import annotations

import json
import re

import pytest
from history_runs import store_history
from report_helpers import ARTIFACTS, HOSTILE

from pairbench.analysis.history import History, benchmark_history, group_change_points, points_of
from pairbench.report.trend import render_history_html
from pairbench.store.history import Store

pytestmark = pytest.mark.browser

CHARTS_SETTLED = "document.documentElement.getAttribute('data-charts') !== null"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The history page of two benchmarks over 60 commits, one (named hostilely) 8% slower from commit 40."""
    directory = tmp_path_factory.mktemp("history")
    medians = [{HOSTILE: 2e6 * (1.08 if k >= 40 else 1.0) * (1 + 0.003 * ((k * 7) % 5 - 2)),
                "sort": 5e4 * (1 + 0.003 * ((k * 3) % 5 - 2))} for k in range(60)]
    with Store.open(str(directory / "h.db")) as store:
        store_history(store, medians)
        [machine] = store.machines()
        histories = [benchmark_history(b.key, points_of(store.series(machine.id, b)))
                     for b in store.benchmarks(machine.id)]
    path = directory / "history.html"
    path.write_text(render_history_html(History("Test CPU", tuple(histories), group_change_points(histories))))
    data = re.search(r'id="pairbench-charts">(.*?)</script>', path.read_text(), re.S).group(1)
    return path, json.loads(data)


def test_the_history_page_draws_every_trend_offline_with_its_steps(chromium, page):
    path, figures = page
    log = chromium.open(path, width=1280, wait_for=CHARTS_SETTLED)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    chromium.screenshot(ARTIFACTS / "history.png")
    assert log.errors == [] and log.requests == [path.resolve().as_uri()]
    assert chromium.evaluate("document.documentElement.getAttribute('data-charts')") == "drawn"
    drawn = chromium.evaluate("""Array.from(document.querySelectorAll('[data-chart]')).map(e => ({
        key: e.getAttribute('data-chart'), points: e.querySelectorAll('.trace .point').length,
        steps: e.querySelectorAll('.shapelayer path').length,
        notes: Array.from(e.querySelectorAll('.annotation-text')).map(a => a.textContent)}))""")
    assert [d["key"] for d in drawn] == list(figures) == ["trend-0", "trend-1"]
    hostile, sort = drawn
    assert hostile["points"] >= 60 and hostile["steps"] == 1 and hostile["notes"][0].startswith("1: +8")
    assert sort["steps"] == 0


def test_the_history_page_shows_a_hostile_name_as_text(chromium, page):
    path, _ = page
    chromium.open(path, wait_for=CHARTS_SETTLED)
    assert chromium.evaluate("window.__pwned === undefined")
    assert chromium.evaluate("document.querySelectorAll('script').length") == 3
    heading = chromium.evaluate("document.querySelector('#section-trend-0 h2').textContent")
    assert heading.startswith(HOSTILE.split("\n")[0])


def test_the_x_axis_names_commits_and_noise_stays_a_thin_band_while_a_step_fills_the_chart(chromium, page):
    from history_runs import commit_hash

    from pairbench.report.history import SHORT

    path, _ = page
    chromium.open(path, width=1280, wait_for=CHARTS_SETTLED)
    ticks = chromium.evaluate("Array.from(document.querySelectorAll('#trend-1 .xtick text')).map(t => t.textContent)")
    assert ticks and set(ticks) <= {commit_hash(k)[:SHORT] for k in range(60)}
    assert ticks[0] == commit_hash(0)[:SHORT] and ticks[-1] == commit_hash(59)[:SHORT]
    spans = chromium.evaluate("""['trend-0', 'trend-1'].map(k => {
        const gd = document.getElementById(k), r = gd._fullLayout.yaxis.range;
        const ys = gd.data[1].y; const m = ys.slice().sort((a, b) => a - b)[Math.floor(ys.length / 2)];
        return [r[0] / m, r[1] / m]; })""")
    (step_low, step_high), (noise_low, noise_high) = spans
    assert noise_low <= 0.95 and noise_high >= 1.05  # ±0.3% noise drawn on at least ±5% of the median
    assert step_high - step_low >= 0.08  # the 8% step spans its chart
    titles = chromium.evaluate("Array.from(document.querySelectorAll('#trend-1 .g-xtitle, #trend-1 .g-ytitle'))"
                               ".map(t => t.textContent)")
    assert titles == ["commit (oldest first)", "median (µs)"]
