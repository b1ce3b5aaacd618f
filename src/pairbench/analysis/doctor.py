"""``pairbench doctor COMMAND``'s judgement: the findings on a command from the samples of its run.

The doctor's run (``sessions.doctor``) measured the command at each iteration
count (a side per count: 1, 2, 4, 8 with a ``{iterations}`` placeholder, else
1) and, as a second benchmark on a last side, ``true``: process start-up.
:func:`doctor_report` judges it, from the stored samples alone, by the rules
``analysis.validation`` judges a suite's benchmarks with (duration, setup
overhead, memory growth, name) and the sample checks below, on the samples
of the largest count. Thresholds, and where they come from:

* CV over 10% warns: pyperf's "the benchmark result may be unstable" (SD >= 10%
  of the mean, ``pyperf/_cli.py`` ``format_checks``);
* ``bimodal`` / ``multimodal`` by the mvalue (BenchmarkDotNet's thresholds, in
  ``stats.describe``);
* Ljung-Box p < 0.01 (a correlogram's test of independence; ``stats.ljung_box``);
* more samples above the upper Tukey fence, Q3 + 1.5 IQR (the fence the Swift
  benchmark suite excludes outliers by; pairbench only counts them), than
  clean timings put there (2%), at binomial P < 1% (see :func:`check_outliers`);
* involuntary context switches and CPU-bound or not: the rules of
  ``analysis.rules``, which ``run`` and ``compare`` note too, so the doctor and
  a report always agree;
* mean more than 5% above the minimum (Daniel Lemire's error metric, the gap
  between mean and minimum: on a quiet machine it is "often under 1%").

A command's max RSS is never reported below the size of the process that
spawns it (``Run.executor.rss_floor_kib``): readings at that floor are left out
of the memory regression. Pure; ``report.findings`` words the findings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.rules import (
    cpu_use,
    executor_rss_floor_kib,
    involuntary_excess,
    switches_disturbing,
    timer_step,
)
from pairbench.analysis.validation import (
    TIMER_STEPS_WARN,
    iterations_for_share,
    judge_duration,
    judge_memory_growth,
    judge_name,
    judge_setup_overhead,
    median,
    setup_share_interval,
)
from pairbench.environment.findings import Finding, Report, found
from pairbench.errors import StatisticsError
from pairbench.model import Run, Sample

CV_WARN = 0.10
LJUNG_BOX_ALPHA = 0.01
FENCE_RATE, FENCE_ALPHA = 0.02, 0.01
MEAN_MIN_GAP_WARN = 0.05
COMMAND, PROBE = 0, 1  # the benchmarks of a doctor's run: the command, and process start-up (``true``)


def doctor_report(run: Run) -> Report:
    """The findings on the command ``run`` measured, and the details ``--json`` shows."""
    counts = _count_sides(run)
    name = judge_name(run.benchmarks[COMMAND].name)
    name_finding = found("name", name.status, **name.data)
    failure = _failure(run, counts)
    if failure is not None:
        return Report("benchmark", (failure, name_finding), {"name": run.benchmarks[COMMAND].name})
    by_count = {rows[0].iterations: rows for s in counts if (rows := _timed(run, COMMAND, s))}
    iterated, largest = len(counts) > 1, max(by_count)
    startup_ns = median([s.wall_ns for s in _timed(run, PROBE, len(run.sides) - 1)]) if _probed(run) else None
    resolution, floor = timer_step(run.environment) or 0, executor_rss_floor_kib(run) or 0
    findings = [check_duration(by_count[largest], startup_ns, resolution, iterated)]
    fit = rss = None
    if iterated:
        setup, memory = check_setup_overhead(by_count, startup_ns), check_memory_growth(by_count, floor)
        fit, rss = setup.data or None, memory.data
        findings += [setup, memory]
    findings += [*sample_findings(by_count[largest]), name_finding]
    return Report("benchmark", tuple(findings), {
        "name": run.benchmarks[COMMAND].name, "iteration_counts": sorted(by_count),
        "judged_at_iterations": largest if iterated else None, "startup_median_ns": startup_ns,
        "rss_floor_kib": floor, "timer_resolution_ns": resolution,
        "samples": {str(count): [dataclasses.asdict(sample) for sample in rows]
                    for count, rows in sorted(by_count.items())},
        "time_fit": fit if iterated else None, "rss_fit": rss})


def _probed(run: Run) -> bool:
    return len(run.benchmarks) > PROBE


def _count_sides(run: Run) -> list[int]:
    """The sides that ran the command, one per iteration count (the last side is the probe's)."""
    return list(range(len(run.sides) - 1 if _probed(run) else len(run.sides)))


def _timed(run: Run, benchmark: int, side: int) -> list[Sample]:
    """The successful samples that are not warmups, in execution order."""
    return run.series(benchmark, side).measured().in_order().rows()


def _failure(run: Run, counts: list[int]) -> Finding | None:
    """The first failed execution of the command (warmups too): it ended measuring."""
    for s in counts:
        failed = next((sample for sample in run.series(COMMAND, s).in_order().rows() if not sample.ok), None)
        if failed is not None:
            return found("runs", "fail", command=run.sides[s].command.text, iterations=failed.iterations,
                         iterated=len(counts) > 1, exit_status=failed.status)
    return None


def check_duration(samples: Sequence[Sample], startup_ns: float | None, resolution_ns: int,
                   iterated: bool) -> Finding:
    """Is a sample long enough compared with process start-up and the timer's step?"""
    judged = judge_duration(median([s.wall_ns for s in samples]), startup_ns, resolution_ns)
    target = max(10 * (startup_ns or 0), TIMER_STEPS_WARN * resolution_ns)
    return found("duration", judged.status, **judged.data, iterated=iterated, target_ns=target)


def check_setup_overhead(by_count, startup_ns: float | None) -> Finding:
    """The setup-overhead rule (``analysis.validation.judge_setup_overhead``), with the share's
    interval when it is unknown and the count that would bring it under 5% when it warns."""
    judged = judge_setup_overhead(by_count, startup_ns)
    data = dict(judged.data)
    if judged.status == "unknown" and data:
        data["share_interval"] = list(setup_share_interval(data))
    if judged.status == "warn":
        data["needed_iterations"] = iterations_for_share(data["setup_ns"], data["slope"])
    return found("setup-overhead", judged.status, **data)


def check_memory_growth(by_count, floor_kib: int) -> Finding:
    """The memory-growth rule (``analysis.validation.judge_memory_growth``)."""
    judged = judge_memory_growth(by_count, floor_kib)
    return found("memory-growth", judged.status, **judged.data)


# ------------------------------------------------------------------ the samples' shape


def sample_findings(samples: Sequence[Sample]) -> list[Finding]:
    """Stability, modes, serial dependence, outliers, context switches, CPU use and the mean-min gap."""
    wall = np.array([s.wall_ns for s in samples], dtype=np.float64)
    description = stats.describe(wall)
    found_ = [check_stability(description), check_modality(description), check_autocorrelation(wall),
              check_outliers(description), check_context_switches([s.involuntary_cs for s in samples], wall),
              check_cpu_bound(samples), check_mean_min_gap(description)]
    return [f for f in found_ if f is not None]


def check_cpu_bound(samples: Sequence[Sample]) -> Finding | None:
    """Does the command's CPU time cover its wall time? The rule of ``analysis.rules.cpu_use``, which
    a verdict on CPU time notes too; None when no CPU time was recorded (a scripted executor)."""
    use = cpu_use([s.wall_ns for s in samples], [s.user_ns + s.sys_ns for s in samples],
                  [s.involuntary_cs for s in samples], [s.voluntary_cs for s in samples])
    if use is None:
        return None
    return found("cpu-bound", "unknown" if use.kind == "unknown" else "ok", kind=use.kind,
                 off_cpu_share=use.off_cpu_share, cpu_over_wall=use.cpu_over_wall, unswitched=use.unswitched, n=use.n)


def check_stability(d) -> Finding:
    data = {"cv": d.cv, "iqr_over_median": d.iqr / d.median if d.median else None, "n": d.n, "sd": d.sd,
            "mean": d.mean}
    if d.cv is None:
        return found("stability", "unknown", **data)
    return found("stability", "warn" if d.cv > CV_WARN else "ok", **data)


def check_modality(d) -> Finding:
    data = {"modes": d.modes, "mode_locations": list(d.mode_locations or ()), "mvalue": d.mvalue,
            "modality": d.modality, "n": d.n}
    if d.modality is None:
        return found("modality", "unknown", **data)
    return found("modality", "warn" if d.modality in ("bimodal", "multimodal") else "ok", **data)


def check_autocorrelation(wall: np.ndarray) -> Finding:
    try:
        r1 = stats.autocorrelation(wall, max_lag=1).lag1
        lb = stats.ljung_box(wall)
    except StatisticsError as exc:
        return found("autocorrelation", "unknown", refusal={"code": exc.code, "data": dict(exc.data)}
                     if exc.code else {"message": str(exc)})
    return found("autocorrelation", "warn" if lb.pvalue < LJUNG_BOX_ALPHA else "ok", lag1=r1,
                 ljung_box_pvalue=lb.pvalue, lags=lb.lags)


def check_outliers(d) -> Finding:
    """Warn when more samples lie above the upper Tukey fence than clean timings put there.

    Clean, mildly skewed timings put about ``FENCE_RATE`` = 2% of a sample
    above Q3 + 1.5 IQR at n = 20-50 (normal: 1.1% at n = 20, lognormal with
    sigma 0.1: 1.7%; ``benchmarks/doctor_thresholds.py``), more than the
    asymptotic 0.35% because sample quartiles vary. The count is flagged when
    P(Binomial(n, 2%) >= count) < 1%: 3 of 10 or 20, 4 of 30.
    """
    above = len(d.above_fence)
    tail = stats.fence_excess_pvalue(above, d.n, FENCE_RATE)
    return found("outliers", "warn" if tail < FENCE_ALPHA else "ok", above_fence=above, n=d.n,
                 upper_fence_ns=d.upper_fence, pvalue=tail, rate=FENCE_RATE)


def check_context_switches(switches: Sequence[int], wall: np.ndarray) -> Finding:
    """Did other tasks take the CPU mid-sample? The rule of ``analysis.rules``, as a finding."""
    rate, affected = involuntary_excess(switches, wall)
    return found("context-switches", "warn" if switches_disturbing(rate, affected, len(switches)) else "ok",
                 excess_per_s=rate, affected_samples=affected, n=len(switches), quietest=min(switches, default=0))


def check_mean_min_gap(d) -> Finding:
    if d.mean_min_gap is None:
        return found("mean-min-gap", "unknown", mean_min_gap=None)
    return found("mean-min-gap", "warn" if d.mean_min_gap > MEAN_MIN_GAP_WARN else "ok", mean_min_gap=d.mean_min_gap)
