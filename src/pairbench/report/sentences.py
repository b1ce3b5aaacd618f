"""Sentences about a comparison, worded once for every report (terminal, Markdown, HTML).

Plain, unescaped text: each renderer escapes it for its format. The notes that
qualify one of these numbers (``wording.INLINE``) are worded here, beside it.
"""

from __future__ import annotations

from pairbench.analysis import Comparison
from pairbench.analysis.budget import AFFORDABLE_FACTOR, AFFORDABLE_FLOOR_NS, within_reach
from pairbench.model import COMMAND_BENCHMARK
from pairbench.notes import Note
from pairbench.report.metric_names import metric_words
from pairbench.report.wording import INLINE, word
from pairbench.units import format_level, format_percent, format_value


def format_pvalue(p: float | None) -> str:
    if p is None:
        return "p n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def comparison_title(c: Comparison, *, with_benchmark: bool = False) -> str:
    """ "new vs old", marked when it is the A/A self-check, with the benchmark when a run has several."""
    name = f"{c.candidate} vs {c.baseline}" + (" (A/A self-check)" if c.self_check else "")
    return f"{c.benchmark.label} · {name}" if with_benchmark else name


def verdict_label(c: Comparison, *, metric: bool = True, wall: bool = False) -> str:
    """ "slower", "slower (negligible)", and "on CPU time" after a verdict decided on another time than
    wall time; none with ``metric`` False (a table that names the metric in its header), "on wall
    time" too with ``wall`` (a table whose rows decided on different times)."""
    on = _on(c) or (f" on {metric_words(c.metric)}" if wall and _timed(c) else "")
    return c.verdict.verdict + (" (negligible)" if c.verdict.negligible else "") + (on if metric else "")


COUNT_UNITS = {"instructions": "instr", "cycles-model": "cycles"}
"""The unit a count's values are shown in (the benchmark's own unit is a time)."""


def value_unit(c: Comparison) -> str:
    """The unit of a comparison's values: a count's own for a verdict on a count, else the benchmark's."""
    return COUNT_UNITS.get(c.metric, c.benchmark.unit)


def _on(c: Comparison) -> str:
    """ " on CPU time" for a comparison decided on another time than wall time (``--metric``), else
    nothing."""
    return f" on {metric_words(c.metric)}" if c.metric != "wall" and _timed(c) else ""


def _timed(c: Comparison) -> bool:
    return c.benchmark.unit == "ns"


def figure_metric(c: Comparison) -> str | None:
    """The metric of ``c``'s figures (its change, its minimum and mean): None when they are not
    times (a count a harness reported)."""
    return c.metric if _timed(c) else None


def change_text(c: Comparison) -> str:
    """ "+3.6% [+2.5%, +5.3%]", or "—" when the verdict was refused."""
    if c.effect is None:
        return "—"
    e = c.effect
    return f"{format_percent(e.estimate)} [{format_percent(e.low)}, {format_percent(e.high)}]"


def verdict_sentence(c: Comparison) -> str:
    """The verdict in words: "new is 3.1% slower than old [+2.4%, +3.8%], p < 0.001"."""
    cand, base = c.candidate, c.baseline
    if c.self_check:
        cand = f"A/A self-check: {cand}"
    if c.benchmark != COMMAND_BENCHMARK:  # a parameter value (-P/-L) or a harness's benchmark
        cand = f"{c.benchmark.label} · {cand}"
    if c.effect is None:
        why = word(c.verdict.refusal, c.benchmark.unit) if c.verdict.refusal else c.verdict.reason
        return f"{cand} vs {base}: no verdict{_on(c)} — {why}"
    e = c.effect
    interval = f"[{format_percent(e.low)}, {format_percent(e.high)}]"
    p = format_pvalue(c.pvalue)
    verdict = c.verdict.verdict
    if verdict in ("slower", "faster"):
        text = f"{cand} is {format_percent(abs(e.estimate), signed=False)} {verdict} than {base}{_on(c)} {interval}, {p}"
        if c.verdict.negligible:
            text += f" (negligible: within ±{c.threshold:g}%)"
        return text
    if verdict == "equivalent":
        return (f"{cand} is equivalent to {base}{_on(c)}: change {format_percent(e.estimate)} {interval} lies "
                f"within ±{c.threshold:g}%, {p}")
    text = f"{cand} vs {base}: inconclusive{_on(c)}, change {format_percent(e.estimate)} {interval}, {p}"
    if within_reach(c):
        span = span_words(c)
        text += (f"; about {c.rounds_needed} more rounds needed to decide "
                 f"({span + '; ' if span else ''}try --runs {c.rounds + c.rounds_needed})")
    elif c.rounds_needed:
        text += (f"; more rounds than any reasonable budget gives would be needed (over {AFFORDABLE_FACTOR} times "
                 f"these, and over {AFFORDABLE_FLOOR_NS / 60e9:g} minutes)")
    return text


def span_words(c: Comparison) -> str:
    """The rounds-needed estimate's own interval in words while it is unsteady (few rounds), else ""."""
    if c.rounds_needed_span is None:
        return ""
    low, high = c.rounds_needed_span
    return f"between {low} and {high} at 90%, estimated from {c.rounds} rounds"


def secondary_lines(c: Comparison) -> list[str]:
    """The secondary statistics of ``c`` as sentences, with the notes that qualify them."""
    sec, unit, lines = c.secondary, value_unit(c), []
    fmt = lambda value: format_value(value, unit)  # noqa: E731 - local shorthand
    if sec.min_mean:
        m = sec.min_mean
        minimum = f"{_metric_prefix(c)}minimum" if _timed(c) else "Minimum"
        lines.append(f"{minimum} {fmt(m.baseline_min)} → {fmt(m.candidate_min)} ({format_percent(m.min_delta_pct)}); "
                     f"mean {fmt(m.baseline_mean)} → {fmt(m.candidate_mean)} (paired difference "
                     f"{format_percent(m.paired_difference_pct)}).")
    if sec.pairs:
        lines.append(f"{c.rounds} pairs: candidate faster in {sec.pairs.candidate_faster}, "
                     f"slower in {sec.pairs.candidate_slower}, tied in {sec.pairs.tied}.")
    if sec.hodges_lehmann:
        hl = sec.hodges_lehmann
        interval = f" [{fmt(hl.low)}, {fmt(hl.high)}] ({format_level(hl.confidence)})" if hl.low is not None else ""
        of = f" of {metric_words(c.metric)}" if _timed(c) else ""
        lines.append(f"Hodges-Lehmann shift{of} {fmt(hl.estimate)}{interval}; Mann-Whitney "
                     f"{format_pvalue(sec.mann_whitney_pvalue)}; Wilcoxon signed-rank "
                     f"{format_pvalue(sec.signed_rank_pvalue)}.")
    if sec.autocorrelation:
        a = sec.autocorrelation
        lines.append(f"Lag-1 autocorrelation of the pair differences {a.lag1:+.2f} "
                     f"(white-noise band ±{a.band:.2f}).")
    outliers = sec.outlier_balance
    if outliers:
        qualifier = _inline(c, "few-outliers", "outlier-check-disabled")
        if outliers.enabled:
            lines.append(f"Outliers: {outliers.slow} slow, {outliers.fast} fast (binomial "
                         f"{format_pvalue(outliers.pvalue)}{'; ' + qualifier if qualifier else ''}); all kept.")
        elif qualifier:
            lines.append(f"Outliers: {qualifier}.")
    return lines


def _metric_prefix(c: Comparison) -> str:
    """ "CPU time: " before the figures of a comparison's times; nothing for a count."""
    words = metric_words(c.metric)
    return f"{words[0].upper()}{words[1:]}: " if _timed(c) else ""


def interval_line(c: Comparison, *, with_threshold: bool = False) -> str | None:
    """ "Interval: <method>, 99.00% (alpha 0.01, bonferroni)", with its exact-level note if any."""
    if c.effect is None:
        return None
    adjustment = f", {c.adjustment}" if c.adjustment != "none" else ""
    text = f"Interval: {c.effect.method}, {format_level(c.effect.confidence)} (alpha {c.alpha:g}{adjustment})"
    conservative = _inline(c, "interval-conservative")
    if conservative:
        text += f"; {conservative}"
    if with_threshold:
        text += f"; smallest change that matters ±{c.threshold:g}%"
    return text + "."


def shift_line(c: Comparison) -> str | None:
    """The shift function's open bounds (the HTML report draws it), when it has any."""
    text = _inline(c, "shift-unbounded")
    return f"{text[0].upper()}{text[1:]}." if text else None


def _inline(c: Comparison, *codes: str) -> str:
    """The words of ``c``'s notes of ``codes`` (shown beside a number, not among the notes)."""
    return "; ".join(word(n, c.benchmark.unit) for n in c.notes if n.code in codes)


def detail_lines(c: Comparison, stopped_because: str = "") -> list[str]:
    """The verdict in words, its rule, its interval, the secondary numbers, what is still needed."""
    lines = [verdict_sentence(c)]
    if c.verdict.reason:
        lines.append(f"Verdict rule: {c.verdict.reason}.")
    interval = interval_line(c, with_threshold=True)
    lines += [interval] if interval else []
    lines += secondary_lines(c)
    shift = shift_line(c)
    lines += [shift] if shift else []
    if within_reach(c):
        span = span_words(c)
        lines.append(f"About {c.rounds_needed} more rounds needed to decide{f' ({span})' if span else ''}.")
    if stopped_because:
        lines.append(f"Stopped: {stopped_because}.")
    return lines


def listed(notes) -> list[Note]:
    """The notes that stand alone (not worded beside a number), in order."""
    return [n for n in notes if n.code not in INLINE]
