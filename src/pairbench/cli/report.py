"""``pairbench report``, and the ``--export-*`` options of ``run`` and ``compare``.

The renderers (``pairbench.report``) return text; this module is the one thin
layer that writes it, each file atomically (``resultfile.atomic_write_text``).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, Io, cli
from pairbench.errors import EXIT_OK, ResultFileError, StatisticsError
from pairbench.report.exports import CSV_TABLES, EXPORT_OPTIONS, FORMATS, REGISTRY


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
def report(app: App, path: str, fmt: str | None, output: str | None, table: str | None):
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
    from pairbench.report.exports import format_for, report_files
    from pairbench.store.journal import journal_path

    if output is not None and output != "-":
        check_outputs(output_paths("-o", output, csv=format_for(fmt, output) == "csv" and table is None),
                      example="report.html", inputs=[("the result read", path),
                                                     ("its journal", str(journal_path(path)))])
    run, analysis = read_and_analyse(path)
    with analysing_stored(path):
        files = report_files(run, analysis, fmt, output, table=table)
    write_files(app.io, files)
    return EXIT_OK


def read_and_analyse(path: str):
    """The run stored at ``path`` and its analysis, computed from its samples (never from what
    the file says it derived)."""
    from pairbench.analysis import analyse
    from pairbench.store.resultfile import read_result

    with analysing_stored(path):
        run = read_result(path)
        return run, analyse(run)


@contextlib.contextmanager
def analysing_stored(path: str) -> Iterator[None]:
    """Analysis of the stored result ``path`` (``show``, ``report``): numpy's warnings are not
    printed, and a failure to analyse is the file's problem, said as a ``ResultFileError`` naming it.

    The raw samples were validated when read, but a hostile file can still hold
    values no statistic can use; that is a bad file (exit 4), not a usage error.
    So is a file too large for the memory there is (``MemoryError``).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            yield
        except StatisticsError as exc:
            raise ResultFileError(f"{path}: cannot be analysed: {exc}") from None
        except MemoryError:
            raise ResultFileError(f"{path}: not enough memory to read, analyse and report it") from None
        except ResultFileError as exc:
            if str(exc).startswith(f"{path}:"):
                raise
            raise ResultFileError(f"{path}: {exc}") from None


def write_files(io: Io, files: list[tuple[str | None, str]]) -> None:
    """Write each (path, text); path None prints to standard output. Atomic per file."""
    from pairbench.store.files import atomic_write_text

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


def check_outputs(outputs: Sequence[tuple[str, str]], *, example: str | None = None,
                  inputs: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse, before a command does any work, outputs ((option, path)) that cannot or must not be
    written (``outputs.check_output``: a journal, a planted link, a directory, one of ``inputs``), and
    two outputs naming one file."""
    from pairbench.outputs import check_output, refuse_inputs

    for option, path in outputs:
        check_output(option, path, example=example, inputs=inputs)
    refuse_inputs(outputs, ())


def check_export_paths(exports: Mapping[str, str], inputs: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse, before measuring, export paths (WORD -> path) that cannot or must not be written
    (``outputs.check_output``), or that are one of ``inputs``."""
    from pairbench.outputs import check_output

    for word, value in exports.items():
        check_output(f"--export-{word}", value, example="report" + REGISTRY[EXPORT_OPTIONS[word]].suffixes[0],
                     inputs=inputs)


def export_paths(exports: Mapping[str, str]) -> list[tuple[str, str]]:
    """The files the ``--export-WORD`` options (WORD -> path) will write, each with the option that
    names it (``--export-csv FILE`` also writes FILE's .summary.csv sibling)."""
    paths: list[tuple[str, str]] = []
    for word, path in exports.items():
        paths += output_paths(f"--export-{word}", path, csv=EXPORT_OPTIONS[word] == "csv")
    return paths


def output_paths(option: str, path: str, *, csv: bool) -> list[tuple[str, str]]:
    """``path`` as written by ``option``; for CSV samples also the summary file beside it."""
    if not csv:
        return [(option, path)]
    from pairbench.report.csvfile import summary_path

    return [(option, path), (f"{option}'s summary", str(summary_path(path)))]


def export_options(f):
    """``--export-markdown/--export-csv/--export-html/--export-json FILE`` for a measuring command."""
    for word, fmt in reversed(EXPORT_OPTIONS.items()):
        f = click.option(f"--export-{word}", f"export_{word}", default=None, metavar="FILE",
                         help=REGISTRY[fmt].export_help)(f)
    return f


def write_exports(io: Io, run, analysis, exports: Mapping[str, str]) -> None:
    """Write the files the ``--export-WORD`` options ask for (WORD -> path; none: does nothing), at
    the end of a measurement, interrupted or not."""
    from pairbench.report.exports import export_files

    if exports:
        write_files(io, export_files(run, analysis, exports))


def write_document(io: Io, run, analysis, path: str, *, announce: bool = True) -> None:
    """Write ``run`` with its analysis as a result document to ``path`` (``-``: standard output),
    atomically; say where on standard error when ``announce``."""
    from pairbench.sessions.result import result_document, save

    if path == "-":
        io.out(json.dumps(result_document(run, analysis), allow_nan=False))
        return
    try:
        save(run, analysis, path)
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot write the result ({exc.strerror or exc})") from None
    if announce:
        io.err(f"Result written to {path}")
