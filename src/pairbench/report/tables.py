"""The report's tables and detail lines as plain text, shared by the Markdown and HTML renderers.

Cells here are *unescaped* text: each renderer escapes them for its own
format (Markdown: pipes, backticks, HTML, newlines; HTML: Jinja2 autoescape).
Numbers are formatted once, here, so the two reports always agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pairbench.analysis import VariantSummary
from pairbench.report.analysed import Analysed
from pairbench.report.sentences import format_pvalue, secondary_lines, verdict_sentence
from pairbench.units import format_duration, format_kib, format_percent, format_rate, time_unit_for


@dataclass(frozen=True)
class Table:
    """A header and rows of plain-text cells (every row as long as the header)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def comparison_name(c: Mapping) -> str:
    """ "candidate vs baseline", marked when it is the A/A self-check."""
    name = f"{c['candidate']} vs {c['baseline']}"
    return name + " (A/A self-check)" if c.get("self_check") else name


def verdict_label(c: Mapping) -> str:
    return c["verdict"] + (" (negligible)" if c.get("negligible") else "")


def change_text(c: Mapping) -> str:
    """ "+3.6% [+2.5%, +5.3%]", or "—" when the verdict was refused."""
    effect = c.get("effect")
    if not effect:
        return "—"
    return (f"{format_percent(effect['estimate'])} "
            f"[{format_percent(effect['low'])}, {format_percent(effect['high'])}]")


def verdict_table(analysed: Analysed) -> Table:
    """One row per comparison: the medians, the paired change with its interval, the verdict."""
    by_name = {s.name: s for s in analysed.summaries}
    confidences = {c["effect"]["confidence"] for c in analysed.comparisons if c.get("effect")}
    level = f" ({_level(min(confidences))} interval)" if confidences else ""
    header = ("Comparison", "Baseline median", "Candidate median", f"Change{level}", "Verdict",
              "p-value", "Rounds")
    rows = []
    for c in analysed.comparisons:
        base, cand = by_name.get(c["baseline"]), by_name.get(c["candidate"])
        rows.append((
            comparison_name(c),
            format_duration(base.median) if base else "—",
            format_duration(cand.median) if cand else "—",
            change_text(c),
            verdict_label(c),
            format_pvalue(c.get("pvalue")).removeprefix("p ").removeprefix("= "),
            str(c.get("rounds", "—")),
        ))
    return Table(header, tuple(rows))


def variant_table(summaries: Sequence[VariantSummary]) -> Table:
    """One row per variant: location with its interval, spread, outliers and resource usage."""
    header = ("Variant", "n", "Median [CI]", "Mean ± SE", "Min", "Q1", "Q3", "Max", "CV",
              "Beyond fence", "CPU user", "CPU sys", "Max RSS", "Context switches")
    return Table(header, tuple(_variant_row(s) for s in summaries))


def _variant_row(s: VariantSummary) -> tuple[str, ...]:
    n = str(s.n) + (f" (+{s.n_warmup} warmup)" if s.n_warmup else "") + (
        f", {s.n_failed} failed" if s.n_failed else "")
    if s.n == 0 or s.median is None:
        return (s.name, n) + ("—",) * 12
    unit = time_unit_for(s.median)
    fmt = lambda ns: format_duration(ns, unit=unit)  # noqa: E731 - local shorthand
    median = fmt(s.median)
    if s.median_low is not None and s.median_high is not None:
        median += f" [{fmt(s.median_low)}, {fmt(s.median_high)}] ({_level(s.confidence)})"
    mean = fmt(s.mean)
    if s.mean_se is not None:
        mean += f" ± {format_duration(s.mean_se, unit=unit, digits=2)}"
    return (
        s.name, n, median, mean, fmt(s.min), fmt(s.q1), fmt(s.q3), fmt(s.max),
        format_percent(100 * s.cv, signed=False) if s.cv is not None else "—",
        f"{s.beyond_upper_fence} above, {s.beyond_lower_fence} below",
        format_duration(s.user_ns), format_duration(s.sys_ns),
        ("≤ " if s.max_rss_at_floor else "") + format_kib(s.max_rss_kib),
        format_rate(s.cs_per_s),
    )


def detail_lines(c: Mapping) -> list[str]:
    """The verdict in words and the secondary numbers of one comparison (seeds 000 and 002)."""
    sec = c.get("secondary") or {}
    lines = [verdict_sentence(c)]
    if c.get("verdict_reason"):
        lines.append(f"Verdict rule: {c['verdict_reason']}.")
    effect = c.get("effect")
    if effect:
        adjustment = f", {c['adjustment']}" if c.get("adjustment", "none") != "none" else ""
        lines.append(f"Interval: {effect['method']}, {effect['confidence']:.2%} "
                     f"(alpha {c.get('alpha', 0):g}{adjustment}); smallest change that matters "
                     f"±{c.get('threshold', 0):g}%.")
    lines += secondary_lines(sec, c)
    if c.get("rounds_needed"):
        lines.append(f"About {c['rounds_needed']} more rounds needed to decide.")
    if c.get("stopped_because"):
        lines.append(f"Stopped: {c['stopped_because']}.")
    return lines


def environment_table(environment: Mapping) -> Table:
    """The machine metadata flattened to dotted keys ("timer.measured_resolution_ns")."""
    return Table(("Key", "Value"), tuple(flatten(environment)))


def options_table(options: Mapping) -> Table:
    return Table(("Option", "Value"), tuple(flatten(options)))


def flatten(mapping: Mapping, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted key, value text) pairs; lists of records are shown as compact JSON."""
    rows = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            rows += flatten(value, prefix=f"{name}.")
        else:
            rows.append((name, value_text(value)))
    return rows


def value_text(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return str(value)


def run_title(analysed: Analysed) -> str:
    """ "pairbench compare: new vs old", "pairbench run: 3 commands"."""
    run = analysed.run
    real = [c for c in analysed.comparisons if not c.get("self_check")]
    if len(real) == 1:
        return f"pairbench {run.kind}: {real[0]['candidate']} vs {real[0]['baseline']}"
    if real:
        return f"pairbench {run.kind}: {len(real)} candidates vs {real[0]['baseline']}"
    if len(run.variants) == 1:
        return f"pairbench {run.kind}: {run.variants[0].name}"
    return f"pairbench {run.kind}: {len(run.variants)} commands"


def _level(confidence: float) -> str:
    text = f"{100 * confidence:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"
