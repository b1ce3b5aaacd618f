"""The history of benchmarks on one machine, as text: terminal, Markdown, CSV and JSON.

Every renderer takes a :class:`~pairbench.analysis.history.History` and
computes nothing. The terminal shows each benchmark as a trend line (one
block character per group of commits, its height the median) with its steps
marked under it, the steps with their commits, sizes and whether ``confirm``
confirmed them, its drifts, and the latest commits; then the change points,
each with the ``confirm`` command that would check it and, when several
commits lie in its span (where it may lie), the ``bisect`` command that would
find which (of a change that may be spread over its commits, a step or a drift, worded as a
search that may answer that it is spread); Markdown the same for a pull request (a sparkline per benchmark); CSV
one row per point; JSON (format ``pairbench.history/1``) every point, step
(with its span and ``bisect``), drift and change point with its commits. Names and
commits come from a database others write: every text goes through
``safe.visible`` (and Markdown's and CSV's own escaping), and the bisect
command's words through ``shlex.quote``.
"""

from __future__ import annotations

import json
import math
import shlex

import numpy as np

from pairbench.analysis.history import (
    Z_95,
    BenchmarkHistory,
    Bisect,
    Drift,
    Found,
    History,
    Point,
    Step,
)
from pairbench.model import json_safe
from pairbench.report.csvfile import _cell, _csv_record, _texts
from pairbench.report.metric_names import metric_words
from pairbench.report.safe import escape, visible
from pairbench.units import format_level, format_percent, value_formatter

HISTORY_FORMAT = "pairbench.history/1"
BLOCKS = "▁▂▃▄▅▆▇█"
WIDTH = 64
SHORT = 10  # characters of a commit hash shown
LATEST = 5  # commits listed under each benchmark in the terminal
CSV_HEADER = ("benchmark", "unit", "commit", "commit_time", "branch", "dirty", "results", "started_at",
              "median", "median_low", "median_high", "step", "change_pct", "change_low_pct",
              "change_high_pct", "status", "metric")


def commit_name(commit: str | None, dirty: bool = False) -> str:
    """A commit as shown: its first ``SHORT`` characters, "+dirty" for a tree with changes."""
    if commit is None:
        return "(no commit)"
    return visible(commit[:SHORT]) + ("+dirty" if dirty else "")


def step_range(step_or_point) -> str:
    """``before..after``, the commits a step lies between."""
    return f"{commit_name(step_or_point.before)}..{commit_name(step_or_point.after)}"


def step_size(step: Step) -> str:
    interval = "" if step.low is None or step.high is None else \
        f" [{format_percent(step.low)}, {format_percent(step.high)}]"
    return f"{format_percent(step.change)}{interval}"


def drift_line(d: Drift) -> str:
    """``drift over A..B (N commits): +6.1% [+4.9%, +7.3%]``."""
    return (f"drift over {commit_name(d.first)}..{commit_name(d.last)} ({d.end - d.start} commits): "
            f"{format_percent(d.change)} [{format_percent(d.low)}, {format_percent(d.high)}]")


def bisect_command(b: Bisect, short: bool = True) -> str:
    """``pairbench bisect GOOD BAD -k 'REGEX'``, the commits abbreviated (``short``) or whole, every
    word quoted for a POSIX shell (the commits and the name come from a store others write)."""
    good, bad = (c[:SHORT] if short else c for c in (b.good, b.bad))
    return " ".join(shlex.quote(word) for word in ("pairbench", "bisect", good, bad, "-k", b.filter))


def found_line(f: Found) -> str:
    """``found by a paired comparison (bisect, confirm): 1640658e27 is slower than 0d56671ca0 before it,
    +6.7% [+4.2%, +9.6%]``."""
    interval = "" if f.low is None or f.high is None else f" [{format_percent(f.low)}, {format_percent(f.high)}]"
    change = "" if f.change is None else f", {format_percent(f.change)}{interval}"
    return (f"found by a paired comparison (bisect, confirm): {commit_name(f.after)} is {f.verdict} than "
            f"{commit_name(f.before)} before it{change}")


def step_status(step: Step) -> str:
    return step.status + (f" ({step.verdict})" if step.verdict and step.status != "unconfirmed" else "")


def sparkline(values: np.ndarray, width: int = WIDTH) -> tuple[str, list[int]]:
    """One block per column (the mean of its points' values), and each point's column."""
    n = values.size
    if n == 0:
        return "", []
    columns = min(width, n)
    column_of = (np.arange(n) * columns) // n
    means = np.bincount(column_of, weights=values, minlength=columns) / np.bincount(column_of, minlength=columns)
    low, high = float(means.min()), float(means.max())
    levels = np.zeros(columns, dtype=int) if high == low else \
        np.minimum(((means - low) / (high - low) * len(BLOCKS)).astype(int), len(BLOCKS) - 1)
    return "".join(BLOCKS[k] for k in levels), column_of.tolist()


def _markers(history: BenchmarkHistory, column_of: list[int], numbers: dict) -> str:
    """``^N`` under the column of each step, N its change point's number."""
    line: list[str] = []
    for step in history.steps:
        column = column_of[step.index]
        line += [" "] * (column - len(line))
        line[column:] = list(f"^{numbers[id(step)]}")
    return "".join(line)


# --------------------------------------------------------------------------- terminal


def render_history(history: History) -> str:
    """The terminal's history: each benchmark's trend and steps, then the change points."""
    numbers = _numbers(history)
    lines = [f"pairbench history · {len(history.histories)} benchmark(s) · machine {visible(history.machine)}"]
    for h in history.histories:
        lines += ["", *_benchmark_lines(h, numbers)]
    lines += ["", *_change_point_lines(history, numbers)]
    return "\n".join(lines) + "\n"


def _numbers(history: History) -> dict[int, int]:
    """Each step's change point number (1 = the oldest), by the step's identity."""
    return {id(step): k for k, cp in enumerate(history.change_points, 1) for step in cp.steps}


def _benchmark_lines(h: BenchmarkHistory, numbers: dict) -> list[str]:
    values, show = h.values(), value_formatter(h.benchmark.unit, h.typical())
    results = sum(p.results for p in h.points)
    first, last = h.points[0], h.points[-1]
    lines = [f"{visible(h.benchmark.label)} · {metric_words(h.metric)} · {len(h.points)} commit(s), {results} result(s), "
             f"{_day(first)} … {_day(last)}"]
    line, column_of = sparkline(values)
    lines += [f"  {line}", f"  {_markers(h, column_of, numbers)}".rstrip()]
    lines.append(f"  {show(float(values.min()))} … {show(float(values.max()))}{_noise(h)}")
    lines += [f"  step {numbers[id(s)]} at {step_range(s)}: {step_size(s)} {step_status(s)}{_span_text(s, '; ')}"
              for s in h.steps]
    lines += [f"  {drift_line(d)}" for d in h.drifts]
    lines += [f"  {found_line(f)}" for f in h.found]
    lines.append("  latest:")
    lines += [f"    {_point_line(p, show)}" for p in h.points[-LATEST:]]
    return lines


def _span_text(s: Step, before: str) -> str:
    """Where a step may lie, when more than its own place, after ``before``:
    ``{before}95% between A..B (3 points)``; else nothing. Of a change that may be spread over
    commits: ``{before}a step or a drift over A..B (N points): ...``, why, and that it may have no
    single commit."""
    if s.spread and s.span is not None:
        return (f"{before}a step or a drift over {commit_name(s.span.before)}..{commit_name(s.span.after)} "
                f"({s.span.last - s.span.first + 1} points): one step does not beat a ramp by the Bayes "
                f"evidence, so it may have no single commit")
    if s.span is None or s.span.first == s.span.last:
        return ""
    return (f"{before}{format_level(s.span.level)} between {commit_name(s.span.before)}.."
            f"{commit_name(s.span.after)} ({s.span.last - s.span.first + 1} points)")


NOISE_OVER_RUN = 10.0  # noise between commits that dwarfs one run's own interval: this many times its half-width


def _noise(h: BenchmarkHistory) -> str:
    if not h.noise:
        return ""
    serial = f", lag-1 autocorrelation {h.autocorrelation:.2f}" if h.autocorrelation else ""
    text = f"; noise about {format_percent(100 * h.noise, signed=False)} per commit{serial}"
    halves = [math.log(p.run_high / p.run_low) / 2 for p in h.points
              if p.run_low is not None and p.run_high is not None and 0 < p.run_low < p.run_high]
    run = float(np.median(halves)) if halves else None
    if run is None or not Z_95 * h.noise > NOISE_OVER_RUN * run:
        return text
    return (f"{text}, {Z_95 * h.noise / run:.0f} times one run's own ±{format_percent(100 * math.expm1(run), signed=False)}"
            f": results measured alone at different times differ by the machine's noise, which the points' "
            f"intervals show, and a step under about {format_percent(100 * math.expm1(3 * h.noise), signed=False)} "
            f"cannot be told from it here; compare two commits paired, in the same rounds: pairbench confirm A B, "
            f"or pairbench bisect GOOD BAD")


def _point_line(p: Point, show) -> str:
    interval = f"[{show(p.low)}, {show(p.high)}]" if p.low is not None and p.high is not None else ""
    return f"{commit_name(p.commit, p.dirty):<16} {_day(p):<10}  {show(p.median):>10}  {interval:<24} " \
           f"{p.results} result(s)".rstrip()


def _day(p: Point) -> str:
    return visible((p.commit_time or p.started_at)[:10])


def _change_point_lines(history: History, numbers: dict) -> list[str]:
    if not history.change_points:
        return ["No change points."]
    lines = ["Change points:"]
    for k, cp in enumerate(history.change_points, 1):
        steps = "; ".join(f"{visible(s.benchmark.label)} {step_size(s)} {step_status(s)}" for s in cp.steps)
        lines.append(f"  {k}. {step_range(cp)}: {steps}")
        unconfirmed = dict.fromkeys(s.between for s in cp.steps if s.status == "unconfirmed" and all(s.between))
        lines += [f"     confirm it: pairbench confirm {visible(before[:SHORT])} {visible(after[:SHORT])}"
                  for before, after in unconfirmed]
        lines += [f"     find its commit among {s.bisect.commits}: {visible(bisect_command(s.bisect))}"
                  for s in cp.steps if s.bisect and not s.spread]
        lines += [f"     {visible(s.benchmark.label)} may have changed over {s.span.last - s.span.first + 1} points "
                  f"(a step or a drift): confirm measures the whole change"
                  + (f"; {visible(bisect_command(s.bisect))} names one commit if one made it, else says the "
                     f"change is spread" if s.bisect else "")
                  for s in cp.steps if s.spread and s.span is not None]
    return lines


# --------------------------------------------------------------------------- Markdown


def render_history_markdown(history: History) -> str:
    """A pull-request comment: the change points, then a sparkline per benchmark."""
    lines = [f"### pairbench history · machine {escape(history.machine)}", ""]
    if history.change_points:
        lines += ["| # | commits | benchmark | change | status |", "|---|---|---|---|---|"]
        for k, cp in enumerate(history.change_points, 1):
            lines += [f"| {k} | {escape(step_range(cp) + _span_text(s, ', '))} | {escape(s.benchmark.label)} | "
                      f"{escape(step_size(s))} | {escape(step_status(s))} |" for s in cp.steps]
    else:
        lines.append("No change points.")
    bisects = [s.bisect for cp in history.change_points for s in cp.steps if s.bisect and not s.spread]
    if bisects:
        lines += ["", "To find the commit of a step with several commits in its range:", "", "```sh",
                  *(visible(bisect_command(b)) for b in bisects), "```"]
    spread = [s.bisect for cp in history.change_points for s in cp.steps if s.bisect and s.spread]
    if spread:
        lines += ["", "A change that may be spread over its commits (a step or a drift): bisect names one commit "
                  "if one made it, else says the change is spread:", "", "```sh",
                  *(visible(bisect_command(b)) for b in spread), "```"]
    drifts = [d for h in history.histories for d in h.drifts]
    if drifts:
        lines += ["", *(f"- {escape(d.benchmark.label)}: {escape(drift_line(d))}" for d in drifts)]
    found = [(h.benchmark, f) for h in history.histories for f in h.found]
    if found:
        lines += ["", *(f"- {escape(key.label)}: {escape(found_line(f))}" for key, f in found)]
    lines += ["", "| benchmark | trend | commits | latest | steps |", "|---|---|---|---|---|"]
    for h in history.histories:
        show = value_formatter(h.benchmark.unit, h.typical())
        lines.append(f"| {escape(h.benchmark.label)} ({escape(metric_words(h.metric))}) | {sparkline(h.values(), 32)[0]} | {len(h.points)} | "
                     f"{escape(show(h.points[-1].median))} | {len(h.steps)} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- CSV and JSON


def render_history_csv(history: History) -> str:
    """One row per point of every benchmark; a step's number, size and status on its first point."""
    numbers = _numbers(history)
    rows = [_csv_record(CSV_HEADER)]
    for h in history.histories:
        starting = {s.index: s for s in h.steps}
        for i, p in enumerate(h.points):
            step = starting.get(i)
            change = (numbers[id(step)], step.change, step.low, step.high) if step else (None,) * 4
            rows.append(_csv_record(
                _texts(h.benchmark.label, h.benchmark.unit, p.commit or "", p.commit_time or "", p.branch or "")
                + [_cell(v) for v in (p.dirty, p.results)] + _texts(p.started_at)
                + [_cell(v) for v in (p.median, p.low, p.high, *change)] + _texts(step.status if step else "", h.metric)))
    return "".join(rows)


def history_document(history: History) -> dict:
    """The JSON document of ``history`` (format ``pairbench.history/1``)."""
    numbers = _numbers(history)
    return json_safe({
        "format": HISTORY_FORMAT,
        "machine": history.machine,
        "benchmarks": [{
            "benchmark": h.benchmark.to_dict(), "label": h.benchmark.label, "metric": h.metric, "noise": h.noise,
            "noise_autocorrelation": h.autocorrelation,
            "points": [_point_record(p) for p in h.points],
            "steps": [{"change_point": numbers[id(s)], **_step_record(s)} for s in h.steps],
            "drifts": [_drift_record(d) for d in h.drifts],
            "found": [{"index": f.index, "before": f.before, "after": f.after, "verdict": f.verdict,
                       "change_pct": f.change, "low_pct": f.low, "high_pct": f.high} for f in h.found],
        } for h in history.histories],
        "change_points": [{"number": k, "before": cp.before, "after": cp.after,
                           "benchmarks": [_step_record(s) for s in cp.steps]}
                          for k, cp in enumerate(history.change_points, 1)],
    })


def render_history_json(history: History) -> str:
    return json.dumps(history_document(history), indent=1, allow_nan=False) + "\n"


def _point_record(p: Point) -> dict:
    return {"commit": p.commit, "commit_time": p.commit_time, "branch": p.branch, "dirty": p.dirty,
            "started_at": p.started_at, "results": p.results, "median": p.median, "low": p.low,
            "high": p.high, "run_low": p.run_low, "run_high": p.run_high, "result_uids": list(p.result_uids)}


def _step_record(s: Step) -> dict:
    return {"benchmark": s.benchmark.label, "index": s.index, "before": s.before, "after": s.after,
            "change_pct": s.change, "low_pct": s.low, "high_pct": s.high, "confidence": s.confidence,
            "status": s.status, "verdict": s.verdict, "bisect": _bisect_record(s.bisect), "spread": s.spread,
            "span": None if s.span is None else {"first": s.span.first, "last": s.span.last, "before": s.span.before,
                                                 "after": s.span.after, "level": s.span.level}}


def _bisect_record(b: Bisect | None) -> dict | None:
    if b is None:
        return None
    return {"good": b.good, "bad": b.bad, "filter": b.filter, "commits": b.commits,
            "command": bisect_command(b, short=False)}


def _drift_record(d: Drift) -> dict:
    return {"benchmark": d.benchmark.label, "start": d.start, "end": d.end, "first": d.first, "last": d.last,
            "commits": d.end - d.start, "change_pct": d.change, "low_pct": d.low, "high_pct": d.high,
            "confidence": d.confidence}

