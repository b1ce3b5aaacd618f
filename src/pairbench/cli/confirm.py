"""``pairbench confirm``: measure two commits again, side by side, and record what that found."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.bench import bench_options
from pairbench.cli.measuring import (
    check_output_paths,
    programs_environment,
    report_outcome,
    store_target,
)
from pairbench.cli.options import (
    BENCH_SAMPLING,
    decision_options,
    environment_options,
    recipe_max_time_shown,
    sampling_options,
)
from pairbench.cli.progress import Displays
from pairbench.cli.report import export_options
from pairbench.report.safe import visible

CONFIRM_SAMPLING = tuple(option for option in BENCH_SAMPLING if option != "names")


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("before", metavar="REV_BEFORE")
@click.argument("after", metavar="REV_AFTER")
@click.option("--store", "store", metavar="URL",
              help="The history store to read the steps from and record the confirmations in (default: as "
                   "for history).")
@lambda f: bench_options(f, against=False)
@sampling_options("bench", keep=CONFIRM_SAMPLING, max_time_shown=recipe_max_time_shown())
@lambda f: decision_options(f, self_check=False)
@export_options
@environment_options
@click.pass_obj
def confirm(app: App, before: str, after: str, store: str | None, pass_env: tuple[str, ...], **options):
    """Measure two commits again, side by side, to confirm or reject a step between them.

    Both revisions are checked out into temporary git worktrees and built with
    the [confirm] build command of pairbench.toml (or [tool.pairbench.confirm]
    in pyproject.toml); then `pairbench bench` measures the [confirm] bench
    target of both builds in interleaved, randomized paired rounds (or
    `pairbench compare` the [confirm] command, run in each build's tree). The config
    of the checkout chooses that command: run confirm only where you would run
    the checkout's own build. Builds and benchmarks get PATH, HOME, the locale,
    TZ, TERM and TMPDIR of your environment, and what --pass-env names. The
    benchmarks measured are those whose history has a step between the two
    commits on this machine (all of them when none has; -k chooses). A change
    (slower or faster, not negligible) confirms the step, an equivalent one
    rejects it; the result and the confirmations are recorded in the store, so
    `pairbench history` shows confirmed, rejected and unconfirmed steps apart.

    \b
    Example pairbench.toml:
      [confirm]
      build = "make -j2 bench"
      bench = "build/bench"

    \b
    Examples:
      pairbench confirm 1a2b3c4 5d6e7f8
      pairbench confirm v1.3.0 v1.4.0 -k parse --max-time 20s
      pairbench confirm v1.3.0 v1.4.0 --pass-env CC --pass-env CFLAGS
    """
    from pairbench.sessions.confirm import ConfirmSession
    from pairbench.store.project import find_project

    project = find_project()
    session = ConfirmSession(project, before, after)
    target = store_target(store, False) or _default_target(project)
    settings = session.recipe.settings(("BEFORE", "AFTER"), options)
    check_output_paths(settings, target)
    flagged = _flagged(app, target, session) if session.recipe.kind == "bench" else None
    with programs_environment(pass_env, isolated=True, store=target), Displays(app.io, settings, app.clock) as shown:
        settings, outcome = session.measure(settings, seams(app, shown), flagged)
    stored = target if session.recipe.kind == "bench" else None  # a command's sides are not its history name
    code = report_outcome(app, settings, outcome, stored, provenance=session.provenance())
    _record(app, target, outcome, session)
    return code


def _default_target(project):
    from pairbench.sessions.record import open_store, target_of

    target = target_of(project, None, default=True)
    open_store(target).close()
    return target


def _flagged(app: App, target, session) -> str | None:
    """The -k pattern of the benchmarks with a step between the two commits in this machine's history."""
    pattern, keys = session.flagged(target, app.environment)
    if keys:
        app.io.err("Steps between these commits in the history: " + ", ".join(visible(k.label) for k in keys))
    return pattern


def seams(app: App, progress):
    """What measures the builds of ``confirm`` and ``bisect``: ``app``'s seams, and ``progress``."""
    from pairbench.sessions.confirm import Seams

    return Seams(app.executor_factory, app.environment, app.workers, progress)


def _record(app: App, target, outcome, session) -> None:
    from pairbench.sessions.confirm import keep_confirmations

    found, error = keep_confirmations(outcome, session.revisions, session.recipe, target)
    if error is not None:
        app.io.err(f"error: {visible(error)}; the confirmations were not recorded")
        return
    for key, c in found:
        app.io.err(f"{visible(key.label)}: {c.status} ({c.verdict}) between {c.before[:10]} and {c.after[:10]}")
