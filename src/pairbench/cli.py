"""The command line: parse options, run sessions, print reports, exit. The only module that prints.

``main(argv)`` returns the exit code; ``entry_point`` is the console script.
Exit codes: 0 success; 1 a verdict matched --fail-on; 2 usage error; 3 a
command could not be measured; 4 a result file could not be read or written;
130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import time
from collections.abc import Sequence

import click

from pairbench import __version__, analysis
from pairbench.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VERDICT,
    PairbenchError,
    UsageError,
)
from pairbench.measure.executor import Executor, OutputPolicy
from pairbench.measure.plan import Progress, Sampler, SamplingPlan, StopRule
from pairbench.measure.session import Outcome, SessionSpec, measure
from pairbench.report import text as text_report
from pairbench.units import format_duration, parse_duration_ns
from pairbench.verdict import FAIL_ON_CHOICES

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    a verdict matched --fail-on (compare)
  2    usage error
  3    a command failed or could not be run
  4    a result file could not be read or written
  130  interrupted (Ctrl-C); finished samples are saved
"""


class Io:
    """Where output goes; swapped in tests."""

    def __init__(self, stdout=None, stderr=None, color: bool | None = None):
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.color = _want_color(self.stdout) if color is None else color

    def out(self, text: str) -> None:
        self.stdout.write(text if text.endswith("\n") else text + "\n")
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(text if text.endswith("\n") else text + "\n")
        self.stderr.flush()


def _want_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


# The executor factory is a seam: tests install a FakeExecutor here.
def _default_executor(output: OutputPolicy) -> Executor:
    from pairbench.measure.posix import PosixExecutor

    return PosixExecutor(output=output)


EXECUTOR_FACTORY = _default_executor


# --------------------------------------------------------------------------- options


def _duration(option: str):
    def convert(ctx, param, value):
        if value is None:
            return None
        try:
            return parse_duration_ns(value, option=option)
        except UsageError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[-1]) from None

    return convert


def sampling_options(*, default_warmup: int, default_max_time: str):
    """Options shared by ``run`` and ``compare``."""

    def decorate(f):
        options = [
            click.option("--warmup", type=click.IntRange(min=0), default=default_warmup, show_default=True,
                         help="Warmup rounds, run and stored but not analysed."),
            click.option("--runs", "-r", type=click.IntRange(min=1), default=None,
                         help="Exact number of rounds (turns adaptive stopping off)."),
            click.option("--min-runs", type=click.IntRange(min=1), default=10, show_default=True,
                         help="Rounds to run before stopping is considered."),
            click.option("--max-runs", type=click.IntRange(min=1), default=None,
                         help="Stop after this many rounds at most."),
            click.option("--max-time", default=default_max_time, show_default=True, metavar="DURATION",
                         callback=_duration("--max-time"),
                         help="Time budget for sampling (e.g. 30s, 2m)."),
            click.option("--prepare", default=None, metavar="CMD",
                         help="Command run before every sample, untimed."),
            click.option("--setup", default=None, metavar="CMD", help="Command run once before sampling."),
            click.option("--cleanup", default=None, metavar="CMD", help="Command run once at the end."),
            click.option("--timeout", default=None, callback=_duration("--timeout"), metavar="DURATION",
                         help="Kill a sample's process group after this long (e.g. 10s)."),
            click.option("--shell", is_flag=True,
                         help="Run commands through sh -c (its start-up cost is measured and reported)."),
            click.option("--output", "output", default="null", show_default=True, metavar="null|inherit|FILE",
                         help="Where the commands' stdout and stderr go."),
            click.option("--ignore-failure", "-i", is_flag=True,
                         help="Keep going when a command fails; failed samples are stored, not analysed."),
            click.option("--seed", type=click.IntRange(min=0), default=None,
                         help="Seed of the random order (printed and stored, so runs can be repeated)."),
            click.option("--json", "json_path", default=None, metavar="FILE",
                         help="Write the result document (raw samples included) to FILE."),
            click.option("--name", "-n", "names", multiple=True,
                         help="Name for a command, in order (repeat for each command)."),
            click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        ]
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="pairbench")
def cli():
    """Benchmark commands with interleaved, randomized pairs and verdicts you can trust.

    \b
    Examples:
      pairbench run 'sleep 0.01'
      pairbench compare './old input.txt' './new input.txt'
      pairbench show result.json
    """


# --------------------------------------------------------------------------- run


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("commands", nargs=-1, required=True)
@sampling_options(default_warmup=0, default_max_time="3s")
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
    outcome = measure(spec, EXECUTOR_FACTORY(OutputPolicy.parse(options["output"])),
                      on_progress=progress, finalize=with_summaries)
    _close_progress(progress)
    return finish_measurement(io, outcome, options)


def with_summaries(run):
    """``run`` with its per-variant summaries attached (stored in the result document)."""
    return run.replace(summaries=tuple(s.to_dict() for s in analysis.summarize_run(run)))


def build_session_spec(kind: str, commands: Sequence[str], options: dict, *, io: Io,
                       labels: tuple[str, ...] = ()) -> SessionSpec:
    """Turn parsed options into a validated :class:`SessionSpec` (usage errors raised here)."""
    from pairbench.environment import collect_environment
    from pairbench.measure.commandline import parse_command

    shell = options["shell"]
    parsed = tuple(parse_command(c, shell=shell) for c in commands)
    names = tuple(options["names"])
    if names and len(names) != len(commands):
        raise UsageError(f"--name was given {len(names)} time(s) for {len(commands)} command(s)")
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
        names=names or tuple(commands),
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
    )


def _shell_overhead(options: dict) -> dict:
    from pairbench.measure.commandline import measure_shell_startup

    executor = EXECUTOR_FACTORY(OutputPolicy())
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
    _emit(io, run, options, text_report.render_run(run, summaries, color=io.color))
    if outcome.error is not None:
        io.err(f"error: {outcome.error}")
        return outcome.error.exit_code
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK


# --------------------------------------------------------------------------- progress


class PlainProgress:
    """Progress as a plain line every few seconds (not a TTY)."""

    def __init__(self, io: Io, plan: SamplingPlan, interval_s: float = 5.0):
        self.io, self.plan, self.interval_s = io, plan, interval_s
        self._last = time.monotonic()

    def __call__(self, progress: Progress, sampler: Sampler) -> None:
        now = time.monotonic()
        if now - self._last < self.interval_s:
            return
        self._last = now
        self.io.err(status_line(progress, sampler))


class TtyProgress:
    """A live progress line on a terminal: rounds, elapsed time, current medians."""

    def __init__(self, io: Io, plan: SamplingPlan):
        from rich.console import Console

        self.io, self.plan = io, plan
        self._console = Console(file=io.stderr, highlight=False)
        self._last = 0.0
        self._budget = plan.stop.max_time_ns

    def __call__(self, progress: Progress, sampler: Sampler) -> None:
        now = time.monotonic()
        if now - self._last < 0.2:
            return
        self._last = now
        line = status_line(progress, sampler)
        if self._budget and self.plan.stop.adaptive:
            share = min(progress.elapsed_ns / self._budget, 1.0)
            filled = int(share * 20)
            line = f"[{'█' * filled}{'·' * (20 - filled)}] " + line
        self._console.file.write("\r\x1b[2K" + line[: max(self._console.width - 1, 20)])
        self._console.file.flush()

    def close(self) -> None:
        self._console.file.write("\r\x1b[2K")
        self._console.file.flush()


def status_line(progress: Progress, sampler: Sampler) -> str:
    """One line: rounds, samples, elapsed time and each variant's current median."""
    import numpy as np

    phase = "warming up" if progress.warming_up else f"{progress.rounds} rounds"
    medians = []
    for i in range(len(sampler.plan.commands)):
        wall = sampler.measured_wall_ns(i)
        if wall.size:
            medians.append(format_duration(float(np.median(wall))))
    median_text = ("median " + " | ".join(medians)) if medians else ""
    elapsed = format_duration(progress.elapsed_ns, digits=3)
    return f"{phase}, {progress.samples} samples, {elapsed} elapsed  {median_text}".rstrip()


def progress_printer(io: Io, quiet: bool, plan: SamplingPlan):
    if quiet:
        return None
    if hasattr(io.stderr, "isatty") and io.stderr.isatty():
        return TtyProgress(io, plan)
    return PlainProgress(io, plan)


# --------------------------------------------------------------------------- compare


def _percent(ctx, param, value):
    text = str(value).strip().rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a percentage (e.g. 1 or 0.5%)") from None
    if not 0 < number < 100:
        raise click.BadParameter(f"must be between 0 and 100 percent, got {value!r}")
    return number


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True)
@sampling_options(default_warmup=1, default_max_time="60s")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01,
              show_default=True, help="Family-wise error rate of the verdicts.")
@click.option("--threshold", default="1", show_default=True, callback=_percent, metavar="PERCENT",
              help="Smallest change that matters, in percent.")
@click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default="never", show_default=True,
              help="Exit 1 when a verdict (not negligible) matches: slower, faster, change (either).")
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
    elif not names and options["self_check"]:
        names = (baseline, *candidates, f"{baseline} (copy)")
    options["names"] = names
    labels = ("baseline",) + ("candidate",) * len(candidates) + (
        (SELF_CHECK_LABEL,) if options["self_check"] else ())
    spec = build_session_spec("compare", commands, options, io=io, labels=labels)
    settings = decision_settings(options, family=len(candidates))
    rule = StoppingRule(settings, 0, list(range(1, len(candidates) + 1))) if settings.anytime else None
    progress = progress_printer(io, options["quiet"], spec.plan)
    outcome = measure(spec, EXECUTOR_FACTORY(OutputPolicy.parse(options["output"])),
                      on_progress=progress, decide=rule,
                      finalize=lambda run: with_comparisons(with_summaries(run), settings))
    _close_progress(progress)
    return finish_comparison(io, outcome, options, settings)


def with_comparisons(run, settings):
    """``run`` with its comparisons (verdicts, effects, secondary statistics) attached."""
    from pairbench.comparison import compare_run

    results = compare_run(run, settings)
    return run.replace(comparisons=tuple(r.to_dict(settings, run.stopped_because) for r in results))


def decision_settings(options: dict, *, family: int):
    from pairbench.comparison import DecisionSettings

    return DecisionSettings(alpha=options["alpha"], threshold=options["threshold"],
                            anytime=options["runs"] is None, family=family)


def finish_comparison(io: Io, outcome: Outcome, options: dict, settings) -> int:
    """Analyse, print and store a comparison; the exit code honours --fail-on."""
    from pairbench.verdict import Verdict, matches_fail_on

    run = outcome.run
    summaries = analysis.summaries_from_dicts(run.summaries)
    _emit(io, run, options, text_report.render_compare(run, summaries, run.comparisons, color=io.color))
    if outcome.error is not None:
        io.err(f"error: {outcome.error}")
        return outcome.error.exit_code
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    failing = [c for c in run.comparisons if not c["self_check"] and matches_fail_on(
        Verdict(c["verdict"], negligible=c["negligible"]), options["fail_on"])]
    if failing:
        io.err(f"--fail-on {options['fail_on']}: {len(failing)} comparison(s) matched")
        return EXIT_VERDICT
    return EXIT_OK


def _emit(io: Io, run, options: dict, human: str) -> None:
    """Print the report (or the document for --json -) and write --json FILE with derived data."""
    import json

    from pairbench.resultfile import run_to_document

    path = options.get("json_path")
    if path == "-":
        io.out(json.dumps(run_to_document(run), allow_nan=False))
        return
    io.out(human)
    if path:
        io.err(f"Result written to {path}")


def _close_progress(progress) -> None:
    if hasattr(progress, "close"):
        progress.close()


# --------------------------------------------------------------------------- show


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("path", metavar="FILE")
@click.pass_obj
def show(io: Io, path: str):
    """Re-analyse and print a saved result, or the journal of a run that did not finish.

    \b
    Examples:
      pairbench show result.json
      pairbench show result.json.partial
    """
    from pairbench.resultfile import read_result

    run = read_result(path)
    summaries = analysis.summarize_run(run)
    if run.kind == "compare":
        from pairbench.comparison import compare_run

        settings = decision_settings_from_run(run)
        comparisons = tuple(r.to_dict(settings, run.stopped_because) for r in compare_run(run, settings))
        io.out(text_report.render_compare(run, summaries, comparisons, color=io.color))
    else:
        io.out(text_report.render_run(run, summaries, color=io.color))
    return EXIT_OK


def decision_settings_from_run(run):
    """The decision settings a stored comparison was made with (defaults where absent)."""
    from pairbench.comparison import DecisionSettings

    options = run.options
    candidates = sum(1 for v in run.variants if v.label == "candidate") or len(run.variants) - 1
    try:
        return DecisionSettings(alpha=float(options.get("alpha", 0.01)),
                                threshold=float(options.get("threshold", 1.0)),
                                anytime=options.get("runs") is None, family=max(candidates, 1))
    except (TypeError, ValueError):
        raise UsageError(f"the result's options do not describe a comparison: {options!r}") from None


# --------------------------------------------------------------------------- entry points


def main(argv: Sequence[str] | None = None, *, stdout=None, stderr=None, color: bool | None = None) -> int:
    """Run the CLI with ``argv`` and return the exit code (never calls sys.exit)."""
    io = Io(stdout, stderr, color)
    try:
        # click writes --help, --version and its own errors to sys.stdout/sys.stderr
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            result = cli.main(args=list(argv) if argv is not None else None, prog_name="pairbench",
                              standalone_mode=False, obj=io)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        io.err(f"error: {exc.format_message()}")
        return EXIT_USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Abort:
        return EXIT_INTERRUPTED
    except PairbenchError as exc:
        io.err(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        io.err("interrupted")
        return EXIT_INTERRUPTED
    return result if isinstance(result, int) else EXIT_OK


def entry_point() -> None:
    sys.exit(main())
