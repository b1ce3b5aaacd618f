"""A suite's HTML report whose benchmark names are hostile, opened in headless Chromium (the red team's
second round did this by hand: ``</script>``, ``<img onerror>``, ``" onmouseover``, ``{{7*7}}`` and
``javascript:`` names): every name is shown as text, no script of a name runs, no element gains an
event handler or a ``javascript:`` link, and a template's braces stay braces."""

from __future__ import annotations

import pytest
from cli_runner import invoke
from fakes import FakeWorkers

pytestmark = pytest.mark.browser

NAMES = {
    "</script><script>window.__pwned=2</script>": 900.0,
    '" onmouseover="window.__pwned=3" x="': 1000.0,
    "<img src=x onerror=window.__pwned=4>": 1100.0,
    "{{7*7}}": 1200.0,
    "javascript:window.__pwned=5": 1300.0,
}
CHARTS_SETTLED = "document.documentElement.getAttribute('data-charts') !== null"
HANDLERS = """Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)
    .filter(a => a.name.startsWith('on') || (/(^|:)(href|src|action|formaction)$/.test(a.name)
                                            && /^\\s*javascript:/i.test(a.value)))
    .map(a => e.tagName + ' ' + a.name))"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    old = {name: {"per_iteration_ns": ns} for name, ns in NAMES.items()}
    new = {**old, "{{7*7}}": {"per_iteration_ns": 1800.0}}
    for program in ("bench-old", "bench-new"):
        (folder / program).write_text("#!/bin/sh\nexit 1\n")
        (folder / program).chmod(0o755)
    html = folder / "report.html"
    result = invoke("bench", "--harness", "pairbench", "--seed", "4", "-q", str(folder / "bench-old"),
                    str(folder / "bench-new"), "--export-html", str(html),
                    workers=FakeWorkers({str(folder / "bench-old"): old, str(folder / "bench-new"): new}, seed=1))
    assert result.code == 0, result.err
    return html


def test_hostile_benchmark_names_are_text_in_the_browser_and_run_nothing(chromium, page):
    log = chromium.open(page, wait_for=CHARTS_SETTLED)
    assert chromium.evaluate("window.__pwned === undefined")
    assert chromium.evaluate("document.querySelectorAll('script').length") == 3
    assert chromium.evaluate("document.querySelectorAll('img').length") == 0
    assert chromium.evaluate(HANDLERS) == []
    text = chromium.evaluate("document.body.innerText")
    for name in NAMES:
        assert name in text, name
    assert "49" not in text.split("{{7*7}}")[0][-5:]  # the braces were not evaluated as a template
    assert not log.exceptions, log.exceptions
