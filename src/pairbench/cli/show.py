"""``pairbench show``: analyse and print a saved result or journal."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.report import analysing_stored, read_and_analyse
from pairbench.errors import EXIT_OK


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("path", metavar="FILE")
@click.option("--details", is_flag=True,
              help="For a suite (bench): every benchmark's comparison and statistics, not the summary.")
@click.pass_obj
def show(app: App, path: str, details: bool):
    """Analyse and print a saved result, or the journal of a run that did not finish.

    The verdicts and every number are computed again from the stored samples.
    A suite (pairbench bench, merge) is shown as its summary: regressions,
    improvements, equivalent and inconclusive benchmarks, the geometric mean.

    \b
    Examples:
      pairbench show result.json
      pairbench show --details suite.json
      pairbench show result.json.partial
    """
    from pairbench.report import text

    run, analysis = read_and_analyse(path)
    render = text.renderer(run, analysis, details=details)
    with analysing_stored(path):
        app.io.out(render(run, analysis, color=app.io.color))
    return EXIT_OK
