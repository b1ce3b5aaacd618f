"""Which text goes to which file: the report formats and the ``--export-*`` files, as pure data.

``report_files`` and ``export_files`` return ``(path, text)`` pairs (path None:
standard output) and write nothing: the CLI's one thin writer
(``cli.report.write_files``) writes them atomically. The analysis runs once
however many files are asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pairbench.errors import UsageError
from pairbench.model import Run
from pairbench.report.analysed import Analysed, analyse

FORMATS = ("html", "markdown", "csv", "json")
CSV_TABLES = ("samples", "summary")
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                  ".csv": "csv", ".json": "json"}
# --export-* option -> (format, what the help says)
EXPORTS = {
    "export_markdown": "markdown",
    "export_csv": "csv",
    "export_html": "html",
}


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


def render(analysed: Analysed, fmt: str, path: str | None, *, table: str | None = None,
           ) -> list[tuple[str | None, str]]:
    """The (path, text) pairs of one report in ``fmt``; path None means standard output.

    CSV: without ``table`` and with a path, the samples go to ``path`` and the
    summary beside it (``x.csv`` -> ``x.summary.csv``); with ``table`` (or on
    standard output, where the samples are the default) only that table.
    """
    if table is not None and fmt != "csv":
        raise UsageError(f"--table {table} applies to --format csv, not {fmt}")
    if fmt == "csv":
        return _csv(analysed, path, table)
    if fmt == "html":
        from pairbench.report.html import render_html

        return [(path, render_html(analysed))]
    if fmt == "json":
        from pairbench.report.jsonfile import render_json

        return [(path, render_json(analysed))]
    if fmt == "markdown":
        from pairbench.report.markdown import render_markdown

        return [(path, render_markdown(analysed))]
    raise UsageError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def report_files(run: Run, fmt: str | None, path: str | None, *, table: str | None = None,
                 ) -> list[tuple[str | None, str]]:
    """What ``pairbench report`` writes for ``run``."""
    chosen = format_for(fmt, path)
    return render(analyse(run), chosen, None if path == "-" else path, table=table)


def export_files(run: Run, requests: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """The files of the ``--export-*`` options in ``requests`` that were given (path not None)."""
    wanted = [(EXPORTS[key], path) for key, path in requests.items() if key in EXPORTS and path]
    if not wanted:
        return []
    analysed = analyse(run)
    files: list[tuple[str, str]] = []
    for fmt, path in wanted:
        files += [(p, text) for p, text in render(analysed, fmt, path) if p is not None]
    return files


def _csv(analysed: Analysed, path: str | None, table: str | None) -> list[tuple[str | None, str]]:
    from pairbench.report.csvfile import render_samples_csv, render_summary_csv, summary_path

    if table == "summary":
        return [(path, render_summary_csv(analysed))]
    samples = (path, render_samples_csv(analysed.run))
    if table == "samples" or path is None:
        return [samples]
    return [samples, (str(summary_path(path)), render_summary_csv(analysed))]
