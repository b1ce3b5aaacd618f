"""Sentences about a comparison, worded once for every report (terminal, Markdown, HTML).

Plain, unescaped text: each renderer escapes it for its format.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.units import format_duration, format_percent


def format_pvalue(p: float | None) -> str:
    if p is None:
        return "p n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict_sentence(c: dict) -> str:
    """The verdict in words: "new is 3.1% slower than old [+2.4%, +3.8%], p < 0.001"."""
    cand, base = c["candidate"], c["baseline"]
    if c.get("self_check"):
        cand = f"A/A self-check: {cand}"
    effect = c.get("effect")
    if effect is None:
        return f"{cand} vs {base}: no verdict — {c['verdict_reason']}"
    interval = f"[{format_percent(effect['low'])}, {format_percent(effect['high'])}]"
    p = format_pvalue(c.get("pvalue"))
    verdict = c["verdict"]
    if verdict in ("slower", "faster"):
        size = format_percent(abs(effect["estimate"]), signed=False)
        text = f"{cand} is {size} {verdict} than {base} {interval}, {p}"
        if c["negligible"]:
            text += f" (negligible: within ±{c['threshold']:g}%)"
        return text
    if verdict == "equivalent":
        return (f"{cand} is equivalent to {base}: change {format_percent(effect['estimate'])} "
                f"{interval} lies within ±{c['threshold']:g}%, {p}")
    text = f"{cand} vs {base}: inconclusive, change {format_percent(effect['estimate'])} {interval}, {p}"
    if c.get("rounds_needed"):
        total = c["rounds"] + c["rounds_needed"]
        text += f"; about {c['rounds_needed']} more rounds needed to decide (try --runs {total})"
    return text


def secondary_lines(sec: Mapping, c: Mapping) -> list[str]:
    """The secondary statistics of comparison ``c`` (its ``secondary`` record ``sec``) as sentences."""
    lines = []
    mins, means = sec.get("min"), sec.get("mean")
    if mins and means:
        lines.append(
            f"Minimum {format_duration(mins['baseline'])} → {format_duration(mins['candidate'])} "
            f"({format_percent(mins['delta_pct'])}); mean {format_duration(means['baseline'])} → "
            f"{format_duration(means['candidate'])} (paired difference "
            f"{format_percent(means['paired_difference_pct'])}).")
    pairs = sec.get("pairs")
    if pairs:
        lines.append(f"{c.get('rounds', '?')} pairs: candidate faster in {pairs['candidate_faster']}, "
                     f"slower in {pairs['candidate_slower']}, tied in {pairs['tied']}.")
    hl = sec.get("hodges_lehmann")
    if hl:
        lines.append(f"Hodges-Lehmann shift {format_duration(hl['estimate'])} "
                     f"[{format_duration(hl['low'])}, {format_duration(hl['high'])}] "
                     f"({hl['confidence']:.1%}); Mann-Whitney {format_pvalue(sec.get('mann_whitney_pvalue'))}; "
                     f"Wilcoxon signed-rank {format_pvalue(sec.get('signed_rank_pvalue'))}.")
    auto = sec.get("autocorrelation")
    if auto:
        lines.append(f"Lag-1 autocorrelation of the pair differences {auto['lag1']:+.2f} "
                     f"(white-noise band ±{auto['band']:.2f}).")
    outliers = sec.get("outlier_balance")
    if outliers and outliers.get("enabled"):
        lines.append(f"Outliers: {outliers['slow']} slow, {outliers['fast']} fast "
                     f"(binomial {format_pvalue(outliers['pvalue'])}); all kept.")
    return lines
