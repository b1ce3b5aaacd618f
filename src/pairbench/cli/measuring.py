"""``pairbench run`` and ``pairbench compare``: options to settings, measure, print, store."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli
from pairbench.cli.options import (
    decision_options,
    environment_options,
    metric_option,
    sampling_options,
    store_options,
)
from pairbench.cli.report import (
    check_export_paths,
    check_outputs,
    export_options,
    export_paths,
    write_document,
    write_exports,
)
from pairbench.errors import EXIT_MEASUREMENT, EXIT_OK, EXIT_VERDICT, ResultFileError, UsageError
from pairbench.parsers import parse_settings
from pairbench.report.safe import visible
from pairbench.settings import Settings
from pairbench.units import fixed_time_unit


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("commands", nargs=-1, required=True)
@sampling_options("run")
@metric_option("What a stored result keeps as each command's point of its history (history never mixes two)")
@export_options
@store_options
@environment_options
@click.pass_obj
def run(app: App, commands: tuple[str, ...], **options):
    """Measure each COMMAND and print an honest summary.

    With several commands, samples are interleaved in randomized order: every
    round runs each command once, so drift affects all of them alike. With
    -P/-L each parameter value is a benchmark of its own, interleaved too.

    Commands run without a shell (split into words like a shell does); shell
    syntax such as | && > $VAR is refused unless --shell names one.

    Outliers are reported, never dropped: dropping them doubled the false
    changes in our simulation (hyperfine #837 asks for it) and would hide a
    slowdown that lives in the tail.

    \b
    Examples:
      pairbench run 'sleep 0.01'
      pairbench run --runs 50 --warmup 3 'gzip -k -f data.bin'
      pairbench run --json out.json 'python -c pass' 'python -S -c pass'
      pairbench run -L level 1,6,9 'gzip -{level} -k -f data.bin'
      pairbench run -S bash 'cat big.log | grep -c ERROR'
      pairbench run --store sqlite:///.pairbench/history.db --name parse './parse big.json'
    """
    return measure_commands(app, "run", commands, options)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True)
@sampling_options("compare")
@decision_options
@export_options
@store_options
@environment_options
@click.pass_obj
def compare(app: App, baseline: str, candidates: tuple[str, ...], **options):
    """Is CANDIDATE faster or slower than BASELINE, by how much, how sure?

    Every round runs each command once in a fresh random order; the effect is the
    median per-round ratio candidate/baseline with an interval whose error rate is
    alpha even though sampling stops as soon as the verdict is decided (an
    anytime-valid confidence sequence). With --runs the number of rounds is fixed
    and the exact sign-test interval is used.

    \b
    Verdicts: slower / faster (the interval excludes 0; "negligible" if it lies
    within ±threshold), equivalent (it includes 0 and lies within ±threshold),
    inconclusive (otherwise; the rounds still needed are estimated when more
    rounds can decide). A candidate (or baseline) that never succeeded under
    --ignore-failure has no verdict, and fails any --fail-on gate with exit 3.

    Outliers are reported, never dropped: dropping them doubled the false
    changes in our simulation (hyperfine #837 asks for it) and would hide a
    slowdown that lives in the tail.

    \b
    Examples:
      pairbench compare ./build-main/app ./build-pr/app
      pairbench compare --fail-on slower --json result.json 'python old.py' 'python new.py'
      pairbench compare --runs 100 --self-check 'gzip -1 -c f' 'gzip -6 -c f' 'gzip -9 -c f'
      pairbench compare -P n 1000 3000 -D 1000 './old --size {n}' './new --size {n}'
    """
    return measure_commands(app, "compare", (baseline, *candidates), options)


def measure_commands(app: App, kind: str, commands: tuple[str, ...], options: dict) -> int:
    """``run`` or ``compare`` (``kind``) of ``commands`` with the options click read: settings,
    store, the programs' environment, then :func:`measure`."""
    window = open_activity_window()  # its 0.1 s pass while the code that measures loads
    store, no_store, pass_env = options.pop("store"), options.pop("no_store"), options.pop("pass_env")
    settings = parse_settings(kind, commands, options)
    target = store_target(store, no_store)
    with programs_environment(pass_env, isolated=False, store=target):
        return measure(app, settings, target, window)


@contextlib.contextmanager
def programs_environment(pass_env, *, isolated: bool, store):
    """Inside the block, programs pairbench starts get the environment ``measure.child_environment``
    gives them: ``--pass-env`` names (checked here: a usage error names the bad one), and only the
    basics besides when they are code of another commit (``isolated``). pairbench itself becomes
    non-dumpable when it holds a credential (its environment has one, or it writes to a ``store``),
    so the programs cannot read it from /proc either."""
    from pairbench.measure import child_environment

    try:
        passed = child_environment.passed_names(pass_env)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if store is not None or child_environment.holds_credential():
        child_environment.keep_to_ourselves()
    with child_environment.policy(child_environment.Policy(isolated, passed)):
        yield


def store_target(given: str | None, no_store: bool):
    """The history store a measuring command's result goes to (``--store``, ``PAIRBENCH_STORE``, the
    project config), reached and migrated now so that a store that cannot take it fails before
    anything is measured; None when results are not stored."""
    from pairbench.sessions.record import open_store, target_of
    from pairbench.store.project import find_project

    if no_store:
        if given:
            raise click.UsageError("--store and --no-store contradict; give one of them")
        return None
    target = target_of(find_project(), given)
    if target is not None:
        open_store(target).close()
    return target


def measure(app: App, settings: Settings, target, window) -> int:
    """Measure ``settings``' commands, print the report, write the files asked for, keep the result
    in the store ``target`` (None: none); the exit code. ``window``: the machine's activity window,
    opened when the command began (``open_activity_window``)."""
    from pairbench.cli.progress import Displays
    from pairbench.sessions.commands import Session

    check_output_paths(settings, target)
    # the activity window is read between the samples once it has passed, not waited for before them
    environment = app.environment(activity_since=window, activity_later=True)
    session = Session(settings, app.executor_factory, environment, activity=window)
    with Displays(app.io, settings, app.clock) as shown:
        outcome = session.measure(shown, beside_warmup=functools.partial(load_what_follows_the_samples, settings))
    return report_outcome(app, settings, outcome, target)


def load_what_follows_the_samples(settings: Settings) -> None:
    """Import what analysing the run of ``settings`` and printing its report will, after the last
    sample: called beside the warmup rounds instead (whose samples are never analysed), so that the
    report does not wait for it. tests/cli/test_startup.py checks that no module of pairbench's is
    left to load after the last sample."""
    import numpy.fft  # noqa: F401 - the modality's density
    import rich.table  # noqa: F401

    import pairbench.analysis.comparison  # noqa: F401
    import pairbench.analysis.doctor  # noqa: F401
    import pairbench.analysis.secondary  # noqa: F401
    import pairbench.analysis.suite  # noqa: F401
    import pairbench.analysis.validation  # noqa: F401
    import pairbench.environment.checks  # noqa: F401
    import pairbench.report.text  # noqa: F401
    import pairbench.stats._select  # noqa: F401
    import pairbench.stats._special  # noqa: F401
    import pairbench.stats.descriptive  # noqa: F401
    import pairbench.stats.modality  # noqa: F401
    import pairbench.stats.ranks  # noqa: F401
    import pairbench.stats.shift  # noqa: F401
    import pairbench.stats.skewed  # noqa: F401
    import pairbench.stats.timeseries  # noqa: F401

    if settings.outputs.json_path:
        import pairbench.report.jsonfile  # noqa: F401
        import pairbench.store.resultfile  # noqa: F401


def open_activity_window():
    """The machine's "right now" window, opened on this machine now, so that it passes while a
    measuring command loads its code (``environment.collect_environment(activity_since=...)``)."""
    from pairbench.environment.activity import ActivityWindow

    return ActivityWindow.here()


def report_outcome(app: App, settings: Settings, outcome, target=None, *, provenance=None) -> int:
    """Print a measuring session's report, write the files asked for, keep the result in the store
    ``target`` (after its file: a store that fails loses nothing), and return the exit code."""
    from pairbench.report import text as text_report

    run, analysis = outcome.run, _sorted(outcome.analysis, run_order=outcome.run, sort=settings.outputs.sort)
    render = text_report.renderer(run, analysis)
    with fixed_time_unit(settings.outputs.time_unit):
        _emit(app, settings, outcome, analysis, lambda: render(run, analysis, color=app.io.color))
        export_failed = _export(app, run, analysis, settings)
    store_failed = _store(app, settings, outcome, target, provenance)
    cut_short = _cut_short_exit_code(app, outcome)
    if cut_short is not None:
        return cut_short
    never_ran = _never_succeeded(app, settings, analysis)  # a failed command (3) wins over an export (4)
    # said even when an export's failure decides the code (the self-check is no real comparison)
    matched = fail_on_gate(app, analysis.real_comparisons, settings.decision.fail_on)
    matched = _fail_on_metric(app, settings, analysis) or matched
    return never_ran or export_failed or store_failed or matched or EXIT_OK


def _store(app: App, settings: Settings, outcome, target, provenance=None) -> int | None:
    """Keep the result in the history store; on failure say why and where the result is kept, and
    return the store's exit code (4). Never raises."""
    if target is None:
        return None
    from pairbench.sessions.record import record

    path = settings.outputs.json_path
    written = path if path and path != "-" and outcome.result_error is None else None
    recorded = record(outcome.run, outcome.analysis, target, result_path=written,
                      provenance=provenance)
    if recorded.error is None:
        app.io.err(f"Result {recorded.uid[:12]} stored in {visible(target.url.shown)}"
                   + ("" if recorded.added else " (it was there already)"))
        return None
    kept = (f"the result is kept in {recorded.kept_in}; store it later with `pairbench store import "
            f"{recorded.kept_in}`" if recorded.kept_in else "the result could not be kept on disk either; "
            "only this report shows it")
    app.io.err(f"error: {visible(recorded.error)}; {kept}")
    return recorded.error.exit_code


def check_output_paths(settings: Settings, target=None) -> None:
    """Refuse, before measuring, outputs that cannot or must not be written (``outputs.check_output``:
    ``-`` for standard output is fine), two outputs naming one file, and an output that is one of the
    command's inputs (``--input``, ``--balance``, the SQLite store of ``target``)."""
    from pairbench.outputs import refuse_inputs
    from pairbench.sessions.record import store_files
    from pairbench.store.journal import journal_path

    balance = settings.workers.balance if settings.workers else None
    inputs = [("--input", settings.sampling.input), ("--balance", balance), *store_files(target)]
    path = settings.outputs.json_path
    files = []
    if path and path != "-":
        check_outputs([("--json", path)], example="result.json", inputs=inputs)
        files += [("--json", path), ("--json's journal", str(journal_path(path)))]
    if settings.sampling.output not in ("null", "inherit", "pipe"):
        check_outputs([("--output", settings.sampling.output)], example="output.txt", inputs=inputs)
        files.append(("--output", settings.sampling.output))
    check_export_paths(settings.outputs.exports(), inputs)
    refuse_inputs(files + export_paths(settings.outputs.exports()), ())  # two outputs naming one file


def _emit(app: App, settings: Settings, outcome, analysis, human) -> None:
    """Print the report, or instead the one output named ``-`` (the document for --json -, an
    export for --export-WORD -); and say where --json FILE was written."""
    from pairbench.report.exports import EXPORT_OPTIONS, render

    path, to_stdout = settings.outputs.json_path, settings.outputs.to_stdout
    if to_stdout == "json_path":
        write_document(app.io, outcome.run, outcome.analysis, "-")
        return
    if to_stdout is not None:
        for _, text in render(outcome.run, analysis, EXPORT_OPTIONS[to_stdout], None):
            app.io.out(text.removesuffix("\n"))
    else:
        app.io.out(human())
    if path and outcome.result_error is None:
        app.io.err(f"Result written to {path}")


def _export(app: App, run, analysis, settings: Settings) -> int | None:
    """Write the --export-* files; if one cannot be written, say so and return its exit code (4).

    Never raises: the caller still reports how the run itself ended, and that
    code (a failed command 3, Ctrl-C 130) wins over an export's failure, which
    in turn wins over a --fail-on match (1).
    """
    try:
        write_exports(app.io, run, analysis, settings.outputs.exports())
    except ResultFileError as exc:
        app.io.err(f"error: {exc}")
        return exc.exit_code
    return None


def _sorted(analysis, *, run_order, sort: str):
    """``analysis`` with each benchmark's summaries and comparisons in the --sort order: as the
    commands were given (auto, command), or the fastest (lowest mean) first (mean-time)."""
    if analysis is None or sort != "mean-time":
        return analysis
    benchmark = {key: i for i, key in enumerate(run_order.benchmarks)}
    mean = {(s.benchmark, s.side): s.mean if s.mean is not None else math.inf for s in analysis.summaries}

    def order(records, side_of) -> list[int]:
        return sorted(range(len(records)), key=lambda i: (
            benchmark[records[i].benchmark], mean.get((records[i].benchmark, side_of(records[i])), math.inf)))

    def pick(items, indices):
        return tuple(items[i] for i in indices) if items else ()

    summaries = order(analysis.summaries, lambda s: s.side)
    comparisons = order(analysis.comparisons, lambda c: c.candidate)
    return dataclasses.replace(
        analysis, summaries=pick(analysis.summaries, summaries),
        series_figures=pick(analysis.series_figures, summaries),
        comparisons=pick(analysis.comparisons, comparisons),
        comparison_figures=pick(analysis.comparison_figures, comparisons))


def _cut_short_exit_code(app: App, outcome) -> int | None:
    """The exit code of a session that ended early (error or Ctrl-C) or whose result file could
    not be written, after saying why; else None. An unwritten result file decides the code (4)."""
    if outcome.error is not None:
        app.io.err(f"error: {visible(outcome.error)}")  # a worker's words may hold control characters
    if outcome.result_error is not None:
        app.io.err(f"error: {visible(outcome.result_error)}")
        return outcome.result_error.exit_code
    if outcome.error is not None:
        return outcome.error.exit_code
    if outcome.interrupted:  # 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
        return 128 + outcome.signum
    return None


def _never_succeeded(app: App, settings: Settings, analysis) -> int | None:
    """``EXIT_MEASUREMENT`` when --fail-on gates and a comparison's side never succeeded (under
    --ignore-failure): a candidate that never ran has no verdict, and must not pass the gate."""
    if settings.decision.fail_on == "never":
        return None
    never = [c for c in analysis.real_comparisons
             if c.verdict.refusal is not None and c.verdict.refusal.code == "no-successful-samples"]
    for c in never:
        side = c.verdict.refusal.data["side"]
        app.io.err(f"--fail-on {settings.decision.fail_on}: {side} has no successful sample, so its "
                   f"comparison cannot pass (exit {EXIT_MEASUREMENT})")
    return EXIT_MEASUREMENT if never else None


def fail_on_gate(app: App, decided, fail_on: str, what: str = "comparison(s)") -> int:
    """``EXIT_VERDICT`` when a verdict of ``decided`` (records with a ``verdict``: comparisons, a diff's
    differences) matches --fail-on, after saying how many of ``what``; else ``EXIT_OK``."""
    from pairbench.verdict import matches_fail_on

    failing = [d for d in decided if matches_fail_on(d.verdict, fail_on)]
    if not failing:
        return EXIT_OK
    app.io.err(f"--fail-on {fail_on}: {len(failing)} {what} matched")
    return EXIT_VERDICT


def _fail_on_metric(app: App, settings: Settings, analysis) -> int | None:
    """--fail-on-metric on ``bench``'s unit tables (``fail_on_metric_gate``)."""
    if analysis is None:
        return None
    return fail_on_metric_gate(app, settings.decision.fail_on_metric,
                               {t.unit: t.worsened() for t in analysis.metric_tables})


def fail_on_metric_gate(app: App, gated: tuple[str, ...], worse: dict[str, list[bool]]) -> int | None:
    """``EXIT_VERDICT`` when a unit named by --fail-on-metric (or ``all``) has a comparison whose verdict
    is worse, not negligibly (``worse``: per unit reported, per comparison, whether it is: a
    table's ``worsened()``); a unit no benchmark reported is said, since a misspelt gate
    would otherwise never fail."""
    if not gated:
        return None
    for unit in (u for u in gated if u != "all" and u not in worse):
        found = ", ".join(visible(u) for u in worse) or "none"
        app.io.err(f"--fail-on-metric {visible(unit)}: no benchmark reported this unit (units reported: {found})")
    failing = [unit for unit, flags in worse.items() if "all" in gated or unit in gated for flag in flags if flag]
    if not failing:
        return None
    units = ", ".join(dict.fromkeys(visible(unit) for unit in failing))
    app.io.err(f"--fail-on-metric: {len(failing)} comparison(s) worse in {units}")
    return EXIT_VERDICT
