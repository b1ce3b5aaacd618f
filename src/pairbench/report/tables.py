"""The report's tables, titles and note lines as plain text, shared by the Markdown and HTML renderers.

Cells here are *unescaped* text: each renderer escapes them for its own
format (Markdown: pipes, backticks, HTML, newlines; HTML: Jinja2 autoescape).
Numbers are formatted once, here, from the :class:`~pairbench.analysis.Analysis`
records, so the two reports always agree. Values are per operation in the
benchmark's unit; when a run has several benchmarks, every row names its
benchmark beside the side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pairbench.analysis import Analysis, Comparison, Summary
from pairbench.frozen import frozen
from pairbench.model import Run
from pairbench.report.metric_names import common_metric, metric_label, metric_words
from pairbench.report.sentences import (
    change_text,
    comparison_title,
    figure_metric,
    format_pvalue,
    listed,
    verdict_label,
)
from pairbench.report.wording import with_subject
from pairbench.units import (
    format_duration,
    format_kib,
    format_level,
    format_percent,
    format_rate,
    format_value,
    value_formatter,
)


@frozen
class Table:
    """A header and rows of plain-text cells (every row as long as the header)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def columns(self, *names: str) -> Table:
        """This table with only the columns ``names``, in that order."""
        keep = [self.header.index(name) for name in names]
        return Table(tuple(self.header[i] for i in keep), tuple(tuple(row[i] for i in keep) for row in self.rows))


SUMMARY_METRIC = "wall"
"""What a series' summary is of (``Samples.values()``: the time a harness measured around its loop, else
the sample's wall time), whatever its comparisons decided on."""


def several_benchmarks(run: Run) -> bool:
    """Whether rows must name their benchmark: the run measured more than one."""
    return len(run.benchmarks) > 1


def series_name(s: Summary, *, with_benchmark: bool) -> str:
    """ "old build", or "sort[n=10] · old build" when the run has several benchmarks; a parameter
    value of ``run``/``compare`` (``-P``/``-L``) shown in the command (``sleep 0.01``, not
    ``command[t=1] · sleep 0.0{t}``)."""
    if with_benchmark and s.benchmark.name == PARAMETERIZED and s.benchmark.params:
        return with_values(s.side, s.benchmark.params)
    return f"{s.benchmark.label} · {s.side}" if with_benchmark else s.side


PARAMETERIZED = "command"  # the benchmark of every parameter combination of run and compare


def with_values(name: str, params) -> str:
    """A side's name for one parameter combination: its ``{NAME}`` replaced by the values, as the
    command ran (``sleep 0.01``); a name without them (a ``--name``) followed by the values
    (``zstd [threads=2]``)."""
    shown = name
    for key, value in params:
        shown = shown.replace("{" + key + "}", value)
    return shown if shown != name else f"{name} [{', '.join(f'{k}={v}' for k, v in params)}]"


# --------------------------------------------------------------------------- comparisons


def verdict_table(run: Run, analysis: Analysis) -> Table:
    """One row per comparison: the medians, the paired change with its interval, the verdict. The
    headers name the sides (when every row has the same) and the time of each figure: the medians are
    of the summaries' time (wall), the change of the time the verdict was decided on."""
    comparisons = analysis.comparisons
    with_benchmark = several_benchmarks(run)
    confidences = {c.effect.confidence for c in comparisons if c.effect}
    level = f" ({format_level(min(confidences))} interval)" if confidences else ""
    base, cand = side_headers(comparisons)
    timed = all(c.benchmark.unit == "ns" for c in comparisons)
    median = f"{metric_label(SUMMARY_METRIC)} median" if timed else "median"
    metric = common_metric(figure_metric(c) for c in comparisons)
    change = f"Change in {metric_words(metric)}" if metric else "Change"
    header = ("Comparison", f"{base} {median}", f"{cand} {median}", f"{change}{level}", "Verdict",
              "p-value", "Rounds")
    mixed = metric is None
    rows = tuple(_verdict_row(c, analysis, with_benchmark, mixed) for c in comparisons)
    return Table(header, rows)


def side_headers(comparisons: Sequence[Comparison], generic: tuple[str, str] = ("Baseline", "Candidate"),
                 ) -> tuple[str, str]:
    """What a table's headers call the baseline and the candidate: their names when every row has the
    same ones (shortened), else the ``generic`` words (each row names its sides)."""
    baselines, candidates = {c.baseline for c in comparisons}, {c.candidate for c in comparisons}
    base = shortened(next(iter(baselines)), HEADER_NAME_CHARS) if len(baselines) == 1 else generic[0]
    cand = shortened(next(iter(candidates)), HEADER_NAME_CHARS) if len(candidates) == 1 else generic[1]
    return (base, cand) if base != cand else generic


HEADER_NAME_CHARS = 16
"""A side's name in a column header is shortened to this (the rows give it whole)."""


def shortened(name: str, limit: int) -> str:
    """``name`` shortened in the middle to ``limit`` characters ("python3 …_old.py"), else whole."""
    if len(name) <= limit:
        return name
    keep = limit - 1
    return name[: keep // 2] + "…" + name[-(keep - keep // 2):]


def _verdict_row(c: Comparison, analysis: Analysis, with_benchmark: bool, mixed: bool) -> tuple[str, ...]:
    base, cand = analysis.summary_of(c.benchmark, c.baseline), analysis.summary_of(c.benchmark, c.candidate)
    return (
        comparison_title(c, with_benchmark=with_benchmark),
        format_value(base.median, c.benchmark.unit) if base else "—",
        format_value(cand.median, c.benchmark.unit) if cand else "—",
        change_text(c),
        verdict_label(c, metric=mixed, wall=mixed),
        format_pvalue(c.pvalue).removeprefix("p ").removeprefix("= "),
        str(c.rounds),
    )


# --------------------------------------------------------------------------- series


VARIANT_HEADER = ("Variant", "n", "Median [CI]", "Mean ± SE", "Min", "Q1", "Q3", "Max", "CV",
                  "Beyond fence", "CPU user", "CPU sys", "Max RSS", "Context switches")
SUMMARY_FIGURES = frozenset(VARIANT_HEADER[2:9])  # the columns of the summary's time ("Wall min")


def variant_table(summaries: Sequence[Summary], *, with_benchmark: bool = False) -> Table:
    """One row per series: location with its interval, spread, Tukey-fence counts, resource usage; the
    headers of the location and spread name their time ("Wall median [CI]") when every series is timed."""
    timed = bool(summaries) and all(s.unit == "ns" for s in summaries)
    header = tuple(_of_summary_metric(h) if timed and h in SUMMARY_FIGURES else h for h in VARIANT_HEADER)
    return Table(header, tuple(_variant_row(s, with_benchmark) for s in summaries))


def _of_summary_metric(header: str) -> str:
    """ "Min" -> "Wall min", "Q1" -> "Wall Q1": a header of the summaries' time."""
    label = metric_label(SUMMARY_METRIC)
    what = header if header[1:2].isupper() or header[1:2].isdigit() else header[0].lower() + header[1:]
    return f"{label[0].upper()}{label[1:]} {what}"


def _variant_row(s: Summary, with_benchmark: bool) -> tuple[str, ...]:
    name = series_name(s, with_benchmark=with_benchmark)
    n = str(s.n) + (f" (+{s.n_warmup} warmup)" if s.n_warmup else "") + (
        f", {s.n_failed} failed" if s.n_failed else "")
    if s.n == 0 or s.median is None:
        return (name, n) + ("—",) * (len(VARIANT_HEADER) - 2)
    fmt = value_formatter(s.unit, s.median)
    median = fmt(s.median)
    if s.median_low is not None and s.median_high is not None:
        median += f" [{fmt(s.median_low)}, {fmt(s.median_high)}] ({format_level(s.confidence)})"
    mean = fmt(s.mean)
    if s.mean_se is not None:
        mean += f" ± {_error_text(s)}"
    return (
        name, n, median, mean, fmt(s.min), fmt(s.q1), fmt(s.q3), fmt(s.max),
        format_percent(100 * s.cv, signed=False) if s.cv is not None else "—",
        f"{s.beyond_upper_fence} above, {s.beyond_lower_fence} below",
        format_duration(s.user_ns), format_duration(s.sys_ns),
        ("≤ " if s.max_rss_at_floor else "") + format_kib(s.max_rss_kib),
        format_rate(s.cs_per_s),
    )


def _error_text(s: Summary) -> str:
    """The standard error of the mean, in the median's scale, to 2 digits."""
    return value_formatter(s.unit, s.median, digits=2)(s.mean_se)


# --------------------------------------------------------------------------- notes


def note_lines(analysis: Analysis) -> tuple[str, ...]:
    """Every note of the analysis that stands alone, in words with its subject, each line once.

    The run's notes come first, then each summary's and each comparison's. The
    notes that qualify a number (``wording.INLINE``) are shown beside it instead:
    the Tukey-fence counts in the variant table, the others in a comparison's details.
    """
    units = {s.benchmark.label: s.unit for s in analysis.summaries}
    default = analysis.summaries[0].unit if analysis.summaries else "ns"
    lines = (with_subject(note, units.get(note.subject.benchmark, default)) for note in
             listed(analysis.all_notes()))
    return tuple(dict.fromkeys(lines))


# --------------------------------------------------------------------------- the run


def environment_table(environment: Mapping) -> Table:
    """The machine metadata flattened to dotted keys ("timer.measured_resolution_ns")."""
    return Table(("Key", "Value"), tuple(flatten(environment)))


def settings_table(run: Run) -> Table:
    """The stored settings flattened to dotted keys ("sampling.warmup", "decision.alpha")."""
    return Table(("Setting", "Value"), tuple(flatten(run.settings.stored())))


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
    """A stored value as a cell: "—" for None, yes/no, compact JSON for lists and records."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return str(value)


def run_title(run: Run, analysis: Analysis) -> str:
    """ "pairbench compare: new vs old", "pairbench run: 3 commands"."""
    real = analysis.real_comparisons
    if len({(c.candidate, c.baseline) for c in real}) == 1:
        return f"pairbench {run.kind}: {real[0].candidate} vs {real[0].baseline}"
    if real:
        candidates = len({c.candidate for c in real})
        return f"pairbench {run.kind}: {candidates} candidates vs {real[0].baseline}"
    if len(run.sides) == 1:
        return f"pairbench {run.kind}: {run.sides[0].name}"
    return f"pairbench {run.kind}: {len(run.sides)} {'workers' if run.kind == 'bench' else 'commands'}"


