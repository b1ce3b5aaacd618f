"""The paired history's renderings: the HTML page's links chart with the cumulative line against the
anchor, the Markdown comment's steps, drifts and latest links, each naming its metric."""

from __future__ import annotations

import json
import re

from pairbench.analysis.history import History
from pairbench.analysis.links import link_histories, link_level
from pairbench.model import BenchmarkKey
from pairbench.report.links import render_json, render_markdown
from pairbench.report.trend import render_history_html
from pairbench.store.links import Link

LEVEL = link_level(1)


def _commit(k: int) -> str:
    return f"c{k:02d}" + "0" * 37


def _link(before: int, after: int, effect: float, *, kind: str = "predecessor", decided: bool = False) -> Link:
    return Link(1, f"u{after}", kind, _commit(before), _commit(after), f"2026-01-01T00:{after:02d}:00", "main",
                after - before, "cpu", 900, LEVEL, effect, effect - 0.2, effect + 0.2,
                LEVEL / 10 if decided else 0.5, f"2026-01-01T00:{after:02d}:00", 1.0, 1e-3)


def _history() -> History:
    links = [_link(k - 1, k, 0.1) for k in range(2, 9)]
    links[3] = _link(4, 5, 3.0, decided=True)  # a step at commit 5
    links += [_link(1, 4, 0.3, kind="anchor"), _link(1, 8, 3.4, kind="anchor", decided=True)]
    paired = tuple(link_histories(BenchmarkKey("parse"), links, 1.0))
    return History("a machine", (), (), paired)


def test_the_html_page_draws_each_link_and_the_cumulative_line_against_the_anchor():
    page = render_history_html(_history(), plotly_js="/* plotly */")
    charts = json.loads(re.search(r'<script type="application/json" id="pairbench-charts">(.*?)</script>', page,
                                  re.S)[1])
    links, cumulative = charts["links-0"]["data"]
    assert links["y"] == [0.1, 0.1, 0.1, 3.0, 0.1, 0.1, 0.1] and links["marker"]["color"][3] == "#d62728"
    assert cumulative["x"] == [3, 7] and cumulative["y"] == [0.3, 3.4]  # at the links ending at commits 4 and 8
    assert "parse · CPU time" in page and 'data-chart="links-0"' in page


def test_the_markdown_names_the_step_the_metric_and_the_latest_links_with_the_cumulative_change():
    text = render_markdown(_history())
    assert "| c040000000..c050000000 | parse | CPU time | +3.0% \\[+2.8%, +3.2%\\] at 99.9% | slower |" in text
    assert "Latest links of parse (CPU time):" in text
    assert ("| c070000000..c080000000 | +0.10% \\[-0.10%, +0.30%\\] at 99.9% | 900 |  | "
            "+3.4% \\[+3.2%, +3.6%\\] at 99.9% |") in text


def test_the_json_says_how_many_commits_each_link_and_each_benchmark_left_unrecorded():
    links = [_link(1, 2, 0.1), _link(2, 5, 3.0, decided=True), _link(5, 6, 0.1)]  # 3 and 4 never recorded
    paired = tuple(link_histories(BenchmarkKey("parse"), links, 1.0))
    [benchmark] = json.loads(render_json(History("a machine", (), (), paired)))["paired"]
    assert [link["unrecorded"] for link in benchmark["links"]] == [0, 2, 0]
    assert benchmark["unrecorded"] == 2 and benchmark["steps"] == 1
    assert benchmark["links"][1]["decided"] == "slower" and benchmark["links"][1]["bisect"] is not None
