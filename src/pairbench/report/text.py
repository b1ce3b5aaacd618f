"""Terminal rendering: summaries and verdicts as text (ANSI colour only when asked). Returns strings.

Every text that came from outside (names, commands, notes' figures) is shown
through ``safe.markup``: control characters made visible, rich markup escaped.

A note about one summary or comparison is a numbered footnote marked after its
title; the run's own notes come first in the list. Everything shown comes from
the :class:`~pairbench.analysis.Analysis`; nothing is computed here.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Iterable, Sequence

from rich.console import Console

from pairbench.analysis import Analysis, Comparison, Summary
from pairbench.harness_registry import PAIRBENCH, WORKER_HARNESSES, words
from pairbench.model import Run
from pairbench.notes import Note
from pairbench.report.metric_names import common_metric, metric_label, metric_words
from pairbench.report.safe import markup, visible
from pairbench.report.sentences import (
    change_text,
    figure_metric,
    interval_line,
    listed,
    secondary_lines,
    shift_line,
    value_unit,
    verdict_label,
    verdict_sentence,
)
from pairbench.report.suite import (
    finding_lines,
    harness_sentence,
    imported_sentence,
    metric_blocks,
    plural,
    rounds_sentence,
    shard_sentence,
    suite_blocks,
)
from pairbench.report.tables import SUMMARY_METRIC, series_name, shortened, side_headers
from pairbench.report.wording import with_subject, word
from pairbench.units import (
    format_duration,
    format_kib,
    format_level,
    format_percent,
    format_rate,
    format_value,
    value_formatter,
)

_HEIGHT = 25
"""The height the report's consoles are given (rich's own when no terminal answers): lines and tables
ignore it, and a console that knows its size asks no terminal for it before every line it prints."""


def _console(file, *, color: bool, width: int, **options) -> Console:
    """A console as all of the report's are: ``width`` wide, ANSI styles only when ``color``, no
    highlighting, emoji codes as text, and a height, so it asks no terminal (``_HEIGHT``)."""
    return Console(file=file, force_terminal=color, color_system="standard" if color else None, width=width,
                   height=_HEIGHT, highlight=False, emoji=False, **options)


def render_markup(lines: Iterable[str], *, color: bool, width: int = 100) -> str:
    """Render rich-markup ``lines`` to text, with ANSI styles only when ``color``."""
    buffer = io.StringIO()
    console = _console(buffer, color=color, width=width, soft_wrap=True)
    for line in lines:
        console.print(visible(line))  # idempotent: a second guard for what markup() already showed
    return buffer.getvalue()


def table_text(table, *, color: bool, width: int) -> str:
    """A rich table as text, every cell on one line: the table grows past ``width`` rather than
    break a benchmark's or a side's name inside its cell (a file or a pager keeps it readable;
    a terminal folds the long line whole). Cells longer than a table should hold are shortened by
    the caller, in the middle, with the full text elsewhere in the report. Emoji codes are text
    (a command ``echo :x:`` is not shown as a cross), as in the report's lines."""
    for column in table.columns:
        column.no_wrap = True
    needed = _console(io.StringIO(), color=False, width=10_000).measure(table).maximum
    buffer = io.StringIO()
    _console(buffer, color=color, width=max(width, needed)).print(table)
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())  # no padding past a row's end


class Footnotes:
    """The numbered notes of one report: the run's first, then each as a title marks it."""

    def __init__(self, run_notes: Sequence[Note], unit: str):
        self.lines: list[str] = []
        self._numbers: dict[str, int] = {}
        for note in listed(run_notes):
            self._number(with_subject(note, unit))

    def marks(self, notes: Sequence[Note], unit: str) -> str:
        """Number ``notes`` (each text once) and return their marks: " (3) (4)"."""
        numbers = [self._number(word(note, unit)) for note in listed(notes)]
        return (" " + " ".join(f"[dim]({n})[/dim]" for n in dict.fromkeys(numbers))) if numbers else ""

    def _number(self, text: str) -> int:
        if text not in self._numbers:
            self.lines.append(text)
            self._numbers[text] = len(self.lines)
        return self._numbers[text]


def run_header(run: Run) -> list[str]:
    """The first lines: what was measured and how the samples were ordered."""
    n = len(run.sides)
    rounds, seed = run.rounds, run.settings.sampling.seed
    harness = run.suite.harness if run.suite else PAIRBENCH
    what = "command" if run.kind != "bench" else "worker" if harness in WORKER_HARNESSES else "program"
    lines = [f"[bold]pairbench {markup(run.kind)}[/bold] · {n} {what if n == 1 else what + 's'}"
             + (f" · {markup(words(harness))}" if run.kind == "bench" and harness != PAIRBENCH
                else "")]
    shard = shard_sentence(run) if run.kind == "bench" else None
    lines += [markup(shard)] if shard else []
    if run.kind == "import":
        return lines + [markup(imported_sentence(run))]
    if n > 1 and rounds == 0:
        lines.append(f"No round was completed (order seed {seed}).")
    elif n > 1 and run.kind == "bench":
        lines.append("Samples were interleaved. " + harness_sentence(run))
    elif n > 1:
        lines.append(f"Samples were interleaved: each of {rounds} rounds ran every command once, "
                     f"in a fresh random order (seed {seed}).")
    if run.kind == "bench" and rounds:
        lines.append(markup(rounds_sentence(run)))
    if run.shell_overhead:
        shell = run.shell_overhead.shell
        lines.append(f"Commands ran through {markup(shell)} -c; the shell's own start-up costs "
                     f"{format_duration(run.shell_overhead.median_ns)} (median) and is included in "
                     "every time below.")
    return lines


def summary_block(s: Summary, footnotes: Footnotes, *, with_benchmark: bool = False) -> list[str]:
    """Lines describing one series; its notes become numbered footnotes."""
    name = series_name(s, with_benchmark=with_benchmark)
    of = f" · {metric_words(SUMMARY_METRIC)}" if s.unit == "ns" else ""
    title = f"[bold]{markup(name)}[/bold]{footnotes.marks(s.notes, s.unit)}{of}"
    if s.n == 0:
        return [title, "  no successful samples"]
    fmt = value_formatter(s.unit, s.median)
    counts = f"n {s.n}" + (f" (+{s.n_warmup} warmup)" if s.n_warmup else "")
    counts += f", {s.n_failed} failed" if s.n_failed else ""
    interval = (f"[{fmt(s.median_low)}, {fmt(s.median_high)}] {format_level(s.confidence)} CI"
                if s.median_low is not None else "(no interval)")
    lines = [title, f"  median    {fmt(s.median)}  {interval}   {counts}"]
    if s.mean_se is not None:
        method = markup({"batch-means": "batch means"}.get(s.mean_method, s.mean_method))
        n_eff = f", effective n {min(s.n_eff, s.n):.0f}" if s.n_eff is not None else ""
        error = value_formatter(s.unit, s.median, digits=2)(s.mean_se)
        lines.append(f"  mean      {fmt(s.mean)} ± {error}  (standard error, {method}{n_eff})")
    else:
        lines.append(f"  mean      {fmt(s.mean)}")
    lines.append(f"  min…max   {fmt(s.min)} … {fmt(s.max)}    Q1 {fmt(s.q1)}   Q3 {fmt(s.q3)}")
    cv = format_percent(100 * s.cv, signed=False) if s.cv is not None else "—"
    spread = f"  SD {format_value(s.sd, s.unit)}   CV {cv}"
    if s.mean_min_gap is not None:
        spread += f"   mean-min gap {format_percent(100 * s.mean_min_gap, signed=False)} of the mean"
    lines.append(spread + f"   Tukey fence: {s.beyond_upper_fence} above, {s.beyond_lower_fence} below (kept)")
    lines.append(f"  CPU user {format_duration(s.user_ns)}, sys {format_duration(s.sys_ns)}   "
                 f"max RSS {'≤ ' if s.max_rss_at_floor else ''}{format_kib(s.max_rss_kib)}"
                 f"   context switches {format_rate(s.cs_per_s)}")
    return lines


def footer(run: Run, footnotes: Footnotes) -> list[str]:
    """Why sampling stopped, the run's state, and the numbered notes."""
    lines = []
    if run.stopped_because:
        lines.append(f"Stopped: {markup(run.stopped_because)}.")
    if run.state == "interrupted":
        lines.append("[yellow]The run was interrupted; these are the samples finished before it.[/yellow]")
    elif run.state == "failed":
        lines.append("[red]The run failed; these are the samples finished before the failure.[/red]")
    if footnotes.lines:
        lines.append("Notes:")
        lines += [f"  {i}. {markup(text)}" for i, text in enumerate(footnotes.lines, start=1)]
    return lines


def renderer(run: Run, analysis: Analysis | None, *, details: bool = False):
    """The terminal renderer of ``run``: a suite's summary (unless ``details``), a comparison, or
    summaries."""
    from pairbench.analysis import compares

    if not details and analysis is not None and analysis.suite is not None and len(run.benchmarks) > 1:
        return render_suite
    return render_compare if compares(run) else render_run


def render_run(run: Run, analysis: Analysis, *, color: bool = False, width: int = 100) -> str:
    """The terminal report of ``pairbench run`` (and ``show`` of a run)."""
    footnotes = Footnotes(analysis.notes, _unit(analysis))
    lines = run_header(run) + [""]
    several = len(run.benchmarks) > 1
    for summary in analysis.summaries:
        lines += summary_block(summary, footnotes, with_benchmark=several) + [""]
    lines += relative_lines(analysis, with_benchmark=several)
    return render_markup(lines + footer(run, footnotes), color=color, width=width)


def relative_lines(analysis: Analysis, *, with_benchmark: bool) -> list[str]:
    """hyperfine's summary of a run of several ("T1 ran 1.52 times faster than T2"), each ratio the
    median of the rounds' ratios with its interval, not a ± of the means."""
    if not analysis.relative:
        return []
    named = lambda key, side: markup(series_name(analysis.summary_of(key, side), with_benchmark=with_benchmark))  # noqa: E731
    first = analysis.relative[0]
    lines = [f"Summary: [bold]{named(first.reference_benchmark, first.reference_side)}[/bold] ran"]
    for r in analysis.relative:
        lines.append(f"  {relative_text(r)} than {named(r.benchmark, r.side)}")
    rounds = sorted({r.rounds for r in analysis.relative})
    counted = f"{rounds[0]}" if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]}"
    lines.append(f"  [dim](median of the per-round ratios over {counted} paired rounds; "
                 f"{format_level(first.confidence)} interval each, sign test)[/dim]")
    return lines + [""]


def relative_text(r) -> str:
    """ "1.52 [1.40, 1.61] times faster" (where hyperfine writes "1.52 ± 0.10"), or "1.02 [...] times
    slower" when the median ratio is below 1; "(no interval: N rounds needed)" without one."""
    faster = r.times >= 1
    times = r.times if faster else 1 / r.times
    if r.low is None or r.high is None:
        interval = f" (no interval: {r.needed} rounds needed)" if r.needed else " (no interval)"
    else:
        low, high = (r.low, r.high) if faster else (1 / r.high, 1 / r.low)
        interval = f" [{low:.2f}, {high:.2f}]"
    return f"{times:.2f}{interval} times {'faster' if faster else 'slower'}"


def _unit(analysis: Analysis) -> str:
    return analysis.summaries[0].unit if analysis.summaries else "ns"


def render_import(run: Run, written: str, *, color: bool = False, width: int = 100) -> str:
    """What ``pairbench convert`` read and wrote, in a few lines (the report is ``show``'s)."""
    imported = run.environment.get("import") or {}
    tool = imported.get("tool", "another tool")
    n = len(run.benchmarks)
    sides = [side.name for side in run.sides]
    shown = ", ".join(sides[:3]) + (f" and {len(sides) - 3} more" if len(sides) > 3 else "")
    samples = sum(len(samples) for _, _, samples in run.all_series())
    failed = sum(len(samples.failed()) for _, _, samples in run.all_series())
    lines = [f"[bold]pairbench convert[/bold] · {markup(tool)} · {markup(imported.get('source', ''))}",
             f"{plural(n, 'benchmark')} on {plural(len(sides), 'side')} ({markup(shown)}), {plural(samples, 'sample')}"
             + (f" ({failed} failed)" if failed else "") + f", as {markup(tool)} recorded them (not interleaved).",
             f"Written to {markup(written)}.",
             f"Show it: pairbench show {markup(shlex.quote(written))}"
             + (" (every benchmark: show --details)" if n > 1 else "")
             + "; compare two: pairbench diff OLD NEW."]
    return render_markup(lines, color=color, width=width)


# --------------------------------------------------------------------------- compare


VERDICT_STYLE = {"slower": "red", "faster": "green", "equivalent": "cyan", "inconclusive": "yellow"}


def comparison_table(comparisons: Sequence[Comparison], footnotes: Footnotes, *, color: bool,
                     width: int) -> str:
    """The paired report table: one line per comparison with mins, means, paired change and verdict.
    Its headers name the sides (the baseline's, and the candidate's when every row has the same) and
    the time the figures are of ("old CPU min"); rows of different times name theirs in the verdict."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    columns = comparison_columns(comparisons)
    for i, column in enumerate(columns):
        table.add_column(markup(column), justify="left" if i in (0, len(columns) - 1) else "right")
    with_baseline = len({c.baseline for c in comparisons}) > 1
    mixed = common_metric(figure_metric(c) for c in comparisons) is None
    for c in comparisons:
        table.add_row(*_comparison_cells(c, footnotes, with_baseline=with_baseline, mixed=mixed))
    return table_text(table, color=color, width=width)


def column_first(comparisons: Sequence[Comparison]) -> str:
    """The first column's header: "vs old" when every row has that baseline."""
    baselines = {c.baseline for c in comparisons}
    return f"vs {_short(next(iter(baselines)))}" if len(baselines) == 1 else "comparison"


def comparison_columns(comparisons: Sequence[Comparison]) -> list[str]:
    """The headers: "vs old", "old CPU min", "new CPU min", "min Δ", ..., "CPU change [interval]"."""
    base, cand = side_headers(comparisons, ("baseline", "candidate"))
    metric = common_metric(figure_metric(c) for c in comparisons)
    of = f"{metric_label(metric)} " if metric else ""
    return [column_first(comparisons), f"{base} {of}min", f"{cand} {of}min", "min Δ", f"{base} {of}mean",
            f"{cand} {of}mean", "mean Δ", f"{of}change [interval]", "verdict"]


def _comparison_cells(c: Comparison, footnotes: Footnotes, *, with_baseline: bool, mixed: bool) -> list[str]:
    m = c.secondary.min_mean
    fmt = lambda v: format_value(v, value_unit(c))  # noqa: E731 - local shorthand
    style = VERDICT_STYLE[c.verdict.verdict]
    name = markup(_short(c.candidate))
    if with_baseline:
        name += f" vs {markup(_short(c.baseline))}"
    if c.self_check:
        name += " (A/A)"
    numbers = ([fmt(m.baseline_min), fmt(m.candidate_min), format_percent(m.min_delta_pct),
                fmt(m.baseline_mean), fmt(m.candidate_mean), format_percent(m.paired_difference_pct)]
               if m else ["—"] * 6)
    label = verdict_label(c, metric=mixed, wall=mixed)
    return [name + footnotes.marks(c.notes, c.benchmark.unit), *numbers, change_text(c),
            f"[{style}]{markup(label)}[/{style}]"]


def _short(name: str, limit: int = 28) -> str:
    """A long command name shortened in the middle for table cells; sentences keep it whole."""
    return shortened(name, limit)


def comparison_details(c: Comparison) -> list[str]:
    """The secondary numbers and the interval, indented (the same lines as the other reports)."""
    lines = secondary_lines(c)
    lines += [line for line in (interval_line(c), shift_line(c)) if line]
    return ["  " + markup(line) for line in lines]


def render_compare(run: Run, analysis: Analysis, *, color: bool = False, width: int = 110) -> str:
    """The terminal report of ``pairbench compare`` (and ``show`` of a comparison)."""
    footnotes = Footnotes(analysis.notes, _unit(analysis))
    parts = [render_markup(run_header(run) + [""], color=color, width=width)]
    several = len(run.benchmarks) > 1
    of: dict = {key: [] for key in run.benchmarks}
    for c in analysis.comparisons:
        of.setdefault(c.benchmark, []).append(c)
    for b, key in enumerate(run.benchmarks):
        found = of[key]
        if several:
            parts.append(render_markup([f"[bold]{markup(key.label)}[/bold]"], color=color, width=width))
        if found or not b:
            parts.append(comparison_table(found, footnotes, color=color, width=width))
    parts += _block_parts(metric_blocks(analysis), color=color, width=width)
    lines = [""]
    for c in analysis.comparisons:
        style = VERDICT_STYLE[c.verdict.verdict]
        lines.append(f"[bold {style}]{markup(verdict_sentence(c))}[/bold {style}]")
        lines += comparison_details(c)
    lines.append("")
    for summary in analysis.summaries:
        lines += summary_block(summary, footnotes, with_benchmark=several) + [""]
    parts.append(render_markup(lines + footer(run, footnotes), color=color, width=width))
    return "".join(parts)


# --------------------------------------------------------------------------- suite


def render_suite(run: Run, analysis: Analysis, *, color: bool = False, width: int = 110) -> str:
    """The terminal report of a ``bench`` suite: the summary in reading order, the validation
    findings, the run's notes; each benchmark's statistics are in ``show --details``, ``report``
    and the result document."""
    shown_elsewhere = {"benchmarks-added", "benchmarks-removed", "suite-budget-spent"}
    footnotes = Footnotes([n for n in analysis.notes if n.subject.is_run and n.code not in shown_elsewhere],
                          _unit(analysis))
    parts = [render_markup(run_header(run) + [""], color=color, width=width),
             *_block_parts(suite_blocks(run, analysis), color=color, width=width)]
    findings = finding_lines(analysis.suite, run)
    lines = [""]
    if findings:
        lines += [f"[bold]Validation ({plural(len(findings), 'finding')})[/bold]"]
        lines += [f"  {markup(f)}" for f in findings] + [""]
    lines.append("Every benchmark's statistics and notes: pairbench show --details RESULT, or pairbench report.")
    parts.append(render_markup(lines + footer(run, footnotes), color=color, width=width))
    return "".join(parts)


def _block_parts(blocks, *, color: bool, width: int) -> list[str]:
    """(heading, table) blocks as text: a heading without a table is a line of its own."""
    parts, after_table = [], False
    for heading, table in blocks:
        if table is None:
            parts.append(render_markup([""] * after_table + [markup(heading)], color=color, width=width))
            after_table = False
            continue
        parts.append(render_markup(["", f"[bold]{markup(heading)}[/bold]"], color=color, width=width))
        parts.append(_plain_table(table, color=color, width=width))
        after_table = True
    return parts


def _plain_table(table, *, color: bool, width: int) -> str:
    from rich.table import Table

    rich_table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for i, column in enumerate(table.header):
        rich_table.add_column(markup(column), justify="left" if i == 0 else "right")
    for row in table.rows:
        rich_table.add_row(*(markup(cell) for cell in row))
    return table_text(rich_table, color=color, width=width)
