"""Which text goes to which file: the report formats and the ``--export-*`` files, as pure data.

``report_files`` and ``export_files`` return ``(path, text)`` pairs (path None:
standard output) and write nothing: the CLI's one thin writer
(``cli.report.write_files``) writes them atomically. Every file renders the
one analysis it is given.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.errors import UsageError

if TYPE_CHECKING:  # not at run time: the CLI reads the formats below for its options and --help,
    from pairbench.analysis import Analysis  # which must not wait for numpy and scipy
    from pairbench.model import Run

@dataclass(frozen=True)
class Format:
    """A report format: its name, the file suffixes that name it, what its ``--export-WORD`` option of
    the measuring commands says (None: it has none), its renderer ("module:function", taking the run
    and its analysis; CSV's two tables are rendered apart, by :func:`_csv`), the WORD of its export
    option when it is not the name, and whether ``report --format`` offers it (and a suffix names it)."""

    name: str
    suffixes: tuple[str, ...]
    export_help: str | None
    renderer: str = ""
    option: str = ""
    report: bool = True

    def render(self, run: Run, analysis: Analysis) -> str:
        module, _, function = self.renderer.partition(":")
        return getattr(importlib.import_module(module), function)(run, analysis)


REGISTRY = {f.name: f for f in (
    Format("html", (".html", ".htm"), "Also write the self-contained HTML report with charts to FILE.",
           "pairbench.report.html:render_html"),
    Format("markdown", (".md", ".markdown"), "Also write the Markdown report (verdict table first) to FILE.",
           "pairbench.report.markdown:render_markdown"),
    Format("csv", (".csv",), "Also write every sample as CSV to FILE, and the summary to FILE's .summary.csv."),
    Format("json", (".json",), None, "pairbench.report.jsonfile:render_json"),  # the document is --json's
    Format("hyperfine-json", (".json",),
           "Also write hyperfine's JSON schema to FILE (results[].command, mean, stddev, median, user, system, "
           "min, max, times, exit_codes, parameters; in seconds), for scripts written for hyperfine. "
           "pairbench's own result document is --json's.",
           "pairbench.report.hyperfine_json:render_hyperfine_json", option="json", report=False),
)}
FORMATS = tuple(name for name, f in REGISTRY.items() if f.report)
CSV_TABLES = ("samples", "summary")
SUFFIX_FORMATS = {suffix: f.name for f in REGISTRY.values() if f.report for suffix in f.suffixes}
EXPORTED = ("markdown", "csv", "html", "hyperfine-json")
"""The formats a measuring command exports (``--export-WORD FILE``), in the order of its options."""
EXPORT_OPTIONS = {REGISTRY[fmt].option or fmt: fmt for fmt in EXPORTED}
"""The WORD of each ``--export-WORD`` option -> the format it writes."""


def format_for(fmt: str | None, path: str | None) -> str:
    """The format asked for, else the one ``path``'s suffix names, else Markdown (for a terminal)."""
    if fmt:
        return fmt
    if path is None or path == "-":
        return "markdown"
    guessed = SUFFIX_FORMATS.get(Path(path).suffix.lower())
    if guessed is None:
        raise UsageError(f"cannot tell the report format from {path!r}; "
                         f"add --format {'|'.join(FORMATS)}")
    return guessed


def render(run: Run, analysis: Analysis, fmt: str, path: str | None, *, table: str | None = None,
           ) -> list[tuple[str | None, str]]:
    """The (path, text) pairs of one report in ``fmt``; path None means standard output.

    CSV: without ``table`` and with a path, the samples go to ``path`` and the
    summary beside it (``x.csv`` -> ``x.summary.csv``); with ``table`` (or on
    standard output, where the samples are the default) only that table.
    """
    if table is not None and fmt != "csv":
        raise UsageError(f"--table {table} applies to --format csv, not {fmt}")
    if fmt == "csv":
        return _csv(run, analysis, path, table)
    if fmt not in REGISTRY:
        raise UsageError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    return [(path, REGISTRY[fmt].render(run, analysis))]


def report_files(run: Run, analysis: Analysis, fmt: str | None, path: str | None, *,
                 table: str | None = None) -> list[tuple[str | None, str]]:
    """What ``pairbench report`` writes for ``run``."""
    chosen = format_for(fmt, path)
    return render(run, analysis, chosen, None if path == "-" else path, table=table)


def export_files(run: Run, analysis: Analysis, requests: Mapping[str, str]) -> list[tuple[str, str]]:
    """The files of the ``--export-WORD`` options in ``requests`` (WORD -> path)."""
    files: list[tuple[str, str]] = []
    for word, path in requests.items():
        files += [(p, text) for p, text in render(run, analysis, EXPORT_OPTIONS[word], path) if p is not None]
    return files


def _csv(run: Run, analysis: Analysis, path: str | None, table: str | None) -> list[tuple[str | None, str]]:
    from pairbench.report.csvfile import render_samples_csv, render_summary_csv, summary_path

    if table == "summary":
        return [(path, render_summary_csv(run, analysis))]
    samples = (path, render_samples_csv(run))
    if table == "samples" or path is None:
        return [samples]
    return [samples, (str(summary_path(path)), render_summary_csv(run, analysis))]
