"""Benchmark validation: run a command a few times and say whether it is a good benchmark.

The Swift benchmark suite's validation rules (``BenchmarkDoctor``, described in
Pavol Vaskovic's "Towards Robust Performance Measurement") check that a
benchmark's setup overhead is negligible (under 5% of a sample), that its
memory does not depend on its iteration count, and that its name fits report
tables (40 characters). pairbench adds what a process-level harness must know:
whether the command is long enough compared with process start-up and the
timer, and what its samples look like (CV, modes, serial dependence, Tukey
outliers, involuntary context switches, the gap between mean and minimum).

A command containing ``{iterations}`` is run with several iteration counts
(1, 2, 4, 8 by default) by the one :class:`~pairbench.measure.sampler.Sampler`
of ``run`` and ``compare``: each count is a side, and every round runs each
side once in a seeded random order, so drift cannot masquerade as a slope.
Then

    time = setup + iterations x per_iteration

is fitted by ordinary least squares (``scipy.stats.linregress``, which gives
the standard errors; measuring with several iteration counts is how the Swift
suite detects and corrects for setup overhead), and max RSS is regressed on
the iteration count with a one-sided slope test.

:func:`measure_benchmark` takes the samples; :func:`validate` judges them (pure).
A command's max RSS is never reported below the size of the process that
spawns it: the executor says how much (``Executor.info().rss_floor_kib``; the
default one spawns from a small process, ``measure.spawner``), and readings at
that floor are left out of the memory regression.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass

from pairbench.analysis.validation import (
    iterations_for_share,
    judge_memory_growth,
    judge_setup_overhead,
    median,
    setup_share_interval,
)
from pairbench.doctor import samplechecks
from pairbench.doctor.plan import PLACEHOLDER, ValidationPlan
from pairbench.doctor.probe import PROBE_BENCHMARK, StartupProbe
from pairbench.environment.findings import Finding, Report
from pairbench.errors import CommandFailed
from pairbench.measure.commandline import resolve_shell
from pairbench.measure.executor import Executor
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import CommandTarget
from pairbench.model import Sample, describe_status
from pairbench.units import format_duration, format_kib

__all__ = ["Measurements", "ValidationPlan", "check_memory_growth", "check_setup_overhead",
           "measure_benchmark", "validate"]

BENCHMARK = 0  # the command's rows, at every iteration count


@dataclass(frozen=True)
class Measurements:
    """What :func:`measure_benchmark` took: samples per iteration count, start-up, RSS floor.

    ``samples[count]`` are the successful timed samples at that count, in
    execution order (one count, 1, without a placeholder); ``startup`` the
    timed samples of ``true`` (empty if it could not run); ``rss_floor_kib``
    the executor's max RSS floor (0 if unknown); ``failure`` the count and the
    sample of the first failed execution, which ends measuring.
    """

    samples: dict[int, tuple[Sample, ...]]
    startup: tuple[Sample, ...] = ()
    rss_floor_kib: int = 0
    timer_resolution_ns: int = 0
    failure: tuple[int, Sample] | None = None


def measure_benchmark(plan: ValidationPlan, executor: Executor, *,
                      timer_resolution_ns: int | None = None) -> Measurements:
    """Run ``plan``'s command with ``executor``: warmup rounds, then ``plan.runs`` timed rounds.

    Every round runs each iteration count once, and ``true`` once (the
    start-up probe), in an order drawn from ``plan.seed``, so drift affects all
    of them alike. A failed execution of the command (non-zero status) ends
    measuring and is returned in ``failure``; a probe that fails or cannot run
    is dropped. ``timer_resolution_ns`` is the clock's step (from the machine
    metadata); None measures it here. Raises ``ProgramNotFound`` /
    ``UsageError`` from ``parse_command`` before anything runs.
    """
    from pairbench.environment import measured_timer_resolution_ns

    resolution = timer_resolution_ns if timer_resolution_ns is not None else measured_timer_resolution_ns()
    counts = plan.measured_counts
    targets = [CommandTarget(plan.command_for(count), plan.benchmark_name, BENCHMARK, iterations=count)
               for count in counts]
    probe = StartupProbe.for_shell(resolve_shell(plan.shell)) if plan.probe_startup else None
    sampler = Sampler(executor, SamplingPlan(
        tuple(targets) + ((probe,) if probe else ()), StopRule(runs=plan.runs),
        warmup_rounds=plan.warmup, timeout_ns=plan.timeout_ns, seed=plan.seed))
    with contextlib.suppress(CommandFailed):  # the failing sample is the one stored with a non-zero status
        sampler.run()
    # the floor is the spawning process's size; nothing is loaded between the samples and here
    floor = executor.info().rss_floor_kib or 0
    series = sampler.series()
    rows = {side: series[(BENCHMARK, side)].rows() if (BENCHMARK, side) in series else [] for side in range(len(counts))}
    failure = next(((count, sample) for side, count in enumerate(counts) for sample in rows[side] if not sample.ok),
                   None)
    samples = {count: _timed(rows[side]) for side, count in enumerate(counts)}
    startup = _timed(series[(PROBE_BENCHMARK, len(counts))].rows() if (PROBE_BENCHMARK, len(counts)) in series else [])
    return Measurements(samples, startup, floor, resolution, failure)


def _timed(rows: list[Sample]) -> tuple[Sample, ...]:
    """The successful samples that are not warmups."""
    return tuple(sample for sample in rows if sample.ok and not sample.warmup)


# ------------------------------------------------------------------ analysis


def validate(plan: ValidationPlan, measurements: Measurements) -> Report:
    """Judge the measurements: one finding per rule of the module docstring, and the details."""
    name_finding = samplechecks.check_name(plan.benchmark_name)
    if measurements.failure is not None:
        return Report("benchmark", (_failure_finding(plan, measurements), name_finding),
                      {"command": plan.command, "name": plan.benchmark_name})
    largest = max(measurements.samples)
    stats_samples = measurements.samples[largest]
    startup_ns = median([s.wall_ns for s in measurements.startup])
    findings = [samplechecks.check_duration(stats_samples, startup_ns,
                                            measurements.timer_resolution_ns, plan.iterated)]
    fit = rss = None
    if plan.iterated:
        fit, setup_finding = check_setup_overhead(measurements, startup_ns)
        rss, rss_finding = check_memory_growth(measurements)
        findings += [setup_finding, rss_finding]
    findings += samplechecks.sample_findings(stats_samples)
    findings.append(name_finding)
    details = {
        "command": plan.command,
        "name": plan.benchmark_name,
        "iteration_counts": sorted(measurements.samples),
        "judged_at_iterations": largest if plan.iterated else None,
        "startup_median_ns": startup_ns,
        "rss_floor_kib": measurements.rss_floor_kib,
        "timer_resolution_ns": measurements.timer_resolution_ns,
        "samples": {str(count): [dataclasses.asdict(sample) for sample in samples]
                    for count, samples in sorted(measurements.samples.items())},
        "time_fit": fit,
        "rss_fit": rss,
    }
    return Report("benchmark", tuple(findings), details)


def _failure_finding(plan: ValidationPlan, measurements: Measurements) -> Finding:
    count, sample = measurements.failure
    at = f" with {count} iterations" if plan.iterated else ""
    return Finding(
        "runs", "runs", "fail",
        f"{plan.command_for(count).text!r}{at} ended with {describe_status(sample.status)}",
        "a failing run measures the failure, not the benchmark",
        "make the command succeed on its own first (run it in a shell and check `echo $?`)",
        {"iterations": count, "status": sample.status},
    )


def check_setup_overhead(measurements: Measurements, startup_ns: float | None) -> tuple[dict, Finding]:
    """The setup-overhead rule (``analysis.validation.judge_setup_overhead``) as a finding, and the
    fit it rests on: the Swift benchmark suite's validation rules (BenchmarkDoctor) ask for a setup
    overhead under 5% of a sample, measured with several iteration counts."""
    judged = judge_setup_overhead(measurements.samples, startup_ns)
    fit = dict(judged.data)
    title, check = "setup overhead", "setup-overhead"
    why = ("a fixed cost in every sample dilutes the per-iteration work: a 10% change in the "
           "work shows as a smaller change in the sample, and the setup's own noise is added")
    if not fit:
        return {}, Finding(check, title, "unknown", "no variation in the times to fit a line", why)
    setup, slope, share, largest = fit["setup_ns"], fit["slope"], fit["setup_share"], fit["share_at_iterations"]
    reading = (f"fixed cost {format_duration(fit['intercept'])} ± {format_duration(fit['intercept_ci'])} "
               f"per sample, {format_duration(slope)} ± {format_duration(fit['slope_ci'])} per "
               f"iteration (R² {fit['r_squared']:.3f})")
    if startup_ns:
        reading += f"; minus process start-up ({format_duration(startup_ns)}) the setup is "
        reading += f"{format_duration(setup)}"
    if share is not None:
        reading += f", {100 * share:.1f}% of a {largest}-iteration sample"
    if judged.status == "ok":
        return fit, Finding(check, title, "ok", reading, why, data=fit)
    if judged.status == "unknown":
        low, high = setup_share_interval(fit)
        reading += (f"; its 95% interval ({_pct(low)} to {_pct(high)}) straddles 5%")
        return fit, Finding(check, title, "unknown", reading, why,
                            "take more runs (--runs) or try counts further apart (--iterations)", fit)
    needed = iterations_for_share(setup, slope)
    more = f"use {PLACEHOLDER} >= {needed} so it is under 5%" if needed else "raise the work per sample"
    fix = ("move the setup out of the timed command (pairbench --setup runs once, --prepare before "
           f"every sample, untimed), or {more}")
    return fit, Finding(check, title, "warn", reading, why, fix, fit)


def _pct(share: float | None) -> str:
    return "?" if share is None else f"{100 * share:.1f}%"


def check_memory_growth(measurements: Measurements) -> tuple[dict, Finding]:
    """The memory-growth rule (``analysis.validation.judge_memory_growth``: max RSS regressed on the
    iteration count, readings at the executor's floor censored) as a finding, and its figures. The
    Swift benchmark suite's validation rules (BenchmarkDoctor) ask for memory use independent of
    the iteration count."""
    judged = judge_memory_growth(measurements.samples, measurements.rss_floor_kib)
    data = dict(judged.data)
    title, check = "memory growth", "memory-growth"
    why = ("a benchmark whose memory grows with its iteration count does different work at "
           "different counts (allocation, page faults, reclaim), so its per-iteration time is "
           "not a constant; the Swift benchmark suite's validation rules (BenchmarkDoctor) call such "
           "benchmarks written incorrectly")
    censored, floor = data["censored_counts"], data["rss_floor_kib"]
    if judged.status == "unknown":
        reading = (f"max RSS is at the executor's floor ({format_kib(floor)}, the size of the process "
                   f"that spawns commands) at {len(censored)} of {len(data['counts'])} iteration counts: "
                   "growth below it cannot be seen")
        return data, Finding(check, title, "unknown", reading, why,
                             "try larger iteration counts (--iterations) so the peak rises above the floor",
                             data)
    low, high = data["low_count"], data["high_count"]
    if "constant_kib" in data:
        return data, Finding(check, title, "ok", f"constant at {format_kib(data['constant_kib'])} for {low}-{high} "
                             "iterations", why, data=data)
    reading = (f"{format_kib(data['slope'])} per iteration (one-sided p = {data['pvalue']:.2g}): "
               f"{format_kib(data['intercept'] + data['slope'] * low)} at {low}, "
               f"{format_kib(data['intercept'] + data['slope'] * high)} at {high} iterations")
    if censored:
        reading += f" (counts {', '.join(map(str, censored))} at the floor, left out)"
    if judged.status == "warn":
        return data, Finding(check, title, "warn", reading, why,
                             "allocate once, outside the iteration loop, and reuse it (or free what "
                             "each iteration allocates)", data)
    return data, Finding(check, title, "ok", reading, why, data=data)
