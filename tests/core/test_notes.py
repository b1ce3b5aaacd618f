"""Notes are typed: every code is registered, worded for users, and carried as data."""

from __future__ import annotations

import pytest

from pairbench.notes import CODES, Note, Subject
from pairbench.report.wording import INLINE, WORDINGS, subject_text, with_subject, word

# the doctor's findings on a machine, as environment.checks writes them
MEMORY = {"status": "fail", "memory": {"mem_total_kib": 16_000_000, "mem_available_kib": 900_000,
                                       "swap_total_kib": 2_000_000, "swap_free_kib": 1_000_000},
          "pressure": {"some_avg10": 2.0, "full_avg10": 1.5}, "swapped_pages_now": 32, "swap_used_kib": 1_000_000,
          "window_s": 0.1}
POWER = {"status": "warn", "on_battery": True, "mains_online": False, "platform_profile": "low-power",
         "batteries": [{"name": "BAT0", "status": "Discharging", "capacity": 41}]}
VIRTUALIZATION = {"status": "fail", "virtual_machine": True, "container": "docker", "hypervisor": "KVM",
                  "steal_percent": 12.5, "quota_cpus": 0.5, "cpus": 4, "nr_throttled_now": 1, "nr_periods_now": 1,
                  "nr_throttled": 312, "short_quota": True, "window_s": 0.1}
CLOCK = {"status": "fail", "clocksource": "jiffies", "available": ["jiffies"], "measured_resolution_ns": 4_000_000}
DOCTOR = {
    "doctor-load": {"status": "fail", "load_average": [3.4, 2.9, 2.1], "cpus": 4, "busy_cpus_now": 3.6,
                    "busiest_processes": [{"pid": 7, "name": "cc1", "command": "cc1 -O2", "cpu_percent": 90.0}],
                    "window_s": 0.1, "live": True, "cpu_pressure": 12.0, "pause": [7], "keep": []},
    "doctor-governor": {"status": "warn", "governors": {"powersave": 4}},
    "doctor-turbo": {"status": "warn", "enabled": True, "file": "/sys/devices/system/cpu/intel_pstate/no_turbo"},
    "doctor-smt": {"status": "warn", "control": "on", "active": True, "sibling_groups": [[0, 4], [1, 5]]},
    "doctor-aslr": {"status": "warn", "randomize_va_space": 0},
    "doctor-isolation": {"status": "warn", "isolated": [], "nohz_full": [], "allowed_cpus": [0, 1, 2, 3],
                         "cmdline": "quiet", "suggested_cpu": 3},
    "doctor-clock": CLOCK,
    "doctor-perf": {"status": "warn", "perf_event_paranoid": 4, "perf_event_max_sample_rate": 100_000},
    "doctor-virtualization": VIRTUALIZATION,
    "doctor-memory": MEMORY,
    "doctor-power": POWER,
    "doctor-thermal": {"status": "warn", "core_throttle_count": 12, "package_throttle_count": 3},
    "doctor-runs": {"status": "fail", "command": "./bench 4", "iterations": 4, "iterated": True, "exit_status": 139},
    "doctor-duration": {"status": "warn", "median_ns": 900_000.0, "startup_ns": 500_000.0, "startup_share": 0.55,
                        "timer_resolution_ns": 30, "iterated": False, "target_ns": 5_000_000.0},
    "doctor-setup-overhead": {"status": "unknown", "intercept": 3e6, "intercept_ci": 1e6, "slope": 2e6,
                              "slope_ci": 1e5, "r_squared": 0.99, "setup_ns": 2.5e6, "startup_ns": 5e5,
                              "setup_share": 0.13, "share_at_iterations": 8, "share_interval": [0.04, 0.2]},
    "doctor-memory-growth": {"status": "warn", "rss_floor_kib": 1000, "censored_counts": [1], "counts": [1, 2, 4, 8],
                             "low_count": 2, "high_count": 8, "slope": 10240.0, "intercept": 9000.0,
                             "pvalue": 1e-6},
    "doctor-stability": {"status": "warn", "cv": 0.2, "iqr_over_median": 0.1, "n": 20, "sd": 2e6, "mean": 1e7},
    "doctor-modality": {"status": "warn", "modes": 2, "mode_locations": [1e7, 2e7], "mvalue": 3.2,
                        "modality": "bimodal", "n": 40},
    "doctor-autocorrelation": {"status": "unknown", "refusal": {"code": "no-variance", "data": {"n": 3, "value": 1e6}}},
    "doctor-outliers": {"status": "warn", "above_fence": 3, "n": 20, "upper_fence_ns": 1.2e7, "pvalue": 0.007,
                        "rate": 0.02},
    "doctor-context-switches": {"status": "warn", "excess_per_s": 120.0, "affected_samples": 9, "n": 20,
                                "quietest": 1},
    "doctor-cpu-bound": {"status": "ok", "kind": "off-cpu", "off_cpu_share": 0.4, "cpu_over_wall": 0.6,
                         "unswitched": 12, "n": 20},
    "doctor-mean-min-gap": {"status": "warn", "mean_min_gap": 0.08},
    "doctor-name": {"status": "warn", "length": 45, "max": 40},
}

# one example of each code's data, as the statistics and the analysis write it
EXAMPLES = {**DOCTOR,
    "single-value": {}, "no-variance": {"n": 5, "value": 1.5e6},
    "nonpositive-min": {"min": 0.0}, "grubbs-tail": {"side": "max", "sigma": 4.2, "critical": 2.9, "n": 40},
    "tukey-fence": {"side": "above", "count": 2, "fence": 5.1e7},
    "modes": {"modality": "bimodal", "count": 2, "locations": [1e6, 2e6], "mvalue": 3.4},
    "median-interval-tied": {"low_rank": 3, "high_rank": 8, "value": 1e6},
    "not-enough-data": {"needed": 6, "got": 2, "purpose": "median-interval", "confidence": 0.95},
    "zero-standard-error": {"method": "batch-means"},
    "autocorrelated-mean": {"n_eff": 10.5, "n": 32, "factor": 1.7},
    "mean-error-fallback": {"variance": -1.0, "lags": 5},
    "effective-sample-too-small": {"n_eff": 2.7, "n": 100, "needed": 4.0},
    "negatively-autocorrelated": {"n_eff": 290.0, "n": 100, "lag1": -0.48, "band": 0.196},
    "rank-ties": {"tests": ["hodges-lehmann", "mann-whitney"]}, "rank-no-variance": {"n": 4, "m": 4},
    "rank-interval-undefined": {}, "interval-at-edge": {"edge": "smallest"}, "zero-differences": {"zeros": 3},
    "confidence-not-achievable": {"requested": 0.99, "achieved": 0.98},
    "interval-conservative": {"achieved": 0.9978, "requested": 0.995, "n": 40},
    "tied-pairs": {"tied": 3, "n": 40}, "coarse-ratios": {"distinct": 4, "n": 40},
    "outlier-check-disabled": {"n": 40, "center": 0.0}, "few-outliers": {"total": 3},
    "sequence-unbounded": {"n": 3, "needed": 11, "alpha": 0.01}, "running-interval-empty": {},
    "median-outside-running-interval": {"n": 260, "median_pct": 3.68, "low_pct": -0.44, "high_pct": 3.17},
    "shift-unbounded": {"unbounded": 4, "total": 18, "n": 40, "level": 0.9997},
    "bootstrap-bca-too-large": {"n": 200_000, "limit": 100_000}, "bootstrap-bca-undefined": {},
    "bootstrap-warning": {"text": "degenerate"},
    "failed-samples": {"count": 2}, "no-samples": {},
    "no-successful-samples": {"role": "candidate", "side": "new", "failed": 12, "status": 1}, "failed-rounds": {"count": 1},
    "no-rounds-estimate": {"reason": "ties", "values_pct": [0.0, 100.0], "threshold": 1.0},
    "budget-out-of-reach": {"load": 7.1, "metric": "cpu", "rounds": 32, "needed": 25_151, "factor": 16,
                            "minutes": 10, "spreads": [["A", 28.0], ["B", 45.0]]},
    "pairs-autocorrelated": {"lag1": 0.5, "band": 0.3}, "self-check-found-change": {"verdict": "slower"},
    "involuntary-switches": {"rate": 41.0, "affected": 31, "n": 32},
    "no-cpu-time": {"sides": ["old"]},
    "cpu-time-partial": {"kind": "off-cpu", "off_cpu_share": 0.6, "cpu_over_wall": 0.4},
    "metric-chosen": {"metric": "cpu", "rounds": 10, "kind": "cpu-bound", "off_cpu_share": 0.02,
                      "cpu_over_wall": 0.97},
    "metrics-disagree": {"metric": "cpu", "other": "wall", "kind": "off-cpu", "estimate": 0.1, "low": -0.4,
                         "high": 0.5, "other_estimate": 48.0, "other_low": 45.0, "other_high": 51.0},
    "counts-disagree": {"metric": "instructions", "other": "cycles-model", "how": "direction", "estimate": -3.0,
                        "low": -3.0, "high": -3.0, "other_estimate": 12.0, "other_low": 12.0, "other_high": 12.0},
    "counts-beside": {"metric": "instructions", "other": "cpu", "estimate": 2.0, "low": 2.0, "high": 2.0,
                      "other_estimate": 2.4, "other_low": 1.1, "other_high": 3.9},
    "counted-by": {"counter": "callgrind", "program": "valgrind", "version": "valgrind-3.19.0", "slowdown": [20, 100]},
    "times-under-callgrind": {},
    "rss-at-floor": {"sides": ["a", "b"], "floor_kib": 13_000},
    "machine-busy": {"kind": "compare", "sides": 2, "load_average": 1.6, "busy_cpus_now": None, "cpus": 2,
                     "busiest": {"name": "cc1", "cpu_percent": 80.0}},
    "machine-memory-short": {"kind": "run", "sides": 1, "finding": {"code": "doctor-memory", "data": MEMORY}},
    "machine-power-limited": {"kind": "run", "sides": 2, "finding": {"code": "doctor-power", "data": POWER}},
    "machine-paused": {"kind": "compare", "sides": 2, "paused_now": True,
                       "finding": {"code": "doctor-virtualization", "data": VIRTUALIZATION}},
    "machine-clock-coarse": {"kind": "compare", "sides": 2, "finding": {"code": "doctor-clock", "data": CLOCK}},
    "machine-untuned": {"items": [{"check": "governor", "governors": ["powersave"]}, {"check": "turbo"}]},
    "renamed": {"name": "x", "copies": ["x (2)"]}, "shell-syntax": {"command": "a | b", "operators": ["|"]},
    "leftover-processes": {"side": "x", "count": 2}, "containment-partial": {"side": "x", "count": 1},
    "executor-fallback": {"reason": "no fork", "floor_kib": 90_000},
    "spawner-fallback": {"reason": "exec format error", "floor_kib": 13_000},
    "cleanup-interrupted": {"command": "rm -rf build"}, "journal-cut-short": {"recovered": 17},
    "import-zero-times": {"count": 3, "tool": "hyperfine"},
    "warmup-cut-short": {"done": 10, "asked": 1000},
    "unrenamed-result": {"path": ".r.json.k2j3.tmp", "result": "r.json"},
    "benchmarks-added": {"side": "./new", "count": 22, "names": [f"b{i}" for i in range(20)]},
    "benchmarks-removed": {"side": "./old", "count": 1, "names": ["parse"]},
    "benchmark-failed": {"benchmark": "sort[n=10]", "why": "benchmark 'sort[n=10]' on './new' failed on sample 3"},
    "process-blocks": {"blocks": 24, "rounds": 768},
    "blocks-differ": {"blocks": 23, "low_pct": 45.8, "high_pct": 197.0, "noise_pct": 1.9},
    "repeated-invocations": {"repetitions": 8, "warmups": 1, "fixed_cpu_ns": 5_200_000.0},
    "benchmark-duration": {"median_ns": 800.0, "timer_resolution_ns": 1000},
    "benchmark-setup-overhead": {"setup_ns": 80_000.0, "setup_share": 0.08, "share_at_iterations": 1024},
    "benchmark-elided-body": {"per_iteration_ns": 0.27, "pvalue": 1e-9, "growing": True},
    "benchmark-memory-growth": {"growth_kib": 23_000.0, "per_iteration_bytes": 256.0, "iterations": 92_160},
    "benchmark-name": {"length": 58, "max": 40},
    "benchmark-peak-growth": {"slope": 1.0, "pvalue": 1e-9, "growth_kib": 8192.0, "intercept": 4096.0},
    "benchmark-too-long": {"iteration_ns": 52_000_000.0, "sample_time_ns": 10_000_000},
    "sample-time-raised": {"sample_time_ns": 10_000, "fixed_ns": 1100.0, "chosen": 4, "iterations": 128,
                           "quickest_ns": 9_000.0, "sample_ns": 288_000.0, "pull_asked": 0.109, "pull": 0.0038,
                           "share": 0.01},
    "suite-budget-spent": {"count": 3, "names": ["BM_a", "BM_b"], "suite_time_ns": 60_000_000_000},
    "runs-not-paired": {"old_started": "2026-11-20T10:00:00+00:00", "new_started": "2026-11-21T10:00:00+00:00",
                        "old_host": "ci-1", "new_host": "ci-2"},
    "recorded": {"text": "an old note"},
}


def test_every_note_code_has_a_wording_and_an_example():
    assert set(WORDINGS) == set(CODES) == set(EXAMPLES)
    assert set(CODES) >= INLINE


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_note_is_worded_as_one_plain_line_from_its_data(code):
    text = word(Note(code, EXAMPLES[code]), "ns")
    assert text and "\n" not in text and "{" not in text and "seed 00" not in text


def test_a_note_of_an_unknown_code_cannot_be_made():
    with pytest.raises(ValueError, match="note codes"):
        Note("something-new")


def test_values_in_a_note_are_worded_in_their_benchmark_unit():
    note = Note("no-variance", {"n": 5, "value": 1536.0})
    assert "1.536 µs" in word(note, "ns") and "1.50 KiB" in word(note, "B")


def test_a_notes_subject_prefixes_it_where_a_report_lists_notes_apart():
    note = Note("failed-rounds", {"count": 1}, Subject(benchmark="sort", side="new", baseline="old"))
    assert subject_text(note) == "sort · new vs old"
    assert with_subject(note) == "sort · new vs old: 1 round(s) left out because a sample in them failed"
    assert with_subject(Note("failed-rounds", {"count": 1})) == "1 round(s) left out because a sample in them failed"


def test_a_note_is_stored_as_code_data_and_subject():
    note = Note("failed-samples", {"count": 2}, Subject(side="b"), message="ignored when stored")
    assert note.to_dict() == {"code": "failed-samples", "data": {"count": 2}, "subject": {"side": "b"}}


def test_an_elided_body_note_says_growth_could_not_be_shown_not_that_the_body_was_removed():
    note = Note("benchmark-elided-body", {"per_iteration_ns": 12.0, "pvalue": 0.04, "growing": False, "harness": "go",
                                          "low_count": 8192, "high_count": 65536, "low_median_ns": 1.2e6,
                                          "high_median_ns": 7.6e6})
    text = word(note)
    assert text.startswith("the validation samples could not show that the time per sample grows")
    assert "medians 1.200 ms at 8,192 and 7.600 ms at 65,536 iterations" in text
    assert "either they scatter too much to tell" in text and "runtime.KeepAlive" in text
