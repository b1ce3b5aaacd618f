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

import dataclasses
from dataclasses import dataclass

from pairbench.analysis.rules import at_rss_floor
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
    failure = None
    try:
        sampler.run()
    except CommandFailed:  # the failing sample is the one stored with a non-zero status
        failure = next((count, sample) for side, count in enumerate(counts)
                       for sample in sampler.rows.get((BENCHMARK, side), []) if not sample.ok)
    # the floor is the spawning process's size; nothing is loaded between the samples and here
    floor = executor.info().rss_floor_kib or 0
    samples = {count: _timed(sampler.rows.get((BENCHMARK, side), [])) for side, count in enumerate(counts)}
    startup = _timed(sampler.rows.get((PROBE_BENCHMARK, len(counts)), []))
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
    startup_ns = samplechecks.median([s.wall_ns for s in measurements.startup])
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
    """Fit time = setup + iterations x per_iteration (OLS) and judge the setup share.

    The Swift benchmark suite's validation rules (BenchmarkDoctor) ask for a
    setup overhead under 5% of a sample, measured with several iteration counts.

    The fitted intercept is the fixed cost of every sample; the process
    start-up measured with ``true`` is unavoidable for any command and judged
    by the duration check, so the *setup* is the intercept minus it. Its share
    is taken at the largest iteration count tried, the most favourable. With
    the intercept's 95% interval (t quantile, n - 2 degrees of freedom): ok
    when even its upper end is at most 5%, warn when its lower end is above 5%
    (and say how many iterations would bring it under), unknown when the
    interval straddles 5% (``benchmarks/doctor_thresholds.py`` measures how
    often each happens near the line). The start-up median's own error is
    not propagated: it is small next to the intercept's.
    """
    fit = samplechecks.line_fit(*_columns(measurements, "wall_ns"))
    title, check = "setup overhead", "setup-overhead"
    why = ("a fixed cost in every sample dilutes the per-iteration work: a 10% change in the "
           "work shows as a smaller change in the sample, and the setup's own noise is added")
    largest = max(measurements.samples)
    if fit is None:
        return {}, Finding(check, title, "unknown", "no variation in the times to fit a line", why)
    setup = fit["intercept"] - (startup_ns or 0.0)
    slope = fit["slope"]
    per_sample = fit["intercept"] + slope * largest
    share = _share(setup, per_sample)
    fit = {**fit, "setup_ns": setup, "startup_ns": startup_ns, "setup_share": share,
           "share_at_iterations": largest}
    reading = (f"fixed cost {format_duration(fit['intercept'])} ± {format_duration(fit['intercept_ci'])} "
               f"per sample, {format_duration(slope)} ± {format_duration(fit['slope_ci'])} per "
               f"iteration (R² {fit['r_squared']:.3f})")
    if startup_ns:
        reading += f"; minus process start-up ({format_duration(startup_ns)}) the setup is "
        reading += f"{format_duration(setup)}"
    if share is not None:
        reading += f", {100 * share:.1f}% of a {largest}-iteration sample"
    low, high = (_share(setup + sign * fit["intercept_ci"], per_sample) for sign in (-1, 1))
    if high is not None and high <= samplechecks.SETUP_SHARE_WARN:
        return fit, Finding(check, title, "ok", reading, why, data=fit)
    if low is None or low <= samplechecks.SETUP_SHARE_WARN:
        reading += (f"; its 95% interval ({_pct(low)} to {_pct(high)}) straddles 5%")
        return fit, Finding(check, title, "unknown", reading, why,
                            "take more runs (--runs) or try counts further apart (--iterations)", fit)
    needed = samplechecks.iterations_for_share(setup, slope, samplechecks.SETUP_SHARE_WARN)
    more = f"use {PLACEHOLDER} >= {needed} so it is under 5%" if needed else "raise the work per sample"
    fix = ("move the setup out of the timed command (pairbench --setup runs once, --prepare before "
           f"every sample, untimed), or {more}")
    return fit, Finding(check, title, "warn", reading, why, fix, fit)


def _share(setup: float, per_sample: float) -> float | None:
    return max(setup, 0.0) / per_sample if per_sample > 0 else None


def _pct(share: float | None) -> str:
    return "?" if share is None else f"{100 * share:.1f}%"


def check_memory_growth(measurements: Measurements) -> tuple[dict, Finding]:
    """Regress max RSS on the iteration count: a benchmark's memory must not grow with it.

    The Swift benchmark suite's validation rules (BenchmarkDoctor) ask for
    memory use independent of the iteration count. An iteration count with
    any reading at the executor's RSS floor (``analysis.rules.at_rss_floor``)
    is censored whole (its true peak may be anywhere below, and keeping only
    its high readings would bias it upward); with fewer than two counts left
    the answer is ``unknown``. Growth is flagged when the one-sided slope test
    gives p < 0.01 and the growth over the counts tried is at least 1 MiB (max
    RSS moves by tens of KiB between identical runs: 13 pages, 52 KiB, in the
    Swift suite's measurements).
    """
    title, check = "memory growth", "memory-growth"
    why = ("a benchmark whose memory grows with its iteration count does different work at "
           "different counts (allocation, page faults, reclaim), so its per-iteration time is "
           "not a constant; the Swift benchmark suite's validation rules (BenchmarkDoctor) call such "
           "benchmarks written incorrectly")
    floor = measurements.rss_floor_kib
    counts, rss = _columns(measurements, "max_rss_kib")
    censored = sorted({c for c, r in zip(counts, rss, strict=True) if at_rss_floor(r, floor)})
    kept = [(c, r) for c, r in zip(counts, rss, strict=True) if c not in censored]
    data: dict = {"rss_floor_kib": floor, "censored_counts": censored}
    if len({c for c, _ in kept}) < 2:
        reading = (f"max RSS is at the executor's floor ({format_kib(floor)}, the size of the process "
                   f"that spawns commands) at {len(censored)} of {len(set(counts))} iteration counts: "
                   "growth below it cannot be seen")
        return data, Finding(check, title, "unknown", reading, why,
                             "try larger iteration counts (--iterations) so the peak rises above the floor",
                             data)
    fit = samplechecks.line_fit([c for c, _ in kept], [r for _, r in kept], alternative="greater")
    low, high = min(c for c, _ in kept), max(c for c, _ in kept)
    if fit is None:
        reading = f"constant at {format_kib(kept[0][1])} for {low}-{high} iterations"
        return data, Finding(check, title, "ok", reading, why, data=data)
    growth = fit["slope"] * (high - low)
    data.update(fit, growth_kib=growth)
    reading = (f"{format_kib(fit['slope'])} per iteration (one-sided p = {fit['pvalue']:.2g}): "
               f"{format_kib(fit['intercept'] + fit['slope'] * low)} at {low}, "
               f"{format_kib(fit['intercept'] + fit['slope'] * high)} at {high} iterations")
    if censored:
        reading += f" (counts {', '.join(map(str, censored))} at the floor, left out)"
    if fit["pvalue"] < samplechecks.RSS_ALPHA and growth >= samplechecks.RSS_GROWTH_KIB:
        return data, Finding(check, title, "warn", reading, why,
                             "allocate once, outside the iteration loop, and reuse it (or free what "
                             "each iteration allocates)", data)
    return data, Finding(check, title, "ok", reading, why, data=data)


def _columns(measurements: Measurements, field_name: str) -> tuple[list[int], list[int]]:
    counts, values = [], []
    for count, samples in sorted(measurements.samples.items()):
        for sample in samples:
            counts.append(count)
            values.append(getattr(sample, field_name))
    return counts, values
