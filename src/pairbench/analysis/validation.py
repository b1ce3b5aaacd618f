"""Benchmark validation: is each benchmark a good one? Judged from the samples taken to check it.

The Swift benchmark suite's validation rules (``BenchmarkDoctor``, described in
Pavol Vaskovic's "Towards Robust Performance Measurement") check that a
benchmark's setup overhead is negligible (under 5% of a sample), that its
memory does not depend on its iteration count, and that its name fits report
tables (40 characters). pairbench adds what a timer and a harness must know.

``pairbench bench`` takes each side's validation samples before a benchmark's
rounds: at 1/8, 1/4, 1/2 and all of a sample, in seeded random order, stored
as warmups and marked with their share (``model.VALIDATION_METRIC``; a
worker's also with its resident memory after the sample). :func:`validation_notes`
judges them, per side, from the stored run, so ``show`` says what the
measuring said:

* **duration**: a full sample under 1000 timer steps;
* **setup overhead**: the line time = fixed + iterations x per_iteration
  through each count's median sample (a few samples the scheduler stretched
  move a median by one sample's worth at most) has a fixed cost above 5% of a
  sample, even at the low end of its 95% interval;
* **elided body**: the time does not grow with the iteration count (Kendall's
  tau, one-sided p >= 0.01), or grows by under 1 ns an iteration (Theil-Sen's
  slope): what the harness's loop alone costs (an empty ``PAIRBENCH`` body
  measures 0.3-0.6 ns on the project machine), so the compiler most likely
  removed the body because its result was not used. A rank test that cannot
  show growth shows no more than that, and the note says so; when each count's
  median grows 2x or more over the counts' 8x span (a body that runs, its
  samples scattered by a busy machine) it is unknown instead;
* **memory growth**: a worker lives for many samples, so its resident memory,
  read after each sample, is regressed on the iterations run so far; a
  harness runs a process per sample, so its peak is regressed on the
  iteration count (readings at the executor's RSS floor censored); either
  must not climb (one MiB or more, one-sided p < 0.01). In a garbage-collected
  runtime (Go, Python, the JVM: ``collected_runtime``) a heap grows with
  short-lived garbage until the collector runs, then levels off: a worker's
  later half of readings is fitted, and a fresh invocation's growing peak is
  unknown, not a warning;
* **too long**: even one iteration makes a sample over twice ``--sample-time``;
* **name**: at most 40 characters, for pairbench's own benchmarks: another
  suite's names (Go's, Google Benchmark's, pytest's) are its authors'.

The judgements (:class:`Judged`: a status and the figures behind it) are
``pairbench doctor COMMAND``'s too (``analysis.doctor`` makes findings of them). Pure.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

import numpy as np

from pairbench.analysis.rules import at_rss_floor, executor_rss_floor_kib, timer_step
from pairbench.frozen import frozen
from pairbench.harness_registry import PAIRBENCH
from pairbench.harness_registry import harness as harness_entry
from pairbench.model import RESIDENT_METRIC, VALIDATION_METRIC, Run, Sample, Samples
from pairbench.notes import Note, Subject
from pairbench.stats.regression import line_fit, trend_fit

STARTUP_SHARE_WARN, STARTUP_SHARE_FAIL = 0.10, 0.50
TIMER_STEPS_WARN = 1000
SETUP_SHARE_WARN = 0.05
RSS_ALPHA = 0.01
RSS_GROWTH_KIB = 1024
ELIDED_NS = 1.0
NAME_MAX = 40
MEDIANS_GROW = 2.0  # the largest count's median over the smallest's that no removed body reaches
COLLECTED_PROGRAMS = (("python", "Python"), ("pypy", "Python"), ("java", "the JVM"), ("node", "Node.js"))
TOO_LONG_FACTOR = 2  # a sample of one iteration over twice --sample-time: the iteration is too long
VALIDATION_CODES = frozenset({"benchmark-duration", "benchmark-setup-overhead", "benchmark-elided-body",
                              "benchmark-memory-growth", "benchmark-peak-growth", "benchmark-name",
                              "benchmark-too-long"})


@frozen
class Judged:
    """What one validation rule says: ``ok``, ``unknown``, ``warn`` or ``fail``, and the figures
    behind it (JSON-ready; what the words of the finding or note are made from)."""

    check: str
    status: str
    data: Mapping


# --------------------------------------------------------------------------- the rules


def median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def judge_duration(median_ns: float, startup_ns: float | None, resolution_ns: int) -> Judged:
    """Is a sample long enough compared with process start-up and the timer's step? Start-up over
    10% of a sample warns, over 50% fails; under 1000 timer steps warns (0.1% quantization; pyperf
    warns below 1 ms for the same reason, ``pyperf/_cli.py``)."""
    data = {"median_ns": median_ns, "startup_ns": startup_ns, "timer_resolution_ns": resolution_ns}
    share = startup_ns / median_ns if startup_ns and median_ns else None
    if share is not None:
        data["startup_share"] = share
    too_coarse = resolution_ns and median_ns < TIMER_STEPS_WARN * resolution_ns
    if share is not None and share > STARTUP_SHARE_FAIL:
        return Judged("duration", "fail", data)
    if (share is not None and share > STARTUP_SHARE_WARN) or too_coarse:
        return Judged("duration", "warn", data)
    if share is None and not resolution_ns:
        return Judged("duration", "unknown", data)
    return Judged("duration", "ok", data)


def judge_setup_overhead(by_count: Mapping[int, Sequence[Sample]], startup_ns: float | None = None) -> Judged:
    """Fit time = setup + iterations x per_iteration (least squares) and judge the setup's share.

    The fitted intercept is the fixed cost of every sample; the process start-up (``startup_ns``,
    for a command) is unavoidable and judged by the duration rule, so the *setup* is the intercept
    minus it. Its share is taken at the largest count tried, the most favourable. With the
    intercept's 95% interval: ok when even its upper end is at most 5%, warn when its lower end is
    above 5%, unknown when it straddles 5% (``benchmarks/doctor_thresholds.py`` measures how often
    each happens near the line). The start-up median's own error is small next to the intercept's.
    """
    counts, times = _columns(by_count, "wall_ns")
    fit = line_fit(counts, times)
    if fit is None:
        return Judged("setup-overhead", "unknown", {})
    largest = max(by_count)
    setup = fit.intercept - (startup_ns or 0.0)
    per_sample = fit.intercept + fit.slope * largest
    data = {**asdict(fit), "setup_ns": setup, "startup_ns": startup_ns, "setup_share": _share(setup, per_sample),
            "share_at_iterations": largest}
    low, high = setup_share_interval(data)
    if high is not None and high <= SETUP_SHARE_WARN:
        return Judged("setup-overhead", "ok", data)
    if low is None or low <= SETUP_SHARE_WARN:
        return Judged("setup-overhead", "unknown", data)
    return Judged("setup-overhead", "warn", data)


def setup_share_interval(data: Mapping) -> tuple[float | None, float | None]:
    """The setup's share of a sample at the ends of the intercept's 95% interval."""
    per_sample = data["intercept"] + data["slope"] * data["share_at_iterations"]
    return tuple(_share(data["setup_ns"] + sign * data["intercept_ci"], per_sample) for sign in (-1, 1))


def iterations_for_share(setup: float, per_iteration: float, share: float = SETUP_SHARE_WARN) -> int | None:
    """Smallest n with setup / (setup + n per_iteration) <= share; None if per_iteration <= 0."""
    if per_iteration <= 0:
        return None
    return max(1, math.ceil(setup * (1 - share) / (share * per_iteration)))


def _share(setup: float, per_sample: float) -> float | None:
    return max(setup, 0.0) / per_sample if per_sample > 0 else None


def judge_typical_setup_overhead(by_count: Mapping[int, Sequence[Sample]]) -> Judged:
    """The setup-overhead rule through each count's median sample, not every sample: a few samples
    of a millisecond that the scheduler stretched to 20 ms (a busy CI machine) would widen a line
    through them all until a fixed cost of 30% of a sample could no longer be told from none. Four
    medians leave the interval 2 degrees of freedom, so an answer near 5% is more often unknown."""
    typical = {count: (replace(rows[0], wall_ns=int(np.median([s.wall_ns for s in rows]))),)
               for count, rows in by_count.items()}
    return judge_setup_overhead(typical)


def judge_memory_growth(by_count: Mapping[int, Sequence[Sample]], floor_kib: int) -> Judged:
    """Regress max RSS on the iteration count: a benchmark's memory must not grow with it.

    A count with any reading at the executor's RSS floor (``analysis.rules.at_rss_floor``) is
    censored whole (its true peak may be anywhere below, and keeping only its high readings would
    bias it upward); with fewer than two counts left the answer is ``unknown``. Growth is flagged
    when the one-sided slope test gives p < 0.01 and the growth over the counts tried is at least
    1 MiB (max RSS moves by tens of KiB between identical runs: 13 pages, 52 KiB, in the Swift
    suite's measurements).
    """
    counts, rss = _columns(by_count, "max_rss_kib")
    censored = sorted({c for c, r in zip(counts, rss, strict=True) if at_rss_floor(r, floor_kib)})
    kept = [(c, r) for c, r in zip(counts, rss, strict=True) if c not in censored]
    data: dict = {"rss_floor_kib": floor_kib, "censored_counts": censored, "counts": sorted(set(counts))}
    if len({c for c, _ in kept}) < 2:
        return Judged("memory-growth", "unknown", data)
    fit = line_fit([c for c, _ in kept], [r for _, r in kept], alternative="greater")
    data.update(low_count=min(c for c, _ in kept), high_count=max(c for c, _ in kept))
    if fit is None:
        return Judged("memory-growth", "ok", {**data, "constant_kib": kept[0][1]})
    data.update(asdict(fit), growth_kib=fit.slope * (data["high_count"] - data["low_count"]))
    grows = fit.pvalue < RSS_ALPHA and data["growth_kib"] >= RSS_GROWTH_KIB
    return Judged("memory-growth", "warn" if grows else "ok", data)


def judge_elided_body(samples: Sequence[Sample]) -> Judged:
    """Does the time grow with the iteration count, by more than a cycle could take?"""
    if math.factorial(len(samples)) * RSS_ALPHA <= 1:  # the smallest p a rank test gives is 1/n!
        return Judged("elided-body", "unknown", {"n": len(samples)})
    fit = trend_fit([s.iterations for s in samples], [s.wall_ns for s in samples])
    if fit is None:
        return Judged("elided-body", "unknown", {})
    data = {"per_iteration_ns": fit.slope, "pvalue": fit.pvalue, "growing": fit.pvalue < RSS_ALPHA}
    if not data["growing"]:
        return _growth_not_shown(samples, data)
    return Judged("elided-body", "ok" if fit.slope >= ELIDED_NS else "warn", data)


def _growth_not_shown(samples: Sequence[Sample], data: dict) -> Judged:
    """The rank test could not show growth: a warning, unless each count's median says the time grows.

    A removed body's time does not depend on the count, so its medians stay level over the counts'
    8x span; a median at the largest count at least ``MEDIANS_GROW`` times the one at the smallest
    is a body that runs, whose samples scatter too much for the rank test (a loaded machine
    stretches some tenfold). That shows nothing either way: unknown, not a warning.
    """
    by_count = samples_by_count(samples)
    (low, first), (high, last) = min(by_count.items()), max(by_count.items())
    medians = [float(np.median([s.wall_ns for s in rows])) for rows in (first, last)]
    data = {**data, "low_count": low, "high_count": high, "low_median_ns": medians[0], "high_median_ns": medians[1]}
    grows = medians[0] > 0 and medians[1] >= MEDIANS_GROW * medians[0]
    return Judged("elided-body", "unknown" if grows else "warn", data)


def judge_resident_growth(samples: Sequence[Sample], resident_kib: Sequence[int | None],
                          runtime: str | None = None) -> Judged:
    """Does a worker's resident memory, read after each sample, climb with the iterations run?

    In a garbage-collected ``runtime`` the heap grows with garbage until the collector runs, then
    levels off, while memory kept climbs on: only the later half of the readings is fitted there.
    """
    done = np.cumsum([s.iterations for s in samples])
    read = [(int(d), r) for d, r in zip(done, resident_kib, strict=True) if r is not None]
    if runtime is not None:
        read = read[len(read) // 2:]
    if len(read) < 3:
        return Judged("memory-growth", "unknown", {})
    fit = line_fit([d for d, _ in read], [r for _, r in read], alternative="greater")
    if fit is None:
        return Judged("memory-growth", "ok", {"constant_kib": read[0][1]})
    growth = float(read[-1][1] - read[0][1])
    data = {"growth_kib": growth, "per_iteration_bytes": 1024 * fit.slope, "iterations": read[-1][0],
            "pvalue": fit.pvalue, **({"runtime": runtime} if runtime else {})}
    return Judged("memory-growth", "warn" if fit.pvalue < RSS_ALPHA and growth >= RSS_GROWTH_KIB else "ok", data)


def judge_name(name: str) -> Judged:
    """Names of at most 40 characters, so report tables stay readable (the Swift benchmark suite's
    validation rules)."""
    return Judged("name", "warn" if len(name) > NAME_MAX else "ok", {"length": len(name), "max": NAME_MAX})


def judge_too_long(full: Sequence[Sample], sample_time_ns: int) -> Judged:
    """Does even one iteration make a sample over ``TOO_LONG_FACTOR`` times --sample-time?"""
    per_sample = float(np.median([s.wall_ns for s in full]))
    iterations = int(np.median([s.iterations for s in full]))
    data = {"iteration_ns": per_sample / max(iterations, 1), "sample_time_ns": sample_time_ns}
    return Judged("too-long", "warn" if iterations <= 1 and per_sample > TOO_LONG_FACTOR * sample_time_ns
                  else "ok", data)


def samples_by_count(samples: Sequence[Sample]) -> dict[int, tuple[Sample, ...]]:
    """The samples at each iteration count, in execution order, counts ascending."""
    by_count: dict[int, list[Sample]] = {}
    for sample in samples:
        by_count.setdefault(sample.iterations, []).append(sample)
    return {count: tuple(rows) for count, rows in sorted(by_count.items())}


def _columns(by_count: Mapping[int, Sequence[Sample]], field_name: str) -> tuple[list[int], list[int]]:
    pairs = [(count, getattr(s, field_name)) for count, rows in sorted(by_count.items()) for s in rows]
    return [c for c, _ in pairs], [v for _, v in pairs]


# --------------------------------------------------------------------------- a bench run's notes


def collected_runtime(harness: str, argv: Sequence[str] = ()) -> str | None:
    """The garbage-collected runtime a side's benchmarks run in, or None (C, C++, Rust, or not
    known): from the harness (``Harness.collector``: Go's testing package, pytest-benchmark), else
    from the worker's program (a Python interpreter, ``java``, ``node``)."""
    if harness_entry(harness).collector:
        return harness_entry(harness).collector
    program = os.path.basename(argv[0]) if argv and isinstance(argv[0], str) else ""
    return next((runtime for prefix, runtime in COLLECTED_PROGRAMS if program.startswith(prefix)), None)


def collected(judged: Judged, runtime: str | None) -> Judged:
    """A harness invocation's growing peak in a garbage-collected runtime is not shown to be retention:
    each invocation is a fresh process whose heap grows with short-lived garbage until the collector
    runs (Go's first collection waits for a 4 MiB heap; the JVM's for its young generation to fill),
    so it is unknown. (A worker lives long enough for its heap to level off: ``judge_resident_growth``
    fits its later readings instead.)"""
    if runtime is None or judged.status != "warn":
        return judged
    return Judged(judged.check, "unknown", {**judged.data, "runtime": runtime})


def judge_worker_side(samples: Sequence[Sample], resident_kib: Sequence[int | None],
                      resolution_ns: int, runtime: str | None = None) -> tuple[Judged, ...]:
    """The rules on one side's validation samples of a worker's benchmark (in execution order)."""
    by_count = samples_by_count(samples)
    return (judge_duration(median([s.wall_ns for s in by_count[max(by_count)]]), None, resolution_ns),
            judge_typical_setup_overhead(by_count), judge_elided_body(samples),
            judge_resident_growth(samples, resident_kib, runtime))


def judge_harness_side(samples: Sequence[Sample], resolution_ns: int, floor_kib: int,
                       runtime: str | None = None) -> tuple[Judged, ...]:
    """The rules on one side's validation invocations of a harness's benchmark: each a fresh
    process, so memory growth is the peak regressed on the iteration count, as for commands."""
    by_count = samples_by_count(samples)
    largest = sorted(samples, key=lambda s: s.iterations)[len(samples) // 2:]
    return (judge_duration(median([s.wall_ns for s in largest]), None, resolution_ns),
            judge_typical_setup_overhead(by_count), judge_elided_body(samples),
            collected(judge_memory_growth(by_count, floor_kib), runtime))


def validation_notes(run: Run) -> list[Note]:
    """A note for each rule a benchmark's validation samples fail, per side, and for its name: of
    every benchmark of a ``bench`` run whose validation samples were all taken, and succeeded."""
    if run.kind != "bench":
        return []
    harness = run.suite.harness if run.suite else PAIRBENCH
    context = (timer_step(run.environment) or 0, executor_rss_floor_kib(run) or 0,
               run.settings.workers.sample_time(harness), harness)
    notes = []
    for b, key in enumerate(run.benchmarks):
        sides = [_validation_samples(run.series(b, s)) for s in range(len(run.sides))]
        if not _complete(sides):
            continue
        for s, taken in enumerate(sides):
            runtime = collected_runtime(harness, run.sides[s].command.argv)
            notes += _side_notes(taken, Subject(benchmark=key.label, side=run.sides[s].name), *context, runtime)
        # another suite's names (Go's, Google Benchmark's, pytest's) are its authors': not warned about
        if harness == PAIRBENCH and (named := judge_name(key.label)).status == "warn":
            notes.append(Note("benchmark-name", named.data, Subject(benchmark=key.label)))
    return notes


@frozen
class _Taken:
    """A validation sample as validation judges it: its time the one the side's own timer measured
    (a harness's ``value``), its share of a full sample, and a worker's resident memory after it."""

    sample: Sample
    share: float
    resident_kib: int | None


def _validation_samples(samples: Samples) -> list[_Taken]:
    """A series' validation samples, in execution order."""
    if VALIDATION_METRIC not in samples.metrics:
        return []
    ordered = samples.in_order()
    share, totals = ordered[VALIDATION_METRIC], ordered.totals()
    resident = ordered.metrics.get(RESIDENT_METRIC, np.zeros(len(ordered)))
    return [_Taken(replace(row, wall_ns=max(int(round(totals[i])), 1)), float(share[i]), int(resident[i]) or None)
            for i, row in enumerate(ordered.rows()) if share[i] > 0]


def _complete(sides: list[list[_Taken]]) -> bool:
    """Every side's validation samples taken (as many on each, whole rounds of shares), none failed:
    what a benchmark whose pilot or validation failed, or was interrupted, lacks."""
    counts = {len(taken) for taken in sides}
    return (len(counts) == 1 and counts.pop() % 4 == 0 and bool(sides[0])
            and all(t.sample.ok for taken in sides for t in taken))


def _side_notes(taken: list[_Taken], subject: Subject, resolution_ns: int, floor_kib: int, sample_time_ns: int,
                harness: str, runtime: str | None) -> list[Note]:
    samples = [t.sample for t in taken]
    if harness == PAIRBENCH:
        judged = judge_worker_side(samples, [t.resident_kib for t in taken], resolution_ns, runtime)
    else:
        judged = judge_harness_side(samples, resolution_ns, floor_kib, runtime)
    memory = "benchmark-memory-growth" if harness == PAIRBENCH else "benchmark-peak-growth"
    notes = [Note(memory if j.check == "memory-growth" else f"benchmark-{j.check}", {**j.data, "harness": harness},
                  subject) for j in judged if j.status == "warn"]
    too_long = judge_too_long([t.sample for t in taken if t.share == 1.0], sample_time_ns)
    return notes + ([Note("benchmark-too-long", too_long.data, subject)] if too_long.status == "warn" else [])
