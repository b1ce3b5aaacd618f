"""The validation rules for a worker's benchmark (``analysis.validation``), on samples built with a
known cost per iteration, fixed cost per sample and memory kept per iteration (the truth is how they
were made)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pairbench.analysis.validation import (
    collected_runtime,
    judge_elided_body,
    judge_harness_side,
    judge_resident_growth,
    judge_worker_side,
)
from pairbench.model import Sample
from pairbench.sessions.driver import validation_counts
from pairbench.stats.regression import trend_fit


def samples(per_iteration_ns: float, fixed_ns: float = 0.0, noise: float = 0.005, rounds: int = 6,
            chosen: int = 1024, seed: int = 1) -> list[Sample]:
    """Validation samples in a seeded random order: each count ``rounds`` times, with relative
    noise ``noise`` (normal) on the ideal time."""
    rng = np.random.default_rng(seed)
    order = [n for _ in range(rounds) for n in rng.permutation(validation_counts(chosen))]
    return [Sample(wall_ns=max(1, round((fixed_ns + n * per_iteration_ns) * (1 + noise * rng.standard_normal()))),
                   iterations=int(n), warmup=1) for n in order]


def by_check(findings) -> dict[str, str]:
    return {f.check: f.status for f in findings}


def test_validation_counts_are_an_eighth_a_quarter_a_half_and_all_of_the_chosen_count():
    assert validation_counts(1024) == (128, 256, 512, 1024)
    assert validation_counts(8) == (1, 2, 4, 8)
    assert validation_counts(1) == (1, 2, 4, 8)  # a slow benchmark still gets four distinct counts


def test_a_clean_benchmark_passes_every_check():
    taken = samples(1000.0)
    assert by_check(judge_worker_side(taken, [2000] * len(taken), resolution_ns=20)) == {
        "duration": "ok", "setup-overhead": "ok", "elided-body": "ok", "memory-growth": "ok"}


def test_a_fixed_cost_of_a_tenth_of_a_sample_is_setup_overhead():
    per_iteration = 1000.0
    taken = samples(per_iteration, fixed_ns=0.10 * 1024 * per_iteration)
    finding = next(f for f in judge_worker_side(taken, [None] * len(taken), 20) if f.check == "setup-overhead")
    assert finding.status == "warn"
    assert finding.data["setup_share"] == pytest.approx(0.10 / 1.10, rel=0.15)


def test_a_fixed_cost_is_seen_through_two_samples_the_scheduler_stretched():
    per_iteration = 1000.0
    clean = samples(per_iteration, fixed_ns=0.30 * 1024 * per_iteration, noise=0.02)
    taken = stretched(clean, (1, 9), 20e6)
    finding = next(f for f in judge_worker_side(taken, [None] * len(taken), 20) if f.check == "setup-overhead")
    assert finding.status == "warn"
    assert finding.data["setup_share"] == pytest.approx(0.30 / 1.30, rel=0.15)


def test_a_small_fixed_cost_is_not_pushed_over_the_line_by_stretched_samples():
    taken = stretched(samples(1000.0, fixed_ns=0.02 * 1024 * 1000.0, noise=0.01), (0, 2), 20e6)
    finding = next(f for f in judge_worker_side(taken, [None] * len(taken), 20) if f.check == "setup-overhead")
    assert finding.status == "ok"


def test_a_time_that_does_not_grow_with_the_iterations_is_an_elided_body():
    taken = samples(0.0, fixed_ns=40.0, noise=0.05)
    finding = judge_elided_body(taken)
    assert finding.status == "warn" and finding.data["growing"] is False


def test_a_third_of_a_nanosecond_per_iteration_is_an_elided_body_though_it_grows():
    finding = judge_elided_body(samples(0.3, fixed_ns=30.0, chosen=1 << 22))
    assert finding.status == "warn" and finding.data["growing"] is True
    assert finding.data["per_iteration_ns"] == pytest.approx(0.3, rel=0.05)


def test_two_nanoseconds_per_iteration_is_a_body():
    assert judge_elided_body(samples(2.0, chosen=1 << 19)).status == "ok"


def stretched(taken: list[Sample], positions: tuple[int, ...], by_ns: float) -> list[Sample]:
    """The samples with those at ``positions`` made ``by_ns`` longer: what a preemption does."""
    return [dataclasses.replace(s, wall_ns=s.wall_ns + int(by_ns)) if i in positions else s
            for i, s in enumerate(taken)]


def test_a_body_is_not_called_elided_because_the_scheduler_stretched_two_of_its_samples():
    # 40 us an iteration, samples of 0.1-1 ms; two of them preempted for 20 ms (a busy CI machine)
    taken = stretched(samples(40_000.0, chosen=25, noise=0.1, seed=3), (0, 5), 20e6)
    finding = judge_elided_body(taken)
    assert finding.status == "ok"
    assert finding.data["per_iteration_ns"] == pytest.approx(40_000.0, rel=0.1)


def test_an_elided_body_stays_elided_with_a_stretched_sample():
    taken = stretched(samples(0.0, fixed_ns=40.0, noise=0.05), (len(samples(0.0)) - 1,), 20e6)
    finding = judge_elided_body(taken)
    assert finding.status == "warn" and finding.data["growing"] is False


def test_four_samples_are_too_few_to_tell_an_elided_body():
    finding = judge_elided_body(samples(2.0, chosen=1 << 19, rounds=1))
    assert finding.status == "unknown" and finding.data == {"n": 4}


def test_the_trend_slope_is_the_median_of_every_pairwise_slope():
    rng = np.random.default_rng(11)
    x = rng.integers(1, 50, size=15).astype(float)
    y = 3.0 * x + rng.standard_exponential(15) * 20
    pairwise = [(y[j] - y[i]) / (x[j] - x[i]) for i in range(15) for j in range(i + 1, 15) if x[j] != x[i]]
    fit = trend_fit(x, y)
    assert fit.slope == pytest.approx(float(np.median(pairwise)))
    assert fit.slope_low <= fit.slope <= fit.slope_high


def test_memory_kept_by_every_iteration_is_memory_growth():
    taken = samples(1000.0)
    kept_bytes = 256
    resident = list(4096 + np.cumsum([s.iterations for s in taken]) * kept_bytes // 1024)
    finding = judge_resident_growth(taken, resident)
    assert finding.status == "warn"
    assert finding.data["per_iteration_bytes"] == pytest.approx(kept_bytes, rel=0.02)
    assert finding.data["growth_kib"] >= 1024


def test_growth_under_a_mebibyte_is_not_flagged_however_steady():
    taken = samples(1000.0)
    resident = list(4096 + np.cumsum([s.iterations for s in taken]) // 1024)  # one byte an iteration
    assert judge_resident_growth(taken, resident).status == "ok"


def test_unreadable_resident_memory_is_unknown():
    taken = samples(1000.0)
    assert judge_resident_growth(taken, [None] * len(taken)).status == "unknown"


def test_a_sample_under_a_thousand_timer_steps_is_too_short():
    taken = samples(0.5, chosen=1024)  # ~0.5 us a sample, with a 1 us timer
    finding = next(f for f in judge_worker_side(taken, [None] * len(taken), 1000) if f.check == "duration")
    assert finding.status == "warn"


def stretched_by(taken: list[Sample], positions: set[int], factor: int) -> list[Sample]:
    return [dataclasses.replace(s, wall_ns=s.wall_ns * factor) if i in positions else s for i, s in enumerate(taken)]


def test_a_body_whose_samples_scatter_too_much_for_the_rank_test_is_unknown_not_elided():
    # 150 ns an iteration, 3 samples per count as a harness takes them; a loaded machine stretched one
    # sample at each of the two smallest counts tenfold: the rank test cannot show growth, the medians do
    taken = samples(150.0, rounds=3, chosen=8192, noise=0.05)
    first = {}
    for i, sample in enumerate(taken):
        first.setdefault(sample.iterations, i)
    judged = judge_elided_body(stretched_by(taken, {first[1024], first[2048]}, 10))
    assert judged.data["pvalue"] >= 0.01
    assert judged.status == "unknown"
    assert judged.data["high_median_ns"] / judged.data["low_median_ns"] == pytest.approx(8, rel=0.1)


def test_an_elided_body_is_judged_with_each_counts_median():
    judged = judge_elided_body(samples(0.0, fixed_ns=40.0, noise=0.05))
    assert judged.status == "warn"
    assert judged.data["low_count"] == 128 and judged.data["high_count"] == 1024
    assert judged.data["high_median_ns"] == pytest.approx(judged.data["low_median_ns"], rel=0.1)


def test_a_collected_heap_that_levels_off_is_not_memory_growth_but_memory_kept_still_is():
    # garbage grows the heap over the first third of the samples (up to Go's 4 MiB first collection,
    # at 1 KiB an iteration), then the collector holds it level; memory kept climbs throughout
    taken = samples(1000.0)
    done = np.cumsum([s.iterations for s in taken])
    levelled = list(4096 + np.minimum(done, 4096))
    assert judge_resident_growth(taken, levelled).status == "warn"  # C: the same readings are a leak
    assert judge_resident_growth(taken, levelled, runtime="Go").status == "ok"
    kept = judge_resident_growth(taken, list(4096 + done), runtime="Go")
    assert kept.status == "warn" and kept.data["per_iteration_bytes"] == pytest.approx(1024, rel=0.02)
    assert kept.data["runtime"] == "Go"


def test_a_growing_peak_of_fresh_harness_processes_in_a_collected_runtime_is_unknown_not_a_leak():
    taken = samples(1000.0)
    peaks = [dataclasses.replace(s, max_rss_kib=4096 + s.iterations * 4) for s in taken]  # 4 KiB an iteration
    assert judge_harness_side(peaks, 20, 0)[-1].status == "warn"
    memory = judge_harness_side(peaks, 20, 0, runtime="Go")[-1]
    assert memory.status == "unknown" and memory.data["runtime"] == "Go"


def test_the_collected_runtime_is_the_harness_s_or_the_worker_program_s():
    assert collected_runtime("go") == "Go"
    assert collected_runtime("pytest-benchmark") == "Python"
    assert collected_runtime("pairbench", ("/usr/bin/python3.11", "-m", "pairbench.worker")) == "Python"
    assert collected_runtime("pairbench", ("java", "-jar", "bench.jar")) == "the JVM"
    assert collected_runtime("pairbench", ("./bench",)) is None
    assert collected_runtime("gbench", ("./bench",)) is None
    assert collected_runtime("criterion", ("./target/release/deps/bench-1",)) is None
