"""``pairbench bench``: a suite of benchmarks on one or two benchmark programs; ``pairbench include-dir``."""

from __future__ import annotations

import os

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.measuring import (
    check_output_paths,
    open_activity_window,
    programs_environment,
    report_outcome,
    store_target,
)
from pairbench.cli.options import (
    BENCH_SAMPLING,
    _shown,
    applied,
    decision_options,
    environment_options,
    fail_on_metric_option,
    sampling_options,
    store_options,
)
from pairbench.cli.progress import Displays
from pairbench.cli.report import export_options
from pairbench.errors import EXIT_OK
from pairbench.harness_registry import HARNESS_CHOICES, REGISTRY
from pairbench.parsers import parse_settings
from pairbench.settings import default


def bench_options(f, *, against: bool = True, keep: tuple[str, ...] | None = None):
    """``bench``'s own options: which benchmarks, how long a sample, the revision to compare with
    (not for ``confirm``, which names its two revisions); only those named in ``keep`` when given."""
    options = [
        click.option("--filter", "-k", "filter", metavar="REGEX",
                     help="Measure only the benchmarks whose name matches REGEX (searched, as go test -bench)."),
        click.option("--sample-time", metavar="DURATION",
                     help="How long one sample lasts: the iteration count (a power of two, the same on both "
                          "sides) is chosen for it; for workers raised (and said) until timing a sample costs "
                          "at most 1% of it.  [default: 1ms for workers, 10ms for a harness's invocations]"),
        *([click.option("--against", metavar="REV",
                        help="Python benchmarks: compare the working tree with git revision REV (checked out "
                             "into a temporary worktree; each side imports its own tree).")] if against else []),
        click.option("--harness", metavar="|".join(HARNESS_CHOICES),
                     help="The harness of the benchmark programs (default: detected from them): "
                          + ", ".join(dict.fromkeys(REGISTRY[name].words for name in HARNESS_CHOICES)) + "."),
        click.option("--jobs", "-j", metavar="N",
                     help="Measure N benchmarks at once, each on its own CPU where there are enough (see "
                          "docs/suites.md for what it costs)." + _shown("jobs", "bench")),
        click.option("--shard", metavar="K/N",
                     help="Measure share K of N of the suite (deterministic, balanced by name or by "
                          "--balance); join the shards' results with pairbench merge."),
        click.option("--balance", metavar="RESULT",
                     help="With --shard: balance the shards by how long each benchmark took in RESULT (an "
                          "earlier result of the suite, merged or not)."),
        click.option("--repetitions", metavar="N",
                     help="Go test binaries: a round runs each side's process once, repeating the benchmark N "
                          "times in it (-test.count N); the first repetition is a warmup and the round's value "
                          "is the median of the others. Other harnesses run it once." + _shown("repetitions", "bench")),
        click.option("--suite-time", metavar="DURATION",
                     help="Time budget of the whole suite, shared among the benchmarks as it is spent "
                          "(--max-time still caps each)."),
    ]
    return applied(options, f, keep)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("workers", nargs=-1, required=True, metavar="BASELINE [CANDIDATE]")
@bench_options
@sampling_options("bench", keep=BENCH_SAMPLING)
@lambda f: decision_options(f, self_check=False)
@fail_on_metric_option
@export_options
@store_options
@environment_options
@click.pass_obj
def bench(app: App, workers: tuple[str, ...], **options):
    """Compare every benchmark two builds of a suite share, interleaved, benchmark by benchmark.

    A side is a benchmark program: a Google Benchmark binary, a Go test binary
    (go test -c), a criterion bench binary, pytest-benchmark tests (a file or
    directory), or a program speaking pairbench's worker protocol (built with
    pairbench.h, any language: docs/worker-protocol.md), or Python benchmark
    files with functions marked @pairbench.benchmark. The harness is detected,
    or named with --harness. Given one side, its benchmarks are measured; given
    two, each benchmark they share is compared: a pilot sizes the sample (a
    power of two of iterations, the same on both sides) and the rounds, the
    benchmark is validated, then rounds of one sample per side in random order
    run until the verdict is decided or --max-time (per benchmark) is spent. A
    harness runs once per sample, filtered to the one benchmark; pytest-benchmark
    tests are served by a pytest worker per side and block of rounds instead
    (--max-time 60s unless given; --harness pytest-benchmark-processes runs
    pytest per sample). The error rate
    alpha holds for the whole suite (Holm's procedure over every comparison, all
    shards included). Benchmarks found on one side only are listed.

    \b
    Examples:
      pairbench bench ./bench-old ./bench-new
      pairbench bench build-main/micro_bench build-pr/micro_bench --fail-on slower
      pairbench bench --harness go old.test new.test -k 'Parse' --json result.json
      pairbench bench --harness go ./old.test ./new.test --fail-on slower --fail-on-metric allocs/op
      pairbench bench old/tests/bench new/tests/bench --harness pytest-benchmark
      pairbench bench --shard 2/4 --json shard-2.json ./old ./new
      pairbench bench benchmarks/ --against main
      pairbench bench benchmarks/ --against main --pass-env DATA_DIR
      pairbench bench bench_parse.py
      pairbench bench --store postgresql://ci@db/bench ./build/bench
    """
    if len(workers) > 2:
        raise click.UsageError(f"bench takes one worker or two (baseline and candidate), got {len(workers)}")
    window = open_activity_window()  # its 0.1 s pass while the code below loads
    from pairbench.sessions.bench import harness_of  # loaded while the window passes

    store, no_store, pass_env = options.pop("store"), options.pop("no_store"), options.pop("pass_env")
    if options.get("max_time") is None:
        options["max_time"] = default("max_time", "bench", harness_of(workers, options.get("harness")),
                                      metric=options.get("metric"))
    settings = parse_settings("bench", workers, options)
    target = store_target(store, no_store)
    check_output_paths(settings, target)
    with programs_environment(pass_env, isolated=settings.workers.against is not None, store=target):
        return _bench(app, settings, target, window)


def _bench(app: App, settings, target, window) -> int:
    from pairbench.sessions.bench import BenchSession
    session = BenchSession(settings, app.environment(activity_since=window), executor_factory=app.executor_factory,
                           workers=app.workers)
    with Displays(app.io, settings, app.clock) as shown:
        outcome = session.measure(shown)
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

    app.io.out(os.path.join(os.path.dirname(pairbench.__file__), "worker", "include"))
    return EXIT_OK
