"""Benchmark validation on scripted executions: exact setup overheads, memory growth, sample shapes.

The FakeExecutor turns a command into exactly the time and rusage the script
says, so the fitted setup overhead and memory slope are known to the nanosecond
and the KiB; the timer's step is fixed (``TIMER_NS``), not measured on the host.
"""

from __future__ import annotations

import numpy as np
import pytest
from fakes import FakeExecutor

from pairbench.model import STATUS_TIMEOUT
from pairbench.report.doctor import reading
from pairbench.report.findings import fix
from pairbench.sessions.doctor import validate_command
from pairbench.settings import ValidationPlan

STARTUP_S = 0.0005  # `true`: process start-up
TIMER_NS = 30


def diagnose(plan, executor):
    return validate_command(plan, executor, timer_resolution_ns=TIMER_NS)[1].doctor


def measure(plan, executor):
    """The samples of each iteration count, and of the start-up probe (the last side)."""
    run = validate_command(plan, executor, timer_resolution_ns=TIMER_NS)[0]
    timed = {run.sides[s].name: run.series(b, s).measured().in_order().rows() for b, s, _ in run.all_series()
             if len(run.series(b, s))}
    startup = timed.pop("process start-up (true)", [])
    return {int(name.split()[0]): rows for name, rows in timed.items()}, startup


def by_check(report):
    return {f.check: f for f in report.findings}


def linear(setup_s: float, per_iteration_s: float, rss=lambda k: 9000):
    """A script: `true` takes STARTUP_S; `echo K` takes start-up + setup + K x per_iteration."""

    def script(command, index, clock):
        if command.text == "true":
            return {"duration": STARTUP_S, "involuntary_cs": 1}
        k = int(command.text.split()[1])
        return {"duration": STARTUP_S + setup_s + k * per_iteration_s, "max_rss_kib": rss(k),
                "involuntary_cs": 1}

    return script


def samples(values_s, **columns):
    """A script: `true` as above, `echo x` the given durations (and rusage columns) in turn."""
    values = iter(range(len(values_s)))

    def script(command, index, clock):
        if command.text == "true":
            return {"duration": STARTUP_S, "involuntary_cs": 1}
        i = next(values)
        return {"duration": values_s[i], **{k: int(v[i]) for k, v in columns.items()}}

    return script


# ------------------------------------------------------------------ setup overhead and memory


def test_setup_overhead_is_fitted_exactly_and_warns_over_five_percent():
    plan = ValidationPlan("echo {iterations}", runs=3, seed=1)
    report = diagnose(plan, FakeExecutor(linear(0.050, 0.002)))
    fit = report.details["time_fit"]
    assert fit["intercept"] == pytest.approx(50.5e6, rel=1e-9)
    assert fit["slope"] == pytest.approx(2e6, rel=1e-9)
    assert fit["setup_ns"] == pytest.approx(50e6, rel=1e-9)  # start-up (true) taken off
    assert fit["setup_share"] == pytest.approx(50 / (50.5 + 16), rel=1e-9)  # at 8 iterations
    finding = by_check(report)["setup-overhead"]
    assert finding.status == "warn"
    # 50 / (50 + 2 n) <= 5%  <=>  n >= 475
    assert fix(finding).endswith("or use {iterations} >= 475 so it is under 5%")
    assert "75.2% of a 8-iteration sample" in reading(finding)


def test_no_setup_beyond_process_start_up_is_ok():
    plan = ValidationPlan("echo {iterations}", runs=3, seed=1)
    report = diagnose(plan, FakeExecutor(linear(0.0, 0.010)))
    assert report.details["time_fit"]["setup_ns"] == pytest.approx(0.0, abs=1e-3)
    assert by_check(report)["setup-overhead"].status == "ok"


def test_a_noisy_setup_whose_interval_straddles_five_percent_is_unknown():
    rng = np.random.default_rng(7)

    def script(command, index, clock):
        if command.text == "true":
            return STARTUP_S
        k = int(command.text.split()[1])
        return STARTUP_S + 0.004 + k * 0.010 + rng.normal(0, 0.004)

    plan = ValidationPlan("echo {iterations}", runs=4, seed=3)
    finding = by_check(diagnose(plan, FakeExecutor(script)))["setup-overhead"]
    assert finding.status == "unknown"
    assert "straddles 5%" in reading(finding)


def test_memory_growing_ten_mib_per_iteration_is_flagged():
    plan = ValidationPlan("echo {iterations}", runs=3, seed=2)
    report = diagnose(plan, FakeExecutor(linear(0.0, 0.01, rss=lambda k: 9000 + 10240 * k)))
    finding = by_check(report)["memory-growth"]
    assert finding.status == "warn"
    assert finding.data["slope"] == pytest.approx(10240, rel=1e-9)
    assert finding.data["growth_kib"] == pytest.approx(7 * 10240, rel=1e-9)
    assert reading(finding).startswith("10.0 MiB per iteration (one-sided p = ")


def test_constant_memory_is_ok():
    plan = ValidationPlan("echo {iterations}", runs=3, seed=2)
    finding = by_check(diagnose(plan, FakeExecutor(linear(0.0, 0.01))))["memory-growth"]
    assert finding.status == "ok" and reading(finding) == "constant at 8.79 MiB for 1-8 iterations"


def test_small_memory_jitter_without_a_trend_is_ok():
    rng = np.random.default_rng(11)
    plan = ValidationPlan("echo {iterations}", runs=5, seed=2)
    rss = lambda k: 9000 + int(rng.integers(0, 13)) * 4  # noqa: E731 - the Swift suite's jitter: 13 pages
    finding = by_check(diagnose(plan, FakeExecutor(linear(0.0, 0.01, rss))))["memory-growth"]
    assert finding.status == "ok"


def test_memory_at_the_executors_floor_is_censored_and_can_make_growth_unknown():
    script = linear(0.0, 0.01, rss=lambda k: max(40000, 10240 * k))
    plan = ValidationPlan("echo {iterations}", runs=3, seed=2)
    finding = by_check(diagnose(plan, FakeExecutor(script, rss_floor_kib=40000)))["memory-growth"]
    assert finding.status == "unknown"  # only 8 iterations (80 MiB) rise above 40000 KiB * 1.05
    assert finding.data["censored_counts"] == [1, 2, 4]

    plan = ValidationPlan("echo {iterations}", runs=3, seed=2, counts=(1, 2, 4, 8, 16))
    finding = by_check(diagnose(plan, FakeExecutor(script, rss_floor_kib=40000)))["memory-growth"]
    assert finding.status == "warn" and finding.data["slope"] == pytest.approx(10240)
    assert "(counts 1, 2, 4 at the floor, left out)" in reading(finding)


def test_a_count_with_any_reading_at_the_floor_is_left_out_whole():
    # At 4 iterations one reading in three rises above the floor (a 60 MiB outlier): keeping it
    # alone would drag the line up at 4 and hide the growth; the whole count goes instead.
    seen = {}

    def rss(k):
        seen[k] = seen.get(k, 0) + 1
        if k == 4:
            return 60000 if seen[k] == 1 else 40000
        return max(40000, 10240 * k)

    plan = ValidationPlan("echo {iterations}", runs=3, seed=2, counts=(1, 2, 4, 8, 16))
    finding = by_check(diagnose(plan, FakeExecutor(linear(0.0, 0.01, rss), rss_floor_kib=40000)))["memory-growth"]
    assert finding.data["censored_counts"] == [1, 2, 4]
    assert finding.data["slope"] == pytest.approx(10240)
    assert "(counts 1, 2, 4 at the floor, left out)" in reading(finding)


# ------------------------------------------------------------------ how it runs


def test_rounds_run_every_count_and_the_start_up_probe_once_in_an_order_drawn_from_the_seed():
    executor = FakeExecutor(linear(0.0, 0.001))
    plan = ValidationPlan("echo {iterations}", runs=4, warmup=1, seed=5)
    samples_by_count, startup = measure(plan, executor)
    rounds = [executor.texts[i:i + 5] for i in range(0, len(executor.texts), 5)]
    assert len(rounds) == 5  # one warmup round, four timed
    assert all(sorted(r) == ["echo 1", "echo 2", "echo 4", "echo 8", "true"] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # shuffled, not a fixed order
    assert {k: len(v) for k, v in samples_by_count.items()} == {1: 4, 2: 4, 4: 4, 8: 4}
    assert len(startup) == 4
    again = FakeExecutor(linear(0.0, 0.001))
    measure(plan, again)
    assert again.texts == executor.texts
    other = FakeExecutor(linear(0.0, 0.001))
    measure(ValidationPlan("echo {iterations}", runs=4, warmup=1, seed=6), other)
    assert other.texts != executor.texts


def test_each_sample_records_its_iteration_count_round_and_place_in_the_round():
    plan = ValidationPlan("echo {iterations}", runs=3, warmup=0, seed=1)
    samples_by_count, startup = measure(plan, FakeExecutor(linear(0.0, 0.001)))
    for count, samples in samples_by_count.items():
        assert [s.iterations for s in samples] == [count] * 3
        assert [s.pair for s in samples] == [0, 1, 2]
    slots = sorted(s.slot for samples in samples_by_count.values() for s in samples if s.pair == 0)
    assert set(slots) <= set(range(5)) and len(slots) == 4  # the probe took the fifth place
    seqs = sorted(s.seq for samples in (*samples_by_count.values(), startup) for s in samples)
    assert seqs == list(range(15))  # one sequence over the command and the probe


def test_warmup_rounds_are_run_but_not_judged():
    plan = ValidationPlan("echo {iterations}", runs=2, warmup=3, seed=1)
    executor = FakeExecutor(linear(0.0, 0.001))
    samples_by_count, startup = measure(plan, executor)
    assert executor.texts.count("echo 1") == 5
    assert all(len(v) == 2 and not any(s.warmup for s in v) for v in samples_by_count.values())


def test_with_shell_the_start_up_probe_pays_the_shell_too():
    executor = FakeExecutor(linear(0.0, 0.001))
    measure(ValidationPlan("echo {iterations}", shell="sh", runs=2, warmup=0), executor)
    probes = [c.command for c in executor.calls if c.text == "true"]
    assert probes and all(p.argv == ("/bin/sh", "-c", "true") for p in probes)
    assert all(c.command.shell for c in executor.calls)


def test_a_failing_run_stops_measuring_and_fails_the_report():
    outcomes = iter([0.01, 0.01, {"duration": 0.01, "status": 2}])
    executor = FakeExecutor({"echo x": outcomes, "true": STARTUP_S})
    report = diagnose(ValidationPlan("echo x", runs=5), executor)
    assert report.status == "fail"
    runs = by_check(report)["runs"]
    assert runs.status == "fail" and reading(runs) == "'echo x' ended with exit code 2"
    assert runs.data == {"command": "echo x", "iterations": 1, "iterated": False, "exit_status": 2}
    assert len([t for t in executor.texts if t == "echo x"]) == 3


def test_a_failure_names_the_iteration_count_it_happened_at():
    def script(command, index, clock):
        if command.text == "true":
            return STARTUP_S
        return {"duration": 0.01, "status": 139 if command.text == "echo 4" else 0}

    report = diagnose(ValidationPlan("echo {iterations}", runs=3, warmup=0, seed=1), FakeExecutor(script))
    runs = by_check(report)["runs"]
    assert reading(runs) == "'echo 4' with 4 iterations ended with exit code 139"
    assert runs.data == {"command": "echo 4", "iterations": 4, "iterated": True, "exit_status": 139}


def test_a_run_past_the_timeout_is_a_failure():
    executor = FakeExecutor({"echo x": 0.5, "true": STARTUP_S})
    report = diagnose(ValidationPlan("echo x", runs=3, timeout_ns=100_000_000), executor)
    runs = by_check(report)["runs"]
    assert runs.status == "fail" and runs.data["exit_status"] == STATUS_TIMEOUT
    assert executor.texts.count("echo x") == 1  # the warmup already timed out


def test_without_true_the_duration_is_judged_by_the_timer_alone():
    executor = FakeExecutor({"echo x": 0.02}, missing={"true"})
    report = diagnose(ValidationPlan("echo x", runs=3, warmup=0), executor)
    duration = by_check(report)["duration"]
    assert duration.status == "ok" and "start-up" not in reading(duration)
    assert executor.texts == ["echo x"] * 3  # after the first refusal, true is not tried again


def test_a_failing_start_up_probe_is_dropped_and_measuring_goes_on():
    executor = FakeExecutor({"echo x": 0.02, "true": {"duration": STARTUP_S, "status": 1}})
    report = diagnose(ValidationPlan("echo x", runs=3, warmup=0), executor)
    assert "runs" not in by_check(report)
    assert report.details["startup_median_ns"] is None
    assert executor.texts.count("true") == 3


@pytest.mark.parametrize(("seconds", "status"), [(0.0006, "fail"), (0.003, "warn"), (0.005, "ok"),
                                                 (0.1, "ok")])
def test_a_command_too_short_for_process_start_up_is_flagged(seconds, status):
    executor = FakeExecutor({"echo x": seconds, "true": STARTUP_S})
    finding = by_check(diagnose(ValidationPlan("echo x", runs=3, warmup=0), executor))["duration"]
    assert finding.status == status
    if status != "ok":
        assert fix(finding) == ("batch more work per run (a loop inside the command, or an iteration "
                               "count argument) until a run takes at least 5.000 ms")


def test_a_command_of_fewer_than_a_thousand_timer_steps_warns():
    executor = FakeExecutor({"echo x": 20_000, "true": 1_000}, unit="ns")
    finding = by_check(diagnose(ValidationPlan("echo x", runs=3, warmup=0), executor))["duration"]
    assert finding.status == "warn" and reading(finding).endswith("667 timer steps")


# ------------------------------------------------------------------ the samples' shape


def test_name_over_forty_characters_warns_and_a_short_name_fixes_it():
    command = "echo " + "x" * 40
    executor = FakeExecutor({command: 0.02, "true": STARTUP_S})
    finding = by_check(diagnose(ValidationPlan(command, runs=3), executor))["name"]
    assert finding.status == "warn" and reading(finding) == "45 characters (over 40)"
    executor = FakeExecutor({command: 0.02, "true": STARTUP_S})
    report = diagnose(ValidationPlan(command, runs=3, name="echo-x"), executor)
    assert by_check(report)["name"].status == "ok"


def test_a_quiet_benchmark_passes_every_sample_check():
    rng = np.random.default_rng(3)
    wall = 0.020 * (1 + rng.normal(0, 0.005, 30))
    report = diagnose(ValidationPlan("echo x", runs=30, warmup=0),
                                FakeExecutor(samples(wall, involuntary_cs=np.ones(30))))
    statuses = {f.check: f.status for f in report.findings}
    assert statuses == {"duration": "ok", "stability": "ok", "modality": "ok",
                        "autocorrelation": "ok", "outliers": "ok", "context-switches": "ok",
                        "mean-min-gap": "ok", "name": "ok"}
    assert report.status == "ok"


def test_an_unstable_benchmark_warns_on_cv():
    rng = np.random.default_rng(4)
    wall = 0.020 * rng.lognormal(0, 0.3, 30)
    finding = by_check(diagnose(ValidationPlan("echo x", runs=30, warmup=0),
                                          FakeExecutor(samples(wall))))["stability"]
    assert finding.status == "warn" and finding.data["cv"] > 0.10


def test_two_modes_are_flagged():
    rng = np.random.default_rng(5)
    wall = np.where(np.arange(40) % 2 == 0, 0.010, 0.015) * (1 + rng.normal(0, 0.002, 40))
    finding = by_check(diagnose(ValidationPlan("echo x", runs=40, warmup=0),
                                          FakeExecutor(samples(wall))))["modality"]
    assert finding.status == "warn" and finding.data["modality"] in ("bimodal", "multimodal")


def test_drifting_samples_are_serially_dependent():
    rng = np.random.default_rng(6)
    wall = 0.010 + 0.0001 * np.arange(30) + rng.normal(0, 0.0001, 30)
    finding = by_check(diagnose(ValidationPlan("echo x", runs=30, warmup=0),
                                          FakeExecutor(samples(wall))))["autocorrelation"]
    assert finding.status == "warn" and finding.data["ljung_box_pvalue"] < 0.01


def test_more_samples_beyond_the_tukey_fence_than_clean_timings_give_warns():
    rng = np.random.default_rng(8)
    wall = 0.010 * (1 + rng.normal(0, 0.01, 20))
    wall[[3, 9, 15]] = 0.020
    finding = by_check(diagnose(ValidationPlan("echo x", runs=20, warmup=0),
                                          FakeExecutor(samples(wall))))["outliers"]
    assert finding.status == "warn" and reading(finding).startswith("3 of 20 samples above Q3 + 1.5 IQR")
    assert finding.data["pvalue"] == pytest.approx(0.00707, abs=1e-5)  # 1 - pbinom(2, 20, 0.02) in R


def test_involuntary_context_switches_beyond_the_quietest_sample_warn():
    wall = np.full(20, 0.010)
    switches = np.full(20, 3)
    switches[0] = 1  # the quietest sample: 1 is the command's own
    finding = by_check(diagnose(ValidationPlan("echo x", runs=20, warmup=0),
                                          FakeExecutor(samples(wall, involuntary_cs=switches))))
    cs = finding["context-switches"]
    assert cs.status == "warn"
    assert cs.data["excess_per_s"] == pytest.approx(2 * 19 / 0.2)
    assert cs.data["affected_samples"] == 19


def test_a_mean_far_above_the_minimum_warns():
    wall = np.array([0.010] * 10 + [0.0125] * 10)  # (mean - min) / mean = 1.25 / 11.25 = 11%
    finding = by_check(diagnose(ValidationPlan("echo x", runs=20, warmup=0),
                                          FakeExecutor(samples(wall))))["mean-min-gap"]
    assert finding.status == "warn" and finding.data["mean_min_gap"] == pytest.approx(1.25 / 11.25)


def test_too_few_samples_give_unknown_not_failure():
    report = diagnose(ValidationPlan("echo x", runs=3, warmup=0),
                                FakeExecutor({"echo x": [0.010, 0.011, 0.012], "true": STARTUP_S}))
    statuses = {f.check: f.status for f in report.findings}
    assert statuses["modality"] == "unknown" and statuses["autocorrelation"] == "unknown"


@pytest.mark.parametrize(("cpu_share", "switches", "kind", "status"), [
    (0.99, 0, "cpu-bound", "ok"),  # its CPU time covers its wall time: --metric cpu fits
    (0.30, 0, "off-cpu", "ok"),  # 70% asleep though nothing interrupted it
    (1.90, 0, "threads", "ok"),
    (0.40, 6, "unknown", "unknown"),  # every sample interrupted: whose time off the CPU it was is unknown
])
def test_the_doctor_says_whether_a_benchmark_is_cpu_bound_and_which_time_to_compare_it_on(
        cpu_share, switches, kind, status):
    wall = np.full(20, 0.020)
    report = diagnose(ValidationPlan("echo x", runs=20, warmup=0),
                      FakeExecutor(samples(wall, user_ns=wall * 1e9 * cpu_share, involuntary_cs=[switches] * 20)))
    finding = by_check(report)["cpu-bound"]
    assert (finding.data["kind"], finding.status) == (kind, status)
    assert ("--metric cpu" in fix(finding)) == (kind == "cpu-bound")
