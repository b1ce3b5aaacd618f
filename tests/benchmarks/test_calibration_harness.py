"""The pure parts of benchmarks/calibration.py: load schedule, parsing, rates, the sequential decision.

No timing happens here; the study itself is run by hand (benchmarks/RESULTS.md, "Error rates").
Statistical expected values come from R 4.2.2 (code in comments) or closed forms.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scripts import benchmark_script

cal = benchmark_script("calibration")


# --------------------------------------------------------------------------- load schedule


def _switches(seed, n, mean_s=3.0):
    return list(itertools.islice(cal.phase_switches(seed, mean_s), n))


def test_phase_schedule_is_the_same_for_the_same_seed_and_differs_across_seeds():
    assert _switches(7, 50) == _switches(7, 50)
    assert _switches(7, 50) != _switches(8, 50)


def test_phase_schedule_starts_at_zero_and_every_switch_changes_the_phase():
    schedule = _switches(1, 2000)
    assert schedule[0][0] == 0.0
    phases = [b for _, b in schedule]
    assert set(phases) == {0, 1, 2}
    assert all(a != b for a, b in itertools.pairwise(phases))
    times = [t for t, _ in schedule]
    assert all(a < b for a, b in itertools.pairwise(times))


def test_phase_lengths_are_exponential_with_the_requested_mean():
    times = np.array([t for t, _ in _switches(3, 4001, mean_s=3.0)])
    lengths = np.diff(times)
    # mean of 4000 Exp(3 s): SE 3/sqrt(4000) = 0.047 s; the CV of an exponential is 1
    assert abs(lengths.mean() - 3.0) < 0.2
    assert abs(lengths.std() / lengths.mean() - 1.0) < 0.08


def test_phase_schedule_spends_about_a_third_of_the_time_in_each_phase():
    schedule = _switches(11, 3001)
    busy = cal.busy_share(schedule, 0.0, schedule[-1][0])
    assert abs(busy - 1.0) < 0.1  # mean busy cores over (0, 1, 2) equally likely


def test_phase_schedule_rejects_a_non_positive_mean():
    with pytest.raises(ValueError, match="mean_s"):
        next(cal.phase_switches(1, 0.0))


def test_phase_at_and_busy_share_follow_the_schedule():
    schedule = [(10.0, 0), (12.0, 2), (13.0, 1)]
    assert cal.phase_at(schedule, 9.0) == 0  # before the start: the first phase
    assert cal.phase_at(schedule, 12.0) == 2
    assert cal.phase_at(schedule, 12.999) == 2
    assert cal.phase_at(schedule, 50.0) == 1
    # 11..14: 1 s idle, 1 s both busy, 1 s one busy -> (0 + 2 + 1) / 3
    assert cal.busy_share(schedule, 11.0, 14.0) == pytest.approx(1.0)
    assert cal.busy_share(schedule, 12.5, 12.5) == 2.0


def test_read_schedule_turns_the_log_into_seconds(tmp_path):
    log = tmp_path / "load.log"
    log.write_text("1000000000 2\n4500000000 0\n")
    assert cal.read_schedule(log) == [(1.0, 2), (4.5, 0)]
    assert cal.read_schedule(tmp_path / "missing.log") == []


# --------------------------------------------------------------------------- workload arithmetic


def test_linear_fit_recovers_an_exact_line():
    args = [1e6, 2e6, 4e6, 8e6]
    fit = cal.fit_linear(args, [700_000 + 1.25 * n for n in args])
    assert fit.intercept_ns == pytest.approx(700_000)
    assert fit.slope_ns == pytest.approx(1.25)
    assert fit.r_squared == pytest.approx(1.0)


def test_slowdown_argument_makes_total_time_including_startup_grow_by_the_percentage():
    fit = cal.LinearFit(intercept_ns=1_000_000.0, slope_ns=2.0, r_squared=1.0)
    base = cal.argument_for(50e6, fit)  # (50 ms - 1 ms) / 2 ns
    assert base == 24_500_000
    for pct in (1.0, 3.0):
        slowed = cal.slowed_argument(base, fit, pct)
        ratio = (1e6 + 2.0 * slowed) / (1e6 + 2.0 * base)
        assert ratio == pytest.approx(1 + pct / 100, abs=1e-8)
        # scaling the argument alone would miss: the start-up time does not grow
        assert slowed > base * (1 + pct / 100)


def test_argument_for_rejects_a_non_positive_slope():
    with pytest.raises(ValueError, match="slope"):
        cal.argument_for(1e6, cal.LinearFit(0.0, 0.0, 0.0))


# --------------------------------------------------------------------------- parsing


def _samples(walls, pairs, warmup, status=None, start=None):
    n = len(walls)
    return {"wall_ns": walls, "pair": pairs, "warmup": warmup, "status": status or [0] * n,
            "start_ns": start or [i * 100_000_000 for i in range(n)]}


def _compare_doc(comparison=True):
    a = _samples([50_000_000, 50_000_000, 51_000_000, 49_000_000], [-1, 0, 1, 2], [1, 0, 0, 0],
                 start=[0, 100_000_000, 300_000_000, 500_000_000])
    b = _samples([51_000_000, 50_500_000, 52_000_000, 40_000_000], [-1, 0, 1, 2], [1, 0, 0, 0],
                 status=[0, 0, 0, 1], start=[50_000_000, 150_000_000, 250_000_000, 450_000_000])
    doc = {"stopped_because": "the verdict was decided (slower)", "state": "complete",
           "sides": [{"name": "A"}, {"name": "B"}], "comparisons": [],
           "series": [{"benchmark": 0, "side": 1, "samples": b}, {"benchmark": 0, "side": 0, "samples": a}]}
    if comparison:
        doc["comparisons"] = [{"verdict": "slower", "negligible": True, "refused": False,
                               "effect": {"estimate": 1.0, "low": 0.2, "high": 1.8}, "pvalue": 0.004,
                               "rounds": 2}]
    return doc


def test_pairbench_decision_reads_the_verdict_and_the_measured_pairs():
    got = cal.pairbench_decision(_compare_doc())
    assert got["verdict"] == "slower" and got["negligible"] is True
    assert (got["estimate"], got["low"], got["high"]) == (1.0, 0.2, 1.8)
    assert got["rounds"] == 2 and got["pvalue"] == 0.004
    assert got["stopped_because"].startswith("the verdict was decided")
    # the warmup and the round with a failed sample are left out; B ran first in round 1
    assert got["pairs"] == [
        [0.1, 0.2005, round(math.log(50.5 / 50.0), 7)],
        [0.25, 0.351, round(math.log(52.0 / 51.0), 7)],
    ]


def test_pairbench_decision_marks_a_document_without_comparison_as_an_error():
    got = cal.pairbench_decision(_compare_doc(comparison=False))
    assert got["verdict"] is None and "no comparison" in got["error"]
    assert len(got["pairs"]) == 2


def test_walls_by_round_keeps_rounds_where_every_variant_succeeded():
    doc = _compare_doc()
    walls = cal.walls_by_round(doc)
    np.testing.assert_array_equal(walls, [[50e6, 50.5e6], [51e6, 52e6]])


# hyperfine 1.15.0, `hyperfine -N --runs 3 --export-json f.json "spin 100"` (trimmed path)
HYPERFINE_EXPORT = {
    "results": [{
        "command": "spin 100", "mean": 0.020795197, "stddev": 0.026156364226675333,
        "median": 0.011262288, "user": 0.0003993333333333333, "system": 0.0001953333333333333,
        "min": 0.000742342, "max": 0.050380961,
        "times": [0.050380961, 0.000742342, 0.011262288], "exit_codes": [0, 0, 0],
    }]
}


def test_hyperfine_times_reads_the_per_run_times():
    assert cal.hyperfine_times(HYPERFINE_EXPORT) == [0.050380961, 0.000742342, 0.011262288]


def test_hyperfine_times_refuses_an_export_with_several_benchmarks():
    with pytest.raises(ValueError, match="one hyperfine result"):
        cal.hyperfine_times({"results": HYPERFINE_EXPORT["results"] * 2})


# --------------------------------------------------------------------------- the sequential decision

# R 4.2.2:
#   a <- c(0.05012, 0.05034, 0.04998, 0.05101, 0.05022, 0.05047, 0.05010, 0.05066)
#   b <- c(0.05081, 0.05102, 0.05057, 0.05149, 0.05090, 0.05123, 0.05071, 0.05096)
#   t.test(b, a, var.equal=FALSE, conf.level=0.99)  # p 0.0021475611583912,
#                                                   # CI 0.000124317116423735 0.001073182883576269
#   wilcox.test(b, a, exact=TRUE)$p.value           # 0.00466200466200466
A = [0.05012, 0.05034, 0.04998, 0.05101, 0.05022, 0.05047, 0.05010, 0.05066]
B = [0.05081, 0.05102, 0.05057, 0.05149, 0.05090, 0.05123, 0.05071, 0.05096]


def test_welch_decision_matches_r_and_calls_the_slower_side():
    got = cal.welch_decision(A, B, alpha=0.01, threshold=1.0)
    assert got["welch_p"] == pytest.approx(0.0021475611583912, rel=1e-9)
    scale = 100 / np.mean(A)
    assert got["low"] == pytest.approx(0.000124317116423735 * scale, rel=1e-9)
    assert got["high"] == pytest.approx(0.001073182883576269 * scale, rel=1e-9)
    assert got["verdict"] == "slower"
    assert got["negligible"] is False  # the interval reaches 2.1%, beyond 1%
    assert got["mw_p"] == pytest.approx(0.00466200466200466, rel=1e-9)
    assert got["mw_verdict"] == "slower"
    assert got["estimate"] == pytest.approx((np.mean(B) / np.mean(A) - 1) * 100)


def test_welch_decision_direction_follows_the_sign_of_the_mean_difference():
    got = cal.welch_decision(B, A, alpha=0.01)
    assert got["verdict"] == "faster" and got["mw_verdict"] == "faster"
    assert cal.welch_decision(A, B, alpha=0.001)["verdict"] == "no difference"
    assert cal.welch_decision(A, B, alpha=0.001)["mw_verdict"] == "no difference"


# --------------------------------------------------------------------------- rates and bounds


def test_clopper_pearson_bounds_match_r_binom_test():
    # R: binom.test(0, 40, alternative="less")$conf.int[2] == 1 - 0.05^(1/40)
    assert cal.clopper_pearson_upper(0, 40) == pytest.approx(0.0721575245055146, rel=1e-9)
    assert cal.clopper_pearson_upper(2, 40) == pytest.approx(0.149151961273213, rel=1e-9)
    # R: binom.test(38, 40, alternative="greater")$conf.int[1]
    assert cal.clopper_pearson_lower(38, 40) == pytest.approx(0.850848038726787, rel=1e-9)
    assert cal.clopper_pearson_upper(40, 40) == 1.0 and cal.clopper_pearson_lower(0, 40) == 0.0


def test_clopper_pearson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="k=5"):
        cal.clopper_pearson_upper(5, 4)


def test_consistency_with_alpha_is_a_one_sided_binomial_test():
    # R: binom.test(2, 40, p=0.01, alternative="greater")$p.value
    ok, p = cal.consistent_with(2, 40, 0.01)
    assert ok and p == pytest.approx(0.0607366218062062, rel=1e-9)
    ok, p = cal.consistent_with(3, 40, 0.01)
    assert not ok and p == pytest.approx(0.00749736339539595, rel=1e-9)
    ok, p = cal.consistent_with(0, 40, 0.01)
    assert ok and p == 1.0


# --------------------------------------------------------------------------- planning and summaries


def test_plan_runs_every_cell_its_count_in_shuffled_order_pairbench_first():
    counts = {"aa": 4, "ab1": 3, "ab3": 2}
    plan = cal.plan_trials(counts, ["quiet", "phased"], ["sequential", "pairbench"], seed=5)
    assert [t.index for t in plan] == list(range(36))
    assert [t.design for t in plan] == ["pairbench"] * 18 + ["sequential"] * 18
    for design, condition, kind in itertools.product(cal.DESIGNS, ["quiet", "phased"], counts):
        n = sum(t.design == design and t.condition == condition and t.kind == kind for t in plan)
        assert n == counts[kind]
    kinds = [t.kind for t in plan[:18]]
    assert kinds != sorted(kinds)  # interleaved, not in blocks
    assert plan == cal.plan_trials(counts, ["quiet", "phased"], ["sequential", "pairbench"], seed=5)
    assert len({t.seed for t in plan}) == len(plan)


def _record(design, condition, kind, verdict, negligible=False, wall=10.0, rounds=100, **extra):
    r = {"design": design, "condition": condition, "kind": kind, "verdict": verdict,
         "negligible": negligible, "wall_s": wall}
    if design == "pairbench":
        r["rounds"] = rounds
    else:
        r.update(runs=rounds, mw_verdict=extra.pop("mw", "no difference"))
    return {**r, **extra}


def test_summary_counts_false_positives_detections_and_wrong_directions():
    recs = ([_record("pairbench", "phased", "aa", "equivalent")] * 37
            + [_record("pairbench", "phased", "aa", "slower", negligible=True)] * 2
            + [_record("pairbench", "phased", "aa", "faster")]
            + [_record("pairbench", "phased", "ab1", "slower", wall=30.0)] * 38
            + [_record("pairbench", "phased", "ab1", "faster")]
            + [_record("pairbench", "phased", "ab1", "inconclusive", wall=60.0)]
            + [_record("pairbench", "phased", "ab3", "slower", wall=5.0)] * 20
            + [_record("pairbench", "phased", "aa", None)])  # a failed trial is left out
    (row,) = cal.summarize(recs)
    assert (row["design"], row["condition"], row["aa_trials"]) == ("pairbench", "phased", 40)
    assert (row["fp"], row["fp_nonnegligible"], row["aa_equivalent"]) == (3, 1, 37)
    assert row["fp_rate"] == 3 / 40
    assert row["fp_upper95"] == pytest.approx(cal.clopper_pearson_upper(3, 40))
    assert row["fp_consistent"] is False
    assert (row["ab1_detected"], row["ab1_trials"], row["ab1_rate"]) == (38, 40, 0.95)
    assert row["ab1_lower95"] == pytest.approx(0.850848038726787, rel=1e-9)
    assert (row["ab3_detected"], row["ab3_trials"]) == (20, 20)
    assert row["wrong_direction"] == 1
    assert row["median_s"] == 10.0 and row["median_rounds"] == 100


def test_summary_splits_the_sequential_samples_into_welch_and_mann_whitney_rows():
    recs = ([_record("sequential", "quiet", "aa", "slower", mw="no difference")] * 3
            + [_record("sequential", "quiet", "aa", "no difference", mw="faster")]
            + [_record("sequential", "quiet", "ab1", "slower", mw="slower")])
    rows = {r["design"]: r for r in cal.summarize(recs)}
    assert rows["sequential-welch"]["fp"] == 3 and rows["sequential-mw"]["fp"] == 1
    assert rows["sequential-welch"]["ab1_detected"] == 1
    assert rows["sequential-welch"]["median_rounds"] == 100


def test_sequential_runs_is_the_median_of_pairbench_rounds_in_the_condition():
    recs = [_record("pairbench", "phased", "aa", "equivalent", rounds=n) for n in (100, 300, 500)]
    recs.append(_record("pairbench", "quiet", "aa", "equivalent", rounds=20))
    assert cal.sequential_runs(recs, "phased") == 300
    assert cal.sequential_runs(recs, "quiet") == 20
    assert cal.sequential_runs([], "phased") is None


def test_phase_noise_attributes_rounds_to_the_phase_they_ran_in():
    pairs = [[0.0, 0.1, 0.00], [0.2, 0.3, 0.02], [0.9, 1.1, -0.30], [1.2, 1.3, 0.01], [1.4, 1.5, 0.03]]
    rec = _record("pairbench", "phased", "aa", "equivalent", pairs=pairs, t0=100.0,
                  schedule=[(99.5, 0), (101.0, 2)])
    got = {n["phase"]: n for n in cal.phase_noise([rec])}
    assert got["idle"]["rounds"] == 2 and got["both busy"]["rounds"] == 2
    assert got["switch"]["rounds"] == 1
    assert "one busy core" not in got
    # centred on the trial median (0.01): both-busy deviations are 0 and 0.02 -> MAD 0.01
    assert got["both busy"]["mad_pct"] == pytest.approx(100 * 0.01 * 1.482602218505602, rel=1e-6)


def test_report_renders_one_line_per_design_and_condition_and_per_kind():
    recs = [_record("pairbench", "quiet", "aa", "equivalent", low=-0.5, high=0.5),
            _record("pairbench", "quiet", "ab1", "slower", negligible=True, low=0.2, high=0.9)]
    text = cal.render_report(recs, {"uname": "Linux x", "cpu": "C", "cores": 2})
    assert "| pairbench | quiet | 1 | 0 (0.0%) |" in text
    assert "| pairbench | quiet | ab1 | slower (n) 1 | 100 | 10.0 | 10.0 | 0.70 |" in text
    assert "Trials: 2; without a verdict (failed): 0; phased trials without a load log: 0." in text


def test_kind_details_count_verdicts_and_take_median_rounds_time_and_width():
    recs = [_record("pairbench", "phased", "ab1", "slower", wall=w, rounds=n, low=0.1, high=h)
            for w, n, h in ((10.0, 100, 1.1), (20.0, 300, 2.1), (60.0, 500, 3.1))]
    recs.append(_record("pairbench", "phased", "ab1", "inconclusive", wall=61.0, rounds=600, low=-1.0, high=4.0))
    (d,) = cal.kind_details(recs)
    assert d["verdicts"] == "inconclusive 1, slower 3"
    assert d["median_rounds"] == 400 and d["median_s"] == 40.0
    assert d["median_width"] == pytest.approx(2.5)


def test_arm_load_gap_relates_sequential_false_positives_to_saturated_load():
    schedule = [(0.0, 0), (10.0, 2), (20.0, 1)]  # idle; both cores busy from 10 s; one from 20 s
    spans = {"slower": [(0.0, 10.0), (10.0, 20.0)], "faster": [(5.0, 15.0), (15.0, 25.0)],
             "no difference": [(20.0, 21.0), (21.0, 22.0)]}
    recs = [_record("sequential", "phased", "aa", v, spans=s, schedule=schedule) for v, s in spans.items()]
    got = {g["verdict"]: g for g in cal.arm_load_gap(recs)}
    assert got["slower"]["mean_abs_gap"] == pytest.approx(1.0) and got["slower"]["agrees"] == "1/1"
    assert got["faster"]["mean_abs_gap"] == pytest.approx(0.0) and got["faster"]["agrees"] == "0/1"
    assert got["faster"]["no_gap"] == 1
    assert got["no difference"]["mean_abs_gap"] == 0.0 and got["no difference"]["agrees"] == "-"


def test_records_loader_skips_a_torn_last_line(tmp_path):
    path = tmp_path / "trials.jsonl"
    path.write_text('{"index": 0}\n{"index": 1}\n{"ind')
    assert cal.load_records(path) == [{"index": 0}, {"index": 1}]


def test_sequential_design_without_hyperfine_stops_before_measuring_and_says_how_to_install_it(
        monkeypatch, capsys):
    monkeypatch.setattr(cal.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit) as stop:
        cal.parse_args(["--designs", "sequential"])
    assert stop.value.code == 2
    assert "install-test-deps.sh --bench" in capsys.readouterr().err


def test_pairbench_design_and_report_only_need_no_hyperfine(monkeypatch):
    monkeypatch.setattr(cal.shutil, "which", lambda name: None)
    assert cal.parse_args(["--designs", "pairbench"]).designs == ["pairbench"]
    assert cal.parse_args(["--report-only"]).report_only
