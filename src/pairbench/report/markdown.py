"""Markdown report for a pull-request comment: the verdict table first, details folded away.

GitHub-flavoured Markdown: pipe tables, with everything else inside
``<details>`` sections. Every piece of text that did not come from pairbench
itself (names, commands, warnings, environment values) may hold Markdown or
HTML, so *every* cell and line goes through :func:`escape`: pipes and
Markdown punctuation are backslash-escaped, ``<``, ``>`` and ``&`` become
entities (a benchmark called ``<script>`` is shown as text, not as
markup; hyperfine's Markdown export escapes only ``|``), and control
characters, newlines among them, are made visible (``safe.visible``: ``\n``,
``\x1b``) so a name can neither break a table row nor drive a terminal that
prints the report.

GitHub also links text after Markdown is rendered, escaped or not: ``@name``
notifies a user or team (``npx @biomejs/biome``) and ``#123`` links an issue.
A WORD JOINER (U+2060, invisible, zero width) after every ``@`` or ``#`` that
precedes a letter or digit breaks both, in table cells, lines and ``<summary>``.
"""

from __future__ import annotations

from pairbench.analysis import Analysis
from pairbench.model import Run
from pairbench.report.safe import escape, escape_html
from pairbench.report.sentences import comparison_title, detail_lines
from pairbench.report.suite import finding_lines, metric_blocks, plural, suite_blocks
from pairbench.report.tables import (
    VARIANT_HEADER,
    Table,
    environment_table,
    note_lines,
    run_title,
    settings_table,
    several_benchmarks,
    variant_table,
    verdict_table,
)
from pairbench.units import format_duration

MAX_VALUE_CHARS = 300  # environment values (process lists) are cut here in Markdown


def table(t: Table) -> str:
    """A GFM pipe table with every cell escaped."""
    lines = ["| " + " | ".join(escape(h) for h in t.header) + " |",
             "|" + "|".join("---" for _ in t.header) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in t.rows]
    return "\n".join(lines)


def details(summary: str, body: str) -> str:
    """A collapsible section; the blank lines let GitHub render the Markdown inside it."""
    return f"<details>\n<summary>{escape_html(summary)}</summary>\n\n{body}\n\n</details>"


def render_markdown(run: Run, analysis: Analysis) -> str:
    """The whole Markdown report of ``run`` from its ``analysis`` (ends with a newline)."""
    with_benchmark = several_benchmarks(run)
    variants = table(variant_table(analysis.summaries, with_benchmark=with_benchmark))
    parts = [f"### {escape(run_title(run, analysis))}"]
    if analysis.suite is not None and with_benchmark:
        parts += _suite_parts(run, analysis)
    elif analysis.comparisons:
        parts.append(table(verdict_table(run, analysis)))
        parts += _block_texts(metric_blocks(analysis))
    if analysis.comparisons:
        parts += [details(f"Details: {comparison_title(c, with_benchmark=with_benchmark)}",
                          _bullets(detail_lines(c, run.stopped_because)))
                  for c in analysis.comparisons]
        parts.append(details("Variants", variants))
    else:
        parts.append(table(_run_table(analysis, with_benchmark)))
        parts.append(details("All statistics", variants))
    parts.append(details("Environment", table(_clipped(environment_table(run.stored_environment())))))
    parts.append(details("Settings", table(settings_table(run))))
    notes = note_lines(analysis)
    if notes:
        parts.append(details(f"Notes ({len(notes)})",
                             "\n".join(f"{i}. {escape(n)}" for i, n in enumerate(notes, 1))))
    parts.append(escape(_footer(run)))
    return "\n\n".join(parts) + "\n"


def _suite_parts(run: Run, analysis: Analysis) -> list[str]:
    """A suite's summary: the correction, the verdict groups as tables, the geometric mean, the
    benchmarks added, removed and not measured, and the validation findings (folded)."""
    parts = _block_texts(suite_blocks(run, analysis))
    findings = finding_lines(analysis.suite, run)
    if findings:
        parts.append(details(f"Validation ({plural(len(findings), 'finding')})", _bullets(findings)))
    return parts


def _block_texts(blocks) -> list[str]:
    """(heading, table) blocks as Markdown: a bold heading over its table, or a paragraph."""
    return [f"**{escape(heading)}**\n\n{table(t)}" if t is not None else escape(heading) for heading, t in blocks]


def _run_table(analysis: Analysis, with_benchmark: bool) -> Table:
    """The few columns a run's reader wants first: location, its error and the range."""
    full = variant_table(analysis.summaries, with_benchmark=with_benchmark)
    first = ("Variant", "n", "Median [CI]", "Mean ± SE", "Min", "Max")  # as VARIANT_HEADER names them
    return full.columns(*(full.header[VARIANT_HEADER.index(name)] for name in first))


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {escape(line)}" for line in lines)


def _clipped(t: Table) -> Table:
    def clip(text: str) -> str:
        return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"

    return Table(t.header, tuple(tuple(clip(cell) for cell in row) for row in t.rows))


def _footer(run: Run) -> str:
    """The run in one line: version, rounds, samples, time measured, order seed, start, state."""
    measured = [samples.measured() for _, _, samples in run.all_series()]
    total = sum(len(m) for m in measured)
    wall = sum(float(m["wall_ns"].sum()) for m in measured)
    state = "" if run.state == "complete" else f" The run is {run.state}: these are the samples it finished."
    return (f"pairbench {run.tool_version} · {run.rounds} rounds, {total} samples, "
            f"{format_duration(wall)} measured · seed {run.settings.sampling.seed} · "
            f"started {run.started_at}.{state}")
