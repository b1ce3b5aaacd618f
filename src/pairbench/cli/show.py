"""``pairbench show``: re-analyse and print a saved result or journal."""

from __future__ import annotations

import click

from pairbench import analysis
from pairbench.cli.app import EXIT_CODES_HELP, Io, cli
from pairbench.cli.report import analysing_stored
from pairbench.errors import EXIT_OK
from pairbench.report import text as text_report


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("path", metavar="FILE")
@click.pass_obj
def show(io: Io, path: str):
    """Re-analyse and print a saved result, or the journal of a run that did not finish.

    \b
    Examples:
      pairbench show result.json
      pairbench show result.json.partial
    """
    from pairbench.resultfile import read_result

    run = read_result(path)
    with analysing_stored(path):
        text = _render(run, color=io.color)
    io.out(text)
    return EXIT_OK


def _render(run, *, color: bool) -> str:
    """The terminal report of ``run``, recomputed from its samples."""
    summaries = analysis.summarize_run(run)
    if run.kind != "compare":
        return text_report.render_run(run, summaries, color=color)
    from pairbench.comparison import compare_run, settings_for_run

    settings = settings_for_run(run)
    comparisons = tuple(r.to_dict(settings, run.stopped_because) for r in compare_run(run, settings))
    return text_report.render_compare(run, summaries, comparisons, color=color)
