"""Which text goes to which file: the output formats of every document, and the ``--export-*`` files.

One vocabulary for every command that writes a document: ``REGISTRY`` names
each format once, with the file suffixes that name it; ``DOCUMENTS`` says
which formats each kind of document is rendered in (a result, a history, a
bisection, a diff), and :func:`renderer` gives the function that renders it,
imported when asked (the CLI reads these tables for its options and --help,
which must not wait for numpy and scipy). ``report_files`` and ``export_files``
return ``(path, text)`` pairs (path None: standard output) and write nothing:
the CLI's one thin writer (``cli.report.write_files``) writes them atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.errors import UsageError
from pairbench.frozen import frozen

if TYPE_CHECKING:  # not at run time: the CLI reads the formats below for its options and --help,
    from pairbench.analysis import Analysis  # which must not wait for numpy and scipy
    from pairbench.model import Run

@frozen
class Format:
    """An output format: its name, the file suffixes that name it, what its ``--export-WORD`` option of
    the measuring commands says (None: it has none), the WORD of that option when it is not the name,
    and whether ``report --format`` offers it (and a suffix names it)."""

    name: str
    suffixes: tuple[str, ...]
    export_help: str | None = None
    option: str = ""
    report: bool = True


REGISTRY = {f.name: f for f in (
    Format("html", (".html", ".htm"), "Also write the self-contained HTML report with charts to FILE."),
    Format("markdown", (".md", ".markdown"), "Also write the Markdown report (verdict table first) to FILE."),
    Format("csv", (".csv",), "Also write every sample as CSV to FILE, and the summary to FILE's .summary.csv."),
    Format("json", (".json",)),  # a result's own document is --json's; report --format json analyses it
    Format("hyperfine-json", (".json",),
           "Also write hyperfine's JSON schema to FILE (results[].command, mean, stddev, median, user, system, "
           "min, max, times, exit_codes, parameters; in seconds), for scripts written for hyperfine. "
           "pairbench's own result document is --json's.", option="json", report=False),
    Format("text", (), report=False),  # the terminal's
)}
DOCUMENTS: dict[str, tuple[str, ...]] = {
    "result": ("html", "markdown", "csv", "json", "hyperfine-json"),  # show prints its text
    "history": ("text", "markdown", "json", "csv", "html"),
    "bisect": ("text", "markdown", "json"),
    "diff": ("text", "json"),
}
"""The formats each kind of document is rendered in (the first: what a terminal gets, but for a result)."""
FORMATS = tuple(name for name in DOCUMENTS["result"] if REGISTRY[name].report)
CSV_TABLES = ("samples", "summary")
SUFFIX_FORMATS = {suffix: f.name for f in REGISTRY.values() if f.report for suffix in f.suffixes}


def renderer(document: str, fmt: str) -> Callable[..., str]:
    """The function rendering a ``document`` (a key of ``DOCUMENTS``) in ``fmt``; it takes what that
    kind of document is: a run and its analysis, a ``History``, a bisection's account, a ``Diff``
    with the two paths. A result's CSV is two tables (:func:`render`)."""
    if fmt not in DOCUMENTS[document]:
        raise UsageError(f"a {document} is written as {', '.join(DOCUMENTS[document])}, not {fmt!r}")
    return _LOADERS[document](fmt)


def _result(fmt: str) -> Callable[..., str]:
    if fmt == "html":
        from pairbench.report.html import render_html as render
    elif fmt == "markdown":
        from pairbench.report.markdown import render_markdown as render
    elif fmt == "json":
        from pairbench.report.jsonfile import render_json as render
    else:
        from pairbench.report.hyperfine_json import render_hyperfine_json as render
    return render


def _history(fmt: str) -> Callable[..., str]:
    if fmt == "html":
        from pairbench.report.trend import render_history_html

        return render_history_html
    from pairbench.report import history, links

    return {"text": links.render_text, "markdown": links.render_markdown, "json": links.render_json,
            "csv": history.render_history_csv}[fmt]


def _bisect(fmt: str) -> Callable[..., str]:
    from pairbench.report import bisect

    return {"text": bisect.render_bisect_text, "markdown": bisect.render_bisect_markdown,
            "json": bisect.render_bisect_json}[fmt]


def _diff(fmt: str) -> Callable[..., str]:
    from pairbench.report.diff import render_diff, render_diff_json

    return render_diff_json if fmt == "json" else render_diff


_LOADERS = {"result": _result, "history": _history, "bisect": _bisect, "diff": _diff}


def format_for(fmt: str | None, path: str | None, document: str = "result") -> str:
    """The format asked for, else the one ``path``'s suffix names, else the terminal's (Markdown for
    a result's report); a history's file of an unknown suffix is text."""
    if fmt:
        return fmt
    terminal = "markdown" if document == "result" else DOCUMENTS[document][0]
    if path is None or path == "-":
        return terminal
    guessed = SUFFIX_FORMATS.get(Path(path).suffix.lower())
    if guessed is None or guessed not in DOCUMENTS[document]:
        if document != "result":
            return terminal
        raise UsageError(f"cannot tell the report format from {path!r}; "
                         f"add --format {'|'.join(FORMATS)}")
    return guessed
EXPORTED = ("markdown", "csv", "html", "hyperfine-json")
"""The formats a measuring command exports (``--export-WORD FILE``), in the order of its options."""
EXPORT_OPTIONS = {REGISTRY[fmt].option or fmt: fmt for fmt in EXPORTED}
"""The WORD of each ``--export-WORD`` option -> the format it writes."""


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
    return [(path, renderer("result", fmt)(run, analysis))]


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
