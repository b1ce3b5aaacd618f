"""Which text goes to which file: the report formats and the ``--export-*`` files, as pure data.

``report_files`` and ``export_files`` return ``(path, text)`` pairs (path None:
standard output) and write nothing: the CLI's one thin writer
(``cli.report.write_files``) writes them atomically. Every file renders the
one analysis it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.errors import UsageError

if TYPE_CHECKING:  # not at run time: the CLI reads the formats below for its options and --help,
    from pairbench.analysis import Analysis  # which must not wait for numpy and scipy
    from pairbench.model import Run

FORMATS = ("html", "markdown", "csv", "json")
CSV_TABLES = ("samples", "summary")
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                  ".csv": "csv", ".json": "json"}
# --export-* option -> (format, what the help says)
EXPORTS = {
    "export_markdown": "markdown",
    "export_csv": "csv",
    "export_html": "html",
    "export_json": "hyperfine-json",  # hyperfine's schema; pairbench's own document is --json's
}
EXPORT_SUFFIXES = {"hyperfine-json": ".json"}


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
    if fmt == "html":
        from pairbench.report.html import render_html

        return [(path, render_html(run, analysis))]
    if fmt == "json":
        from pairbench.report.jsonfile import render_json

        return [(path, render_json(run, analysis))]
    if fmt == "hyperfine-json":
        from pairbench.report.hyperfine_json import render_hyperfine_json

        return [(path, render_hyperfine_json(run, analysis))]
    if fmt == "markdown":
        from pairbench.report.markdown import render_markdown

        return [(path, render_markdown(run, analysis))]
    raise UsageError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def report_files(run: Run, analysis: Analysis, fmt: str | None, path: str | None, *,
                 table: str | None = None) -> list[tuple[str | None, str]]:
    """What ``pairbench report`` writes for ``run``."""
    chosen = format_for(fmt, path)
    return render(run, analysis, chosen, None if path == "-" else path, table=table)


def export_files(run: Run, analysis: Analysis, requests: Mapping[str, str]) -> list[tuple[str, str]]:
    """The files of the ``--export-*`` options in ``requests`` (option key -> path)."""
    files: list[tuple[str, str]] = []
    for key, path in requests.items():
        files += [(p, text) for p, text in render(run, analysis, EXPORTS[key], path) if p is not None]
    return files


def _csv(run: Run, analysis: Analysis, path: str | None, table: str | None) -> list[tuple[str | None, str]]:
    from pairbench.report.csvfile import render_samples_csv, render_summary_csv, summary_path

    if table == "summary":
        return [(path, render_summary_csv(run, analysis))]
    samples = (path, render_samples_csv(run))
    if table == "samples" or path is None:
        return [samples]
    return [samples, (str(summary_path(path)), render_summary_csv(run, analysis))]
