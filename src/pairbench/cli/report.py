"""``pairbench report``, and the ``--export-*`` options of ``run`` and ``compare``.

The renderers (``pairbench.report``) return text; this module is the one thin
layer that writes it, each file atomically (``resultfile.atomic_write_text``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

from pairbench.cli.app import EXIT_CODES_HELP, Io, cli
from pairbench.errors import EXIT_OK, ResultFileError
from pairbench.report.exports import CSV_TABLES, EXPORTS, FORMATS


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("path", metavar="RESULT.json")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default=None,
              help="Report format. Default: from the -o suffix (.html, .md, .csv, .json), "
                   "else markdown.")
@click.option("--output", "-o", default=None, metavar="FILE",
              help="Write the report to FILE instead of standard output.")
@click.option("--table", type=click.Choice(CSV_TABLES), default=None,
              help="CSV only: write just this table. Without it, -o FILE gets the samples and "
                   "FILE's .summary.csv sibling the summary; standard output gets the samples.")
@click.pass_obj
def report(io: Io, path: str, fmt: str | None, output: str | None, table: str | None):
    """Render a saved result (or a journal) as HTML, Markdown, CSV or JSON.

    \b
    html      one self-contained file with charts; works offline
    markdown  the verdict table first, details folded (for pull requests)
    csv       every raw sample, one row each; and a per-variant summary
    json      the analysed result (summaries, comparisons; no raw samples)

    \b
    Examples:
      pairbench report result.json -o report.html
      pairbench report result.json --format markdown >> "$GITHUB_STEP_SUMMARY"
      pairbench report result.json -o samples.csv     # + samples.summary.csv
      pairbench report result.json --format csv --table summary
    """
    from pairbench.report.exports import report_files
    from pairbench.resultfile import read_result

    run = read_result(path)
    write_files(io, report_files(run, fmt, output, table=table))
    return EXIT_OK


def write_files(io: Io, files: list[tuple[str | None, str]]) -> None:
    """Write each (path, text); path None prints to standard output. Atomic per file."""
    from pairbench.resultfile import atomic_write_text

    for path, text in files:
        if path is None:
            io.out(text.removesuffix("\n"))
            continue
        try:
            atomic_write_text(Path(path), text)
        except OSError as exc:
            raise ResultFileError(f"{path}: cannot write the report ({exc.strerror or exc})") from None
        io.err(f"Report written to {path}")


# --------------------------------------------------------------------------- --export-* options


def _check_export_path(ctx, param, value):
    """Refuse, before measuring, a path whose directory does not exist or cannot be written."""
    if value is None:
        return None
    directory = Path(value).resolve().parent
    if not directory.is_dir():
        raise click.BadParameter(f"the directory {str(directory)!r} does not exist")
    if not os.access(directory, os.W_OK):
        raise click.BadParameter(f"the directory {str(directory)!r} is not writable")
    return value


def export_options(f):
    """``--export-markdown/--export-csv/--export-html FILE`` for a measuring command."""
    helps = {
        "export_markdown": "Also write the Markdown report (verdict table first) to FILE.",
        "export_csv": "Also write every sample as CSV to FILE, and the summary to FILE's .summary.csv.",
        "export_html": "Also write the self-contained HTML report with charts to FILE.",
    }
    for key in reversed(tuple(EXPORTS)):
        flag = "--" + key.replace("_", "-")
        f = click.option(flag, key, default=None, metavar="FILE", callback=_check_export_path,
                         help=helps[key])(f)
    return f


def write_exports(io: Io, run, options: Mapping) -> None:
    """Write the files the ``--export-*`` options in ``options`` ask for (none: does nothing).

    Call it at the end of a measurement, interrupted or not, with the run that
    holds the summaries and comparisons.
    """
    from pairbench.report.exports import export_files

    requests = {key: options.get(key) for key in EXPORTS}
    if any(requests.values()):
        write_files(io, export_files(run, requests))
