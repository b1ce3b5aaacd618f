"""``pairbench doctor``: environment checks, and validation of one benchmark command.

click reads the options as text; ``parsers.parse_plan`` and ``parsers.parse_doctor_fail_on``
validate them, once. A COMMAND is measured by a session (``sessions.doctor``) and judged by
``analyse``; the machine's checks are ``environment``'s, the words ``report``'s.
"""

from __future__ import annotations

import click

from pairbench.cli.app import App, cli
from pairbench.cli.measuring import programs_environment
from pairbench.cli.options import environment_options
from pairbench.environment.checks import DOCTOR_WINDOW_S, diagnose_machine
from pairbench.environment.findings import Report, at_least
from pairbench.errors import EXIT_MEASUREMENT, EXIT_OK, EXIT_VERDICT, UsageError
from pairbench.measure.executor import OutputPolicy
from pairbench.parsers import parse_doctor_fail_on, parse_plan, parse_shell
from pairbench.report.doctor import render_benchmark, render_json, render_machine
from pairbench.sessions.doctor import validate_command
from pairbench.settings import DOCTOR_FAIL_ON_CHOICES, PLAN_OPTIONS, doctor_default
from pairbench.store.metadata import stored_environment

DOCTOR_EXIT_HELP = """\b
Exit codes:
  0    checks done (whatever they found, unless --fail-on says otherwise)
  1    a finding is at least as bad as --fail-on
  2    usage error
  3    the command failed or could not be run
  4    the --environment file could not be read
  70   internal error (a bug in pairbench; please report it)
  129  hung up (SIGHUP)
  130  interrupted (Ctrl-C)
  141  standard output was closed before everything was printed
  143  terminated (SIGTERM)
"""


def _shown(option: str) -> str:
    return f"  [default: {doctor_default(option)}]"


@cli.command(epilog=DOCTOR_EXIT_HELP)
@click.argument("command", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the report (and the metadata) as JSON.")
@click.option("--runs", "-r", metavar="N", help="Samples of COMMAND (at each iteration count)." + _shown("runs"))
@click.option("--iterations", metavar="N,N,...",
              help="Iteration counts to try when COMMAND contains {iterations}." + _shown("iterations"))
@click.option("--warmup", metavar="N", help="Untimed rounds before sampling." + _shown("warmup"))
@click.option("--shell", "-S", metavar="SHELL|none",
              help="Run COMMAND through SHELL -c (sh, bash, 'bash --norc', a path), as run and compare do; "
                   "its start-up is in the start-up probe too. Default: none.")
@click.option("-N", "no_shell", is_flag=True, default=None, help="Run COMMAND without a shell (--shell none).")
@click.option("--name", "-n", help="The benchmark's name (default: COMMAND).")
@click.option("--seed", metavar="N", help="Seed of the random order (default: drawn, and shown).")
@click.option("--timeout", metavar="DURATION", help="Kill a run after this long (e.g. 10s).")
@click.option("--fail-on", metavar="|".join(DOCTOR_FAIL_ON_CHOICES),
              help="Exit 1 when a finding is at least this bad." + _shown("fail_on"))
@click.option("--environment", "environment_path", default=None, metavar="FILE",
              help="Judge the machine metadata stored in FILE (a result document, its journal, or doctor "
                   "--json output) instead of this machine now.")
@click.option("--root", default="/", hidden=True, help="Read /proc and /sys below this directory.")
@environment_options
@click.pass_obj
def doctor(app: App, command: str | None, as_json: bool, fail_on: str | None, environment_path: str | None,
           root: str, pass_env: tuple[str, ...], **options):
    """Check the machine, or validate COMMAND as a benchmark.

    Without COMMAND: governor, turbo, SMT, ASLR, load and the busiest processes,
    isolated CPUs, clock, perf events, virtualization, memory, power and thermal
    throttling; each with what was read, why it matters and the command that fixes it.

    With COMMAND: run it a few times and check it is long enough compared with
    process start-up, stable, unimodal, free of drift, outliers and preemption,
    and that its name fits report tables. A COMMAND containing {iterations} is run
    with several counts to measure its setup overhead and whether its memory grows
    with the count (the Swift benchmark suite's validation rules).

    \b
    Examples:
      pairbench doctor
      pairbench doctor --json
      pairbench doctor 'gzip -k -f data.bin'
      pairbench doctor './bench --loops {iterations}' --iterations 1,10,100
    """
    threshold = parse_doctor_fail_on(fail_on)
    plan = parse_plan(command, options) if command is not None else _no_plan(options)
    live = not environment_path  # only this machine now has PIDs worth pausing, and shows command lines
    environment = (app.environment(root, activity_window_s=DOCTOR_WINDOW_S, live=True) if live
                   else stored_environment(environment_path))
    machine = diagnose_machine(environment, live=live)
    if plan is None:
        report = machine
        app.io.out(render_json(machine) if as_json else render_machine(machine, color=app.io.color))
        return _exit_code(report, threshold)
    with programs_environment(pass_env, isolated=False, store=None):
        executor = app.executor_factory(OutputPolicy())
        try:
            report = validate_command(plan, executor, environment)[1].doctor
        finally:
            executor.close()
    app.io.out(render_json(report, machine=machine, plan=plan) if as_json
               else render_benchmark(report, machine, plan, color=app.io.color))
    return _exit_code(report, threshold)


def _no_plan(options: dict) -> None:
    """Without COMMAND there is nothing to validate: options that shape a validation are refused.

    ``--shell 'CMD'`` (the old flag's habit: the command taken for a shell) says so first."""
    if options.get("shell") is not None:
        parse_shell(options["shell"])
    given = ["-N" if option == "no_shell" else f"--{option}"
             for option in PLAN_OPTIONS if options.get(option) is not None]
    if given:
        verb, them = ("applies", "it") if len(given) == 1 else ("apply", "them")
        raise UsageError(f"{', '.join(given)} {verb} only to a COMMAND to validate; give one, or leave {them} out")


def _exit_code(report: Report, fail_on: str) -> int:
    if any(f.check == "runs" and f.status == "fail" for f in report.findings):
        return EXIT_MEASUREMENT
    if fail_on != "never" and at_least(report.status, fail_on):
        return EXIT_VERDICT
    return EXIT_OK
