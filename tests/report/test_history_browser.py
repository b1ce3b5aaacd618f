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
