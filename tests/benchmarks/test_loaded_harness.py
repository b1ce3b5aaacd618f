"""The pure parts of benchmarks/loaded.py: the trial plan, the peers' outputs read, the cells counted."""

from __future__ import annotations

import numpy as np
import pytest
from scripts import benchmark_script

study = benchmark_script("loaded")
suites = benchmark_script("suites")

# the shape of criterion 0.8's compare output (`--bench --baseline base`), names long and short
CRITERION_COMPARE = """\
Gnuplot not found, using plotters backend
u64[0]/itoa             time:   [1.1915 ns 1.1969 ns 1.2031 ns]
                        change: [+7.1232% +7.8022% +8.4566%] (p = 0.00 < 0.05)
                        Performance has regressed.
Found 4 outliers among 100 measurements (4.00%)
  4 (4.00%) high mild
u64[half]/std::fmt
                        time:   [21.106 ns 21.203 ns 21.321 ns]
                        change: [-16.262% -15.120% -14.002%] (p = 0.00 < 0.05)
                        Performance has improved.
i16[min]/itoa           time:   [1.9001 ns 1.9102 ns 1.9221 ns]
                        change: [-0.9120% +0.1002% +1.1002%] (p = 0.84 > 0.05)
                        No change in performance detected.
u128[0]/itoa            time:   [2.1 ns 2.2 ns 2.3 ns]
                        change: [-2.0% -1.0% +0.1%] (p = 0.01 < 0.05)
                        Change within noise threshold.
"""

BENCHSTAT_CSV = """\
goos: linux
goarch: amd64
pkg: internal/strconv
cpu: AMD EPYC
,a.txt,,b.txt,,,
,sec/op,CI,sec/op,CI,vs base,P
Atof64Decimal-2,2.5e-08,4%,2.6e-08,2%,+4.00%,p=0.002 n=10
Atof64Big-2,1.0e-07,1%,9.0e-08,3%,-10.00%,p=0.043 n=10
geomean,5e-08,,4.8e-08,,-3.00%,
"""


def test_criterion_s_compare_is_read_per_benchmark():
    assert study.parse_criterion_compare(CRITERION_COMPARE) == {
        "u64[0]/itoa": "slower", "u64[half]/std::fmt": "faster", "i16[min]/itoa": "no change",
        "u128[0]/itoa": "no change"}


def test_every_row_of_benchstat_s_table_is_read_up_to_the_geomean():
    rows = suites.parse_benchstat_rows(BENCHSTAT_CSV)
    assert list(rows) == ["Atof64Decimal-2", "Atof64Big-2"]
    assert rows["Atof64Big-2"][0] == 0.043 and abs(rows["Atof64Big-2"][1] + 0.10) < 1e-9
    assert study._peer_verdict(*rows["Atof64Big-2"], 0.05) == "faster"
    assert study._peer_verdict(*rows["Atof64Big-2"], 0.01) == "no change"


def test_each_trial_is_run_by_every_design_one_after_the_other():
    trials = study.plan("command", ["phased+2", "ramp+2"], {"aa": 3, "ab": 2}, seed=1)
    assert len(trials) == 2 * 5 * 4
    for start in range(0, len(trials), 4):
        group = trials[start:start + 4]
        assert {t.design for t in group} == {"pairbench-wall", "pairbench-cpu", "hyperfine+welch", "pairbench-auto"}
        assert group[-1].design == "pairbench-auto"  # added later: after the seeded order
        assert len({(t.seed, t.kind, t.condition) for t in group}) == 1
    assert trials == study.plan("command", ["phased+2", "ramp+2"], {"aa": 3, "ab": 2}, seed=1)


def test_a_design_added_later_keeps_the_trials_and_seeds_of_the_records_taken_before():
    before = [t for t in study.plan("command", ["phased+2"], {"aa": 4, "ab": 4}, seed=2402)
              if t.design != "pairbench-auto"]
    saved = study.ADDED_DESIGNS.pop("command")
    try:
        original = study.plan("command", ["phased+2"], {"aa": 4, "ab": 4}, seed=2402)
    finally:
        study.ADDED_DESIGNS["command"] = saved
    key = [(t.condition, t.kind, t.seed, t.design) for t in original]
    assert [(t.condition, t.kind, t.seed, t.design) for t in before] == key


def test_designs_option_rejects_an_unknown_design_and_keeps_the_named_ones():
    args = study.parse_args(["--part", "go", "--designs", "pairbench-auto,benchstat"])
    assert args.designs == ["pairbench-auto", "benchstat"]
    with pytest.raises(SystemExit) as stop:
        study.parse_args(["--part", "go", "--designs", "pairbench-fast"])
    assert stop.value.code == 2


def test_a_cell_counts_false_changes_wrong_ways_and_the_share_equivalent():
    records = [{"part": "go", "condition": "busy1", "kind": "aa", "design": "pairbench-cpu", "wall_s": 10.0,
                "loadavg_before": 2.0, "verdicts": {"x": "equivalent", "y": "inconclusive", "z": "faster-negligible"}},
               {"part": "go", "condition": "busy1", "kind": "aa", "design": "pairbench-cpu", "wall_s": 12.0,
                "loadavg_before": 2.0, "verdicts": {"x": "equivalent", "y": "equivalent", "z": "equivalent"}}]
    (row,) = study.cells(records)
    assert (row["verdicts"], row["changes"], row["faster"], row["equivalent"]) == (6, 1, 1, 4)
    assert row["median_equivalent_share"] == (1 / 3 + 1) / 2 and row["median_s"] == 11.0


def test_information_per_second_of_repetitions_is_relative_to_one_per_invocation():
    rng = np.random.default_rng(3)

    def record(k, noise, seconds):
        rounds = [{side: {"reps": [(x, x) for x in 100.0 * np.exp(rng.normal(0.0, noise, k))], "s": seconds / 2}
                   for side in ("a", "a2")} for _ in range(400)]
        return {"harness": "gbench", "condition": "busy2", "k": k, "rounds": rounds, "loadavg_before": 2.0}

    one, four = study.repetition_rows([record(1, 0.02, 0.02), record(4, 0.02, 0.05)])
    # medians of 4 have about (pi/2)/4 of one sample's variance (normal noise): noise 0.63x, cost 2.5x
    assert 0.5 < four["mad_wall"] / one["mad_wall"] < 0.75
    assert 0.8 < four["relative_wall"] < 1.6 and one["relative_wall"] == 1.0


def test_go_repetitions_leave_the_first_repetition_out_of_the_medians_of_two_onward():
    rng = np.random.default_rng(4)

    def invocation(k: int, first_factor: float) -> dict:
        reps = list(100.0 * np.exp(rng.normal(0.0, 0.001, k)))
        reps[0] *= first_factor  # a cold first repetition, far off in one process and not in the other
        return {"reps": reps, "wall": 0.1, "cpu": 0.05}

    records = [{"condition": "busy1", "bench": "BenchmarkX", "round": r, "loadavg": 1.0,
                "a/8": invocation(8, 1.0), "a2/8": invocation(8, 1.5 if r % 2 else 1.0),
                "a/1": invocation(1, 1.0), "a2/1": invocation(1, 1.5 if r % 2 else 1.0)} for r in range(20)]
    rows = {r["statistic"]: r for r in study.go_repetition_rows(records)}
    assert rows["median of 1..1"]["mad"][0] > 0.1  # the cold repetition in every other round
    assert rows["median of 2..8"]["mad"][0] < 0.005 and rows["median of 2..8"]["first_over_later"] == pytest.approx(
        1.0, abs=0.01)
    assert rows["median of 2..8"]["info"][0] > 1.0
