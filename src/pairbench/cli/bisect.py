"""``pairbench bisect``: the commit between GOOD and BAD that made a benchmark slower."""

from __future__ import annotations

import click

from pairbench.cli.app import App, cli
from pairbench.cli.bench import bench_options
from pairbench.cli.options import (
    decision_options,
    environment_options,
    sampling_options,
    store_options,
)
from pairbench.errors import (
    EXIT_BISECT_INCONCLUSIVE,
    EXIT_BISECT_NO_SLOWDOWN,
    EXIT_BISECT_SPREAD,
    EXIT_OK,
    EXIT_RESULT_FILE,
    UsageError,
)

BISECT_SAMPLING = ("warmup", "runs", "min_runs", "max_runs", "timeout", "output", "seed", "quiet", "version")
DEFAULT_MAX_TIME = "60s"
EXIT_OF = {"found": EXIT_OK, "inconclusive": EXIT_BISECT_INCONCLUSIVE, "spread": EXIT_BISECT_SPREAD,
           "no-slowdown": EXIT_BISECT_NO_SLOWDOWN}
BISECT_EXIT_CODES = """\b
Exit codes:
  0    found: one commit is named, with its effect and interval
  2    usage error
  3    GOOD or BAD does not build, or a benchmark fails on them
  4    the history store or an output file could not be written
  5    inconclusive: no commit is named (the budget ran out, a comparison could
       not decide, commits do not build); the range that remains is printed
  6    spread: no single commit explains the slowdown
  7    no slowdown: BAD is not slower than GOOD by the threshold
  70   internal error (a bug in pairbench; please report it)
  130  interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP): what was found is printed
"""


@cli.command(epilog=BISECT_EXIT_CODES)
@click.argument("good", metavar="GOOD")
@click.argument("bad", metavar="BAD")
@lambda f: bench_options(f, against=False, keep=("filter", "sample_time", "harness"))
@click.option("--max-time", metavar="DURATION",
              help="Time budget of each comparison (of each benchmark, for a suite)  [default: 60s]")
@click.option("--budget", metavar="DURATION",
              help="Time budget of the whole search, builds included; when it runs out the search says "
                   "inconclusive and prints the range that remains.")
@click.option("--keep-builds", metavar="N",
              help="Builds kept in the build cache when the search ends (least recently used removed "
                   "first)  [default: 16]")
@sampling_options("bench", keep=BISECT_SAMPLING)
@lambda f: decision_options(f, self_check=False, fail_on=False)
@click.option("--json", "json_path", metavar="FILE", help="Write what the search found as JSON to FILE; - for "
              "standard output.")
@click.option("--export-markdown", "export_markdown", metavar="FILE",
              help="Also write the answer and the comparisons as Markdown to FILE.")
@store_options
@environment_options
@click.pass_obj
def bisect(app: App, good: str, bad: str, store: str | None, no_store: bool, budget: str | None,
           keep_builds: str | None, json_path: str | None, export_markdown: str | None,
           pass_env: tuple[str, ...], **options):
    """Find the commit between GOOD and BAD that made a benchmark slower.

    Revisions are checked out and built with the [confirm] build command of
    pairbench.toml (or [tool.pairbench.confirm]), each tree once (builds are
    cached by tree in the repository's git directory), and compared in paired,
    interleaved rounds: the [confirm] bench target by `pairbench bench` (-k
    chooses the benchmarks), or the [confirm] command by `pairbench compare`.
    BAD against GOOD first: the step, and a quarter of it, the boundary every further
    comparison decides against. Then the middle commit of the range that
    remains against GOOD: slower by the step, like GOOD, or inconclusive; last,
    the commit found against its parent. GOOD must lie on BAD's first-parent
    line (a merge is one commit). The error rate alpha holds for the whole
    search: each comparison gets alpha / (ceil(log2 N) + 2), N the commits
    after GOOD, the most comparisons the search can make. No commit is named
    unless it is, by itself, slower than its parent by at least a quarter of the step;
    otherwise the slowdown is said to be spread over the commits, or the answer
    is inconclusive with the range that remains. With a history store each
    comparison is kept as a confirmation. Sampling options take bench's
    defaults for a bench target and compare's for a command. The config of the
    checkout chooses the build command: run bisect only where you would run the
    checkout's own build. Builds and benchmarks get PATH, HOME, the locale, TZ,
    TERM and TMPDIR of your environment, and what --pass-env names.

    \b
    Examples:
      pairbench bisect v1.3.0 v1.4.0
      pairbench bisect 4b120b1 b7135bc -k '^parse$'
      pairbench bisect main~64 main --max-time 30s --budget 20m --json bisect.json
      pairbench bisect "$good" "$bad" -k "$regex" --export-markdown bisect.md
      pairbench bisect v1.3.0 v1.4.0 --pass-env CC --pass-env CFLAGS
    """
    from pairbench.analysis.bisection import Search
    from pairbench.cli.confirm import seams
    from pairbench.cli.measuring import programs_environment, store_target
    from pairbench.cli.progress import Displays
    from pairbench.cli.report import check_outputs
    from pairbench.report.bisect import header_line, trial_line
    from pairbench.sessions.bisect import BisectSession
    from pairbench.sessions.builds import DEFAULT_KEEP
    from pairbench.sessions.record import store_files
    from pairbench.store.project import find_project
    from pairbench.units import parse_duration_ns

    session = BisectSession(find_project(), good, bad)
    options["max_time"] = options.get("max_time") or DEFAULT_MAX_TIME
    settings = session.recipe.settings(("GOOD", "BAD"), options)
    budget_ns = parse_duration_ns(budget, option="--budget") if budget is not None else None
    keep = _count("--keep-builds", keep_builds, DEFAULT_KEEP)
    if json_path == export_markdown == "-":
        raise UsageError("--json - and --export-markdown - both ask for standard output; give one a file")
    outputs = [(option, path) for option, path in (("--json", json_path), ("--export-markdown", export_markdown))
               if path and path != "-"]
    target = store_target(store, no_store)
    check_outputs(outputs, example="bisect.json", inputs=store_files(target))
    say = (lambda text: None) if settings.outputs.quiet else app.io.err
    say(header_line(session, Search(session.commits, settings.decision.alpha, settings.decision.threshold)))
    with programs_environment(pass_env, isolated=True, store=target), Displays(app.io, settings, app.clock) as shown:
        bisected = session.run(settings, seams(app, shown), budget_ns=budget_ns, store=target, keep_builds=keep,
                               clock=app.clock, on_trial=lambda done: say(trial_line(session.commits, done)))
    return _report(app, bisected, json_path, export_markdown)


def _report(app: App, bisected, json_path: str | None, export_markdown: str | None) -> int:
    from pairbench.cli.report import write_files
    from pairbench.errors import interruption_exit_code
    from pairbench.report.exports import renderer

    files = [(path if path != "-" else None, renderer("bisect", fmt)(bisected)) for path, fmt in
             ((json_path, "json"), (export_markdown, "markdown")) if path]
    if not any(path is None for path, _ in files):
        app.io.out(renderer("bisect", "text")(bisected).rstrip("\n"))
    write_files(app.io, files)
    if bisected.interrupted:
        return interruption_exit_code(bisected.interrupted)
    stored = any(d.store_error for d in bisected.done)
    return EXIT_RESULT_FILE if stored else EXIT_OF[bisected.answer.kind]


def _count(option: str, value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{option} must be a whole number, got {value!r}") from None
    if number < 0:
        raise UsageError(f"{option} must be 0 or more, got {value!r}")
    return number
