"""``pairbench run`` and ``pairbench compare``: measure, analyse, print, store."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

import click

from pairbench import analysis
from pairbench.cli.app import EXIT_CODES_HELP, Io, cli, make_executor
from pairbench.cli.options import percent_option, sampling_options
from pairbench.cli.progress import close_progress, progress_printer
from pairbench.cli.report import export_options, export_paths, refuse_shared_paths, write_exports
from pairbench.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VERDICT, ResultFileError, UsageError
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.plan import SamplingPlan, StopRule
from pairbench.measure.session import Outcome, SessionSpec, measure
from pairbench.report import text as text_report
from pairbench.verdict import FAIL_ON_CHOICES


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("commands", nargs=-1, required=True)
@sampling_options(default_warmup=0, default_max_time="3s")
@export_options
@click.pass_obj
def run(io: Io, commands: tuple[str, ...], **options):
    """Measure each COMMAND and print an honest summary.

    With several commands, samples are interleaved in randomized order: every
    round runs each command once, so drift affects all of them alike.

    \b
    Examples:
      pairbench run 'sleep 0.01'
      pairbench run --runs 50 --warmup 3 'gzip -k -f data.bin'
      pairbench run --json out.json 'python -c pass' 'python -S -c pass'
    """
    spec = build_session_spec("run", commands, options, io=io)
    progress = progress_printer(io, options["quiet"], spec.plan)
    outcome = measure(spec, make_executor(OutputPolicy.parse(options["output"])),
                      on_progress=progress, finalize=with_summaries)
    close_progress(progress)
    return finish_measurement(io, outcome, options)


def with_summaries(run):
    """``run`` with its per-variant summaries and the doctor's footnotes attached (stored)."""
    from pairbench.doctor.footnotes import environment_footnotes, sample_footnotes

    notes = (*environment_footnotes(run.environment, run.kind, len(run.variants)),
             *sample_footnotes(run))
    return run.replace(summaries=tuple(s.to_dict() for s in analysis.summarize_run(run)),
                       warnings=tuple(dict.fromkeys((*run.warnings, *notes))))


def build_session_spec(kind: str, commands: Sequence[str], options: dict, *, io: Io,
                       labels: tuple[str, ...] = (), default_names: tuple[str, ...] = ()) -> SessionSpec:
    """Turn parsed options into a validated :class:`SessionSpec` (usage errors raised here).

    Without ``--name`` the variants are named ``default_names`` (else the command
    texts), a repeated one getting a " (2)" suffix; repeated ``--name`` values are refused.
    """
    from pairbench.environment import collect_environment
    from pairbench.measure.commandline import parse_command, shell_syntax_warning

    check_result_path(options["json_path"])
    refuse_shared_paths(output_files(options))
    shell = options["shell"]
    parsed = tuple(parse_command(c, shell=shell) for c in commands)
    names = tuple(options["names"])
    if names and len(names) != len(commands):
        raise UsageError(f"--name was given {len(names)} time(s) for {len(commands)} command(s)")
    _refuse_repeated_names(names)
    names, renamed = distinct_names(names or default_names or tuple(commands))
    if options["seed"] is None:
        options["seed"] = secrets.randbits(32)
    stop = StopRule(runs=options["runs"], min_runs=options["min_runs"], max_runs=options["max_runs"],
                    max_time_ns=options["max_time"])
    plan = SamplingPlan(
        commands=parsed,
        stop=stop,
        warmup_rounds=options["warmup"],
        prepare=parse_command(options["prepare"], shell=shell) if options["prepare"] else None,
        timeout_ns=options["timeout"],
        ignore_failure=options["ignore_failure"],
        seed=options["seed"],
        names=names,
    )
    return SessionSpec(
        kind=kind,
        plan=plan,
        labels=labels,
        setup=parse_command(options["setup"], shell=shell) if options["setup"] else None,
        cleanup=parse_command(options["cleanup"], shell=shell) if options["cleanup"] else None,
        environment=collect_environment(),
        options=_stored_options(options),
        shell_overhead=_shell_overhead(options) if shell else None,
        json_path=options["json_path"] if options["json_path"] != "-" else None,
        notes=(*renamed, *filter(None, (shell_syntax_warning(c) for c in parsed))),
    )


def check_result_path(path: str | None) -> None:
    """Refuse, before measuring, a ``--json`` path that is a directory or lies in a missing or
    read-only directory (``-``, standard output, is fine), as ``--export-*`` paths are refused."""
    if path is None or path == "-":
        return
    if Path(path).is_dir():
        raise UsageError(f"--json {path!r} is a directory; give a file path, e.g. "
                         f"{str(Path(path) / 'result.json')!r}")
    directory = Path(path).resolve().parent
    if not directory.is_dir():
        raise UsageError(f"--json {path!r}: the directory {str(directory)!r} does not exist")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"--json {path!r}: the directory {str(directory)!r} is not writable")


def output_files(options: dict) -> list[tuple[str, str]]:
    """Every file a measurement writes, with the option naming it: --json and its journal,
    --output FILE (the commands' output) and the --export-* files."""
    from pairbench.resultfile import journal_path

    files = []
    json_path = options["json_path"]
    if json_path and json_path != "-":
        files += [("--json", json_path), ("--json's journal", str(journal_path(json_path)))]
    if options["output"] not in ("null", "inherit"):
        files.append(("--output", options["output"]))
    return files + export_paths(options)


def _refuse_repeated_names(names: Sequence[str]) -> None:
    for i, name in enumerate(names):
        if name in names[:i]:
            raise UsageError(f"two commands are both named {name!r}; give distinct --name values")


def distinct_names(names: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` with each repeat renamed "NAME (2)", "NAME (3)"..., and a note saying so for each name.

    Comparisons and reports match variants by name, so no two may share one (the
    ``--self-check`` copy of the baseline is likewise "NAME (copy)").
    """
    taken, seen = set(names), set()
    result: list[str] = []
    renamed: dict[str, list[str]] = {}
    for name in names:
        if name not in seen:
            seen.add(name)
            result.append(name)
            continue
        k = 2
        while f"{name} ({k})" in taken:
            k += 1
        taken.add(f"{name} ({k})")
        result.append(f"{name} ({k})")
        renamed.setdefault(name, []).append(f"{name} ({k})")
    notes = tuple(
        f"the command {name!r} is given "
        + (f"twice; the second is named {copies[0]!r}" if len(copies) == 1 else
           f"{len(copies) + 1} times; the others are named {', '.join(map(repr, copies))}")
        + ", so that comparisons and reports can tell them apart"
        for name, copies in renamed.items())
    return tuple(result), notes


def _shell_overhead(options: dict) -> dict:
    from pairbench.measure.commandline import measure_shell_startup

    executor = make_executor(OutputPolicy())
    try:
        startup = measure_shell_startup(executor)
    finally:
        executor.close()
    return {"median_ns": startup.median_ns, "min_ns": startup.min_ns, "n": startup.n}


def _stored_options(options: dict) -> dict:
    """The options as stored in the result document (JSON-ready)."""
    return {key: (list(value) if isinstance(value, tuple) else value) for key, value in options.items()}


def finish_measurement(io: Io, outcome: Outcome, options: dict) -> int:
    """Print the summary of a finished (or cut short) run and return the exit code."""
    run = outcome.run
    summaries = analysis.summaries_from_dicts(run.summaries) if run.summaries else analysis.summarize_run(run)
    _emit(io, outcome, options, text_report.render_run(run, summaries, color=io.color))
    export_failed = _export(io, run, options)
    return _cut_short_exit_code(io, outcome) or export_failed or EXIT_OK


def _export(io: Io, run, options: dict) -> int | None:
    """Write the --export-* files; if one cannot be written, say so and return its exit code (4).

    Never raises: the caller still reports how the run itself ended, and that
    code (a failed command 3, Ctrl-C 130) wins over an export's failure, which
    in turn wins over a --fail-on match (1).
    """
    try:
        write_exports(io, run, options)
    except ResultFileError as exc:
        io.err(f"error: {exc}")
        return exc.exit_code
    return None


def _cut_short_exit_code(io: Io, outcome: Outcome) -> int | None:
    """The exit code of a session that ended early (error or Ctrl-C) or whose result file could
    not be written, after saying why; else None. An unwritten result file decides the code (4)."""
    if outcome.error is not None:
        io.err(f"error: {outcome.error}")
    if outcome.result_error is not None:
        io.err(f"error: {outcome.result_error}")
        return outcome.result_error.exit_code
    if outcome.error is not None:
        return outcome.error.exit_code
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return None


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True)
@sampling_options(default_warmup=1, default_max_time="60s")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01,
              show_default=True, help="Family-wise error rate of the verdicts.")
@click.option("--threshold", default="1", show_default=True, callback=percent_option, metavar="PERCENT",
              help="Smallest change that matters, in percent.")
@click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default="never", show_default=True,
              help="Exit 1 when a verdict (not negligible) matches: slower, faster, change (either).")
@export_options
@click.option("--self-check", is_flag=True,
              help="Also run a copy of the baseline: an A/A comparison that must not find a change.")
@click.pass_obj
def compare(io: Io, baseline: str, candidates: tuple[str, ...], **options):
    """Is CANDIDATE faster or slower than BASELINE, by how much, how sure?

    Every round runs each command once in a fresh random order; the effect is the
    median per-round ratio candidate/baseline with an interval whose error rate is
    alpha even though sampling stops as soon as the verdict is decided (an
    anytime-valid confidence sequence). With --runs the number of rounds is fixed
    and the exact sign-test interval is used.

    \b
    Verdicts: slower / faster (the interval excludes 0; "negligible" if it lies
    within ±threshold), equivalent (it includes 0 and lies within ±threshold),
    inconclusive (otherwise; the rounds still needed are estimated).

    \b
    Examples:
      pairbench compare ./build-main/app ./build-pr/app
      pairbench compare --fail-on slower --json result.json 'python old.py' 'python new.py'
      pairbench compare --runs 100 --self-check 'gzip -1 -c f' 'gzip -6 -c f' 'gzip -9 -c f'
    """
    from pairbench.comparison import SELF_CHECK_LABEL, StoppingRule

    commands = (baseline, *candidates) + ((baseline,) if options["self_check"] else ())
    names = tuple(options["names"])
    if names and options["self_check"] and len(names) == len(commands) - 1:
        names = names + (f"{names[0]} (copy)",)
    options["names"] = names
    labels = ("baseline",) + ("candidate",) * len(candidates) + (
        (SELF_CHECK_LABEL,) if options["self_check"] else ())
    default_names = (baseline, *candidates, f"{baseline} (copy)") if options["self_check"] else ()
    spec = build_session_spec("compare", commands, options, io=io, labels=labels,
                              default_names=default_names)
    settings = decision_settings(options, family=len(candidates))
    rule = StoppingRule(settings, 0, list(range(1, len(candidates) + 1)))
    progress = progress_printer(io, options["quiet"], spec.plan, detail=EffectWatch(rule))
    outcome = measure(spec, make_executor(OutputPolicy.parse(options["output"])),
                      on_progress=progress, decide=rule if settings.anytime else None,
                      finalize=lambda run: with_comparisons(with_summaries(run), settings))
    close_progress(progress)
    return finish_comparison(io, outcome, options, settings)


def with_comparisons(run, settings):
    """``run`` with its comparisons (verdicts, effects, secondary statistics) attached."""
    from pairbench.comparison import compare_run

    results = compare_run(run, settings)
    return run.replace(comparisons=tuple(r.to_dict(settings, run.stopped_because) for r in results))


class EffectWatch:
    """The progress line's detail for ``compare``: the current effect of each comparison.

    With adaptive stopping ``rule`` decides, and its latest effects are shown
    (from --min-runs on). With --runs nothing consults it, so it is consulted
    here, on each redraw (a sign-test interval: O(n log n) per comparison).
    """

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, sampler) -> str:
        if not self.rule.settings.anytime:
            self.rule(sampler)
        return current_effect_text(self.rule)


def current_effect_text(rule) -> str:
    """The latest effect of each comparison for the progress line: "+3.1% [+1.2%, +5.0%]"."""
    from pairbench.units import format_percent

    parts = []
    for _verdict, effect in rule.latest.values():
        if effect is None:
            parts.append("effect: collecting rounds")
        else:
            parts.append(f"effect {format_percent(effect.estimate)} "
                         f"[{format_percent(effect.low)}, {format_percent(effect.high)}]")
    return " | ".join(parts)


def decision_settings(options: dict, *, family: int):
    from pairbench.comparison import DecisionSettings

    return DecisionSettings(alpha=options["alpha"], threshold=options["threshold"],
                            anytime=options["runs"] is None, family=family)


def finish_comparison(io: Io, outcome: Outcome, options: dict, settings) -> int:
    """Analyse, print and store a comparison; the exit code honours --fail-on."""
    from pairbench.verdict import Verdict, matches_fail_on

    run = outcome.run
    summaries = analysis.summaries_from_dicts(run.summaries)
    _emit(io, outcome, options, text_report.render_compare(run, summaries, run.comparisons, color=io.color))
    export_failed = _export(io, run, options)
    cut_short = _cut_short_exit_code(io, outcome)
    if cut_short is not None:
        return cut_short
    failing = [c for c in run.comparisons if not c["self_check"] and matches_fail_on(
        Verdict(c["verdict"], negligible=c["negligible"]), options["fail_on"])]
    if failing:
        io.err(f"--fail-on {options['fail_on']}: {len(failing)} comparison(s) matched")
    return export_failed or (EXIT_VERDICT if failing else EXIT_OK)


def _emit(io: Io, outcome: Outcome, options: dict, human: str) -> None:
    """Print the report (or the document for --json -), and say where --json FILE was written."""

    from pairbench.resultfile import run_to_document

    path = options.get("json_path")
    if path == "-":
        io.out(json.dumps(run_to_document(outcome.run), allow_nan=False))
        return
    io.out(human)
    if path and outcome.result_error is None:
        io.err(f"Result written to {path}")
