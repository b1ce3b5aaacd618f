"""Checks on a benchmark's samples: duration, stability, shape, serial dependence, interruptions.

Each check takes the timed samples of one command (or plain arrays) and
returns a :class:`~pairbench.environment.findings.Finding`; pure functions.
The thresholds, and where they come from:

* duration: process start-up (``true``) over 10% of a sample warns, over 50%
  fails; a median under 1000 timer steps warns (0.1% quantization). pyperf
  warns below 1 ms for the same reason (``pyperf/_cli.py``);
* CV over 10% warns: pyperf's "the benchmark result may be unstable" (SD >= 10%
  of the mean, ``pyperf/_cli.py`` ``format_checks``);
* ``bimodal`` / ``multimodal`` by the mvalue (BenchmarkDotNet's thresholds, in
  ``stats.describe``);
* Ljung-Box p < 0.01 (a correlogram's test of independence; ``stats.ljung_box``);
* more samples above the upper Tukey fence, Q3 + 1.5 IQR (the fence the Swift
  benchmark suite excludes outliers by; pairbench only counts them), than
  clean timings put there (2%), at binomial P < 1% (see ``check_outliers``);
* involuntary context switches: the rule of ``analysis.rules``
  (``involuntary_excess``, ``switches_disturbing``), which ``run`` and
  ``compare`` note too, so the doctor and a report always agree;
* CPU-bound or not: the rule of ``analysis.rules`` (``cpu_use``), which a
  verdict on CPU time notes too;
* mean more than 5% above the minimum (Daniel Lemire's error metric, the gap
  between mean and minimum: on a quiet machine it is "often under 1%");
* benchmark names over 40 characters (the Swift benchmark suite's validation
  rules: longer names obscure report tables).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.rules import cpu_use, involuntary_excess, switches_disturbing
from pairbench.analysis.validation import TIMER_STEPS_WARN, judge_duration, judge_name, median
from pairbench.environment.findings import Finding
from pairbench.errors import StatisticsError
from pairbench.model import Sample
from pairbench.units import format_duration, format_rate

CV_WARN = 0.10
LJUNG_BOX_ALPHA = 0.01
FENCE_RATE, FENCE_ALPHA = 0.02, 0.01
MEAN_MIN_GAP_WARN = 0.05


# ------------------------------------------------------------------ duration


def check_duration(samples: Sequence[Sample], startup_ns: float | None,
                   resolution_ns: int, iterated: bool) -> Finding:
    """Is a sample long enough compared with process start-up and the timer's step?
    (``analysis.validation.judge_duration``)"""
    judged = judge_duration(median([s.wall_ns for s in samples]), startup_ns, resolution_ns)
    data, title, check = dict(judged.data), "duration", "duration"
    wall, share = data["median_ns"], data.get("startup_share")
    why = ("when most of a sample is process start-up, or a few timer steps, the command's own "
           "work is a small part of what is measured and its changes drown in start-up noise")
    more = ("use a larger {iterations} count" if iterated
            else "batch more work per run (a loop inside the command, or an iteration count argument)")
    parts = [f"median {format_duration(wall)}"]
    if share is not None:
        parts.append(f"process start-up (true) {format_duration(startup_ns)} is {100 * share:.1f}% of it")
    if resolution_ns:
        parts.append(f"{wall / resolution_ns:,.0f} timer steps")
    reading = "; ".join(parts)
    target = max(10 * (startup_ns or 0), TIMER_STEPS_WARN * resolution_ns)
    fix = f"{more} until a run takes at least {format_duration(target)}"
    if judged.status in ("fail", "warn"):
        return Finding(check, title, judged.status, reading, why, fix, data)
    if judged.status == "unknown":
        return Finding(check, title, "unknown", reading + "; start-up and timer unknown", why, data=data)
    return Finding(check, title, "ok", reading, why, data=data)


# ------------------------------------------------------------------ the samples' shape


def sample_findings(samples: Sequence[Sample]) -> list[Finding]:
    """Stability, modes, serial dependence, outliers, context switches and the mean-min gap."""
    wall = np.array([s.wall_ns for s in samples], dtype=np.float64)
    description = stats.describe(wall)
    found = [
        check_stability(description),
        check_modality(description),
        check_autocorrelation(wall),
        check_outliers(description),
        check_context_switches([s.involuntary_cs for s in samples], wall),
        check_cpu_bound(samples),
        check_mean_min_gap(description),
    ]
    return [f for f in found if f is not None]


CPU_BOUND_READING = {
    "cpu-bound": ("CPU-bound: {off} of its time off the CPU in the {quiet} samples no other task interrupted; "
                  "CPU time {ratio:.2f}x wall time"),
    "off-cpu": ("not CPU-bound: {off} of its time off the CPU (sleeping, reading, or waiting for a child or a "
                "lock) in the {quiet} samples no other task interrupted"),
    "threads": "several threads or processes at once: CPU time is {ratio:.2f}x wall time",
    "unknown": ("every sample was interrupted by other tasks, so its own time off the CPU cannot be told "
                "(CPU time {ratio:.2f}x wall time)"),
    "waits": ("not CPU-bound: every sample was interrupted by other tasks, but each also gave up the CPU "
              "itself (sleeping, reading, or waiting for a child or a lock); CPU time {ratio:.2f}x wall time"),
}
CPU_BOUND_FIX = {
    "cpu-bound": "compare it on CPU time (--metric cpu): other tasks' time slices are then left out",
    "off-cpu": "compare it on wall time (--metric wall): CPU time leaves its waiting out",
    "threads": ("compare it on wall time (--metric wall) for how long it takes; CPU time adds up what runs at "
                "once"),
    "unknown": "run it on a quieter machine to tell, or compare it on wall time (--metric wall)",
    "waits": "compare it on wall time (--metric wall): CPU time leaves its waiting out",
}


def check_cpu_bound(samples: Sequence[Sample]) -> Finding | None:
    """Does the command's CPU time cover its wall time? The rule of ``analysis.rules.cpu_use``, which
    a verdict on CPU time notes too; None when no CPU time was recorded (a scripted executor)."""
    title, check = "CPU-bound", "cpu-bound"
    why = ("a verdict on CPU time (--metric cpu) leaves other tasks' time slices out, and so stays steady "
           "on a busy machine, but it leaves out the command's own waiting and adds up its threads too")
    use = cpu_use([s.wall_ns for s in samples], [s.user_ns + s.sys_ns for s in samples],
                  [s.involuntary_cs for s in samples], [s.voluntary_cs for s in samples])
    if use is None:
        return None
    off = f"{100 * use.off_cpu_share:.1f}%" if use.off_cpu_share is not None else "-"
    reading = CPU_BOUND_READING[use.kind].format(off=off, quiet=use.unswitched, ratio=use.cpu_over_wall)
    data = {"kind": use.kind, "off_cpu_share": use.off_cpu_share, "cpu_over_wall": use.cpu_over_wall,
            "unswitched": use.unswitched, "n": use.n}
    return Finding(check, title, "unknown" if use.kind == "unknown" else "ok", reading, why,
                   CPU_BOUND_FIX[use.kind], data)


def check_stability(d) -> Finding:
    title, check = "stability", "stability"
    why = ("a large spread needs many more samples for the same precision, and usually means "
           "something outside the command is changing its time")
    if d.cv is None:
        return Finding(check, title, "unknown", f"CV undefined for n = {d.n} (no spread to measure)", why)
    robust = d.iqr / d.median if d.median else None
    reading = f"CV {100 * d.cv:.1f}% (SD {format_duration(d.sd)} on a mean of {format_duration(d.mean)})"
    if robust is not None:
        reading += f"; IQR/median {100 * robust:.1f}%"
    data = {"cv": d.cv, "iqr_over_median": robust, "n": d.n}
    if d.cv > CV_WARN:
        return Finding(check, title, "warn", reading, why,
                       "quiet the machine (see `pairbench doctor`) and look for a cause inside the "
                       "command (I/O, caches, garbage collection)", data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_modality(d) -> Finding:
    title, check = "modes", "modality"
    why = ("two or more modes mean the command takes different paths or the machine switches "
           "states; a single summary then describes none of them")
    if d.modality is None:
        reading = (f"need at least 12 samples to judge modes, got {d.n}" if d.modes is None else
                   f"one mode found, but at least 30 samples are needed to call them unimodal, got {d.n}")
        return Finding(check, title, "unknown", reading, why)
    places = ", ".join(format_duration(x) for x in d.mode_locations)
    reading = f"{d.modality}: the lowland detector finds {d.modes} mode(s) near {places} (mvalue {d.mvalue:.2f})"
    data = {"modes": d.modes, "mode_locations": list(d.mode_locations), "mvalue": d.mvalue,
            "modality": d.modality}
    if d.modality in ("bimodal", "multimodal"):
        return Finding(check, title, "warn", reading, why,
                       "plot the samples in time order (pairbench report) to find what switches",
                       data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_autocorrelation(wall: np.ndarray) -> Finding:
    title, check = "serial dependence", "autocorrelation"
    why = ("neighbouring samples that resemble each other (drift, warming, periodic load) carry "
           "less information than their number says, and the textbook error of the mean is "
           "then too small")
    try:
        r1 = stats.autocorrelation(wall, max_lag=1).lag1
        lb = stats.ljung_box(wall)
    except StatisticsError as exc:
        return Finding(check, title, "unknown", f"cannot test: {exc}", why)
    reading = f"lag-1 autocorrelation {r1:+.2f}; Ljung-Box p = {lb.pvalue:.2g} ({lb.lags} lags)"
    data = {"lag1": r1, "ljung_box_pvalue": lb.pvalue, "lags": lb.lags}
    if lb.pvalue < LJUNG_BOX_ALPHA:
        return Finding(check, title, "warn", reading, why,
                       "compare variants with pairbench compare (interleaved pairs cancel shared "
                       "drift) and add warmup runs (--warmup)", data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_outliers(d) -> Finding:
    """Warn when more samples lie above the upper Tukey fence than clean timings put there.

    Clean, mildly skewed timings put about ``FENCE_RATE`` = 2% of a sample
    above Q3 + 1.5 IQR at n = 20-50 (normal: 1.1% at n = 20, lognormal with
    sigma 0.1: 1.7%; ``benchmarks/doctor_thresholds.py``), more than the
    asymptotic 0.35% because sample quartiles vary. The count is flagged when
    P(Binomial(n, 2%) >= count) < 1%: 3 of 10 or 20, 4 of 30.
    """
    title, check = "outliers", "outliers"
    why = ("samples beyond the Tukey fence are usually interruptions (other tasks, interrupts, "
           "page faults); pairbench reports them and never removes them")
    above = len(d.above_fence)
    tail = stats.fence_excess_pvalue(above, d.n, FENCE_RATE)
    reading = (f"{above} of {d.n} samples above Q3 + 1.5 IQR ({format_duration(d.upper_fence)}); "
               f"clean timings put about {100 * FENCE_RATE:.0f}% there (binomial P = {tail:.2g})")
    data = {"above_fence": above, "n": d.n, "upper_fence_ns": d.upper_fence, "pvalue": tail}
    if tail < FENCE_ALPHA:
        return Finding(check, title, "warn", reading, why,
                       "quiet the machine (pairbench doctor) or use more samples", data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_context_switches(switches: Sequence[int], wall: np.ndarray) -> Finding:
    """Did other tasks take the CPU mid-sample? The rule of ``analysis.rules``, as a finding."""
    title, check = "context switches", "context-switches"
    why = ("an involuntary context switch means another task took the CPU mid-sample; the "
           "sample then includes that task's time slice")
    rate, affected = involuntary_excess(switches, wall)
    reading = (f"{format_rate(rate)} involuntary switches beyond the quietest sample's "
               f"({min(switches, default=0)}), in {affected} of {len(switches)} samples")
    data = {"excess_per_s": rate, "affected_samples": affected, "n": len(switches)}
    if switches_disturbing(rate, affected, len(switches)):
        return Finding(check, title, "warn", reading, why,
                       "stop other CPU-heavy work while measuring (pairbench doctor lists the "
                       "busiest processes)", data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_mean_min_gap(d) -> Finding:
    title, check = "mean-min gap", "mean-min-gap"
    why = ("the minimum is the time without interference; a mean far above it says a long tail "
           "of disturbed samples (the gap between mean and minimum is Daniel Lemire's error metric)")
    if d.mean_min_gap is None:
        return Finding(check, title, "unknown", "undefined (minimum <= 0)", why)
    reading = f"(mean - min) / mean = {100 * d.mean_min_gap:.1f}%"
    data = {"mean_min_gap": d.mean_min_gap}
    if d.mean_min_gap > MEAN_MIN_GAP_WARN:
        return Finding(check, title, "warn", reading, why,
                       "quiet the machine (pairbench doctor); compare medians or paired ratios, "
                       "which a tail moves less than a mean", data)
    return Finding(check, title, "ok", reading, why, data=data)


def check_name(name: str) -> Finding:
    """Names of at most 40 characters, so report tables stay readable (the Swift benchmark suite's
    validation rules; ``analysis.validation.judge_name``)."""
    judged = judge_name(name)
    length, limit = judged.data["length"], judged.data["max"]
    reading = f"{length} characters" + (f" (over {limit})" if judged.status == "warn" else "")
    why = "long names are cut or wrap in report tables, hiding which benchmark a row is"
    if judged.status == "warn":
        return Finding("name", "name", "warn", reading, why,
                       f"give it a shorter name with --name (at most {limit} characters)", dict(judged.data))
    return Finding("name", "name", "ok", reading, why, data=dict(judged.data))
