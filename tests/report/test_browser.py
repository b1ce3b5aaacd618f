"""The HTML report in a real browser: headless Chromium, network off, every chart drawn, no errors.

Chromium (Debian's ``chromium``) is installed by ``scripts/install-test-deps.sh``
(``make test`` runs it). A full-page screenshot is kept as a test artifact in
``tests/artifacts/report.png`` (git-ignored).
"""

from __future__ import annotations

import json
import re

import pytest
from report_helpers import ARTIFACTS, DATA, HOSTILE, invoke

pytestmark = pytest.mark.browser

CHARTS_SETTLED = "document.documentElement.getAttribute('data-charts') !== null"
CHART_STATE = """Array.from(document.querySelectorAll('[data-chart]')).map(e => ({
  key: e.getAttribute('data-chart'),
  svgs: e.querySelectorAll('svg.main-svg').length,
  traces: e.querySelectorAll('svg.main-svg .trace').length,
  marks: e.querySelectorAll('svg.main-svg .trace path, svg.main-svg .trace rect').length,
  title: (e.querySelector('.gtitle') || {}).textContent || ''
}))"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """An HTML report written by `pairbench report`, and the figures embedded in it."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    result = invoke("report", str(DATA / "compare.json"), "-o", str(path))
    assert result.code == 0, result.err
    html = path.read_text(encoding="utf-8")
    data = re.search(r'id="pairbench-charts">(.*?)</script>', html, re.S).group(1)
    return path, json.loads(data)


def test_report_draws_every_chart_offline_without_console_errors(chromium, report):
    path, figures = report
    log = chromium.open(path, width=1280, wait_for=CHARTS_SETTLED)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    chromium.screenshot(ARTIFACTS / "report.png")
    assert log.errors == []
    assert log.requests == [path.resolve().as_uri()]  # nothing else was even attempted
    assert chromium.evaluate("document.documentElement.getAttribute('data-charts')") == "drawn"
    charts = chromium.evaluate(CHART_STATE)
    assert [c["key"] for c in charts] == list(figures) and len(charts) == 10
    for chart in charts:
        assert chart["svgs"] >= 1 and chart["marks"] > 0, chart
        assert chart["traces"] == len(figures[chart["key"]]["data"]), chart
        assert chart["title"], chart


def test_report_shows_the_verdict_and_the_hostile_name_as_text(chromium, report):
    path, _ = report
    chromium.open(path, wait_for=CHARTS_SETTLED)
    verdict = chromium.evaluate("document.querySelector('.verdict').innerText")
    assert verdict.endswith("is 3.6% slower than old build [+2.5%, +5.3%], p < 0.001")
    first_line = HOSTILE.split("\n")[0]
    assert verdict.startswith(first_line)  # shown literally, tags and all
    assert chromium.evaluate("window.__pwned === undefined")
    assert chromium.evaluate("document.querySelectorAll('script').length") == 3
    assert chromium.evaluate("document.querySelectorAll('img').length") == 0
    title = chromium.evaluate("document.querySelector('#variant-1-distribution .gtitle').textContent")
    assert title.startswith("Distribution of " + first_line)  # plotly drew the name as text too


def test_the_content_security_policy_blocks_injected_scripts(chromium, report):
    path, _ = report
    chromium.open(path, wait_for=CHARTS_SETTLED)
    ran = chromium.evaluate("""(function () {
        var s = document.createElement('script'); s.textContent = 'window.__injected = 1';
        document.body.appendChild(s); return window.__injected === 1; })()""")
    assert ran is False


def test_the_page_opens_with_the_verdict_and_the_charts_and_the_notes_come_after(chromium, report):
    path, _ = report
    chromium.open(path, width=1280, wait_for=CHARTS_SETTLED)
    order = chromium.evaluate("""Array.from(document.querySelectorAll('section')).map(s => s.id)""")
    charts_at = [i for i, key in enumerate(order) if key.startswith(("run", "comparison-", "variant-"))]
    assert order[0] == "verdict" and order.index("notes") > max(charts_at)
    assert order.index("statistics") > order.index("comparison-0")
    assert chromium.evaluate("document.querySelector('#verdict .pointer a').getAttribute('href')") == "#notes"


def test_every_axis_of_every_chart_is_titled_with_its_unit(chromium, report):
    path, figures = report
    chromium.open(path, width=1280, wait_for=CHARTS_SETTLED)
    axes = chromium.evaluate("""Array.from(document.querySelectorAll('[data-chart]')).map(e => {
        const full = e._fullLayout;
        return Object.keys(full).filter(k => /^[xy]axis\\d*$/.test(k) && full[k].visible !== false
                                               && full[k].showticklabels !== false)
            .map(k => [e.getAttribute('data-chart'), k, (full[k].title || {}).text || '',
                       full[k].ticksuffix || '', full[k].tickformat || '']); })""")
    for chart_axes in axes:
        for key, axis, title, suffix, fmt in chart_axes:
            assert re.search(r"\(.+\)", title) or suffix or fmt.endswith("%"), (key, axis, title)
    differences = next(a for a in axes if a[0][0].endswith("-differences"))
    assert [ax[3] for ax in differences if ax[1] == "xaxis"] == ["%"]
