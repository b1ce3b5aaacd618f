"""The HTML report without a browser: self-contained, escaped, with every chart labelled."""

from __future__ import annotations

import json
import re
from html import unescape

import numpy as np
import pytest
from report_helpers import self_check_run, two_benchmark_run

from pairbench.analysis import analyse
from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Side
from pairbench.parsers import parse_settings
from pairbench.report import charts
from pairbench.report.html import build_page, render_html, script_json

FAKE_PLOTLY = "window.Plotly = {};"


def charts_plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def chart_data(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="pairbench-charts">(.*?)</script>', html, re.S)
    return json.loads(block.group(1))


def test_report_is_one_file_that_forbids_network_requests(compare_run, compare_analysis):
    html = render_html(compare_run, compare_analysis)
    csp = unescape(re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1))
    assert "default-src 'none'" in csp and "unsafe-eval" not in csp
    assert csp.count("'sha256-") == 2 and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    assert html.count("plotly.js v") == 1  # embedded once
    ours = html.replace(charts_plotly_js(), "")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", ours)  # nothing loaded from elsewhere
    assert "<link" not in ours and "@import" not in ours
    assert len(re.findall(r"<script\b", html)) == 3  # data, plotly.js, the chart script


def test_hostile_names_are_escaped_in_the_page_and_the_chart_data(compare_run, compare_analysis):
    html = render_html(compare_run, compare_analysis, plotly_js=FAKE_PLOTLY)
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    data_block = re.search(r'id="pairbench-charts">(.*?)</script>', html, re.S).group(1)
    assert "<" not in data_block and ">" not in data_block and "&" not in data_block.replace("\\u0026", "")
    names = [t.get("name", "") for fig in chart_data(html).values() for t in fig["data"]]
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt; | *new* `build`\\nline 2 &amp;…" in names


def test_script_json_escapes_what_could_close_a_script_block():
    text = script_json({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_every_chart_has_a_title_axis_labels_and_a_caption(compare_run, compare_analysis):
    page = build_page(compare_run, compare_analysis)
    keys = list(page.charts)
    assert keys == ["run-sequence", "resources", "comparison-0-differences", "comparison-0-correlogram",
                    "comparison-0-ecdf", "comparison-0-shift", "variant-0-distribution",
                    "variant-0-correlogram", "variant-1-distribution", "variant-1-correlogram"]
    for key, figure in page.charts.items():
        layout = figure["layout"]
        assert layout["title"]["text"], key
        axes = [v for k, v in layout.items() if re.fullmatch(r"[xy]axis\d*", k)]
        assert all(a.get("title", {}).get("text") for a in axes if a.get("showticklabels", True)), key
        assert figure["data"], key
    y_titles = {k: f["layout"]["yaxis"]["title"]["text"] for k, f in page.charts.items()}
    assert y_titles["run-sequence"] == "wall time (ms)"
    assert y_titles["comparison-0-shift"] == "difference of deciles (ms)"
    captions = [c.note for c in page.overview] + [c.note for s in page.comparisons for c in s.charts]
    assert all(captions)


def test_the_page_holds_the_verdict_tables_environment_and_notes(compare_run, compare_analysis):
    html = render_html(compare_run, compare_analysis, plotly_js=FAKE_PLOTLY)
    assert "is 3.6% slower than old build [+2.5%, +5.3%], p &lt; 0.001" in html
    assert 'class="verdict verdict-slower"' in html
    for text in ("Statistics per variant", "Environment", "bench-01", "Example CPU @ 3.0GHz", "Notes",
                 "beyond Grubbs", "Settings", "sampling.seed"):
        assert text in html, text


def test_the_page_lists_every_standalone_note_once(compare_run, compare_analysis):
    from pairbench.report.tables import note_lines

    page = build_page(compare_run, compare_analysis)
    assert page.notes == note_lines(compare_analysis) and len(set(page.notes)) == len(page.notes) == 4
    assert sum("involuntary context switches" in n for n in page.notes) == 2
    details = [line for section in page.comparisons for line in section.lines]
    assert any(line.startswith("4 of the shift function's 18 decile bounds are open") for line in details)


def test_the_page_shows_that_the_self_check_found_a_change():
    run = self_check_run()
    html = render_html(run, analyse(run), plotly_js=FAKE_PLOTLY)
    notes = html.split('<ol class="notes">', 1)[1].split("</ol>", 1)[0]
    assert notes.count("the A/A self-check (the baseline against a copy of itself) found a difference") == 1
    assert "old (copy) vs old: the A/A self-check" in notes
    assert "<code>pairbench doctor</code>" in notes


def test_a_two_benchmark_run_draws_each_benchmark_in_its_own_unit():
    run = two_benchmark_run()
    page = build_page(run, analyse(run))
    assert [s.title for s in page.comparisons] == ["sort[n=1000] · new vs old", "alloc · new vs old"]
    assert [s.title for s in page.variants] == ["sort[n=1000] · old", "sort[n=1000] · new", "alloc · old",
                                                "alloc · new"]
    assert list(page.charts)[:3] == ["run-sequence-0", "run-sequence-1", "resources"]
    y_titles = {k: f["layout"]["yaxis"]["title"]["text"] for k, f in page.charts.items()}
    assert y_titles["run-sequence-0"] == "wall time (µs)"  # per operation: 1024 iterations a sample
    assert y_titles["run-sequence-1"] == "value per operation (B)"
    assert y_titles["comparison-1-shift"] == "difference of deciles (B)"
    assert page.charts["run-sequence-1"]["layout"]["title"]["text"].startswith("Run sequence of alloc")
    html = render_html(run, analyse(run), plotly_js=FAKE_PLOTLY)
    assert "sort[n=1000] · new vs old" in html and "alloc · old" in html


def test_a_single_command_run_gets_its_charts_and_no_verdict(single_run, single_analysis):
    page = build_page(single_run, single_analysis)
    assert page.verdicts == () and page.comparisons == ()
    assert list(page.charts) == ["run-sequence", "resources", "variant-0-distribution",
                                 "variant-0-correlogram"]


def test_thinning_is_deterministic_and_keeps_every_blocks_extremes():
    rng = np.random.default_rng(3)
    values = rng.lognormal(0, 0.3, 100_003)
    keep = charts.thin(values, 1000)
    assert keep.size <= 1000 and np.array_equal(keep, charts.thin(values, 1000))
    assert np.all(np.diff(keep) > 0)
    assert values.argmax() in keep and values.argmin() in keep
    assert np.array_equal(charts.thin(values[:500], 1000), np.arange(500))


def big_run(n: int) -> Run:
    """A comparison of ``n`` rounds with drift, built column by column (fixed rounds, no warmup)."""
    rng = np.random.default_rng(1)
    sides, samples = [], {}
    for i, name in enumerate(("baseline", "candidate")):
        columns = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
        drift = 1 + 0.05 * np.sin(np.arange(n) / 5e4)
        columns["wall_ns"] = (1e6 * (1 + 0.01 * i) * drift * rng.lognormal(0, 0.05, n)).astype(np.int64)
        columns["seq"] = 2 * np.arange(n) + i
        columns["pair"] = np.arange(n)
        columns["iterations"] = np.ones(n, dtype=np.int64)
        columns["max_rss_kib"] = 10_000 + rng.integers(0, 100, n)
        columns["involuntary_cs"] = rng.poisson(1, n)
        sides.append(Side(name, Command(name, (name,)), name))
        samples[(0, i)] = Samples(columns)
    settings = parse_settings("compare", ["baseline", "candidate"], {"runs": n, "seed": 1,
                                                                      "names": ["baseline", "candidate"]})
    return Run("compare", tuple(sides), settings, "0", "", samples=samples, state="complete")


def test_a_large_run_is_thinned_with_a_note_and_stays_small():
    n = 100_000  # benchmarks/report_size.py checks 1e6: seconds and < 20 MB
    run = big_run(n)
    html = render_html(run, analyse(run), plotly_js=FAKE_PLOTLY)
    assert len(html) < 2_000_000
    figures = chart_data(html)
    sequence = figures["run-sequence"]
    assert sum(len(t["x"]) for t in sequence["data"]) <= 2 * charts.MAX_POINTS
    assert "Showing 8,000 of 200,000 samples" in sequence["layout"]["annotations"][0]["text"]
    histogram = figures["variant-0-distribution"]["data"][-1]
    assert sum(histogram["x"]) == n  # the histogram counts every sample
    ecdf = next(f for key, f in figures.items() if key.endswith("ecdf"))
    assert all(len(t["x"]) <= charts.MAX_ECDF_POINTS for t in ecdf["data"])
    assert "drawn through 2,000 evenly spaced order statistics of up to 100,000 samples" in html


def test_notes_show_backticked_commands_as_code_and_stay_escaped():
    from pairbench.report.html import code_spans

    assert str(code_spans("see `pairbench doctor` first")) == "see <code>pairbench doctor</code> first"
    assert str(code_spans("`<script>x</script>` & more")) == "<code>&lt;script&gt;x&lt;/script&gt;</code> &amp; more"
    assert str(code_spans("one ` only")) == "one ` only"


@pytest.mark.parametrize("value", [-5.0, -0.002, 0.0, 5.0, 1e-300])
def test_a_histogram_of_one_repeated_value_has_one_bin_with_increasing_edges(value):
    counts, edges = charts._histogram(np.full(7, value))
    assert counts.tolist() == [7]
    assert edges[0] < value < edges[1]
    assert edges[1] - edges[0] == pytest.approx(max(abs(value) * 0.002, 0) or 1.0)


def test_a_tight_cluster_with_one_far_outlier_gets_a_bounded_number_of_bins():
    values = np.concatenate([1e6 + np.arange(1000) * 1e-3, [1e10]])  # 1 ms with ns spread, one 10 s stall
    counts, edges = charts._histogram(values)
    assert 5 <= counts.size <= charts.MAX_BINS and counts.sum() == values.size
    assert edges[0] == values.min() and edges[-1] == values.max()


def test_histogram_bins_follow_freedman_diaconis_when_in_range():
    values = np.random.default_rng(4).normal(0, 1, 2000)
    counts, _ = charts._histogram(values)
    assert counts.size == np.histogram_bin_edges(values, bins="fd").size - 1
