"""``pairbench bench``: in-process benchmarks of one or two workers; ``pairbench include-dir``."""

from __future__ import annotations

import os

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.measuring import (
    check_output_paths,
    open_activity_window,
    report_outcome,
    store_target,
)
from pairbench.cli.options import (
    BENCH_SAMPLING,
    _shown,
    decision_options,
    sampling_options,
    store_options,
)
from pairbench.cli.progress import close_progress, progress_for
from pairbench.cli.report import export_options
from pairbench.errors import EXIT_OK
from pairbench.settings import parse_settings


def bench_options(f, *, against: bool = True):
    """``bench``'s own options: which benchmarks, how long a sample, the revision to compare with
    (not for ``confirm``, which names its two revisions)."""
    options = [
        click.option("--filter", "-k", "filter", metavar="REGEX",
                     help="Measure only the benchmarks whose name matches REGEX (searched, as go test -bench)."),
        click.option("--sample-time", metavar="DURATION",
                     help="How long one sample lasts: the iteration count (a power of two, the same on both "
                          "sides) is chosen for it." + _shown("sample_time", "bench")),
        click.option("--against", metavar="REV",
                     help="Python benchmarks: compare the working tree with git revision REV (checked out "
                          "into a temporary worktree; each side imports its own tree)."),
    ][: None if against else -1]
    for option in reversed(options):
        f = option(f)
    return f


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("workers", nargs=-1, required=True, metavar="BASELINE [CANDIDATE]")
@bench_options
@sampling_options("bench", keep=BENCH_SAMPLING)
@lambda f: decision_options(f, self_check=False)
@export_options
@store_options
@click.pass_obj
def bench(app: App, workers: tuple[str, ...], **options):
    """Compare every benchmark two workers share, in-process, sample by sample.

    A worker is a benchmark program speaking pairbench's worker protocol (built
    with pairbench.h, or any language: see docs/worker-protocol.md), or Python
    benchmark files (FILE.py or a directory of bench_*.py) with functions marked
    @pairbench.benchmark. Given one worker, its benchmarks are measured; given
    two, each benchmark they share is compared: rounds of one sample per side in
    random order, about --sample-time each, until the verdict is decided or
    --max-time (per benchmark) is spent. The error rate alpha holds for all the
    comparisons together. Benchmarks found on one side only are listed.

    \b
    Examples:
      cc -O2 -I"$(pairbench include-dir)" bench.c -o bench-new
      pairbench bench ./bench-old ./bench-new
      pairbench bench -k 'sort|parse' --fail-on slower ./bench-old ./bench-new
      pairbench bench benchmarks/ --against main
      pairbench bench bench_parse.py
      pairbench bench --store postgresql://ci@db/bench ./build/bench
    """
    if len(workers) > 2:
        raise click.UsageError(f"bench takes one worker or two (baseline and candidate), got {len(workers)}")
    window = open_activity_window()  # its 0.1 s pass while the code below loads
    from pairbench.bench import BenchSession

    store, no_store = options.pop("store"), options.pop("no_store")
    settings = parse_settings("bench", workers, options)
    target = store_target(store, no_store)
    check_output_paths(settings)
    session = BenchSession(settings, app.environment(activity_since=window))
    shown = []

    def progress(b: int, label: str, count: int, rule):
        close_progress(shown[-1] if shown else None)
        display = progress_for(app.io, settings.sampling, len(workers) if not settings.workers.against else 2,
                               quiet=settings.outputs.quiet, effects=rule.current if rule else None,
                               clock=app.clock, label=f"[{b + 1}/{count}] {label}")
        shown.append(display)
        return display

    try:
        outcome = session.measure(progress)
    finally:
        close_progress(shown[-1] if shown else None)
    return report_outcome(app, settings, outcome, target)


@cli.command("include-dir")
@click.pass_obj
def include_dir(app: App):
    """Print the directory of pairbench.h, the C/C++ worker header.

    \b
    Example:
      cc -O2 -I"$(pairbench include-dir)" bench.c -o bench
    """
    import pairbench

    app.io.out(os.path.join(os.path.dirname(pairbench.__file__), "include"))
    return EXIT_OK
