"""``pairbench show``: re-analyse and print a saved result or journal."""

from __future__ import annotations

import click

from pairbench import analysis
from pairbench.cli.app import EXIT_CODES_HELP, Io, cli
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
    summaries = analysis.summarize_run(run)
    if run.kind == "compare":
        from pairbench.comparison import compare_run, settings_for_run

        settings = settings_for_run(run)
        comparisons = tuple(r.to_dict(settings, run.stopped_because) for r in compare_run(run, settings))
        io.out(text_report.render_compare(run, summaries, comparisons, color=io.color))
    else:
        io.out(text_report.render_run(run, summaries, color=io.color))
    return EXIT_OK
