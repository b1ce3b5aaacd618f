"""Benchmark validation: run a command a few times and say whether it is a good benchmark.

Seed 004 (Swift's ``BenchmarkDoctor``) checks that a benchmark's setup overhead
is negligible (under 5% of a sample), that its memory does not depend on its
iteration count, and that its name fits report tables (40 characters). pairbench
adds what a process-level harness must know: whether the command is long enough
compared with process start-up and the timer, and what its samples look like
(CV, modes, serial dependence, Tukey outliers, involuntary context switches, the
gap between mean and minimum of seed 003).

A command containing ``{iterations}`` is run with several iteration counts
(1, 2, 4, 8 by default) in interleaved rounds of randomized order, so drift
cannot masquerade as a slope. Then

    time = setup + iterations x per_iteration

is fitted by ordinary least squares (``scipy.stats.linregress``, which gives
the standard errors; seed 004: "setup overhead ... can be detected and
corrected for, when measuring with multiple num-iters"), and max RSS is
regressed on the iteration count with a one-sided slope test.

Measuring (:func:`measure_benchmark`) touches only the executor and the
standard library, so no scipy is loaded while commands run (a command's max RSS
is never reported below the size of the process that spawns it, see
``measure.posix``); :func:`validate` then analyses the samples.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from pairbench.doctor import samplechecks
from pairbench.environment.findings import Finding, Report
from pairbench.errors import CommandNotFound, UsageError
from pairbench.measure.commandline import parse_command
from pairbench.measure.executor import Execution, Executor
from pairbench.model import Command, describe_status
from pairbench.units import format_duration, format_kib

PLACEHOLDER = "{iterations}"
DEFAULT_COUNTS = (1, 2, 4, 8)
STARTUP_COMMAND = "true"


@dataclass(frozen=True)
class ValidationPlan:
    """How to validate one benchmark command.

    ``runs`` samples are taken at every iteration count (once without a
    ``{iterations}`` placeholder), after ``warmup`` untimed rounds; with
    ``probe_startup`` every round also runs ``true`` (through ``sh -c`` with
    ``shell``), whose time is process start-up, measured under the same
    conditions as the command. ``name``
    defaults to the command text.
    """

    command: str
    shell: bool = False
    name: str = ""
    runs: int = 20
    counts: tuple[int, ...] = DEFAULT_COUNTS
    warmup: int = 1
    probe_startup: bool = True
    seed: int = 0
    timeout_ns: int | None = None

    def __post_init__(self):
        if not isinstance(self.command, str) or not self.command.strip():
            raise UsageError(f"`command` must be a non-empty string, got {self.command!r}")
        for option, value, low in (("runs", self.runs, 2), ("warmup", self.warmup, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(f"`{option}` must be an integer >= {low}, got {value!r}")
        counts = self.counts
        if (not counts or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in counts)
                or len(set(counts)) != len(counts)):
            raise UsageError(f"`counts` must be distinct integers >= 1, got {counts!r}")
        if self.iterated and len(counts) < 2:
            raise UsageError(f"a {PLACEHOLDER} command needs at least 2 iteration counts, got {counts!r}")

    @property
    def iterated(self) -> bool:
        return PLACEHOLDER in self.command

    @property
    def benchmark_name(self) -> str:
        return self.name or self.command

    def command_for(self, count: int) -> Command:
        """The command with ``{iterations}`` replaced by ``count`` (the command itself if none)."""
        return parse_command(self.command.replace(PLACEHOLDER, str(count)), shell=self.shell)


@dataclass(frozen=True)
class Measurements:
    """What :func:`measure_benchmark` took: samples per iteration count, start-up, RSS floor.

    ``samples[count]`` are the timed executions at that count in execution
    order (one count, 1, without a placeholder); ``startup`` the executions of
    ``true`` (empty if it could not run); ``rss_floor_kib`` the executor's max
    RSS floor (0 if unknown); ``failure`` the first failed execution, which
    ends measuring.
    """

    samples: dict[int, tuple[Execution, ...]]
    startup: tuple[Execution, ...] = ()
    rss_floor_kib: int = 0
    timer_resolution_ns: int = 0
    failure: tuple[int, Execution] | None = None
    order: tuple[int, ...] = field(default=())


def measure_benchmark(plan: ValidationPlan, executor: Executor, *,
                      timer_resolution_ns: int | None = None) -> Measurements:
    """Run ``plan``'s command with ``executor``: warmup rounds, then timed rounds.

    Every round runs each iteration count once, and ``true`` once (the
    start-up probe), in an order shuffled with ``plan.seed``, so drift affects
    all of them alike. A failed execution of the command (non-zero status)
    ends measuring and is returned in ``failure``; a probe that cannot run is
    dropped. ``timer_resolution_ns`` is the clock's step (from the machine
    metadata); None measures it here. Raises ``CommandNotFound`` /
    ``UsageError`` from ``parse_command`` before anything runs.
    """
    from pairbench.environment import measured_timer_resolution_ns

    resolution = timer_resolution_ns if timer_resolution_ns is not None else measured_timer_resolution_ns()
    counts = plan.counts if plan.iterated else (1,)
    commands = {count: plan.command_for(count) for count in counts}
    probe = _startup_command(plan.shell) if plan.probe_startup else None
    rng = random.Random(plan.seed)
    samples: dict[int, list[Execution]] = {count: [] for count in counts}
    startup: list[Execution] = []
    order: list[int] = []
    floor = 0
    for round_index in range(plan.warmup + plan.runs):
        timed = round_index >= plan.warmup
        if round_index == plan.warmup:
            floor = _rss_floor(executor)
        shuffled = list(counts) + ([_PROBE] if probe is not None else [])
        rng.shuffle(shuffled)
        for count in shuffled:
            if count == _PROBE:
                probe = _run_probe(executor, probe, startup if timed else [])
                continue
            execution = executor.run(commands[count], timeout_ns=plan.timeout_ns)
            if execution.status != 0:
                return Measurements(_frozen(samples), tuple(startup), floor, resolution,
                                    (count, execution), tuple(order))
            if timed:
                samples[count].append(execution)
                order.append(count)
    return Measurements(_frozen(samples), tuple(startup), floor, resolution, None, tuple(order))


_PROBE = 0  # the start-up probe's key in a round (iteration counts are >= 1)


def _startup_command(shell: bool) -> Command | None:
    """``true``, through ``sh -c`` when the command is: the start-up every sample pays."""
    try:
        return parse_command(STARTUP_COMMAND, shell=shell)
    except CommandNotFound:
        return None


def _run_probe(executor: Executor, probe: Command, into: list[Execution]) -> Command | None:
    """Run ``true`` once, keep a successful time in ``into``; None if it cannot run (no more probes)."""
    try:
        execution = executor.run(probe)
    except CommandNotFound:
        return None
    if execution.status == 0:
        into.append(execution)
    return probe


def _rss_floor(executor: Executor) -> int:
    floor = getattr(executor, "rss_floor_kib", None)
    return int(floor()) if callable(floor) else 0


def _frozen(samples: dict[int, list[Execution]]) -> dict[int, tuple[Execution, ...]]:
    return {count: tuple(values) for count, values in samples.items()}


# ------------------------------------------------------------------ analysis


def validate(plan: ValidationPlan, measurements: Measurements) -> Report:
    """Judge the measurements: one finding per rule of the module docstring, and the details."""
    name_finding = samplechecks.check_name(plan.benchmark_name)
    if measurements.failure is not None:
        return Report("benchmark", (_failure_finding(plan, measurements), name_finding),
                      {"command": plan.command, "name": plan.benchmark_name})
    largest = max(measurements.samples)
    stats_samples = measurements.samples[largest]
    startup_ns = samplechecks.median([e.wall_ns for e in measurements.startup])
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
        "samples": {str(count): [dataclasses.asdict(e) for e in executions]
                    for count, executions in sorted(measurements.samples.items())},
        "time_fit": fit,
        "rss_fit": rss,
    }
    return Report("benchmark", tuple(findings), details)


def _failure_finding(plan: ValidationPlan, measurements: Measurements) -> Finding:
    count, execution = measurements.failure
    at = f" with {count} iterations" if plan.iterated else ""
    return Finding(
        "runs", "runs", "fail",
        f"{plan.command_for(count).text!r}{at} ended with {describe_status(execution.status)}",
        "a failing run measures the failure, not the benchmark",
        "make the command succeed on its own first (run it in a shell and check `echo $?`)",
        {"iterations": count, "status": execution.status},
    )


def check_setup_overhead(measurements: Measurements, startup_ns: float | None) -> tuple[dict, Finding]:
    """Fit time = setup + iterations x per_iteration (OLS) and judge the setup share (seed 004).

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
    """Regress max RSS on the iteration count: a benchmark's memory must not grow with it (seed 004).

    An iteration count with any reading within 5% above the executor's RSS
    floor is censored whole (its true peak may be anywhere below, and keeping
    only its high readings would bias it upward); with fewer than two counts left the answer
    is ``unknown``. Growth is flagged when the one-sided slope test gives
    p < 0.01 and the growth over the counts tried is at least 1 MiB (RSS moves
    by tens of KiB between identical runs, seed 004).
    """
    title, check = "memory growth", "memory-growth"
    why = ("a benchmark whose memory grows with its iteration count does different work at "
           "different counts (allocation, page faults, reclaim), so its per-iteration time is "
           "not a constant; seed 004 calls such benchmarks written wrongly")
    floor = measurements.rss_floor_kib
    counts, rss = _columns(measurements, "max_rss_kib")
    censored = sorted({c for c, r in zip(counts, rss, strict=True)
                       if floor and r <= floor * samplechecks.FLOOR_MARGIN})
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
    for count, executions in sorted(measurements.samples.items()):
        for execution in executions:
            counts.append(count)
            values.append(getattr(execution, field_name))
    return counts, values
