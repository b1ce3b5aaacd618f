"""``pairbench doctor COMMAND``: measure a command to validate it, through the one pipeline.

A command containing ``{iterations}`` is run with several iteration counts
(1, 2, 4, 8 by default), each a side, by the one
:class:`~pairbench.measure.sampler.Sampler` of ``run`` and ``compare``: every
round runs each side once, and ``true`` once (the start-up probe, a second
benchmark on a side of its own), in a seeded random order, so drift cannot
masquerade as a slope. The samples become a run (``result.new_run``,
``result.finished``, kind ``doctor``, never saved), and ``analyse`` judges it
(``analysis.doctor``). A failed execution of the command (non-zero status)
ends measuring; a probe that fails or cannot run is dropped. Nothing here prints.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from pairbench.analysis import Analysis, analyse
from pairbench.analysis.doctor import COMMAND, PROBE
from pairbench.analysis.rules import timer_step
from pairbench.errors import CommandFailed
from pairbench.measure.commandline import parse_command, resolve_shell
from pairbench.measure.executor import Executor
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import CommandTarget, StartupProbe
from pairbench.model import BenchmarkKey, Command, Run, Side
from pairbench.parsers import parse_settings
from pairbench.sessions.result import finished, new_run
from pairbench.settings import PLACEHOLDER, ValidationPlan


def validate_command(plan: ValidationPlan, executor: Executor, environment: Mapping | None = None, *,
                     timer_resolution_ns: int | None = None) -> tuple[Run, Analysis]:
    """Run ``plan``'s command with ``executor``: warmup rounds, then ``plan.runs`` timed rounds; the
    run and its analysis. ``environment`` is the machine's metadata; the timer's step is
    ``timer_resolution_ns``, else the metadata's, else measured now. Raises ``ProgramNotFound`` /
    ``UsageError`` from ``parse_command`` before anything runs."""
    environment = _with_timer(dict(environment or {}), timer_resolution_ns)
    targets = [CommandTarget(_command_for(plan, count), plan.benchmark_name, COMMAND, iterations=count)
               for count in plan.measured_counts]
    sides = [Side(f"{count} iterations", target.command) for count, target in zip(plan.measured_counts, targets,
                                                                                 strict=True)]
    probe = StartupProbe.for_shell(resolve_shell(plan.shell), PROBE) if plan.probe_startup else None
    keys = (BenchmarkKey(plan.benchmark_name),) + ((BenchmarkKey(probe.name),) if probe else ())
    if probe:  # benchmark PROBE, on the last side
        sides.append(Side(probe.name, probe.command))
    sampler = Sampler(executor, SamplingPlan(
        tuple(targets) + ((probe,) if probe else ()), StopRule(runs=plan.runs),
        warmup_rounds=plan.warmup, timeout_ns=plan.timeout_ns, seed=plan.seed))
    skeleton = new_run("doctor", _settings(plan), tuple(sides), keys, environment)
    with contextlib.suppress(CommandFailed):  # the failing sample is the one stored with a non-zero status
        sampler.run()
    # the floor is the spawning process's size; nothing is loaded between the samples and here
    run = finished(skeleton, sampler.series(), executor.info(), stopped_because=sampler.stopped_because,
                   notes=sampler.notes)
    return run, analyse(run)


def _command_for(plan: ValidationPlan, count: int) -> Command:
    """The plan's command with ``{iterations}`` replaced by ``count`` (the command itself if none)."""
    return parse_command(plan.command.replace(PLACEHOLDER, str(count)), shell=resolve_shell(plan.shell))


def _with_timer(environment: dict, resolution_ns: int | None) -> dict:
    if resolution_ns is None and timer_step(environment):
        return environment
    if resolution_ns is None:
        from pairbench.environment import measured_timer_resolution_ns

        resolution_ns = measured_timer_resolution_ns()
    return {**environment, "timer": {**(environment.get("timer") or {}), "measured_resolution_ns": resolution_ns}}


def _settings(plan: ValidationPlan):
    """The run's settings: ``run``'s, with the plan's rounds, warmup, seed and shell."""
    return parse_settings("run", (plan.command,), {
        "runs": plan.runs, "warmup": plan.warmup, "seed": plan.seed, "shell": plan.shell})
