"""The history as one self-contained HTML page: a trend chart per benchmark, its change points marked.

Each chart draws a benchmark's points in commit order (the median, with the
range of its 95% intervals as error bars; hover shows the commit, its date,
branch and results), the level of each segment between steps as a line (a
drift's sloped line, as the analysis fitted it), and
each step as a vertical line at its first commit, coloured by what ``confirm``
found: red confirmed, grey rejected, orange dashed unconfirmed; and, purple, each commit a paired
comparison found changed against the commit before it (``bisect``'s answer). The page is
rendered like the run report (``html.render_document``): offline, under a
Content-Security-Policy, every label escaped for plotly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field

import numpy as np

from pairbench.analysis.history import LARGEST_LOG, BenchmarkHistory, History
from pairbench.frozen import frozen
from pairbench.report import charts as ch
from pairbench.report import html
from pairbench.report.history import commit_name, render_history, step_range, step_size, step_status
from pairbench.report.links import paired_tables
from pairbench.report.metric_names import metric_words
from pairbench.report.safe import visible
from pairbench.units import format_percent

STATUS_STYLE = {"confirmed": ("#d62728", "solid"), "rejected": (ch.GREY, "dot"),
                "unconfirmed": ("#ff7f0e", "dash")}
MAX_POINTS = 20_000
MAX_COMMIT_TICKS = 24  # commits named on the x-axis; hover names every one
MIN_SPAN = 0.05
"""The y-axis spans at least this share of the median to each side: noise of a fraction of a percent
stays a thin band, as it is, instead of filling the chart as a real step of 10% does."""
NOISE_BAND_SD = 2.0  # the shaded band: each segment's level times exp(±2 noise SD)
FOUND_COLOR = "#9467bd"  # a commit a paired comparison found changed


@frozen
class HistoryPage:
    """What the history template shows: a title, the change points' lines, a chart per benchmark."""

    title: str
    machine: str
    change_points: tuple[str, ...]
    sections: tuple[tuple[str, ch.Chart], ...]
    text: str
    charts: Mapping[str, dict] = field(default_factory=dict)
    paired: tuple = ()  # report.links.paired_tables: the links of a paired history
    paired_charts: tuple[ch.Chart, ...] = ()  # one per paired history: its links and cumulative line


def render_history_html(history: History, *, plotly_js: str | None = None) -> str:
    return html.render_document("history.html.j2", build_history_page(history), plotly_js=plotly_js)


def build_history_page(history: History) -> HistoryPage:
    numbers = {id(step): k for k, cp in enumerate(history.change_points, 1) for step in cp.steps}
    charts = tuple(trend_chart(f"trend-{i}", h, numbers) for i, h in enumerate(history.histories))
    linked = tuple(links_chart(f"links-{i}", h) for i, h in enumerate(history.paired))
    lines = tuple(f"{step_range(cp)}: " + "; ".join(  # numbered by the list, as in the charts
        f"{visible(s.benchmark.label)} {step_size(s)} {step_status(s)}" for s in cp.steps)
        for cp in history.change_points)
    return HistoryPage(
        title=f"pairbench history · {len(history.histories) + len(history.paired)} benchmark(s)", machine=history.machine,
        change_points=lines, sections=tuple((f"{h.benchmark.label} · {metric_words(h.metric)}", c) for h, c in zip(
            history.histories, charts, strict=True)),
        text=render_history(history), charts={c.key: c.figure for c in (*charts, *linked)},
        paired=paired_tables(history.paired), paired_charts=linked)


def links_chart(key: str, history) -> ch.Chart:
    """A paired history (``analysis.links.LinkHistory``) over its commits: each link's change against
    its predecessor with its interval (a step in red), and the cumulative change against the anchor
    with its interval, as a line through the commits the anchor was measured at."""
    chain = history.chain
    x = list(range(1, len(chain) + 1))
    position = {d.link.after: i for i, d in zip(x, chain, strict=True)}
    names = [ch.plotly_text(f"{d.link.before[:10]}..{d.link.after[:10]} · {d.link.rounds} rounds") for d in chain]

    def bars(links, attribute):
        return [(getattr(link, attribute) if getattr(link, attribute) is not None else math.nan) for link in links]

    links = [d.link for d in chain]
    effect, low, high = (np.array(bars(links, a), dtype=np.float64) for a in ("effect", "effect_low", "effect_high"))
    colors = ["#d62728" if d.direction else "#1f77b4" for d in chain]
    traces = [{"type": "scatter", "mode": "markers", "name": "change against its predecessor (%)", "x": x,
               "y": _finite(effect), "text": names, "marker": {"size": 6, "color": colors},
               "hovertemplate": "%{text}<br>%{y:+.3g}%<extra></extra>",
               "error_y": {"type": "data", "symmetric": False, "array": _finite(high - effect),
                           "arrayminus": _finite(effect - low), "thickness": 1, "width": 0, "color": "#9ecae1"}}]
    anchored = [d.link for d in history.cumulative if d.link.after in position]
    if anchored:
        ax = [position[link.after] for link in anchored]
        ce, cl, chh = (np.array(bars(anchored, a), dtype=np.float64) for a in ("effect", "effect_low", "effect_high"))
        traces.append({"type": "scatter", "mode": "markers+lines", "name": "cumulative change against the anchor (%)",
                       "x": ax, "y": _finite(ce), "line": {"color": "#ff7f0e", "width": 2},
                       "text": [ch.plotly_text(f"since {link.before[:10]} at {link.after[:10]}") for link in anchored],
                       "hovertemplate": "%{text}<br>%{y:+.3g}%<extra></extra>",
                       "error_y": {"type": "data", "symmetric": False, "array": _finite(chh - ce),
                                   "arrayminus": _finite(ce - cl), "thickness": 1, "width": 3, "color": "#fdae6b"}})
    title = f"{history.benchmark.label} · {metric_words(history.metric)}"
    layout = ch._layout(title, "link (oldest first)", "change (%)", height=420)
    caption = ("Each link: the commit against its predecessor, measured in the same rounds, with its interval at "
               "the link's level; red: a step. Orange: the cumulative change since the window's anchor, measured "
               "as a third side of the same rounds, with its own interval.")
    return ch.Chart(key, title, {"data": traces, "layout": layout}, caption)


def _finite(values: np.ndarray) -> list:
    """A plotly array: a missing value (a link with no interval) as null."""
    return [None if not math.isfinite(v) else float(v) for v in values]


def _axis(history: BenchmarkHistory) -> ch.Axis:
    return ch.unit_axis(history.benchmark.unit, history.typical())


def trend_chart(key: str, history: BenchmarkHistory, numbers: Mapping[int, int]) -> ch.Chart:
    """The trend of one benchmark (module docstring); the latest ``MAX_POINTS`` commits at most."""
    axis = _axis(history)
    points = history.points[-MAX_POINTS:]
    offset = len(history.points) - len(points)
    x = np.arange(offset, offset + len(points))
    y = axis([p.median for p in points])
    low = axis([p.low if p.low is not None else p.median for p in points])
    high = axis([p.high if p.high is not None else p.median for p in points])
    hover = [ch.plotly_text(f"{commit_name(p.commit, p.dirty)} · {(p.commit_time or p.started_at)[:19]}"
                            f" · {p.branch or ''} · {p.results} result(s)") for p in points]
    traces = [{"type": "scattergl" if len(points) > 2000 else "scatter", "mode": "markers+lines",
               "name": "median per commit", "x": x.tolist(), "y": y.tolist(), "text": hover,
               "hovertemplate": "%{text}<br>%{y:.4g} " + axis.suffix + "<extra></extra>",
               "line": {"color": "#1f77b4", "width": 1}, "marker": {"size": 4},
               "error_y": {"type": "data", "symmetric": False, "array": (high - y).tolist(),
                           "arrayminus": (y - low).tolist(), "thickness": 1, "width": 0,
                           "color": "#9ecae1"}}]
    traces += _levels(history, axis)
    shapes, notes = [], []
    for step in history.steps:
        color, dash = STATUS_STYLE[step.status]
        shapes.append(ch._vline(step.index - 0.5, dash=dash, color=color, width=2))
        if step.span is not None and step.span.last > step.span.first:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": step.span.first - 0.5,
                           "x1": step.span.last - 0.5, "y0": 0, "y1": 1, "fillcolor": color, "opacity": 0.1,
                           "line": {"width": 0}, "layer": "below"})
        notes.append({"x": step.index - 0.5, "y": 1.0, "xref": "x", "yref": "paper", "showarrow": False,
                      "yanchor": "bottom", "font": {"size": 11, "color": color},
                      "text": ch.plotly_text(f"{numbers.get(id(step), '')}: {step_size(step)} {step.status}")})
    for f in history.found:
        if f.index < offset:
            continue
        shapes.append(ch._vline(f.index - 0.5, dash="dashdot", color=FOUND_COLOR, width=2))
        notes.append({"x": f.index - 0.5, "y": 0.0, "xref": "x", "yref": "paper", "showarrow": False,
                      "yanchor": "bottom", "xanchor": "left", "font": {"size": 11, "color": FOUND_COLOR},
                      "text": ch.plotly_text(f"{commit_name(f.after)} {f.verdict}" + (
                          f" {format_percent(f.change)}" if f.change is not None else "") + " (paired)")})
    layout = ch._layout(history.benchmark.label, "commit (oldest first)", axis.label("median"),
                        shapes=shapes, annotations=notes, height=460,
                        margin={"l": 80, "r": 20, "t": 50, "b": 150})
    layout["xaxis"].update(_commit_ticks(x, points))
    layout["legend"]["y"] = -0.5  # below the commits, slanted under the axis, and its title
    layout["yaxis"]["range"] = _y_range(np.concatenate([low, high, y]), float(np.median(y)) if y.size else 0.0)
    traces.insert(0, _noise_band(history, axis))
    caption = (f"The y-axis spans at least ±{MIN_SPAN:.0%} of the median, so noise looks as small as it is; "
               f"shaded: each segment's level ± {NOISE_BAND_SD:g} × the noise between commits"
               + (f" (about {100 * history.noise:.2g}% per commit)" if history.noise else "") + ". "
               "Steps: red confirmed, grey rejected, orange dashed unconfirmed by pairbench confirm; "
               "tinted beside a step, the commits it may lie between (95%)."
               + (" Purple dash-dot: a commit a paired comparison (bisect, confirm) found changed against the "
                  "commit before it." if history.found else ""))
    if offset:
        caption += f" Showing the latest {len(points):,} of {len(history.points):,} commits."
    return ch.Chart(key, history.benchmark.label, {"data": traces, "layout": layout}, caption)


def _commit_ticks(x: np.ndarray, points) -> dict:
    """The x-axis named by commit (short ids), at most ``MAX_COMMIT_TICKS`` of them, evenly spread."""
    if not len(points):
        return {}
    picked = ch.evenly_spaced(len(points), MAX_COMMIT_TICKS)
    return {"tickmode": "array", "tickvals": x[picked].tolist(), "tickangle": -45,
            "ticktext": [ch.plotly_text(commit_name(points[i].commit, points[i].dirty)) for i in picked]}


def _y_range(values: np.ndarray, median: float) -> list[float]:
    """The y-axis: every value and interval end, and at least ``MIN_SPAN`` of ``median`` to each side."""
    finite = values[np.isfinite(values)]
    low = min(float(finite.min()) if finite.size else median, median - MIN_SPAN * abs(median))
    high = max(float(finite.max()) if finite.size else median, median + MIN_SPAN * abs(median))
    pad = 0.05 * (high - low) or 1.0
    return [low - pad, high + pad]


def _noise_band(history: BenchmarkHistory, axis: ch.Axis) -> dict:
    """Each segment's level times exp(± ``NOISE_BAND_SD`` noise SDs), shaded: how far a commit's
    median strays by noise alone (none without a noise estimate)."""
    sd = history.noise or 0.0
    x, y = [], []
    up, down = math.exp(min(NOISE_BAND_SD * sd, LARGEST_LOG)), math.exp(-NOISE_BAND_SD * sd)
    for start, end, first, last in _segments(history, axis):
        corners = [first * up, last * up, last * down, first * down, first * up]
        if all(math.isfinite(c) for c in corners):  # a band beyond the float range is not drawn
            x += [start - 0.5, end - 0.5, end - 0.5, start - 0.5, start - 0.5, None]
            y += [*corners, None]
    return {"type": "scatter", "mode": "lines", "name": f"noise band (±{NOISE_BAND_SD:g} SD)", "x": x, "y": y,
            "fill": "toself", "fillcolor": "rgba(44, 160, 44, 0.12)", "line": {"width": 0}, "hoverinfo": "skip",
            "showlegend": bool(sd)}


def _segments(history: BenchmarkHistory, axis: ch.Axis) -> list[tuple[int, int, float, float]]:
    """(first point, end, level at the first and at the last point, in the axis's scale) of each
    segment between steps, as the analysis fitted it (``BenchmarkHistory.levels``)."""
    return [(start, end, *map(float, axis([first, last]))) for start, end, first, last in history.levels()]


def _levels(history: BenchmarkHistory, axis: ch.Axis) -> list[dict]:
    """The analysis's level of each segment between steps (a drift's line), as one broken line."""
    x, y = [], []
    for start, end, first, last in _segments(history, axis):
        x += [start - 0.5, end - 0.5, None]
        y += [first, last, None]
    return [{"type": "scatter", "mode": "lines", "name": "segment level", "x": x, "y": y,
             "hoverinfo": "skip", "line": {"color": "#2ca02c", "width": 2}}]
