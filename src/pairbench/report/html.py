"""The self-contained HTML report: one file, charts drawn by an embedded plotly.js, works offline.

Everything shown comes from the run and its :class:`~pairbench.analysis.Analysis`:
the tables and sentences the Markdown report shows too (``tables``,
``sentences``; a suite's summary from ``suite``), every standalone note once, and the charts (``charts``) drawn
from the analysis's figure data.

Safety: the page is rendered by Jinja2 with autoescaping on, so a benchmark
called ``<script>`` is shown as text, and every value shown has its control
characters made visible first (``safe.visible``, as Jinja2's ``finalize``).
Chart data is embedded as JSON in a non-executed ``<script
type="application/json">`` block with ``<``, ``>`` and ``&`` written as
``\\u003c``-style escapes, and every label handed to plotly has its control
characters made visible and its ``<``, ``>`` and ``&`` turned into entities
(plotly reads a subset of HTML in labels). A Content-Security-Policy meta tag forbids every network request
(``default-src 'none'``) and lets only the two inline scripts run, named by
their SHA-256 hashes: plotly.js (taken once from the installed plotly
package) and the few lines that draw the charts.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import field

from pairbench.analysis import Analysis, Comparison
from pairbench.analysis.records import ComparisonFigure
from pairbench.frozen import frozen
from pairbench.model import Run
from pairbench.report import charts as ch
from pairbench.report import tables
from pairbench.report.metric_names import common_metric
from pairbench.report.safe import visible
from pairbench.report.sentences import (
    comparison_title,
    detail_lines,
    figure_metric,
    verdict_sentence,
)

DRAW_CHARTS_JS = """\
(function () {
  "use strict";
  var figures = JSON.parse(document.getElementById("pairbench-charts").textContent);
  var config = {displaylogo: false, responsive: true};
  var drawn = [];
  document.querySelectorAll("[data-chart]").forEach(function (element) {
    var figure = figures[element.getAttribute("data-chart")];
    drawn.push(Plotly.newPlot(element, figure.data, figure.layout, config));
  });
  Promise.all(drawn).then(function () {
    document.documentElement.setAttribute("data-charts", "drawn");
  }, function (error) {
    document.documentElement.setAttribute("data-charts", "failed");
    console.error("pairbench: a chart could not be drawn", error);
  });
})();
"""


@frozen
class Section:
    """A part of the page: a heading, an optional command line, text lines and charts."""

    key: str
    title: str
    subtitle: str = ""
    lines: tuple[str, ...] = ()
    charts: tuple[ch.Chart, ...] = ()
    verdict: str = ""


@frozen
class Page:
    """Everything the template shows, as plain (unescaped) text and chart specs."""

    title: str
    facts: tuple[tuple[str, str], ...]
    verdicts: tuple[tuple[str, str], ...]  # (verdict, sentence)
    verdict_table: tables.Table | None
    variant_table: tables.Table
    overview: tuple[ch.Chart, ...]
    comparisons: tuple[Section, ...]
    variants: tuple[Section, ...]
    environment: tables.Table
    settings: tables.Table
    notes: tuple[str, ...]
    state_banner: str = ""
    charts: Mapping[str, dict] = field(default_factory=dict)
    suite: tuple[tuple[str, tables.Table | None], ...] = ()  # (heading, table); a heading alone is a line
    suite_findings: tuple[str, ...] = ()


def build_page(run: Run, analysis: Analysis) -> Page:
    """The page's content: tables, verdicts, notes, and the charts of the run, comparisons and series."""
    with_benchmark = tables.several_benchmarks(run)
    series = _series(analysis, with_benchmark)
    axes = _axes(run, analysis)
    overview = _overview(run, analysis, series, axes, with_benchmark)
    comparisons = tuple(_comparison_section(i, c, f, run, axes, with_benchmark) for i, (c, f) in
                        enumerate(zip(analysis.comparisons, analysis.comparison_figures, strict=True)))
    variants = tuple(
        Section(key=f"variant-{i}", title=s.name, subtitle=s.summary.command,
                charts=tuple(ch.series_charts(i, s, axes[s.summary.benchmark])))
        for i, s in enumerate(series))
    everything = list(overview) + [c for part in comparisons + variants for c in part.charts]
    suite_blocks, suite_findings = _suite_parts(run, analysis) if with_benchmark else ((), ())
    return Page(
        title=tables.run_title(run, analysis),
        facts=_facts(run),
        verdicts=tuple((c.verdict.verdict, verdict_sentence(c)) for c in analysis.comparisons),
        verdict_table=tables.verdict_table(run, analysis) if analysis.comparisons and not suite_blocks else None,
        variant_table=tables.variant_table(analysis.summaries, with_benchmark=with_benchmark),
        overview=overview,
        comparisons=comparisons,
        variants=variants,
        environment=tables.environment_table(run.stored_environment()),
        settings=tables.settings_table(run),
        notes=tables.note_lines(analysis),
        state_banner=_state_banner(run),
        charts={chart.key: chart.figure for chart in everything},
        suite=suite_blocks,
        suite_findings=suite_findings,
    )


def _suite_parts(run: Run, analysis: Analysis) -> tuple[tuple, tuple[str, ...]]:
    """A suite's summary blocks and validation findings (none for a run that is not a suite)."""
    if analysis.suite is None:
        return (), ()
    # imported here: report.suite loads the suite analysis, and with it scipy.stats, which the history
    # page (report.trend renders through this module) does without
    from pairbench.report.suite import finding_lines, suite_blocks

    return tuple(suite_blocks(run, analysis)), tuple(finding_lines(analysis.suite, run))


def render_html(run: Run, analysis: Analysis, *, plotly_js: str | None = None) -> str:
    """The whole report as one HTML document (``plotly_js`` defaults to the installed plotly's)."""
    page = build_page(run, analysis)
    return render_document("report.html.j2", page, plotly_js=plotly_js)


def render_document(template: str, page, *, plotly_js: str | None = None) -> str:
    """A page (anything with ``charts``, key -> plotly figure) through ``template``, with plotly.js
    and the chart script inlined under a Content-Security-Policy that allows only them."""
    plotly = plotly_js if plotly_js is not None else _installed_plotly_js()
    for name, script in (("plotly.js", plotly), ("the chart script", DRAW_CHARTS_JS)):
        if "</script" in script.lower() or "<!--" in script:
            raise ValueError(f"{name} cannot be inlined: it contains '</script' or '<!--'")
    csp = "; ".join((
        "default-src 'none'",
        f"script-src {_hash(plotly)} {_hash(DRAW_CHARTS_JS)}",
        "style-src 'unsafe-inline'",
        "img-src data: blob:",
        "font-src data:",
        "base-uri 'none'",
        "form-action 'none'",
    ))
    return _template(template).render(page=page, csp=csp, plotly_js=plotly, draw_js=DRAW_CHARTS_JS,
                                      charts_json=script_json(page.charts))


def script_json(value) -> str:
    """JSON safe inside an HTML ``<script>`` block: ``<``, ``>``, ``&`` (and U+2028/9) as escapes."""
    text = json.dumps(value, allow_nan=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _series(analysis: Analysis, with_benchmark: bool) -> list[ch.Series]:
    """Every series as drawn: named as the tables name it, coloured by side."""
    return [ch.Series(tables.series_name(summary, with_benchmark=with_benchmark),
                      ch.COLORS[figure.side % len(ch.COLORS)], summary, figure)
            for summary, figure in zip(analysis.summaries, analysis.series_figures, strict=True)]


def _axes(run: Run, analysis: Analysis) -> dict:
    """Each benchmark's axis (unit and scale), from its series' summaries."""
    of = _by_benchmark(run, analysis.summaries, lambda s: s.benchmark)
    return {key: ch.axis_for(of[key]) for key in run.benchmarks}


def _by_benchmark(run: Run, items, benchmark_of) -> dict:
    """``items`` grouped by their benchmark (every benchmark of ``run`` a key), in order: O(n)."""
    groups: dict = {key: [] for key in run.benchmarks}
    for item in items:
        groups.setdefault(benchmark_of(item), []).append(item)
    return groups


def _overview(run: Run, analysis: Analysis, series: list[ch.Series], axes: Mapping,
              with_benchmark: bool) -> tuple[ch.Chart, ...]:
    """The run as a whole: one run-sequence chart per benchmark, of the time its verdicts are on, and
    the resources of every sample."""
    if not any(s.figure.values.size for s in series):
        return ()
    resources = (ch.resources_chart(series),) if any(s.figure.resources for s in series) else ()
    of = _by_benchmark(run, series, lambda s: s.summary.benchmark)
    verdicts = _by_benchmark(run, analysis.comparisons, lambda c: c.benchmark)
    if not with_benchmark:
        key = run.benchmarks[0]
        return ch.run_sequence_chart("run-sequence", series, axes[key],
                                     metric=_drawn_metric(verdicts[key], series)), *resources
    sequences = tuple(ch.run_sequence_chart(f"run-sequence-{b}", of[key], axes[key], key.label,
                                            _drawn_metric(verdicts[key], of[key]))
                      for b, key in enumerate(run.benchmarks))
    return (*sequences, *resources)


def _drawn_metric(comparisons, series: list[ch.Series]) -> str:
    """The time a benchmark's run sequence shows: the one its verdicts are on, when every series has it;
    else wall time."""
    metric = common_metric(figure_metric(c) for c in comparisons)
    return metric if metric is not None and all(s.figure.has(metric) for s in series) else "wall"


def _comparison_section(index: int, c: Comparison, figure: ComparisonFigure, run: Run, axes: Mapping,
                        with_benchmark: bool) -> Section:
    """A comparison's part of the page: its details (the verdict sentence is shown above) and charts."""
    charts = ch.comparison_charts(index, c, figure, axes[c.benchmark],
                                  c.benchmark.label if with_benchmark else "")
    return Section(key=f"comparison-{index}", title=comparison_title(c, with_benchmark=with_benchmark),
                   lines=tuple(detail_lines(c, run.stopped_because)[1:]), charts=tuple(charts),
                   verdict=c.verdict.verdict)


def _facts(run: Run) -> tuple[tuple[str, str], ...]:
    env = run.environment
    machine = " · ".join(str(env[k]) for k in ("host", "cpu_model", "os") if env.get(k))
    facts = [("Started", run.started_at), ("Finished", run.finished_at or "—"),
             ("Rounds", str(run.rounds)), ("Seed", str(run.settings.sampling.seed)),
             ("Stopped", run.stopped_because or "—"), ("Machine", machine or "—"),
             ("pairbench", run.tool_version)]
    return tuple(facts)


def _state_banner(run: Run) -> str:
    if run.state == "complete":
        return ""
    return f"The run is {run.state}: this report shows the samples it finished."


def _hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


@functools.lru_cache(maxsize=1)
def _installed_plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@functools.lru_cache(maxsize=4)
def _template(name: str = "report.html.j2"):
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pairbench.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_shown,
    )
    env.filters["code_spans"] = code_spans
    return env.get_template(name)


def _shown(value):
    """Every value the template shows, control characters made visible; markup the template or a
    filter built (tables, ``code_spans``, the inlined scripts) is already made of shown values."""
    import markupsafe

    if value is None or isinstance(value, markupsafe.Markup):
        return value
    return visible(value)


def code_spans(text: str):
    """Escape ``text`` and show its `backticked` parts (commands in the notes) as <code>."""
    import markupsafe

    parts = str(markupsafe.escape(visible(text))).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave the text as it is
        return markupsafe.Markup("`".join(parts))
    return markupsafe.Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))
