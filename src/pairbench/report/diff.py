"""``pairbench diff`` in words: the unpaired comparison of two saved results, its caveat first.

The terminal table and the JSON document (format ``pairbench.diff/1``) are
rendered from ``analysis.unpaired.Diff``; nothing is computed here.
"""

from __future__ import annotations

import json

from rich.table import Table

from pairbench.analysis.metrics import unit_verdict
from pairbench.analysis.unpaired import Diff, Difference, UnitDiff
from pairbench.model import json_safe
from pairbench.report.metric_names import metric_label
from pairbench.report.safe import json_escaped, markup
from pairbench.report.sentences import format_pvalue
from pairbench.report.suite import number_text, plural, unit_heading_text
from pairbench.report.tables import SUMMARY_METRIC
from pairbench.report.text import VERDICT_STYLE, render_markup, table_text
from pairbench.report.wording import word
from pairbench.units import format_percent, format_value

DIFF_FORMAT = "pairbench.diff/1"


def change_cell(d: Difference) -> str:
    if d.change_pct is None:
        return "—"
    return f"{format_percent(d.change_pct)} [{format_percent(d.low_pct)}, {format_percent(d.high_pct)}]"


def verdict_cell(d: Difference, *, unit: bool = False) -> str:
    if d.verdict.refused:
        return f"inconclusive ({word(d.verdict.refusal, d.benchmark.unit)})"
    return verdict_word(d, unit) + (" (negligible)" if d.verdict.negligible else "")


def verdict_word(d: Difference, unit: bool) -> str:
    """The time's verdict, or a unit's as its tables say it: higher, lower, same, equivalent, inconclusive."""
    if not unit:
        return d.verdict.verdict
    return unit_verdict(d.verdict.verdict, d.method)


def unit_change_cell(d: Difference) -> str:
    """A unit's change: its interval, "0 (equal in every sample)", "+2 (from 0)", or the medians' change."""
    if d.method == "equal":
        return "0 (equal in every sample)"
    if d.low_pct is not None:
        return change_cell(d)
    if d.change_pct is not None:
        return f"{format_percent(d.change_pct)} (medians)"
    shift = None if d.old_median is None or d.new_median is None else d.new_median - d.old_median
    return "—" if shift is None else f"{number_text(shift, signed=True)} (from 0)"


def correction_line(diff: Diff) -> str:
    m = max(len(diff.differences), 1)
    return (f"Two-sample statistics (Hodges-Lehmann shift of the log times with the rank-sum interval, "
            f"Mann-Whitney p); Holm's step-down procedure over the {m} benchmark{'s' if m != 1 else ''} compared "
            f"keeps the chance of any wrong slower or faster verdict at alpha = {diff.alpha:g}.")


def render_diff(diff: Diff, old: str, new: str, *, color: bool = False, width: int = 110) -> str:
    """The terminal report of ``diff`` of result files ``old`` and ``new``."""
    lines = [f"[bold]pairbench diff[/bold] · {markup(old)} → {markup(new)}",
             f"[yellow]{markup(_sentence(word(diff.notes[0])))}[/yellow]", markup(correction_line(diff)), ""]
    parts = [render_markup(lines, color=color, width=width)]
    if diff.differences:
        parts.append(_table(diff.differences, color=color, width=width))
    for u in diff.units:
        parts.append(render_markup(["", markup(unit_heading(u, diff.alpha))], color=color, width=width))
        parts.append(_table(u.differences, color=color, width=width, unit=True))
    listed = [f"Only in {markup(old)} ({len(diff.only_old)}): {markup(', '.join(diff.only_old))}"] if diff.only_old else []
    listed += [f"Only in {markup(new)} ({len(diff.only_new)}): {markup(', '.join(diff.only_new))}"] if diff.only_new else []
    notes = [f"  {markup(d.benchmark.label)}: {markup(word(n, d.benchmark.unit))}"
             for d in diff.differences for n in d.notes]
    notes += [f"  {markup(d.benchmark.label)} ({markup(u.unit)}): {markup(word(n, d.benchmark.unit))}"
              for u in diff.units for d in u.differences for n in d.notes]
    tail = [""] + listed + (["Notes:"] + notes if notes else [])
    parts.append(render_markup(tail, color=color, width=width))
    return "".join(parts)


def unit_heading(u: UnitDiff, alpha: float) -> str:
    """ "allocs/op (Holm over 2 benchmarks, alpha 0.01; higher is worse): 1 higher, 1 same"."""
    return unit_heading_text(u.unit, plural(len(u.differences), "benchmark"), alpha, u.worse,
                             [verdict_word(d, True) for d in u.differences])


def _table(differences: tuple[Difference, ...], *, color: bool, width: int, unit: bool = False) -> str:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    median = "median" if unit else f"{metric_label(SUMMARY_METRIC)} median"  # the values diff compares
    for column in ("benchmark", f"old {median}", f"new {median}", "change [interval]", "verdict", "p (Holm)",
                   "n old/new"):
        table.add_column(column, justify="left" if column in ("benchmark", "verdict") else "right")
    for d in differences:
        style = VERDICT_STYLE[d.verdict.verdict]
        name = d.benchmark.label + (f" · {d.side}" if d.side and len({x.side for x in differences}) > 1 else "")
        medians = [number_text(m) if unit and m is not None else _value(m, d) for m in (d.old_median, d.new_median)]
        table.add_row(markup(name), *medians, unit_change_cell(d) if unit else change_cell(d),
                      f"[{style}]{markup(verdict_cell(d, unit=unit))}[/{style}]",
                      format_pvalue(d.pvalue).removeprefix("p ").removeprefix("= "), f"{d.old_n}/{d.new_n}")
    return table_text(table, color=color, width=width)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _value(value: float | None, d: Difference) -> str:
    return "—" if value is None else format_value(value, d.benchmark.unit)


def diff_document(diff: Diff, old: str, new: str) -> dict:
    """``diff --json``: every difference as a record, the caveat in words, the benchmarks on one side."""
    return json_safe({
        "format": DIFF_FORMAT, "old": old, "new": new, "alpha": diff.alpha, "threshold": diff.threshold,
        "correction": diff.correction, "paired": False, "caveat": word(diff.notes[0]),
        "differences": [_record(d) for d in diff.differences],
        "unit_tables": [{"unit": u.unit, "worse": u.worse, "family": len(u.differences),
                         "differences": [_record(d, unit=True) for d in u.differences]} for u in diff.units],
        "only_old": list(diff.only_old), "only_new": list(diff.only_new),
        "notes": [{**n.to_dict(), "text": word(n)} for n in diff.notes],
    })


def _record(d: Difference, *, unit: bool = False) -> dict:
    return {"benchmark": d.benchmark.to_dict(), "side": d.side, "verdict": verdict_word(d, unit),
            "negligible": d.verdict.negligible,
            "change": {"estimate": d.change_pct, "low": d.low_pct, "high": d.high_pct, "confidence": d.confidence,
                       "method": {"interval": "Hodges-Lehmann shift of log values, rank-sum interval",
                                  "equal": "equal in every sample", "test": "medians (no ratio)"}[d.method]},
            "shift": d.shift, "pvalue": d.pvalue, "pvalue_unadjusted": d.pvalue_unadjusted,
            "pvalue_method": "Mann-Whitney", "old": {"n": d.old_n, "median": d.old_median},
            "new": {"n": d.new_n, "median": d.new_median},
            "notes": [{**n.to_dict(), "text": word(n, d.benchmark.unit)} for n in d.notes]}


def render_diff_json(diff: Diff, old: str, new: str) -> str:
    return json_escaped(json.dumps(diff_document(diff, old, new), indent=2, allow_nan=False,
                                   ensure_ascii=False)) + "\n"
