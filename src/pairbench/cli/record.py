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
from pairbench.cli.options import (
    environment_options,
    metric_option,
    recipe_max_time_shown,
    sampling_options,
)
from pairbench.errors import StoreError
from pairbench.report.safe import visible
from pairbench.settings import default


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
@metric_option("What a link compares, one operation's", default="the metric of the branch's latest links, else auto")
@lambda f: bench_options(f, against=False)
@sampling_options("bench", keep=CONFIRM_SAMPLING, max_time_shown=recipe_max_time_shown(f"; a branch's first record's {default('max_time', 'run')}"))
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
    every few records the window's anchor is a third side in the same rounds,
    for the cumulative change since it. Each benchmark's comparison is kept in the store
    as a link: both commits, the effect with its interval and test, the metric,
    the rounds and the raw samples. A first record measures one side, with
    the budget of `pairbench run` (or of a one-side bench) unless --runs or
    --max-time is given: the next record measures it again. A link that
    finds a change goes on until the change's size is known within a factor
    of two (or --max-time). Each
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
    sides = session.sides(plan)
    if metric is None and session.chain_metric is not None:
        options["metric"] = session.chain_metric  # the branch's links stay one chain on one metric
    if sides is None:
        return _single(app, session, target, options, pass_env)
    anchor = f" and anchor {sides.revisions[2].commit[:10]}" if sides.anchored else \
        " (also the anchor)" if "anchor" in sides.kinds[0] else ""
    app.io.err(f"Recording {session.commit.short} against {sides.revisions[0].commit[:10]}{anchor}, "
               "in the same rounds")
    settings = session.recipe.settings(("BEFORE", "AFTER", "ANCHOR")[:len(sides.revisions)], dict(options))
    check_output_paths(settings, target)
    with programs_environment(pass_env, isolated=True, store=target), session.built(*sides.revisions) as built:
        from pairbench.sessions.confirm import bench_settings

        names = _side_names(session, sides.revisions)
        settings = bench_settings(settings, tuple(session.target(b) for b in built), names, None)
        outcome = _measured(app, settings, anchored=sides.anchored)
    code = report_outcome(app, settings, outcome, target, provenance=session.provenance())
    return _links(app, target, session, sides, outcome, machine_for(outcome.run, target)) or code


def _side_names(session, revisions) -> tuple[str, ...]:
    """Each side named by its commit; the commit recorded, of a [confirm] command, by the command's
    history name: the history calls a whole command's series by its side's name."""
    names = [r.commit[:10] for r in revisions]
    if session.recipe.kind != "bench":
        names[1 if len(names) > 1 else 0] = session.recipe.label
    return tuple(names)


def _single(app: App, session, target, options: dict, pass_env) -> int:
    """A first record: the commit measured alone, with the one-side budget (:func:`one_side`)."""
    from pairbench.sessions.confirm import bench_settings

    options, budget = one_side(session.recipe.kind, options)
    app.io.err(f"First record of branch {visible(session.branch or '(none)')}: {session.commit.short} measured "
               f"alone (one side, no comparison to stop it) with {budget}; the next record measures it again "
               "as its predecessor and links to it")
    settings = session.recipe.settings(("REV",), dict(options))
    check_output_paths(settings, target)
    with programs_environment(pass_env, isolated=True, store=target), session.built(session.commit) as built:
        settings = bench_settings(settings, (session.target(built[0]),), _side_names(session, built), None)
        outcome = _measured(app, settings)
    return report_outcome(app, settings, outcome, target, provenance=session.provenance())


def one_side(kind: str, options: dict) -> tuple[dict, str]:
    """A first record's options (``kind``: its recipe's, "compare" for a command, "bench" for a bench
    target), and its budget as said.

    A first record measures one side, which no comparison can stop, so it would spend the whole
    budget a paired record is given to reach a verdict (compare's 60 s for a command) on values the
    next record measures again, as its predecessor, in the same rounds as its successor. Unless
    --runs or --max-time is given, it stops as a one-side measurement of the same target stops by
    default: a command as `pairbench run` does (run's --max-time, 3 s: what pairbench gives any lone
    measurement of a command, enough to show the build runs and what it costs); a bench target as a one-side `pairbench bench`
    does (bench's --max-time per benchmark, 5 s or the harness's own, which a paired record's default
    already is: a suite has a stopping rule per benchmark only when paired). Only the time budget
    changes: --min-runs stays the recipe's (10 for times; 2 for counts, which need no more)."""
    for given in ("runs", "max_time"):
        if options.get(given) is not None:
            return options, f"--{given.replace('_', '-')} {visible(str(options[given]))} as given"
    if kind == "bench":
        return options, (f"the one-side budget of `pairbench bench`, --max-time {default('max_time', 'bench')} "
                         "per benchmark (or its harness's own)")
    budget = default("max_time", "run", metric=options.get("metric"))
    return {**options, "max_time": budget}, f"the one-side budget of `pairbench run`, --max-time {budget}"


def _measured(app: App, settings, *, anchored: bool = False):
    """The builds ``settings`` names (a record's two or three, or one), measured with the progress
    display; ``anchored``: the third is the anchor, compared with the commit in the same rounds."""
    from pairbench.analysis.criteria import SizedChange
    from pairbench.cli.progress import Displays
    from pairbench.sessions.confirm import measure_builds

    with Displays(app.io, settings, app.clock) as shown:  # a step's link stops once its size is known
        return measure_builds(settings, seams(app, shown), SizedChange(), anchored=anchored)


def _links(app: App, target, session, sides, outcome, machine) -> int | None:
    """Keep the links of ``outcome`` in the store; say what they are."""
    from pairbench.analysis.links import STEP_RATE
    from pairbench.sessions.paired import links_of
    from pairbench.sessions.record import open_store
    from pairbench.store.history import result_uid

    if outcome.analysis is None:  # the analysis failed: the result's notes say why
        return None
    name = None if session.recipe.kind == "bench" else session.recipe.label
    commits = {r.commit: session.commits(r.commit) for r in sides.revisions if r.commit != session.commit.commit}
    found = links_of(outcome.run, sides, rate=STEP_RATE, uid=result_uid(outcome.run), commits=commits,
                     branch=session.branch, after_time=session.provenance().commit_time, name=name)
    try:
        with open_store(target) as opened:
            opened.add_links(machine, found)
    except StoreError as exc:
        app.io.err(f"error: {visible(str(exc))}; the links were not recorded")
        return 4
    app.io.err(f"{len(found)} link(s) kept in {target.url.shown}")
    return None
