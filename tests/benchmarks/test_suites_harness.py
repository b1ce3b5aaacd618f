"""The pure parts of benchmarks/suites.py: reading the peers' output, deciding at their alpha, and the
tables on synthetic records. No benchmarking happens here; the benchstat output below was captured
from benchstat (golang.org/x/perf, 2026) on two `-count=10` runs of a Go benchmark."""

from __future__ import annotations

import numpy as np
import pytest
from scripts import benchmark_script

benchmark_script("calibration")
suites = benchmark_script("suites")

BENCHSTAT_CSV = """goos: linux
goarch: amd64
pkg: example.com/pairbench/gochain
cpu: AMD EPYC
,a.txt,,b.txt,,,
,sec/op,CI,sec/op,CI,vs base,P
Chain-2,1.1000000000000001e-06,2%,1.1110000000000001e-06,1%,+1.00%,p=0.002 n=10

,a.txt,,b.txt,,,
,B/op,CI,B/op,CI,vs base,P
Chain-2,0,0%,0,0%,~,p=1.000 n=10
"""


def test_benchstat_csv_gives_the_time_table_p_value_and_the_change_of_medians():
    pvalue, change = suites.parse_benchstat_csv(BENCHSTAT_CSV)
    assert pvalue == 0.002 and change == pytest.approx(0.01)


@pytest.mark.parametrize(("pvalue", "change", "alpha", "decision"), [
    (0.002, 0.01, 0.05, "slower"), (0.002, -0.01, 0.01, "faster"), (0.03, 0.01, 0.01, "no change"),
    (0.03, 0.01, 0.05, "slower"), (None, 0.01, 0.05, "no change")])
def test_a_peer_decides_at_its_alpha_with_the_direction_of_the_medians(pvalue, change, alpha, decision):
    assert suites.peer_decision({"pvalue": pvalue, "change": change}, alpha) == decision


def test_the_calibration_table_counts_false_changes_and_findings_per_design():
    records = [{"harness": "go", "kind": "aa", "peer": "benchstat", "verdict": v, "pvalue": p, "change": 0.01,
                "diff_verdict": "inconclusive", "wall_s": 6.0, "peer_wall_s": 3.0}
               for v, p in (("equivalent", 0.5), ("inconclusive", 0.03), ("equivalent", 0.001))]
    rows = {row["design"]: row for row in suites.calibration_rows(records)}
    assert rows["pairbench bench"]["slower"] + rows["pairbench bench"]["faster"] == 0
    assert rows["benchstat, alpha 0.05"]["slower"] == 2 and rows["benchstat, alpha 0.01"]["slower"] == 1
    assert rows["benchstat, alpha 0.05"]["bound"] > rows["pairbench bench"]["bound"]


def test_the_log_ratios_of_a_suite_comparison_pair_values_per_operation_by_round():
    base = {"samples": {"pair": [-1, 0, 1], "warmup": [1, 0, 0], "status": [0, 0, 0], "iterations": [1, 10, 10]},
            "metrics": {"value": [5.0, 100.0, 100.0]}}
    cand = {"samples": {"pair": [0, 1], "warmup": [0, 0], "status": [0, 0], "iterations": [20, 10]},
            "metrics": {"value": [220.0, 90.0]}}
    np.testing.assert_allclose(suites._log_ratios(base, cand), np.log([1.1, 0.9]))


def test_the_suite_table_reads_wall_time_errors_and_noise_per_configuration():
    def comparison(name, verdict, mad):
        return {"name": name, "changed": int(name[-2:]) % 2 == 1, "verdict": verdict, "negligible": False,
                "rounds": 64, "width": 2.0, "mad": mad}

    records = [{"config": "jobs1", "wall_s": [120.0], "comparisons": [comparison("BM_s00", "equivalent", 0.01),
                                                                      comparison("BM_s01", "slower", 0.01)]},
               {"config": "shards2", "wall_s": [50.0, 70.0], "comparisons": [comparison("BM_s00", "slower", 0.02),
                                                                             comparison("BM_s01", "slower", 0.02)]}]
    lines = suites.suite_table(records)
    assert lines[2].startswith("| jobs1 | 1 | 120 s | 0/1") and "| 1/1 | 0 | 64 | 1.00% |" in lines[2]
    assert "70 s (longest shard; both in turn 120 s)" in lines[3] and "| 1/1 (" in lines[3]
