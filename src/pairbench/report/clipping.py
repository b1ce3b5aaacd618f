"""How far a chart's axis reaches: the bulk of the samples, with the few beyond it marked at its edge.

A handful of samples slowed by another task can lie ten times the median away; an axis scaled to
them squeezes the rest, and the effect, into a line. So a value axis shows the **bulk**: the values
within Tukey's far-out fences (Q1 - 3 IQR, Q3 + 3 IQR; Tukey, *Exploratory Data Analysis*, 1977),
widened to the values a chart must show (zero, an interval, the threshold). A value beyond is drawn
at the axis' edge with a triangle pointing out, its own value in its hover text, and each chart
says how many there are. Histograms count them in a bar of their own at each edge.

Only how to draw is chosen here: every statistic, the verdict's among them, uses every sample.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.frozen import frozen

FAR_OUT = 3.0
"""An axis reaches this many interquartile ranges beyond the quartiles (Tukey's far-out fences)."""
MARGIN = 0.04
"""Space left at each end of a clipped axis, as a share of its span, so an edge mark is not cut."""


@frozen
class Bulk:
    """The span ``low``..``high`` an axis shows (its ``range``, with a margin); ``clipped`` whether some
    value lies beyond it."""

    low: float
    high: float
    clipped: bool

    @property
    def range(self) -> list[float]:
        pad = (self.high - self.low) * MARGIN or abs(self.high) * MARGIN or 1.0
        return [self.low - pad, self.high + pad]

    def below(self, values: np.ndarray) -> np.ndarray:
        return values < self.low

    def above(self, values: np.ndarray) -> np.ndarray:
        return values > self.high


def bulk(values, *shown: float | None) -> Bulk | None:
    """The bulk of ``values`` (finite, any order), widened to ``shown``; None without values."""
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not x.size:
        return None
    lo, hi = float(x.min()), float(x.max())
    q1, q3 = np.percentile(x, [25, 75])
    iqr = float(q3 - q1)
    if iqr > 0:
        lo, hi = max(lo, float(q1) - FAR_OUT * iqr), min(hi, float(q3) + FAR_OUT * iqr)
    extra = [v for v in shown if v is not None and math.isfinite(v)]
    if extra:
        lo, hi = min(lo, *extra), max(hi, *extra)
    clipped = bool(np.any(x < lo) or np.any(x > hi))
    return Bulk(lo, hi, clipped)


def at_edge(values: np.ndarray, b: Bulk | None) -> tuple[np.ndarray, np.ndarray]:
    """``values`` with those beyond the bulk moved to its edge, and the mask of those moved."""
    if b is None or not b.clipped:
        return values, np.zeros(values.shape, dtype=bool)
    beyond = b.below(values) | b.above(values)
    return np.clip(values, b.low, b.high), beyond


def beyond_note(count: int, total: int, what: str = "samples") -> str:
    """ "3 of 400 samples lie beyond the axis (Tukey's far-out fences, Q1 − 3 IQR and Q3 + 3 IQR):
    drawn at its edge as triangles." (nothing when none do)."""
    if not count:
        return ""
    return (f"{count} of {total} {what} lie beyond the axis (Tukey's far-out fences, Q1 − 3 IQR and "
            "Q3 + 3 IQR): drawn at its edge as triangles, their values in the hover text.")


def edge_marks(x: np.ndarray, y: np.ndarray, actual: np.ndarray, b: Bulk, *, vertical: bool, name: str,
               color: str, suffix: str, **extra) -> dict | None:
    """A trace of triangles at the edge for the points whose value (``y`` when ``vertical``, else ``x``)
    was moved there from ``actual``; None when none was."""
    if not actual.size:
        return None
    high = actual > b.high
    symbol = np.where(high, "triangle-up" if vertical else "triangle-right",
                      "triangle-down" if vertical else "triangle-left")
    return {"type": "scatter", "mode": "markers", "name": name, "showlegend": False, "x": x.tolist(),
            "y": y.tolist(), "customdata": actual.tolist(),
            "marker": {"size": 8, "symbol": symbol.tolist(), "color": color, "line": {"width": 1, "color": "#000000"}},
            "hovertemplate": f"%{{customdata:.4g}} {suffix} (beyond the axis)<extra></extra>", **extra}


def histogram_in_bulk(values: np.ndarray, b: Bulk | None, histogram) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``histogram(values, span)`` (counts, edges) of the values within the bulk, over the bulk, and how
    many lie below and above it."""
    if b is None or not b.clipped:
        counts, edges = histogram(values)
        return counts, edges, 0, 0
    inside = values[~(b.below(values) | b.above(values))]
    counts, edges = histogram(inside, (b.low, b.high))
    return counts, edges, int(np.count_nonzero(b.below(values))), int(np.count_nonzero(b.above(values)))


def overflow_bars(edges: np.ndarray, below: int, above: int, *, color: str, what: str, scale=lambda v: v,
                  horizontal: bool = False) -> list[dict]:
    """A bar at each edge of a histogram counting the values beyond its bulk, in grey and hatched, with
    its meaning in the hover text; none where nothing lies beyond."""
    width = float(edges[1] - edges[0]) if edges.size > 1 else 1.0
    bars = []
    for count, centre, side in ((below, float(edges[0]) - width, "below"), (above, float(edges[-1]) + width, "above")):
        if not count:
            continue
        position, size = float(scale(centre)), float(scale(centre + width) - scale(centre))
        bar = {"type": "bar", "name": f"beyond the axis ({side})", "showlegend": False,
               "marker": {"color": color, "opacity": 0.45, "pattern": {"shape": "/"}},
               "hovertemplate": f"{count} {what} {side} the axis<extra></extra>"}
        if horizontal:
            bar.update(orientation="h", y=[position], x=[count], width=[size])
        else:
            bar.update(x=[position], y=[count], width=[size])
        bars.append(bar)
    return bars
