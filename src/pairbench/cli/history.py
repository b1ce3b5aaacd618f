"""``pairbench history``: the series of benchmarks over commits on one machine, with their steps."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.errors import EXIT_OK, StoreError, UsageError
from pairbench.report.exports import DOCUMENTS
from pairbench.report.safe import visible

COUNTED = 100  # the steps' pairs of commits counted with git (one git call each)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("benchmarks", nargs=-1, metavar="[BENCHMARK...]")
@click.option("--store", "store", metavar="URL",
              help="The history store (default: $PAIRBENCH_STORE, the project config, else "
                   ".pairbench/history.db in the project).")
@click.option("--machine", metavar="NAME|FINGERPRINT",
              help="Whose history: a machine's name or fingerprint (prefix). Default: this machine.")
@click.option("--format", "-f", "fmt", type=click.Choice(DOCUMENTS["history"]), default=None,
              help="Output format. Default: from the -o suffix (.html, .md, .json, .csv), else text.")
@click.option("--output", "-o", default=None, metavar="FILE", help="Write to FILE instead of standard output.")
@click.option("--last", type=click.IntRange(min=2), default=None, metavar="N",
              help="Only the latest N commits of each benchmark.")
@click.option("--branch", metavar="NAME", help="Only the results measured on this branch (e.g. main).")
@click.pass_obj
def history(app: App, benchmarks: tuple[str, ...], store: str | None, machine: str | None, fmt: str | None,
            output: str | None, last: int | None, branch: str | None):
    """Show benchmarks over commits on one machine, with their change points.

    Each BENCHMARK is a name as the results call it (sort[n=100]; a whole
    command by its --name), or a pattern (sort*); none: every benchmark of the
    machine. Names after -- are names even if they begin with -: give names
    that come from elsewhere (a pull request's benchmarks) after --, quoted.
    A commit's value is the median of its results' medians; steps and
    drifts are found by PELT on the log values under a model of autocorrelated
    noise (validated by simulation: see docs/change-points.md), and shown with their
    commits, their size with a 95% interval, and whether `pairbench confirm`
    confirmed them. A step with several commits between its two points (in the
    git repository here) comes with the `pairbench bisect` command that finds
    which of them made it.

    \b
    Examples:
      pairbench history
      pairbench history 'sort*' --last 200 --branch main
      pairbench history parse -o history.html
      pairbench history --format json --store postgresql://ci@db/bench > history.json
      pairbench history --branch main --format markdown -- "$name1" "$name2"
    """
    from pairbench.analysis.history import with_bisects
    from pairbench.cli.report import check_outputs, write_files
    from pairbench.report.exports import format_for, renderer
    from pairbench.sessions.history import load_history
    from pairbench.sessions.record import open_store, store_files, target_of
    from pairbench.store.project import find_project

    project = find_project()
    target = target_of(project, store, default=True)
    fmt = format_for(fmt, output, "history")
    if output not in (None, "-"):
        check_outputs([("--output", output)], example="history.html", inputs=store_files(target))
    with open_store(target, read_only=True) as opened:
        found = load_history(opened, _machine_of(app, opened, target, machine), benchmarks, last, branch)
    found = with_bisects(found, commit_counts(found, str(project.root)))
    write_files(app.io, [(output if output not in (None, "-") else None, renderer("history", fmt)(found))])
    return EXIT_OK


def commit_counts(found, directory: str) -> dict[tuple[str, str], int]:
    """The commits between the two commits each step not rejected lies between (``Step.between``,
    the newest ``COUNTED`` pairs) in the git repository ``directory`` is in; none outside one."""
    from pairbench.measure.revisions import commits_between, toplevel

    repository = toplevel(directory)
    if repository is None:
        return {}
    wanted = list(dict.fromkeys(s.between for cp in found.change_points for s in cp.steps
                                if s.status != "rejected" and all(s.between)))[-COUNTED:]
    counts = {pair: commits_between(*pair, repository) for pair in wanted}
    return {pair: count for pair, count in counts.items() if count is not None}


def _machine_of(app: App, store, target, wanted: str | None):
    """The stored machine whose history is shown: ``wanted`` (a name, or a fingerprint's prefix),
    else this one (its fingerprint, or the name the project gives it)."""
    machines = store.machines()
    if wanted is None:
        from pairbench.sessions.history import this_machine

        fingerprint = this_machine(app.environment, target).fingerprint
        found = [m for m in machines if m.fingerprint == fingerprint]
        what = "this machine"
    else:
        found = [m for m in machines if m.label == wanted or m.fingerprint == f"name:{wanted}"] or \
            [m for m in machines if m.fingerprint.startswith(wanted)]
        what = f"--machine {visible(wanted)!r}"
    if len(found) == 1:
        return found[0]
    listed = "; ".join(f"{visible(m.fingerprint)} ({visible(m.label)}, {m.results} results)" for m in machines)
    if not found:
        raise StoreError(f"{target.url.shown} has no results of {what}; it has: {listed or 'no results'}. "
                         "Give --machine NAME|FINGERPRINT")
    raise UsageError(f"{what} matches {len(found)} machines; give more of the fingerprint: {listed}")

