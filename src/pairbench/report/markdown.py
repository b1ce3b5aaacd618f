"""Markdown report for a pull-request comment: the verdict table first, details folded away.

GitHub-flavoured Markdown: pipe tables, with everything else inside
``<details>`` sections. Every piece of text that did not come from pairbench
itself (names, commands, warnings, environment values) may hold Markdown or
HTML, so *every* cell and line goes through :func:`escape`: pipes and
Markdown punctuation are backslash-escaped, ``<``, ``>`` and ``&`` become
entities (a benchmark called ``<script>`` is shown, never run; hyperfine
escapes only ``|``, which faults-and-verification.md item 22 warns about),
and newlines become spaces so a name cannot break a table row.

GitHub also links text after Markdown is rendered, escaped or not: ``@name``
notifies a user or team (``npx @biomejs/biome``) and ``#123`` links an issue.
A WORD JOINER (U+2060, invisible, zero width) after every ``@`` or ``#`` that
precedes a letter or digit breaks both, in table cells, lines and ``<summary>``.
"""

from __future__ import annotations

import re

from pairbench.report.analysed import Analysed
from pairbench.report.tables import (
    Table,
    comparison_name,
    detail_lines,
    environment_table,
    options_table,
    run_title,
    variant_table,
    verdict_table,
)
from pairbench.units import format_duration

_BACKSLASHED = re.compile(r"([\\`*_\[\]{}|~#!])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_LINK_TRIGGER = re.compile(r"([@#])(?=\w)")  # a mention or an issue reference starts here
WORD_JOINER = "\u2060"
MAX_VALUE_CHARS = 300  # environment values (process lists) are cut here in Markdown


def escape(text: object) -> str:
    """``text`` safe inside a GFM table cell or paragraph: no markup, no HTML, one line."""
    value = str(text)
    value = re.sub(r"[&<>\"]", lambda m: _ENTITIES[m.group(0)], value)
    value = _BACKSLASHED.sub(r"\\\1", value)
    value = re.sub(r"[\r\n\t\v\f\u2028\u2029]+", " ", value)
    return _unlinked(value).strip() or " "


def escape_html(text: object) -> str:
    """``text`` safe inside a raw HTML element (``<summary>``), where Markdown is not parsed."""
    value = re.sub(r"[&<>\"]", lambda m: _ENTITIES[m.group(0)], str(text))
    return _unlinked(re.sub(r"[\r\n\t\v\f\u2028\u2029]+", " ", value)).strip()


def _unlinked(text: str) -> str:
    """``text`` with a word joiner after each ``@`` or ``#`` GitHub would turn into a mention or link."""
    return _LINK_TRIGGER.sub(r"\1" + WORD_JOINER, text)


def table(t: Table) -> str:
    """A GFM pipe table with every cell escaped."""
    lines = ["| " + " | ".join(escape(h) for h in t.header) + " |",
             "|" + "|".join("---" for _ in t.header) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in t.rows]
    return "\n".join(lines)


def details(summary: str, body: str) -> str:
    """A collapsible section; the blank lines let GitHub render the Markdown inside it."""
    return f"<details>\n<summary>{escape_html(summary)}</summary>\n\n{body}\n\n</details>"


def render_markdown(analysed: Analysed) -> str:
    """The whole Markdown report (ends with a newline)."""
    run = analysed.run
    parts = [f"### {escape(run_title(analysed))}"]
    if analysed.comparisons:
        parts.append(table(verdict_table(analysed)))
        parts += [details(f"Details: {comparison_name(c)}", _bullets(detail_lines(c)))
                  for c in analysed.comparisons]
        parts.append(details("Variants", table(variant_table(analysed.summaries))))
    else:
        parts.append(table(_run_table(analysed)))
        parts.append(details("All statistics", table(variant_table(analysed.summaries))))
    parts.append(details("Environment", table(_clipped(environment_table(run.environment)))))
    parts.append(details("Options", table(options_table(run.options))))
    notes = analysed.notes
    if notes:
        parts.append(details(f"Notes ({len(notes)})",
                             "\n".join(f"{i}. {escape(n)}" for i, n in enumerate(notes, 1))))
    parts.append(escape(_footer(analysed)))
    return "\n\n".join(parts) + "\n"


def _run_table(analysed: Analysed) -> Table:
    full = variant_table(analysed.summaries)
    keep = [full.header.index(h) for h in ("Variant", "n", "Median [CI]", "Mean ± SE", "Min", "Max")]
    return Table(tuple(full.header[i] for i in keep),
                 tuple(tuple(row[i] for i in keep) for row in full.rows))


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {escape(line)}" for line in lines)


def _clipped(t: Table) -> Table:
    def clip(text: str) -> str:
        return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"

    return Table(t.header, tuple(tuple(clip(cell) for cell in row) for row in t.rows))


def _footer(analysed: Analysed) -> str:
    run = analysed.run
    state = "" if run.state == "complete" else f" The run is {run.state}: these are the samples it finished."
    rounds = max((len(v.samples.measured()) for v in run.variants), default=0)
    total = sum(len(v.samples.measured()) for v in run.variants)
    wall = sum(float(v.samples.measured()["wall_ns"].sum()) for v in run.variants)
    seed = run.options.get("seed")
    return (f"pairbench {run.tool_version} · {rounds} rounds, {total} samples, "
            f"{format_duration(wall)} measured · seed {seed} · started {run.started_at}.{state}")
