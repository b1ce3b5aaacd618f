"""``pairbench store``: load result files into the history store, and see what it holds."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.errors import EXIT_OK, EXIT_RESULT_FILE, ResultFileError
from pairbench.report.safe import visible


@cli.group(epilog=EXIT_CODES_HELP)
def store():
    """Load result files into the history store, and list what it holds.

    \b
    Examples:
      pairbench store import results/*.json --commit main
      pairbench store info --store postgresql://ci@db/bench
    """


@store.command("import", epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True, metavar="RESULT.json...")
@click.option("--store", "url", metavar="URL", help="The history store (default: as for history).")
@click.option("--commit", metavar="REV",
              help="The git revision the results measured (resolved in this repository). Default: "
                   "unknown; such results are ordered by when they were measured.")
@click.option("--branch", metavar="NAME", help="The branch the results measured.")
@click.pass_obj
def import_(app: App, paths: tuple[str, ...], url: str | None, commit: str | None, branch: str | None):
    """Load result files (pairbench.result/1 or /2) into the history store.

    Each file is read and validated, analysed for its summaries, and stored in
    one transaction; a file stored before is kept once. A file that cannot be
    read is named and skipped, the others are stored, and the exit code is 4.

    \b
    Examples:
      pairbench store import result.json
      pairbench store import nightly/*.json --commit v1.4.0 --branch main
    """
    from pairbench.sessions.record import open_store, target_of
    from pairbench.store.project import find_project

    target = target_of(find_project(), url, default=True)
    provenance = _provenance(commit, branch)
    failed = 0
    with open_store(target) as opened:
        for path in paths:
            try:
                uid, added = _import_one(opened, target, path, provenance)
            except ResultFileError as exc:
                app.io.err(f"error: {visible(exc)}; not stored")
                failed += 1
                continue
            app.io.err(f"{visible(path)}: result {uid[:12]} " + ("stored" if added else "was stored before"))
    app.io.err(f"{len(paths) - failed} of {len(paths)} file(s) in {visible(target.url.shown)}")
    return EXIT_RESULT_FILE if failed else EXIT_OK


def _provenance(commit: str | None, branch: str | None):
    import os

    from pairbench.measure.revisions import commit_time, resolve, toplevel
    from pairbench.store.history import Provenance

    if commit is None:
        return Provenance(branch=branch, source="")
    root = toplevel(os.getcwd())
    if root is None:
        raise click.UsageError("--commit names a git revision, but the working directory is in no git repository")
    full = resolve(commit, root, option="--commit")
    return Provenance(full, commit_time(full, root), branch, False, "")


def _import_one(opened, target, path: str, provenance):
    import dataclasses

    from pairbench.cli.report import read_and_analyse
    from pairbench.sessions.record import machine_for, summaries_of

    run, analysis = read_and_analyse(path)
    return opened.add(run, summaries_of(run, analysis), machine_for(run, target),
                      dataclasses.replace(provenance, source=path))


@store.command("info", epilog=EXIT_CODES_HELP)
@click.option("--store", "url", metavar="URL", help="The history store (default: as for history).")
@click.pass_obj
def info(app: App, url: str | None):
    """List the machines of the history store, with their results and benchmarks.

    \b
    Example:
      pairbench store info
    """
    from pairbench.sessions.record import open_store, target_of
    from pairbench.store.project import find_project

    target = target_of(find_project(), url, default=True)
    with open_store(target, read_only=True) as opened:
        lines = [f"{visible(target.url.shown)}:"]
        for machine in opened.machines():
            benchmarks = opened.benchmarks(machine.id)
            lines.append(f"  {visible(machine.fingerprint)}  {visible(machine.label)}: {machine.results} "
                         f"result(s), {len(benchmarks)} benchmark(s)")
        if len(lines) == 1:
            lines.append("  no results yet")
    app.io.out("\n".join(lines))
    return EXIT_OK
