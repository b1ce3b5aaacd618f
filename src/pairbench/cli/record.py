"""``pairbench record``: a commit measured against its predecessor in the same rounds, kept as links."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.bench import bench_options
from pairbench.cli.confirm import CONFIRM_SAMPLING, seams
from pairbench.cli.measuring import (
    check_output_paths,
    programs_environment,
    report_outcome,
    store_target,
)
from pairbench.cli.options import environment_options, sampling_options
from pairbench.errors import EXIT_OK, StoreError
from pairbench.report.safe import visible


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("revision", metavar="[REV]", default="HEAD")
@click.option("--store", "store", metavar="URL",
              help="The history store to find the predecessor in and keep the links in (default: as for history).")
@click.option("--against", metavar="REV", help="Measure against REV instead of the last commit recorded on the branch.")
@click.option("--anchor", metavar="REV",
              help="Pin the anchor the cumulative change is measured against (a release); default: the first "
                   "commit of the window.")
@click.option("--anchor-every", type=click.IntRange(min=1), default=None, metavar="N",
              help="Measure against the anchor every N records of a window (and at its last).  [default: 4]")
@click.option("--window", type=click.IntRange(min=1), default=None, metavar="N",
              help="Records in a window; then the anchor moves to the latest recorded commit.  [default: 40]")
@click.option("--branch", metavar="NAME", help="The branch the record belongs to (default: the checkout's).")
@click.option("--metric", metavar="auto|wall|cpu",
              help="What a link compares: wall or CPU time of one operation, or auto (CPU time when the "
                   "machine is loaded, as compare chooses).")
@lambda f: bench_options(f, against=False)
@sampling_options("bench", keep=CONFIRM_SAMPLING)
@environment_options
@click.pass_obj
def record(app: App, revision: str, store: str | None, against: str | None, anchor: str | None,
           anchor_every: int | None, window: int | None, branch: str | None, metric: str | None,
           pass_env: tuple[str, ...], **options):
    """Record commit REV (default HEAD) in a paired history: measured against its predecessor.

    The predecessor is the last commit recorded on the branch on this machine
    (or --against REV). Both are built with the [confirm] recipe of
    pairbench.toml in cached worktrees (a tree built before is not built
    again) and measured in interleaved, randomized rounds, as confirm does;
    every few records the commit is measured against the window's anchor too,
    for the cumulative change. Each benchmark's comparison is kept in the store
    as a link: both commits, the effect with its interval and test, the metric,
    the rounds and the raw samples. A first record measures one side. Each
    link is tested at 1/1,000 split over the suite's benchmarks, so a history
    shows at most 1 false step per 1,000 commits of the whole suite in
    expectation; `pairbench history` shows the steps, drifts and unrecorded
    commits. Run it in CI after each push to main.

    \b
    Examples:
      pairbench record --store sqlite:///.pairbench/history.db
      pairbench record HEAD --metric cpu --max-time 60s -j 2
      pairbench record --against v1.4.0 -k parse
    """
    from pairbench.analysis.links import ANCHOR_EVERY, STEP_RATE, WINDOW
    from pairbench.sessions.paired import RecordSession
    from pairbench.sessions.record import machine_for, open_store
    from pairbench.store.project import find_project

    project = find_project()
    session = RecordSession(project, revision, branch=branch)
    target = store_target(store, False)
    if target is None:
        from pairbench.sessions.record import target_of

        target = target_of(project, None, default=True)
    options = {**options, "alpha": str(STEP_RATE), "metric": metric}
    with open_store(target) as opened:
        from pairbench.sessions.history import this_machine

        plan = session.plan(opened, this_machine(app.environment, target), against=against, anchor=anchor,
                            every=anchor_every or ANCHOR_EVERY, window=window or WINDOW)
    pairs = session.pairs(plan)
    if not pairs:
        app.io.err(f"First record of branch {visible(session.branch or '(none)')}: {session.commit.short} "
                   "measured alone; the next record links to it")
        return _single(app, session, target, options, pass_env)
    code = EXIT_OK
    for pair in pairs:
        what = " and ".join(pair.kinds)
        app.io.err(f"Recording {session.commit.short} against {pair.before.commit[:10]} ({what})")
        settings = session.recipe.settings(("BEFORE", "AFTER"), dict(options))
        check_output_paths(settings, target)
        with programs_environment(pass_env, isolated=True, store=target), \
                session.built(pair.before, pair.after) as built:
            from pairbench.sessions.confirm import bench_settings

            names = (f"{pair.before.commit[:10]}", f"{pair.after.commit[:10]}")
            settings = bench_settings(settings, (session.target(built[0]), session.target(built[1])), names, None)
            outcome = _measured(app, settings)
        code = report_outcome(app, settings, outcome, target, provenance=session.provenance()) or code
        code = _links(app, target, session, pair, outcome, machine_for(outcome.run, target)) or code
    return code


def _single(app: App, session, target, options: dict, pass_env) -> int:
    from pairbench.sessions.confirm import bench_settings

    settings = session.recipe.settings(("REV",), dict(options))
    check_output_paths(settings, target)
    with programs_environment(pass_env, isolated=True, store=target), session.built(session.commit) as built:
        settings = bench_settings(settings, (session.target(built[0]),), (session.commit.commit[:10],), None)
        outcome = _measured(app, settings)
    return report_outcome(app, settings, outcome, target, provenance=session.provenance())


def _measured(app: App, settings):
    """The two builds (or one) ``settings`` names, measured with the progress display."""
    from pairbench.cli.progress import Displays
    from pairbench.sessions.confirm import measure_builds

    with Displays(app.io, settings, app.clock) as shown:
        return measure_builds(settings, seams(app, shown))


def _links(app: App, target, session, pair, outcome, machine) -> int | None:
    """Keep the links of ``outcome`` in the store; say what they are."""
    from pairbench.analysis.links import STEP_RATE, link_level
    from pairbench.sessions.paired import links_of
    from pairbench.sessions.record import open_store
    from pairbench.store.history import result_uid

    family = len(outcome.analysis.real_comparisons) if outcome.analysis else 1
    name = None if session.recipe.kind == "bench" else session.recipe.label
    found = links_of(outcome, pair, level=link_level(max(family, 1), STEP_RATE), uid=result_uid(outcome.run),
                     commits=session.commits(pair.before.commit), branch=session.branch,
                     after_time=session.provenance().commit_time, name=name)
    try:
        with open_store(target) as opened:
            opened.add_links(machine, found)
    except StoreError as exc:
        app.io.err(f"error: {visible(str(exc))}; the links were not recorded")
        return 4
    app.io.err(f"{len(found)} link(s) kept in {target.url.shown}")
    return None
