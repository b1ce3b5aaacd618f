"""``pairbench history``: the series of benchmarks over commits on one machine, with their steps."""

from __future__ import annotations

import fnmatch

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.errors import EXIT_OK, StoreError, UsageError
from pairbench.report.exports import SUFFIX_FORMATS
from pairbench.report.safe import visible

HISTORY_FORMATS = ("text", "markdown", "json", "csv", "html")
COUNTED = 100  # the steps' pairs of commits counted with git (one git call each)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("benchmarks", nargs=-1, metavar="[BENCHMARK...]")
@click.option("--store", "store", metavar="URL",
              help="The history store (default: $PAIRBENCH_STORE, the project config, else "
                   ".pairbench/history.db in the project).")
@click.option("--machine", metavar="NAME|FINGERPRINT",
              help="Whose history: a machine's name or fingerprint (prefix). Default: this machine.")
@click.option("--format", "-f", "fmt", type=click.Choice(HISTORY_FORMATS), default=None,
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
    from pairbench.sessions.record import open_store, store_files, target_of
    from pairbench.store.project import find_project

    project = find_project()
    target = target_of(project, store, default=True)
    fmt = fmt or SUFFIX_FORMATS.get(_suffix(output), "text")
    if output not in (None, "-"):
        check_outputs([("--output", output)], example="history.html", inputs=store_files(target))
    with open_store(target, read_only=True) as opened:
        found = load_history(opened, _machine_of(app, opened, target, machine), benchmarks, last, branch)
    found = with_bisects(found, commit_counts(found, str(project.root)))
    write_files(app.io, [(output if output not in (None, "-") else None, render(found, fmt))])
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


def _suffix(path: str | None) -> str:
    return "" if not path or "." not in path else "." + path.rsplit(".", 1)[1].lower()


def render(found, fmt: str) -> str:
    from pairbench.report import history as text
    from pairbench.report import links
    from pairbench.report.trend import render_history_html

    renderers = {"text": links.render_text, "markdown": links.render_markdown, "json": links.render_json, "csv": text.render_history_csv, "html": render_history_html}
    return renderers[fmt](found)


def _machine_of(app: App, store, target, wanted: str | None):
    """The stored machine whose history is shown: ``wanted`` (a name, or a fingerprint's prefix),
    else this one (its fingerprint, or the name the project gives it)."""
    machines = store.machines()
    if wanted is None:
        fingerprint = this_machine(app, target).fingerprint
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


def this_machine(app: App, target):
    """The machine pairbench runs on, as the store knows machines (its fingerprint, or its name);
    read without the 0.1 s window of what runs right now, which a fingerprint does not use."""
    from pairbench.environment.fingerprint import machine_of

    return machine_of(app.environment(activity_window_s=0.0), target.machine_name)


def load_history(store, machine, patterns: tuple[str, ...], last: int | None, branch: str | None = None):
    """The history of the benchmarks ``patterns`` name (all without any) on ``machine`` (of one
    ``branch`` when given): the paired history (``analysis.links``) of those recorded in links, the
    unpaired one of the others."""
    from pairbench.analysis.history import (
        History,
        benchmark_history,
        group_change_points,
        points_of,
    )
    from pairbench.analysis.links import link_histories
    from pairbench.settings import DEFAULTS

    linked = {b.id for b in store.link_benchmarks(machine.id)}
    known = store.benchmarks(machine.id)
    known += [b for b in store.link_benchmarks(machine.id) if b not in known]
    chosen = _chosen(sorted(known, key=lambda b: b.key), patterns, store, machine)
    by_benchmark: dict[int, list] = {}
    for link in store.links(machine.id, [b.id for b in chosen if b.id in linked], branch):
        by_benchmark.setdefault(link.benchmark_id, []).append(link)
    paired = tuple(h for b in chosen if b.id in linked
                   for h in link_histories(b.key, by_benchmark.get(b.id, ())[-last:] if last else
                                           by_benchmark.get(b.id, ()), DEFAULTS["threshold"]))
    chosen = [b for b in chosen if b.id not in linked]
    by_id = {}
    for confirmation in store.confirmations(machine.id, [b.id for b in chosen]):
        by_id.setdefault(confirmation.benchmark_id, []).append(confirmation)
    histories = []
    for benchmark in chosen:
        points = points_of(store.series(machine.id, benchmark, branch))
        points = points[-last:] if last else points
        if points:
            histories.append(benchmark_history(benchmark.key, points, by_id.get(benchmark.id, ())))
    label = f"{machine.label} ({machine.fingerprint})"
    return History(label, tuple(histories), group_change_points(histories), paired)


def _chosen(known, patterns: tuple[str, ...], store, machine):
    if not patterns:
        if not known:
            raise StoreError(f"{store.url.shown} has no results of machine {visible(machine.label)} yet")
        return known
    from pairbench.store.history import storable

    chosen = []
    for given in patterns:
        pattern = storable(given)  # a name that was not UTF-8 is stored with its bytes escaped
        matched = [b for b in known if b.key.label == pattern or b.key.name == pattern
                   or fnmatch.fnmatchcase(b.key.label, pattern)]
        if not matched:
            names = ", ".join(visible(b.key.label) for b in known[:10]) + (" ..." if len(known) > 10 else "")
            raise StoreError(f"no results of benchmark {visible(pattern)!r} on machine {visible(machine.label)} "
                             f"in {store.url.shown}; it has: {names or 'none'} (other machines: "
                             "pairbench history --machine)")
        chosen += [b for b in matched if b not in chosen]
    return chosen
