"""Terminal rendering: summaries and verdicts as text (ANSI colour only when asked). Returns strings."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.markup import escape

from pairbench.analysis import VariantSummary
from pairbench.model import Run
from pairbench.report.sentences import secondary_lines, verdict_sentence
from pairbench.units import (
    format_duration,
    format_kib,
    format_percent,
    format_rate,
    time_unit_for,
)


def render_markup(lines: Iterable[str], *, color: bool, width: int = 100) -> str:
    """Render rich-markup ``lines`` to text, with ANSI styles only when ``color``."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        color_system="standard" if color else None,
        width=width,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )
    for line in lines:
        console.print(line)
    return buffer.getvalue()


def run_header(run: Run) -> list[str]:
    """The first lines: what was measured and how the samples were ordered."""
    n = len(run.variants)
    rounds = max((len(v.samples.measured()) for v in run.variants), default=0)
    seed = run.options.get("seed")
    what = "command" if n == 1 else "commands"
    lines = [f"[bold]pairbench {escape(str(run.kind))}[/bold] · {n} {what}"]
    if n > 1 and rounds == 0:
        lines.append(f"No round was completed (order seed {escape(str(seed))}).")
    elif n > 1:
        lines.append(
            f"Samples were interleaved: each of {rounds} rounds ran every command once, "
            f"in a fresh random order (seed {escape(str(seed))})."
        )
    if run.shell_overhead:
        overhead = run.shell_overhead.get("median_ns")
        lines.append(
            f"Commands ran through sh -c; the shell's own start-up costs {format_duration(overhead)} "
            "(median) and is included in every time below."
        )
    return lines


def variant_block(s: VariantSummary, notes: list[str]) -> list[str]:
    """Lines describing one variant; its warnings become numbered footnotes in ``notes``."""
    marks = _footnote_marks(s.warnings, notes)
    title = f"[bold]{escape(s.name)}[/bold]{marks}"
    if s.n == 0:
        return [title, "  no successful samples"]
    unit = time_unit_for(s.median)
    fmt = lambda ns: format_duration(ns, unit=unit)  # noqa: E731 - local shorthand
    counts = f"n {s.n}" + (f" (+{s.n_warmup} warmup)" if s.n_warmup else "")
    counts += f", {s.n_failed} failed" if s.n_failed else ""
    lines = [title, f"  median    {fmt(s.median)}  {_interval(s.median_low, s.median_high, fmt, s.confidence)}   {counts}"]
    if s.mean_se is not None:
        method = escape(str({"batch-means": "batch means"}.get(s.mean_method, s.mean_method)))
        n_eff = f", effective n {min(s.n_eff, s.n):.0f}" if s.n_eff is not None else ""
        lines.append(
            f"  mean      {fmt(s.mean)} ± {format_duration(s.mean_se, unit=unit, digits=2)}"
            f"  (standard error, {method}{n_eff})"
        )
    else:
        lines.append(f"  mean      {fmt(s.mean)}")
    lines.append(f"  min…max   {fmt(s.min)} … {fmt(s.max)}    Q1 {fmt(s.q1)}   Q3 {fmt(s.q3)}")
    spread = f"  SD {format_duration(s.sd)}   CV {format_percent(100 * s.cv, signed=False) if s.cv is not None else '—'}"
    if s.mean_min_gap is not None:
        spread += f"   mean-min gap {format_percent(100 * s.mean_min_gap, signed=False)} of the mean"
    spread += f"   Tukey fence: {s.beyond_upper_fence} above, {s.beyond_lower_fence} below (kept)"
    lines.append(spread)
    lines.append(
        f"  CPU user {format_duration(s.user_ns)}, sys {format_duration(s.sys_ns)}   "
        f"max RSS {'≤ ' if s.max_rss_at_floor else ''}{format_kib(s.max_rss_kib)}"
        f"   context switches {format_rate(s.cs_per_s)}"
    )
    return lines


def render_run(run: Run, summaries: Sequence[VariantSummary], *, color: bool = False, width: int = 100) -> str:
    """The terminal report of ``pairbench run`` (and ``show`` of a run)."""
    notes: list[str] = list(run.warnings)
    lines = run_header(run) + [""]
    for summary in summaries:
        lines += variant_block(summary, notes) + [""]
    lines += footer(run, notes)
    return render_markup(lines, color=color, width=width)


def footer(run: Run, notes: list[str]) -> list[str]:
    """Why sampling stopped, the run's state, and the numbered notes."""
    lines = []
    if run.stopped_because:
        lines.append(f"Stopped: {escape(run.stopped_because)}.")
    if run.state == "interrupted":
        lines.append("[yellow]The run was interrupted; these are the samples finished before it.[/yellow]")
    elif run.state == "failed":
        lines.append("[red]The run failed; these are the samples finished before the failure.[/red]")
    if notes:
        lines.append("Notes:")
        lines += [f"  {i}. {escape(note)}" for i, note in enumerate(notes, start=1)]
    return lines


def _interval(low, high, fmt, confidence: float) -> str:
    if low is None or high is None:
        return "(no interval)"
    return f"[{fmt(low)}, {fmt(high)}] {confidence:.0%} CI"


def _footnote_marks(warnings: Sequence[str], notes: list[str]) -> str:
    """Add ``warnings`` to ``notes`` (deduplicated) and return their numbers as " ¹ ²"-style marks."""
    numbers = []
    for warning in warnings:
        if warning not in notes:
            notes.append(warning)
        numbers.append(notes.index(warning) + 1)
    return (" " + " ".join(f"[dim]({n})[/dim]" for n in numbers)) if numbers else ""


# --------------------------------------------------------------------------- compare


_VERDICT_STYLE = {"slower": "red", "faster": "green", "equivalent": "cyan", "inconclusive": "yellow"}


def comparison_table(comparisons: Sequence[dict], notes: list[str], *, color: bool, width: int) -> str:
    """Seed 002's table: one line per comparison with mins, means, paired change and verdict."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    baselines = {c["baseline"] for c in comparisons}
    first = f"vs {escape(_short(str(next(iter(baselines)))))}" if len(baselines) == 1 else "comparison"
    for column in (first, "B min", "C min", "min Δ", "B mean", "C mean", "mean Δ",
                   "change [interval]", "verdict"):
        table.add_column(column, justify="left" if column in (first, "verdict") else "right",
                         overflow="fold", no_wrap=column != first)
    for c in comparisons:
        table.add_row(*_comparison_cells(c, notes, with_baseline=len(baselines) > 1))
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=color, color_system="standard" if color else None,
            width=width, highlight=False).print(table)
    return buffer.getvalue()


def _comparison_cells(c: dict, notes: list[str], *, with_baseline: bool) -> list[str]:
    sec = c.get("secondary") or {}
    mins, means = sec.get("min") or {}, sec.get("mean") or {}
    effect = c.get("effect")
    change = "—"
    if effect:
        change = (f"{format_percent(effect['estimate'])} "
                  f"[{format_percent(effect['low'])}, {format_percent(effect['high'])}]")
    verdict = c["verdict"] + (" (negligible)" if c["negligible"] else "")
    style = _VERDICT_STYLE.get(c["verdict"], "")
    marks = _footnote_marks(c.get("warnings", []), notes)
    name = escape(_short(str(c["candidate"])))
    if with_baseline:
        name += f" vs {escape(_short(str(c['baseline'])))}"
    if c.get("self_check"):
        name += " (A/A)"
    return [
        name + marks,
        format_duration(mins.get("baseline")),
        format_duration(mins.get("candidate")),
        format_percent(mins.get("delta_pct")),
        format_duration(means.get("baseline")),
        format_duration(means.get("candidate")),
        format_percent(means.get("paired_difference_pct")),
        change,
        f"[{style}]{escape(verdict)}[/{style}]" if style else escape(verdict),
    ]


def _short(name: str, limit: int = 28) -> str:
    """A long command name shortened in the middle for table cells; sentences keep it whole."""
    if len(name) <= limit:
        return name
    keep = limit - 1
    return name[: keep // 2] + "…" + name[-(keep - keep // 2):]


def comparison_details(c: dict) -> list[str]:
    """Seed 000's numbers and the diagnostics (the same lines as the other reports), indented."""
    lines = secondary_lines(c.get("secondary") or {}, c)
    if c.get("effect"):
        adjustment = f", {c['adjustment']}" if c.get("adjustment", "none") != "none" else ""
        lines.append(f"Interval: {c['effect']['method']}, {c['effect']['confidence']:.2%} "
                     f"(alpha {c['alpha']:g}{adjustment}).")
    return ["  " + escape(line) for line in lines]


def render_compare(run: Run, summaries: Sequence[VariantSummary], comparisons: Sequence[dict],
                   *, color: bool = False, width: int = 110) -> str:
    """The terminal report of ``pairbench compare`` (and ``show`` of a comparison)."""
    notes: list[str] = list(run.warnings)
    parts = [render_markup(run_header(run) + [""], color=color, width=width)]
    parts.append(comparison_table(comparisons, notes, color=color, width=width))
    lines = [""]
    for c in comparisons:
        style = _VERDICT_STYLE.get(c["verdict"], "bold")
        lines.append(f"[bold {style}]{escape(verdict_sentence(c))}[/bold {style}]")
        lines += comparison_details(c)
        if c.get("self_check") and c["verdict"] in ("slower", "faster"):
            notes.append(
                "the A/A self-check (the baseline against a copy of itself) found a difference: "
                "this machine's noise is not what the method assumes; run `pairbench doctor`"
            )
    lines.append("")
    for summary in summaries:
        lines += variant_block(summary, notes) + [""]
    lines += footer(run, notes)
    parts.append(render_markup(lines, color=color, width=width))
    return "".join(parts)
