"""``pairbench doctor``: environment checks, and validation of one benchmark command."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import click
from rich.markup import escape

from pairbench.cli.app import App, Io, cli
from pairbench.doctor import Report, ValidationPlan, diagnose_benchmark, diagnose_machine
from pairbench.environment.findings import STATUSES, at_least
from pairbench.errors import EXIT_MEASUREMENT, EXIT_OK, EXIT_VERDICT, ResultFileError, UsageError
from pairbench.measure.executor import OutputPolicy
from pairbench.units import parse_duration_ns
from pairbench.report.text import render_markup
from pairbench.store.files import parse_json_text, read_text_file
from pairbench.store.journal import is_journal_text
from pairbench.store.resultfile import LEGACY_FORMAT, RESULT_FORMAT, read_result

DOCTOR_EXIT_HELP = """\b
Exit codes:
  0    checks done (whatever they found, unless --fail-on says otherwise)
  1    a finding is at least as bad as --fail-on
  2    usage error
  3    the command failed or could not be run
  4    the --environment file could not be read
  130  interrupted (Ctrl-C)
  141  standard output was closed before everything was printed
"""
_STYLE = {"ok": "green", "unknown": "dim", "warn": "yellow", "fail": "bold red"}
MAX_METADATA_DEPTH = 64  # collected metadata nests 4 levels; deeper is not ours


def _counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"expected iteration counts like 1,2,4,8, got {text!r}") from None
    if len(counts) < 2 or min(counts) < 1 or len(set(counts)) != len(counts):
        raise click.BadParameter(f"need at least 2 distinct counts >= 1, got {text!r}")
    return counts


@cli.command(epilog=DOCTOR_EXIT_HELP)
@click.argument("command", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the report (and the metadata) as JSON.")
@click.option("--runs", "-r", type=click.IntRange(min=2), default=20, show_default=True,
              help="Samples of COMMAND (at each iteration count).")
@click.option("--iterations", "counts", default="1,2,4,8", show_default=True, metavar="N,N,...",
              callback=lambda ctx, param, value: _counts(value),
              help="Iteration counts to try when COMMAND contains {iterations}.")
@click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Untimed rounds before sampling.")
@click.option("--shell", is_flag=True, help="Run COMMAND through sh -c.")
@click.option("--name", "-n", default="", help="The benchmark's name (default: COMMAND).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the random order.")
@click.option("--timeout", default=None, metavar="DURATION",
              help="Kill a run after this long (e.g. 10s).")
@click.option("--fail-on", type=click.Choice(["never", "warn", "fail"]), default="never",
              show_default=True, help="Exit 1 when a finding is at least this bad.")
@click.option("--environment", "environment_path", default=None, metavar="FILE",
              help="Judge the machine metadata stored in FILE (a result document or doctor --json "
                   "output) instead of this machine now.")
@click.option("--root", default="/", hidden=True, help="Read /proc and /sys below this directory.")
@click.pass_obj
def doctor(app: App, command: str | None, as_json: bool, fail_on: str, environment_path: str | None,
           root: str, **options):
    """Check the machine, or validate COMMAND as a benchmark.

    Without COMMAND: governor, turbo, SMT, ASLR, load and the busiest processes,
    isolated CPUs, clock, perf events, virtualization, memory, power and thermal
    throttling; each with what was read, why it matters and the command that fixes it.

    With COMMAND: run it a few times and check it is long enough compared with
    process start-up, stable, unimodal, free of drift, outliers and preemption,
    and that its name fits report tables. A COMMAND containing {iterations} is run
    with several counts to measure its setup overhead and whether its memory grows
    with the count.

    \b
    Examples:
      pairbench doctor
      pairbench doctor --json
      pairbench doctor 'gzip -k -f data.bin'
      pairbench doctor './bench --loops {iterations}' --iterations 1,10,100
    """
    io = app.io
    machine = diagnose_machine(_stored_environment(environment_path) if environment_path else None,
                               root=root)
    if command is None:
        report, plan = machine, None
    else:
        plan = _plan(command, options)
        executor = app.executor_factory(OutputPolicy())
        try:
            timer = _timer_step(machine.details["environment"])
            report = diagnose_benchmark(plan, executor, timer_resolution_ns=timer)
        finally:
            executor.close()
    if as_json:
        document = report.to_dict()
        if plan is not None:
            document["seed"] = plan.seed
            document["machine"] = machine.to_dict()
        io.out(json.dumps(document, indent=2, allow_nan=False, default=_jsonable))
    else:
        lines = machine_lines(machine) if plan is None else benchmark_lines(report, machine, plan)
        io.out(render_markup(lines, color=io.color))
    return _exit_code(report, fail_on)


def _stored_environment(path: str) -> dict:
    """The environment metadata in a result document or journal, a doctor --json document, or a bare dict.

    A file that cannot be read, is not JSON, holds NaN or is nested too deeply
    raises ``ResultFileError`` (exit 4), as for any result file (a journal goes
    through the result reader). Only the metadata is needed, so the rest of a
    result document is not validated; values of the wrong type in the metadata
    make their checks ``unknown``.
    """
    text = read_text_file(Path(path))
    if is_journal_text(text):  # a run that did not finish: its journal
        return read_result(path).environment
    document = _parse_json(Path(path), text)
    if isinstance(document, dict) and document.get("format") in (RESULT_FORMAT, LEGACY_FORMAT):
        environment = document.get("environment")
        if not isinstance(environment, dict):
            raise ResultFileError(f"{path}: environment must be an object, got "
                                  f"{type(environment).__name__}")
        return environment
    if not isinstance(document, dict):
        raise UsageError(f"{path!r} holds no machine metadata (expected a JSON object)")
    machine = document.get("machine")
    for candidate in (document.get("environment"),
                      machine.get("environment") if isinstance(machine, dict) else None, document):
        if isinstance(candidate, dict) and "load_average" in candidate:
            return candidate
    raise UsageError(f"{path!r} holds no machine metadata: no 'environment' with a 'load_average'")


def _parse_json(path: Path, text: str) -> object:
    """The JSON value of ``text`` as a result file is read, nested at most MAX_METADATA_DEPTH deep."""
    document = parse_json_text(path, text)
    if _depth(document) > MAX_METADATA_DEPTH:
        raise ResultFileError(f"{path}: nested more than {MAX_METADATA_DEPTH} levels deep")
    return document


def _depth(value) -> int:
    """How deeply ``value`` nests lists and objects (iterative: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
    return deepest


def _plan(command: str, options: dict) -> ValidationPlan:
    seed = options["seed"] if options["seed"] is not None else secrets.randbits(32)
    timeout = options["timeout"]
    return ValidationPlan(command=command, shell=options["shell"], name=options["name"],
                          runs=options["runs"], counts=options["counts"], warmup=options["warmup"],
                          seed=seed, timeout_ns=parse_duration_ns(timeout, option="--timeout") if timeout else None)


def _timer_step(environment: dict) -> int | None:
    """The measured timer step in the metadata, if it is a positive integer."""
    timer = environment.get("timer")
    step = timer.get("measured_resolution_ns") if isinstance(timer, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) and step > 0 else None


def _exit_code(report: Report, fail_on: str) -> int:
    if any(f.check == "runs" and f.status == "fail" for f in report.findings):
        return EXIT_MEASUREMENT
    if fail_on != "never" and at_least(report.status, fail_on):
        return EXIT_VERDICT
    return EXIT_OK


def _jsonable(value):
    """numpy scalars and tuples in details, as JSON values."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


# --------------------------------------------------------------------------- text


def finding_lines(finding, *, detail: bool = True) -> list[str]:
    """The verdict line; for a warning or failure also why it matters and the fix."""
    style = _STYLE[finding.status]
    lines = [f"[{style}]{finding.status.upper():<7}[/{style}] [bold]{escape(finding.title)}[/bold]: "
             f"{escape(finding.reading)}"]
    if detail and finding.status in ("warn", "fail"):
        lines.append(f"        why: {escape(finding.why)}")
        if finding.fix:
            lines.append(f"        fix: {escape(finding.fix)}")
    return lines


def overall_line(report: Report) -> str:
    counts = report.counts()
    parts = ", ".join(f"{counts[s]} {s}" for s in reversed(STATUSES) if counts[s])
    style = _STYLE[report.status]
    return f"Overall: [{style}]{report.status.upper()}[/{style}] ({parts})"


def machine_lines(report: Report) -> list[str]:
    env = report.details.get("environment", {})
    online = env.get("online_cpus")
    cpus = (len(online) if isinstance(online, list) else 0) or env.get("logical_cpus")
    header = " · ".join(str(x) for x in (env.get("host"), env.get("os"), env.get("kernel"),
                                         env.get("cpu_model"), f"{cpus} CPUs" if cpus else "") if x)
    lines = [f"[bold]pairbench doctor[/bold]{' · ' + escape(header) if header else ''}", ""]
    for finding in report.findings:
        lines += finding_lines(finding)
    return lines + ["", overall_line(report)]


def benchmark_lines(report: Report, machine: Report, plan: ValidationPlan) -> list[str]:
    details = report.details
    lines = [f"[bold]pairbench doctor[/bold] · {escape(plan.command)}"]
    counts = details.get("iteration_counts")
    if plan.iterated and counts:
        lines.append(f"{plan.runs} runs at each of {', '.join(map(str, counts))} iterations, "
                     f"interleaved in random order (seed {plan.seed}); the samples' shape is "
                     f"judged at {details['judged_at_iterations']} iterations.")
    elif counts:
        lines.append(f"{plan.runs} runs after {plan.warmup} warmup (seed {plan.seed}).")
    troubles = [f for f in machine.findings if f.status in ("warn", "fail")]
    if troubles:
        lines += ["", "Machine (run `pairbench doctor` for why and how to fix):"]
        for finding in troubles:
            lines += ["  " + line for line in finding_lines(finding, detail=False)]
    lines += ["", "Benchmark:"]
    for finding in report.findings:
        lines += finding_lines(finding)
    return lines + ["", overall_line(report)]
