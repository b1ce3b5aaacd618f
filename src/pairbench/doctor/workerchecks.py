"""Validation of a worker's benchmark: the doctor's rules, applied by varying the iteration count.

``pairbench bench`` chooses one iteration count N per benchmark (a sample of
about a millisecond). Before measuring, it asks each side's worker for a few
samples at N/8, N/4, N/2 and N in seeded random order (:func:`validation_counts`),
stores them as warmups, and judges them here, per side (pure functions):

* **duration**: a sample at N under 1000 timer steps (``samplechecks.check_duration``);
* **setup overhead**: the fit time = fixed + iterations x per_iteration has a
  fixed cost above 5% of a sample (the Swift benchmark suite's validation
  rules; ``validation.check_setup_overhead``, the same test as for commands,
  through each count's median sample: ``check_typical_setup_overhead``);
* **elided body**: the time does not grow with the iteration count (Kendall's
  tau, one-sided p >= 0.01), or grows by under 1 ns an iteration (Theil-Sen's
  slope; both robust to the few samples a busy machine's scheduler stretches,
  ``samplechecks.trend_fit``): a few cycles,
  what the harness's loop alone costs (an empty ``PAIRBENCH`` body measures
  0.3-0.6 ns on the project machine), so the compiler most likely removed the
  body because its result was not used. A rank test that cannot show growth
  shows no more than that: the warning says so, and when each count's median
  grows at least 2x over the counts' 8x span (a body that runs, its samples
  scattered by a busy machine) the finding is unknown instead (``_growth_not_shown``);
* **memory growth**: a worker lives for many samples, so instead of comparing
  processes run with different counts (as for commands) its resident memory,
  read after each sample, is regressed on the iterations run so far; it must
  not climb with them (one MiB or more, one-sided p < 0.01): a benchmark that
  keeps what it allocates measures allocation and reclaim, not its body. (Its
  self-reported peak RSS cannot show this below pairbench's own size, which
  Linux charges to a child at exec). In a garbage-collected runtime (Go,
  Python, the JVM: ``collected_runtime``) the heap grows with short-lived
  garbage until the collector runs, then levels off: a worker's later half of
  readings is fitted, and a harness invocation's growing peak (a fresh
  process each) is unknown, not a warning (``collected``);
* **name**: at most 40 characters (``samplechecks.check_name``), for the names
  given to pairbench's own harness only: another suite's names (Go's, Google
  Benchmark's, pytest's) are its authors', and tables widen to show them.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

import numpy as np

from pairbench.doctor import samplechecks
from pairbench.doctor.validation import Measurements, check_memory_growth, check_setup_overhead
from pairbench.environment.findings import Finding
from pairbench.model import Sample
from pairbench.units import format_duration, format_kib

__all__ = ["ELIDED_NS", "VALIDATION_ROUNDS", "check_elided_body", "check_resident_growth", "collected",
           "collected_runtime",
           "check_typical_setup_overhead", "samples_by_count", "validate_harness_benchmark", "validate_worker_benchmark",
           "validation_counts"]

VALIDATION_ROUNDS = 6  # samples per count and side: 24 points for each fit, ~11 sample times
ELIDED_NS = 1.0
COLLECTED_HARNESSES = {"go": "Go", "pytest-benchmark": "Python", "pytest-benchmark-processes": "Python"}
COLLECTED_PROGRAMS = (("python", "Python"), ("pypy", "Python"), ("java", "the JVM"), ("node", "Node.js"))
MEDIANS_GROW = 2.0  # the largest count's median over the smallest's that no removed body reaches
WORKER_SETUP_FIX = ("move the preparation out of the timed body: into PAIRBENCH_SETUP (C), setup= of "
                    "@pairbench.benchmark (Python), or before the loop your harness times")
HARNESS_SETUP_FIX = ("move the preparation out of the timed loop: before it (Google Benchmark's "
                     "`for (auto _ : state)`, Go's b.ResetTimer()), or into an untimed setup")


def validation_counts(iterations: int) -> tuple[int, int, int, int]:
    """The iteration counts validation samples: N/8, N/4, N/2 and N (from 1 up when N < 8)."""
    base = max(1, iterations // 8)
    return base, 2 * base, 4 * base, 8 * base


def collected_runtime(harness: str, argv: Sequence[str] = ()) -> str | None:
    """The garbage-collected runtime a harness's benchmarks run in, or None (C, C++, Rust, or not
    known): from the harness (Go's testing package, pytest-benchmark), else from the worker's
    program (a Python interpreter, ``java``, ``node``)."""
    if harness in COLLECTED_HARNESSES:
        return COLLECTED_HARNESSES[harness]
    program = os.path.basename(argv[0]) if argv else ""
    return next((runtime for prefix, runtime in COLLECTED_PROGRAMS if program.startswith(prefix)), None)


def collected(finding: Finding, runtime: str | None) -> Finding:
    """A harness invocation's peak memory growing in a garbage-collected runtime is not shown to be
    retention.

    Each invocation is a fresh process whose heap grows with short-lived garbage until the collector
    runs (Go's first collection waits for a 4 MiB heap; the JVM's for its young generation to fill),
    so a peak that grows with the iterations is what a body that keeps nothing does too: the finding
    is unknown, and says why. (A worker lives long enough for its heap to level off:
    ``check_resident_growth`` fits its later readings instead.)
    """
    if runtime is None or finding.status != "warn":
        return finding
    reading = (f"{finding.reading}; {runtime} collects garbage, and its heap grows with short-lived "
               "allocations until the collector runs, so this growth does not show that the body keeps "
               "what it allocates")
    return dataclasses.replace(finding, status="unknown", reading=reading, fix="",
                               data={**(finding.data or {}), "runtime": runtime})


def validate_worker_benchmark(samples: Sequence[Sample], resident_kib: Sequence[int | None],
                              timer_resolution_ns: int, runtime: str | None = None) -> tuple[Finding, ...]:
    """Judge one side's validation samples of a benchmark (successful, in execution order), with
    the worker's resident memory read after each (None where it could not be); ``runtime`` is the
    garbage-collected runtime the benchmarks run in (``collected_runtime``), if any."""
    by_count = samples_by_count(samples)
    findings = [samplechecks.check_duration(by_count[max(by_count)], None, timer_resolution_ns, True)]
    setup = check_typical_setup_overhead(by_count, WORKER_SETUP_FIX)
    memory = check_resident_growth(samples, resident_kib, runtime)
    return (*findings, setup, check_elided_body(samples), memory)


def validate_harness_benchmark(samples: Sequence[Sample], timer_resolution_ns: int,
                               rss_floor_kib: int, runtime: str | None = None) -> tuple[Finding, ...]:
    """Judge one side's validation invocations of a harness's benchmark (successful, in execution
    order). Each sample's ``wall_ns`` is the time the harness measured (not the invocation's), its
    ``max_rss_kib`` the invocation's peak: a fresh process per sample, so memory growth is the peak
    regressed on the iteration count, as for commands (``validation.check_memory_growth``)."""
    by_count = samples_by_count(samples)
    largest = sorted(samples, key=lambda s: s.iterations)[len(samples) // 2:]
    findings = [samplechecks.check_duration(largest, None, timer_resolution_ns, True)]
    setup = check_typical_setup_overhead(by_count, HARNESS_SETUP_FIX)
    _, memory = check_memory_growth(Measurements(by_count, rss_floor_kib=rss_floor_kib))
    return (*findings, setup, check_elided_body(samples), collected(memory, runtime))


def check_typical_setup_overhead(by_count: dict[int, tuple[Sample, ...]], fix: str) -> Finding:
    """The setup-overhead rule (``validation.check_setup_overhead``) on each count's median sample.

    The line is fitted through the medians, not every sample: a few validation samples of a
    millisecond that the scheduler stretched to 20 ms (a busy CI machine) would widen a least
    squares fit through them all until a fixed cost of 30% of a sample could no longer be told
    from none, or tip a 3% one over the line; the median of each count's samples moves by one
    sample's worth at most. Four medians leave the interval 2 degrees of freedom, so it is wider,
    and an answer near 5% is more often unknown than it would be on a quiet machine.
    """
    typical = {count: (dataclasses.replace(rows[0], wall_ns=int(np.median([s.wall_ns for s in rows]))),)
               for count, rows in by_count.items()}
    _, setup = check_setup_overhead(Measurements(typical), None)
    return dataclasses.replace(setup, fix=fix) if setup.status == "warn" else setup


def samples_by_count(samples: Sequence[Sample]) -> dict[int, tuple[Sample, ...]]:
    """The samples at each iteration count, in execution order, counts ascending."""
    by_count: dict[int, list[Sample]] = {}
    for sample in samples:
        by_count.setdefault(sample.iterations, []).append(sample)
    return {count: tuple(rows) for count, rows in sorted(by_count.items())}


def check_elided_body(samples: Sequence[Sample]) -> Finding:
    """Does the time grow with the iteration count, by more than a cycle could take?"""
    title, check = "elided body", "elided-body"
    why = ("a body whose result is never used can be removed by the compiler; what is left times an "
           "empty loop, and any change to the real code goes unseen")
    fix = ("pass the body's result to pairbench_keep() (C), return it (Python), or use your language's "
           "black_box / KeepAlive")
    if math.factorial(len(samples)) * samplechecks.RSS_ALPHA <= 1:
        return Finding(check, title, "unknown", f"{len(samples)} samples: too few for a rank test to show "
                       f"growth at p < {samplechecks.RSS_ALPHA} (the smallest p it can give is 1/{len(samples)}!)",
                       why)
    fit = samplechecks.trend_fit([s.iterations for s in samples], [s.wall_ns for s in samples])
    if fit is None:
        return Finding(check, title, "unknown", "no variation in the times or the counts to fit a line", why)
    data = {"per_iteration_ns": fit["slope"], "pvalue": fit["pvalue"],
            "growing": fit["pvalue"] < samplechecks.RSS_ALPHA}
    reading = (f"{format_duration(fit['slope'])} per iteration (95% interval {format_duration(fit['slope_low'])} "
               f"to {format_duration(fit['slope_high'])}; Kendall's tau {fit['tau']:.2f}, one-sided "
               f"p = {fit['pvalue']:.2g} that the time grows with the count)")
    if not data["growing"]:
        return _growth_not_shown(samples, reading, why, fix, data)
    if fit["slope"] < ELIDED_NS:
        return Finding(check, title, "warn", reading + f": under {ELIDED_NS} ns, faster than any body runs",
                       why, fix, data)
    return Finding(check, title, "ok", reading, why, data=data)


def _growth_not_shown(samples: Sequence[Sample], reading: str, why: str, fix: str, data: dict) -> Finding:
    """The rank test could not show growth: a warning, unless each count's median says the time grows.

    A removed body's time does not depend on the count, so its medians stay level over the counts'
    8x span; a median at the largest count at least ``MEDIANS_GROW`` times the one at the smallest
    is a body that runs, whose samples scatter too much for the rank test (a loaded machine
    stretches some by 10x). That is not shown either way, so it is unknown, not a warning.
    """
    by_count = samples_by_count(samples)
    (low, first), (high, last) = (min(by_count.items()), max(by_count.items()))
    medians = [float(np.median([s.wall_ns for s in rows])) for rows in (first, last)]
    data = {**data, "low_count": low, "high_count": high, "low_median_ns": medians[0], "high_median_ns": medians[1]}
    level = (f"the medians are {format_duration(medians[0])} at {low:,} and {format_duration(medians[1])} at "
             f"{high:,} iterations")
    if medians[0] > 0 and medians[1] >= MEDIANS_GROW * medians[0]:
        return Finding("elided-body", "elided body", "unknown",
                       f"{reading}: the rank test could not show growth, though {level}: the samples scatter "
                       "too much to tell (a busy machine)", why, data=data)
    return Finding("elided-body", "elided body", "warn",
                   f"{reading}: could not show that the time grows with the iterations ({level})", why, fix, data)


def check_resident_growth(samples: Sequence[Sample], resident_kib: Sequence[int | None],
                          runtime: str | None = None) -> Finding:
    """Does the worker's resident memory, read after each sample, climb with the iterations run?

    In a garbage-collected ``runtime`` the heap grows with garbage until the collector runs, then
    levels off, while memory kept climbs on: only the later half of the readings is fitted there.
    """
    title, check = "memory growth", "memory-growth"
    why = ("a benchmark that keeps what each iteration allocates does more work the longer it runs "
           "(allocation, page faults, reclaim), so its time per iteration is not a constant")
    done = np.cumsum([s.iterations for s in samples])
    read = [(int(d), r) for d, r in zip(done, resident_kib, strict=True) if r is not None]
    later = (f", in the later half of the samples: {runtime} collects garbage, and its heap levels off once the "
             "collector runs") if runtime is not None else ""
    if runtime is not None:
        read = read[len(read) // 2:]
    if len(read) < 3:
        return Finding(check, title, "unknown", "the worker's resident memory could not be read", why)
    fit = samplechecks.line_fit([d for d, _ in read], [r for _, r in read], alternative="greater")
    if fit is None:
        return Finding(check, title, "ok", f"resident memory constant at {format_kib(read[0][1])}{later}", why)
    growth = float(read[-1][1] - read[0][1])
    data = {"growth_kib": growth, "per_iteration_bytes": 1024 * fit["slope"], "iterations": read[-1][0],
            "pvalue": fit["pvalue"]}
    reading = (f"resident memory {format_kib(read[0][1])} to {format_kib(read[-1][1])} over "
               f"{read[-1][0]:,} iterations ({1024 * fit['slope']:.3g} bytes per iteration, one-sided "
               f"p = {fit['pvalue']:.2g}){later}")
    if runtime is not None:
        data["runtime"] = runtime
    if fit["pvalue"] < samplechecks.RSS_ALPHA and growth >= samplechecks.RSS_GROWTH_KIB:
        return Finding(check, title, "warn", reading, why,
                       "free what each iteration allocates, or allocate once in setup and reuse it", data)
    return Finding(check, title, "ok", reading, why, data=data)
