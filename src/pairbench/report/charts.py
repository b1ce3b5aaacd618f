"""The HTML report's charts as plotly figure specifications (plain JSON-ready dicts).

Each function draws one figure from the records of the analysis: a series'
values in execution order, its resource readings and its correlogram
(``SeriesFigure``), the box plot's quartiles, Tukey fences and mean
(``Summary``), a comparison's per-round log-ratios, paired values, correlogram
and shift function (``ComparisonFigure``), and the verdict's interval and
level (``Comparison``). No statistic is computed here; what is chosen here is
only how to draw: histogram bins, which points to show, ECDF steps. Figures
are plain dicts, not ``plotly.graph_objects``, so a million samples cost numpy
time, not plotly validation; plotly.js draws them in the page (SVG traces
only, so a headless browser can check every chart).

Values are per operation in the benchmark's unit (durations drawn in the one
time unit that suits the benchmark's fastest median). Large runs stay usable:
scatter plots show at most ``MAX_POINTS`` points per trace, chosen
deterministically (the fastest and the slowest sample of each block of
consecutive samples, so drift, phases and outliers stay visible), and say so
on the chart; an ECDF curve is drawn through at most ``MAX_ECDF_POINTS``
evenly spaced order statistics (each at its exact height), also said on the
chart; histograms and every number use all samples.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from pairbench.analysis.records import Comparison, ComparisonFigure, SeriesFigure, Summary
from pairbench.frozen import frozen
from pairbench.model import TIME_METRICS
from pairbench.report.clipping import (
    at_edge,
    beyond_note,
    bulk,
    edge_marks,
    histogram_in_bulk,
    overflow_bars,
)
from pairbench.report.metric_names import metric_label, metric_words
from pairbench.report.safe import visible
from pairbench.units import format_level, format_percent, time_unit_for

MAX_POINTS = 4000  # per scatter trace
MAX_ECDF_POINTS = 2000  # steps per ECDF curve
MAX_BINS = 80
MAX_OUTLIER_POINTS = 400  # beyond-fence points drawn beside a box plot
TITLE_CHARS = 95  # chart titles are cut here (the modebar sits at the right)
NAME_CHARS = 60  # legend entries are cut here
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
GREY = "#7f7f7f"


@frozen
class Chart:
    """One figure of the report: where it goes, its title, the plotly spec and a note below it."""

    key: str
    title: str
    figure: dict
    note: str = ""


@frozen
class Axis:
    """How one benchmark's values are drawn: durations (ns) scaled to ms as "wall time (ms)";
    any other unit as it is ("value per operation (B)")."""

    suffix: str
    scale: float
    quantity: str = "wall time"
    plural: str = "times"  # what the values are called in a sentence

    def __call__(self, values) -> np.ndarray:
        return np.asarray(values, dtype=np.float64) / self.scale

    def label(self, what: str = "") -> str:
        return f"{what or self.quantity} ({self.suffix})"

    def of(self, metric: str | None) -> Axis:
        """This axis for values of ``metric``: "CPU time (ms)"; a verdict on a count (instructions) in
        that count, unscaled; a benchmark that is a count itself stays as it is."""
        if metric is None or self.quantity != "wall time":
            return self
        if metric not in TIME_METRICS:
            return Axis(metric_label(metric), 1.0, metric_words(metric), "values")
        return dataclasses.replace(self, quantity=metric_words(metric))


def axis_for(summaries: Sequence[Summary]) -> Axis:
    """The axis of a benchmark whose series these are: its unit, in the scale of the fastest median."""
    medians = [s.median for s in summaries if s.median is not None]
    return unit_axis(summaries[0].unit if summaries else "ns", min(medians) if medians else None)


def unit_axis(unit: str, typical: float | None) -> Axis:
    """The axis of values in ``unit``: durations (ns) in the time unit that suits ``typical`` (ms
    without one), any other unit as it is."""
    if unit != "ns":  # a unit is a file's text, drawn in plotly's labels
        return Axis(plotly_text(unit), 1.0, "value per operation", "values")
    suffix, scale = time_unit_for(typical) if typical is not None else ("ms", 1_000_000)
    return Axis(suffix, scale)


def evenly_spaced(n: int, most: int) -> np.ndarray:
    """Indices (ascending) of at most ``most`` of ``n`` items, evenly spread, first and last included."""
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int))


@frozen
class Series:
    """One series as drawn: its name on the page, its colour, its summary and its figure data."""

    name: str
    color: str
    summary: Summary
    figure: SeriesFigure


def plotly_text(text: str, limit: int = 0) -> str:
    """``text`` for plotly's pseudo-HTML labels: control characters visible (``safe.visible``), entities
    for &, < and >, so nothing is markup.

    With ``limit``, text longer than that is cut with an ellipsis (chart titles
    do not wrap; the page's headings show names in full).
    """
    text = " ".join(visible(text).split())
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")



# --------------------------------------------------------------------------- thinning


def thin(values: np.ndarray, max_points: int = MAX_POINTS) -> np.ndarray:
    """Indices (ascending) of at most ``max_points`` values: min and max of consecutive blocks.

    Deterministic; keeps the overall minimum and maximum and every block's
    extremes (the first occurrence on ties), so drift, phases and outliers look
    as they do in the full data. O(n).
    """
    n = values.size
    if n <= max_points:
        return np.arange(n)
    blocks = max(max_points // 2, 1)
    starts = (np.arange(blocks) * n) // blocks
    counts = np.diff(np.append(starts, n))
    block = np.repeat(np.arange(blocks), counts)
    picked = []
    for extreme in (np.minimum, np.maximum):
        hits = np.flatnonzero(values == np.repeat(extreme.reduceat(values, starts), counts))
        picked.append(hits[np.unique(block[hits], return_index=True)[1]])
    return np.unique(np.concatenate(picked))


def _thinned_note(shown: int, total: int) -> str:
    if shown >= total:
        return ""
    return (f"Showing {shown:,} of {total:,} samples: the fastest and slowest of each block of "
            "consecutive samples. Statistics and histograms use every sample.")


def _histogram(values: np.ndarray, span: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact counts over Freedman-Diaconis bins (at most ``MAX_BINS``) from the values' least to their
    greatest, or over ``span`` (which holds them all): (counts, edges)."""
    lo, hi = span if span is not None else (float(values.min()), float(values.max()))
    if lo == hi:  # one bin around the value, 0.1% of it to each side (0.5 around zero)
        half = abs(lo) * 0.001 or 0.5
        return np.array([values.size]), np.array([lo - half, hi + half])
    # Freedman-Diaconis width 2 IQR / n^(1/3), counted before any edge is built: a tight cluster
    # with one far outlier would otherwise ask numpy for billions of bins
    q1, q3 = np.percentile(values, [25, 75])
    width = 2.0 * float(q3 - q1) / values.size ** (1.0 / 3.0)
    bins = math.ceil((hi - lo) / width) if width > 0 else 0
    if not 5 <= bins <= MAX_BINS:
        bins = min(MAX_BINS, max(5, int(np.sqrt(values.size))))
    return np.histogram(values, bins=np.linspace(lo, hi, bins + 1))


def _layout(title: str, x_title: str, y_title: str, **extra) -> dict:
    layout = {
        "title": {"text": plotly_text(title, TITLE_CHARS), "x": 0.01, "xanchor": "left", "font": {"size": 15}},
        "xaxis": {"title": {"text": x_title}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "zeroline": False},
        "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
        "height": 380,
        "legend": {"orientation": "h", "y": -0.22},
        "hovermode": "closest",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#fafafa",
    }
    layout.update(extra)
    return layout


def _note_annotation(text: str) -> list[dict]:
    if not text:
        return []
    return [{"text": text, "xref": "paper", "yref": "paper", "x": 0, "y": 1.0, "xanchor": "left",
             "yanchor": "bottom", "showarrow": False, "font": {"size": 10, "color": GREY}}]


def _hline(y: float, *, xref: str = "paper", dash: str = "solid", color: str = GREY) -> dict:
    return {"type": "line", "xref": xref, "yref": "y", "x0": 0.0, "x1": 1.0, "y0": y, "y1": y,
            "line": {"color": color, "width": 1, "dash": dash}}


def _vline(x: float, *, dash: str = "solid", color: str = GREY, width: float = 1) -> dict:
    return {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
            "line": {"color": color, "width": width, "dash": dash}}


# --------------------------------------------------------------------------- the run as a whole


def run_sequence_chart(key: str, series: Sequence[Series], axis: Axis, benchmark: str = "",
                       metric: str = "wall") -> Chart:
    """Every sample's value by ``metric`` (the verdict's) against its execution order, coloured by side:
    drift and phases show. The value axis shows the bulk of the samples (``clipping``)."""
    axis = axis.of(metric)
    values = [s.figure.of(metric) for s in series]
    b = bulk(np.concatenate([v for v in values if v.size]) if any(v.size for v in values) else [])
    traces, marks, shown, total, beyond = [], [], 0, 0, 0
    for s, v in zip(series, values, strict=True):
        keep = thin(v)
        shown, total = shown + keep.size, total + v.size
        drawn, moved = at_edge(v[keep], b)
        beyond += int(np.count_nonzero(b.below(v) | b.above(v))) if b is not None and b.clipped else 0
        traces.append({"type": "scatter", "mode": "markers", "name": plotly_text(s.name, NAME_CHARS),
                       "x": s.figure.seq[keep][~moved].tolist(), "y": axis(drawn[~moved]).tolist(),
                       "marker": {"size": 4, "color": s.color, "opacity": 0.75},
                       "hovertemplate": f"seq %{{x}}<br>%{{y:.4g}} {axis.suffix}<extra>%{{fullData.name}}</extra>"})
        if moved.any():
            marks.append(edge_marks(s.figure.seq[keep][moved], axis(drawn[moved]), axis(v[keep][moved]),
                                    _scaled(b, axis), vertical=True, name=plotly_text(s.name, NAME_CHARS),
                                    color=s.color, suffix=axis.suffix))
    note = " ".join(t for t in (_thinned_note(shown, total), beyond_note(beyond, total)) if t)
    of = f" of {benchmark}" if benchmark else ""
    layout = _layout(f"Run sequence{of}: {axis.quantity} of every sample in execution order",
                     "execution order (sample number, all variants)", axis.label(), annotations=_note_annotation(note))
    if b is not None and b.clipped:
        layout["yaxis"]["range"] = [float(axis(v)) for v in b.range]
    return Chart(key, f"Run sequence{of}", {"data": traces + marks, "layout": layout},
                 note or "Drift, phases and warm-up show as trends; interleaving makes them hit every variant alike.")


def _scaled(b, axis: Axis):
    """The bulk ``b`` in the axis' scale."""
    return dataclasses.replace(b, low=float(axis(b.low)), high=float(axis(b.high)))


RESOURCE_ROWS = (("max_rss_kib", "max RSS (MiB)", 1 / 1024, "y"),
                 ("voluntary_cs", "voluntary context switches (count)", 1, "y2"),
                 ("involuntary_cs", "involuntary context switches (count)", 1, "y3"))


def resources_chart(series: Sequence[Series]) -> Chart:
    """Max RSS and context switches of every sample against execution order, one panel each (a panel
    stays empty for what was never recorded: an import's tool did not measure it)."""
    traces, shown, total = [], 0, 0
    for s in series:
        for i, (column, label, factor, yaxis) in enumerate(RESOURCE_ROWS):
            if column not in s.figure.resources:
                continue
            values = np.asarray(s.figure.resources[column], dtype=np.float64) * factor
            keep = thin(values)
            if i == 0:
                shown, total = shown + keep.size, total + values.size
            traces.append({"type": "scatter", "mode": "markers", "name": plotly_text(s.name, NAME_CHARS),
                           "legendgroup": plotly_text(s.name), "showlegend": i == 0,
                           "x": s.figure.seq[keep].tolist(), "y": values[keep].tolist(), "yaxis": yaxis,
                           "marker": {"size": 4, "color": s.color, "opacity": 0.75},
                           "hovertemplate": f"seq %{{x}}<br>{label} %{{y:.4g}}<extra>%{{fullData.name}}</extra>"})
    note = _thinned_note(shown, total)
    layout = _layout("Resource usage per sample: max RSS and context switches", "execution order (sample number)",
                     RESOURCE_ROWS[0][1], height=560, annotations=_note_annotation(note))
    layout["xaxis"]["anchor"] = "y3"
    layout["yaxis"].update(domain=[0.70, 1.0])
    layout["yaxis2"] = {"title": {"text": "voluntary<br>switches (count)"}, "domain": [0.36, 0.64], "anchor": "x"}
    layout["yaxis3"] = {"title": {"text": "involuntary<br>switches (count)"}, "domain": [0.0, 0.30], "anchor": "x"}
    layout["legend"]["y"] = -0.14
    return Chart("resources", "Max RSS and context switches", {"data": traces, "layout": layout},
                 note or "Involuntary context switches are a proxy for interference: samples with many are suspects.")


# --------------------------------------------------------------------------- one series


def distribution_chart(key: str, s: Series, axis: Axis) -> Chart:
    """Box plot (quartiles, Tukey fences, mean) | samples in execution order | histogram, of the
    summary's time; the value axis shows the bulk of the samples (``clipping``)."""
    summary, values = s.summary, s.figure.values
    b = bulk(values)
    traces = _box_traces(s, axis, b)
    keep = thin(values)
    drawn, moved = at_edge(values[keep], b)
    traces.append({"type": "scatter", "mode": "markers", "name": "samples", "showlegend": False,
                   "x": s.figure.seq[keep][~moved].tolist(), "y": axis(drawn[~moved]).tolist(), "xaxis": "x2",
                   "marker": {"size": 4, "color": s.color, "opacity": 0.7},
                   "hovertemplate": f"seq %{{x}}<br>%{{y:.4g}} {axis.suffix}<extra></extra>"})
    if moved.any():
        traces.append(edge_marks(s.figure.seq[keep][moved], axis(drawn[moved]), axis(values[keep][moved]),
                                 _scaled(b, axis), vertical=True, name="beyond the axis", color=s.color,
                                 suffix=axis.suffix, xaxis="x2"))
    counts, edges, below, above = histogram_in_bulk(values, b, _histogram)
    traces.append({"type": "bar", "orientation": "h", "name": "histogram", "showlegend": False,
                   "y": axis((edges[:-1] + edges[1:]) / 2).tolist(), "x": counts.tolist(),
                   "width": axis(np.diff(edges)).tolist(), "xaxis": "x3",
                   "marker": {"color": s.color, "opacity": 0.6},
                   "hovertemplate": f"%{{x}} samples near %{{y:.4g}} {axis.suffix}<extra></extra>"})
    traces += [dict(bar, xaxis="x3") for bar in overflow_bars(edges, below, above, color=GREY, what="samples",
                                                              scale=axis, horizontal=True)]
    lines = [line for line in _summary_lines(summary) if b is None or not b.clipped or b.low <= line[0] <= b.high]
    shapes = [_hline(float(axis(v)), xref="x2 domain", dash=d) for v, d, _ in lines]
    shown = b.range if b is not None and (b.clipped or below or above) else None
    span = (shown[1] - shown[0]) if shown else float(values.max() - values.min()) if values.size else 0.0
    labels = [{"text": name, "xref": "x2 domain", "yref": "y", "x": x, "y": float(axis(v)),
               "xanchor": "right", "yanchor": "bottom", "showarrow": False,
               "font": {"size": 9, "color": GREY}} for (v, _, name), x in zip(lines, _staggered(lines, span),
                                                                              strict=True)]
    beyond = int(np.count_nonzero(b.below(values) | b.above(values))) if b is not None and b.clipped else 0
    note = " ".join(t for t in (_thinned_note(keep.size, values.size), beyond_note(beyond, values.size)) if t)
    layout = _layout(f"Distribution of {s.name}: {axis.quantity}", "", axis.label(), height=420, showlegend=False,
                     shapes=shapes, annotations=labels + _note_annotation(note))
    if shown:
        width = float(edges[1] - edges[0]) if edges.size > 1 else 0.0
        reach = [min(shown[0], float(edges[0]) - 2 * width * bool(below)),
                 max(shown[1], float(edges[-1]) + 2 * width * bool(above))]
        layout["yaxis"]["range"] = [float(axis(v)) for v in reach]
    layout["xaxis"] = {"domain": [0.0, 0.12], "showticklabels": False, "title": {"text": "box plot"}}
    layout["xaxis2"] = {"domain": [0.15, 0.78], "anchor": "y", "title": {"text": "execution order (sample number)"}}
    layout["xaxis3"] = {"domain": [0.81, 1.0], "anchor": "y", "title": {"text": "samples (count)"}}
    fenced = summary.beyond_upper_fence + summary.beyond_lower_fence
    text = (f"{fenced} of {values.size} samples lie beyond the Tukey fences (kept in every statistic). "
            "Box: quartiles; whiskers: the furthest samples within the fences; dashed line in the box: mean; "
            "dash-dot lines: the fences Q3 + 1.5 IQR and, when a sample lies below it, Q1 − 1.5 IQR.")
    return Chart(key, f"Distribution of {s.name}",
                 {"data": traces, "layout": layout}, note + (" " if note else "") + text)


LABEL_STEP = 0.11
"""How far left (a share of the samples panel) a line's label moves from a label it would overlap."""
LABEL_NEAR = 0.05
"""Labels of lines closer than this share of the axis' span would overlap."""


def _staggered(lines: list[tuple[float, str, str]], span: float) -> list[float]:
    """Where each line's label sits across the samples panel (1.0: its right edge): each label that
    lies within ``LABEL_NEAR`` of the axis' span of a label already placed moves one step left of it."""
    placed: list[tuple[float, float]] = []
    where = []
    for value, _, _ in lines:
        near = [x for v, x in placed if span > 0 and abs(v - value) < LABEL_NEAR * span]
        x = min(near) - LABEL_STEP if near else 1.0
        placed.append((value, x))
        where.append(x)
    return where


def _has_box(summary: Summary) -> bool:
    return None not in (summary.q1, summary.median, summary.q3, summary.mean, summary.lower_fence,
                        summary.upper_fence)


def _summary_lines(summary: Summary) -> list[tuple[float, str, str]]:
    """(value, dash, name) of the lines across the samples panel: the summary's quartiles, mean, fences."""
    if not _has_box(summary):
        return []
    lines = [(summary.median, "solid", "median"), (summary.q1, "dot", "Q1"), (summary.q3, "dot", "Q3"),
             (summary.mean, "dash", "mean"), (summary.upper_fence, "dashdot", "Q3 + 1.5 IQR")]
    if summary.beyond_lower_fence:  # drawn only when some sample lies below it
        lines.append((summary.lower_fence, "dashdot", "Q1 − 1.5 IQR"))
    return lines


def _box_traces(s: Series, axis: Axis, b=None) -> list[dict]:
    """The box of the summary's quartiles and mean, whiskers to the furthest samples within its
    fences, and the samples beyond them (at most ``MAX_OUTLIER_POINTS``; those beyond the axis' bulk
    ``b`` at its edge)."""
    summary, values = s.summary, s.figure.values
    if not _has_box(summary):
        return []
    within = (values >= summary.lower_fence) & (values <= summary.upper_fence)
    inside = values[within]
    lower = float(inside.min()) if inside.size else summary.q1
    upper = float(inside.max()) if inside.size else summary.q3
    box = {"type": "box", "name": plotly_text(s.name, NAME_CHARS), "x": [0],
           "q1": [float(axis(summary.q1))], "median": [float(axis(summary.median))],
           "q3": [float(axis(summary.q3))], "lowerfence": [float(axis(lower))],
           "upperfence": [float(axis(upper))], "mean": [float(axis(summary.mean))], "boxmean": True,
           "boxpoints": False, "marker": {"color": s.color}, "line": {"color": s.color}, "hoverinfo": "y"}
    outliers = np.sort(values[~within])
    if not outliers.size:
        return [box]
    pick = np.unique(np.linspace(0, outliers.size - 1, min(outliers.size, MAX_OUTLIER_POINTS)).astype(int))
    drawn, moved = at_edge(outliers[pick], b)
    traces = [box]
    if not moved.all():
        traces.append({"type": "scatter", "mode": "markers", "name": "beyond the fences",
                       "x": [0] * int(np.count_nonzero(~moved)), "y": axis(drawn[~moved]).tolist(),
                       "marker": {"size": 5, "symbol": "circle-open", "color": s.color},
                       "hovertemplate": f"%{{y:.4g}} {axis.suffix} (beyond a fence)<extra></extra>"})
    if moved.any():
        traces.append(edge_marks(np.zeros(int(moved.sum())), axis(drawn[moved]), axis(outliers[pick][moved]),
                                 _scaled(b, axis), vertical=True, name="beyond the axis", color=s.color,
                                 suffix=axis.suffix))
    return traces


def correlogram_chart(key: str, title: str, correlogram, what: str, lag_unit: str) -> Chart | None:
    """The analysis's correlogram drawn: r_1..r_L with its white-noise and Bartlett bands; None
    without one (the analysis gives none below 3 values or without spread).

    ``correlogram`` is the analysis's ``stats.Correlogram`` (lags, acf, bands, confidence, n).
    """
    if correlogram is None:
        return None
    c = correlogram
    lags = np.asarray(c.lags).tolist()
    acf, bartlett, band = np.asarray(c.acf), np.asarray(c.bartlett_band), float(c.white_noise_band)
    outside = int(np.count_nonzero(np.abs(acf) > band))
    traces = [
        {"type": "bar", "name": "autocorrelation", "x": lags, "y": acf.tolist(),
         "marker": {"color": "#1f77b4"}, "hovertemplate": "lag %{x}: r = %{y:.3f}<extra></extra>"},
        {"type": "scatter", "mode": "lines", "name": f"Bartlett {format_level(c.confidence)} band", "x": lags,
         "y": bartlett.tolist(), "line": {"color": "#ff7f0e", "dash": "dot", "shape": "hv"}},
        {"type": "scatter", "mode": "lines", "name": "Bartlett (lower)", "showlegend": False, "x": lags,
         "y": (-bartlett).tolist(), "line": {"color": "#ff7f0e", "dash": "dot", "shape": "hv"}},
    ]
    layout = _layout(title, f"lag ({lag_unit})", "autocorrelation r (unitless, −1 to 1)",
                     shapes=[_hline(band, dash="dash"), _hline(-band, dash="dash"), _hline(0.0)])
    note = (f"n = {c.n}; lag-1 r = {float(acf[0]):+.3f}; {outside} of {len(lags)} lags outside the white-noise "
            f"band ±{band:.3f} (dashed, {format_level(c.confidence)}; about {len(lags) * (1 - c.confidence):.1f} expected "
            f"by chance). Autocorrelation of {what} means neighbouring samples are alike: drift, frequency "
            "scaling or phases.")
    return Chart(key, title, {"data": traces, "layout": layout}, note)


def series_charts(index: int, s: Series, axis: Axis) -> list[Chart]:
    """The charts of one series: its distribution and its correlogram (none without samples)."""
    if s.figure.values.size == 0:
        return []
    charts = [distribution_chart(f"variant-{index}-distribution", s, axis)]
    correlogram = correlogram_chart(f"variant-{index}-correlogram", f"Correlogram of {s.name}",
                                    s.figure.correlogram, "one variant's samples",
                                    "samples apart, in execution order")
    return charts + ([correlogram] if correlogram else [])


# --------------------------------------------------------------------------- one comparison


def paired_differences_chart(key: str, c: Comparison, log_ratios: np.ndarray, name: str) -> Chart | None:
    """Histogram of the per-round changes candidate/baseline in percent (of the verdict's time), with the
    verdict's interval; the axis shows the bulk of the rounds, with a bar at each edge for those beyond."""
    if log_ratios.size == 0:
        return None
    change = 100.0 * np.expm1(log_ratios)
    e = c.effect
    b = bulk(change, 0.0, c.threshold or None, -c.threshold if c.threshold else None,
             *((e.low, e.high, e.estimate) if e else ()))
    counts, edges, below, above = histogram_in_bulk(change, b, _histogram)
    traces = [{"type": "bar", "name": "rounds", "x": ((edges[:-1] + edges[1:]) / 2).tolist(),
               "y": counts.tolist(), "width": np.diff(edges).tolist(), "marker": {"color": "#9467bd", "opacity": 0.7},
               "hovertemplate": "%{y} rounds near %{x:.3g}%<extra></extra>"}]
    traces += overflow_bars(edges, below, above, color=GREY, what="rounds")
    shapes = [_vline(0.0, color="#000000")]
    if c.threshold:
        shapes += [_vline(-c.threshold, dash="dot"), _vline(c.threshold, dash="dot")]
    if e:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": e.low, "x1": e.high,
                       "y0": 0, "y1": 1, "fillcolor": "#d62728", "opacity": 0.15, "line": {"width": 0}})
        shapes.append(_vline(e.estimate, color="#d62728", width=2))
    title = f"Paired differences: {name}"
    of = metric_words(c.metric) if c.benchmark.unit == "ns" else "value"
    layout = _layout(title, f"per-round change of the candidate's {of} against the baseline's (%)", "rounds (count)",
                     shapes=shapes, bargap=0.02)
    layout["xaxis"]["ticksuffix"] = "%"
    if below or above:
        width = float(edges[1] - edges[0]) if edges.size > 1 else 1.0
        layout["xaxis"]["range"] = [float(edges[0]) - 2 * width * bool(below), float(edges[-1]) + 2 * width * bool(above)]
    note = f"{log_ratios.size} rounds. Red: the median change"
    if e:
        note += (f" {format_percent(e.estimate)} and its interval [{format_percent(e.low)}, "
                 f"{format_percent(e.high)}] ({format_level(e.confidence)})")
    note += "; black: no change"
    note += f"; dotted: ±{c.threshold:g}%, the smallest change that matters." if c.threshold else "."
    if below or above:
        note += (f" Grey, hatched: {below + above} rounds beyond the axis (Tukey's far-out fences, Q1 − 3 IQR and "
                 f"Q3 + 3 IQR): {below} below {format_percent(float(edges[0]))}, {above} above "
                 f"{format_percent(float(edges[-1]))}.")
    return Chart(key, title, {"data": traces, "layout": layout}, note)


def ecdf_chart(key: str, c: Comparison, figure: ComparisonFigure, axis: Axis, name: str) -> Chart:
    """Empirical CDFs of the baseline's and the candidate's paired values (of the verdict's time)
    together; the axis shows the bulk of both, each curve's samples beyond it marked at its edge."""
    b = bulk(np.concatenate([figure.baseline, figure.candidate]))
    scaled = _scaled(b, axis) if b is not None else None
    traces, marks, beyond = [], [], 0
    for side, values, color in ((c.baseline, figure.baseline, COLORS[0]), (c.candidate, figure.candidate, COLORS[1])):
        ordered = np.sort(values)
        n = ordered.size
        idx = evenly_spaced(n, MAX_ECDF_POINTS)
        traces.append({"type": "scatter", "mode": "lines", "name": plotly_text(side, NAME_CHARS),
                       "x": axis(ordered[idx]).tolist(), "y": ((idx + 1) / n).tolist(),
                       "line": {"color": color, "shape": "hv"},
                       "hovertemplate": f"%{{x:.4g}} {axis.suffix}: %{{y:.1%}} of samples<extra>%{{fullData.name}}</extra>"})
        if b is not None and b.clipped:
            out = np.flatnonzero(b.below(ordered) | b.above(ordered))
            beyond += out.size
            drawn = np.clip(ordered[out], b.low, b.high)
            mark = edge_marks(axis(drawn), (out + 1) / n, axis(ordered[out]), scaled, vertical=False,
                              name=plotly_text(side, NAME_CHARS), color=color, suffix=axis.suffix)
            marks += [mark] if mark else []
    title = f"Empirical CDFs: {name}"
    layout = _layout(title, axis.label(), "fraction of samples at or below (%)", yaxis={
        "title": {"text": "fraction of samples at or below (%)"}, "range": [0, 1.02], "tickformat": ".0%"})
    if b is not None and b.clipped:
        layout["xaxis"]["range"] = [float(axis(v)) for v in b.range]
    note = ("Curves that are parallel horizontally differ by a shift; curves that cross or part only in the tail "
            "differ in shape, and one number cannot describe the change.")
    largest = max(figure.baseline.size, figure.candidate.size)
    if largest > MAX_ECDF_POINTS:
        note += (f" Each curve is drawn through {MAX_ECDF_POINTS:,} evenly spaced order statistics of up to "
                 f"{largest:,} samples, each at its exact height.")
    clipped = beyond_note(beyond, figure.baseline.size + figure.candidate.size)
    return Chart(key, title, {"data": traces + marks, "layout": layout}, note + (" " + clipped if clipped else ""))


def shift_chart(key: str, sf, axis: Axis, name: str) -> Chart:
    """The analysis's shift function drawn: differences of the deciles with their simultaneous
    intervals (Doksum's shift function). ``sf`` is the analysis's ``stats.ShiftFunction``."""
    diff = np.array(sf.difference)
    plus = [float(h - d) if h is not None else 0.0 for h, d in zip(sf.high, diff, strict=True)]
    minus = [float(d - lo) if lo is not None else 0.0 for lo, d in zip(sf.low, diff, strict=True)]
    labels = [round(100 * q, 6) for q in sf.quantiles]
    baseline_deciles = [b.estimate for b in sf.baseline]
    trace = {"type": "scatter", "mode": "lines+markers", "name": "candidate − baseline", "x": labels,
             "y": axis(diff).tolist(), "marker": {"size": 7, "color": "#d62728"},
             "line": {"color": "#d62728", "width": 1},
             "error_y": {"type": "data", "symmetric": False, "array": axis(plus).tolist(),
                         "arrayminus": axis(minus).tolist(), "color": "#d62728"},
             "customdata": axis(baseline_deciles).tolist(),
             "hovertemplate": f"decile %{{x}}% (baseline %{{customdata:.4g}} {axis.suffix}): "
                              f"%{{y:+.4g}} {axis.suffix}<extra></extra>"}
    title = f"Shift function: {name} by decile"
    layout = _layout(title, f"decile of the baseline's and the candidate's {axis.plural} (%)",
                     axis.label("difference of deciles" + (f" of {axis.quantity}" if axis.plural == "times" else "")), shapes=[_hline(0.0, color="#000000")])
    layout["xaxis"].update(tickmode="array", tickvals=labels, ticktext=[f"{v:g}%" for v in labels])
    if sf.pure_shift_excluded:
        verdict = ("No single shift lies inside all nine intervals: the distributions differ by more than "
                   "a shift, so look at which deciles moved.")
    else:
        verdict = "A single shift is consistent with all nine decile intervals."
    note = (f"Simultaneous {format_level(sf.confidence)} intervals (order statistics, Bonferroni over 9 deciles "
            f"and both samples; each at {format_level(sf.interval_confidence)}). {verdict}")
    unbounded = sum(v is None for v in (*sf.low, *sf.high))
    if unbounded:
        note += f" {unbounded} interval ends are unbounded (too few samples) and not drawn."
    return Chart(key, title, {"data": [trace], "layout": layout}, note)


def comparison_charts(index: int, c: Comparison, figure: ComparisonFigure, axis: Axis,
                      benchmark: str = "") -> list[Chart]:
    """The charts of one comparison: differences, their correlogram, ECDFs, shift function.

    ``benchmark`` prefixes the titles when a run has several.
    """
    key, prefix = f"comparison-{index}", f"{benchmark} · " if benchmark else ""
    axis = axis.of(c.metric if c.benchmark.unit == "ns" else None)  # its pairs are of the verdict's time
    charts = [
        paired_differences_chart(f"{key}-differences", c, figure.log_ratios, f"{prefix}{c.candidate} vs {c.baseline}"),
        correlogram_chart(f"{key}-correlogram",
                          f"Correlogram of the pair differences: {prefix}{c.candidate} vs {c.baseline}",
                          figure.correlogram, "the pair differences (log-ratios, in round order)", "rounds apart"),
    ]
    if figure.baseline.size:
        charts.append(ecdf_chart(f"{key}-ecdf", c, figure, axis, f"{prefix}{c.candidate} and {c.baseline}"))
    if figure.shift is not None:
        charts.append(shift_chart(f"{key}-shift", figure.shift, axis, f"{prefix}{c.candidate} − {c.baseline}"))
    return [chart for chart in charts if chart is not None]
