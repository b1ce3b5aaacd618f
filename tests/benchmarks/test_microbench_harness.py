"""The pure parts of benchmarks/microbench.py: the peers' output parsing, the timing of a bench
document, the plan and the report on synthetic trials.

No benchmarking happens here and the peers' venv is not needed; the sample outputs below were
captured from real runs of pyperf 2.x and pytest-benchmark 5.x in the study (benchmarks/RESULTS.md,
"Microbenchmarks: paired in-process workers (issue 12)").
"""

from __future__ import annotations

import math

import pytest
from scripts import benchmark_script

benchmark_script("calibration")
mb = benchmark_script("microbench")

# --------------------------------------------------------------------------- captured outputs

PYPERF_HIDDEN = "Benchmark hidden because not significant (1): timeit\n"
PYPERF_SLOWER = "Mean +- std dev: [pyperf-a] 11.0 us +- 0.5 us -> [pyperf-b] 11.7 us +- 0.3 us: 1.07x slower\n"
PYPERF_FASTER = "Mean +- std dev: [pyperf-a] 11.7 us +- 0.3 us -> [pyperf-b] 11.0 us +- 0.5 us: 1.06x faster\n"

PYTEST_PASSED = """\
Comparing against benchmarks from: Linux-CPython-3.11-64bit/0001_a.json
.                                                                        [100%]

------------------------------------------------------------------------------------- benchmark: 2 tests -------------------------------------------------------------------------------------
Name (time in us)           Min                 Max               Mean            StdDev             Median               IQR             Outliers  OPS (Kops/s)            Rounds  Iterations
----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------
test_micro (0001_a)     10.6150 (1.0)      144.0830 (1.0)      11.4620 (1.01)     2.2689 (1.23)     11.1370 (1.00)     0.2800 (1.27)     2509;3879       87.2447 (0.99)      66565           1
test_micro (NOW)        10.6860 (1.01)     187.2680 (1.30)     11.2949 (1.0)      1.8517 (1.0)      11.0870 (1.0)      0.2210 (1.0)      1452;3795       88.5356 (1.0)       67016           1
----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------

Legend:
  Outliers: 1 Standard Deviation from Mean; 1.5 IQR (InterQuartile Range) from 1st Quartile and 3rd Quartile.
  OPS: Operations Per Second, computed as 1 / Mean
1 passed in 0.84s
"""

PYTEST_FAILED = """\
Comparing against benchmarks from: Linux-CPython-3.11-64bit/0001_a.json
.                                                                        [100%]

------------------------------------------------------------------------------------- benchmark: 2 tests -------------------------------------------------------------------------------------
Name (time in us)           Min                 Max               Mean            StdDev             Median               IQR             Outliers  OPS (Kops/s)            Rounds  Iterations
----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------
test_micro (0001_a)      9.7450 (1.0)      165.7060 (1.44)     12.2244 (1.0)      2.3160 (1.0)      12.0080 (1.0)      0.1900 (1.0)     1732;16306       81.8039 (1.0)       61790           1
test_micro (NOW)        10.9960 (1.13)     115.2710 (1.0)      12.6028 (1.03)     2.4392 (1.05)     12.1580 (1.01)     0.6720 (3.54)     3376;4135       79.3473 (0.97)      66792           1
----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------

Legend:
  Outliers: 1 Standard Deviation from Mean; 1.5 IQR (InterQuartile Range) from 1st Quartile and 3rd Quartile.
  OPS: Operations Per Second, computed as 1 / Mean

--------------------------------------------------------------------------------
Performance has regressed:
	test_micro (0001_a) - Field 'min' has failed PercentageRegressionCheck: 12.837343697 > 1.000000000
--------------------------------------------------------------------------------
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  ... (pytest's traceback, cut) ...
  File "/work/main/benchmarks/out/peers-venv/lib/python3.11/site-packages/pytest_benchmark/session.py", line 260, in check_regressions
    raise PerformanceRegression('Performance has regressed.')
pytest_benchmark.session.PerformanceRegression: Performance has regressed.
"""


def test_pyperf_not_significant_is_no_difference():
    assert mb.pyperf_verdict(PYPERF_HIDDEN) == "no difference"
    assert mb.pyperf_verdict("Not significant!\n") == "no difference"


def test_pyperf_direction():
    assert mb.pyperf_verdict(PYPERF_SLOWER) == "slower"
    assert mb.pyperf_verdict(PYPERF_FASTER) == "faster"


def test_pyperf_unrecognised_output_is_none():
    assert mb.pyperf_verdict("ERROR: unable to load a.json\n") is None


def test_pytest_passed_run_is_no_difference():
    assert mb.pytest_failed_checks(PYTEST_PASSED) == []
    assert mb.pytest_verdict(0, PYTEST_PASSED) == "no difference"


def test_pytest_failed_check_is_slower():
    checks = mb.pytest_failed_checks(PYTEST_FAILED)
    assert len(checks) == 1
    assert checks[0]["field"] == "min"
    assert checks[0]["check"] == "PercentageRegressionCheck"
    assert checks[0]["value"] > checks[0]["limit"] == pytest.approx(1.0)
    assert mb.pytest_verdict(1, PYTEST_FAILED) == "slower"


def test_pytest_other_failure_is_none():
    assert mb.pytest_verdict(4, "ERROR: file or directory not found: test_micro.py\n") is None


# --------------------------------------------------------------------------- bench documents


def _series(side, starts, walls, warmup):
    return {"benchmark": 0, "side": side, "samples": {"start_ns": starts, "wall_ns": walls, "warmup": warmup,
                                                      "iterations": [1024] * len(walls)}}


def test_bench_timing():
    doc = {"series": [_series(0, [0, 3_000_000, 6_000_000], [1_000_000] * 3, [1, 0, 0]),
                      _series(1, [1_500_000, 4_500_000, 7_500_000], [1_000_000] * 3, [1, 0, 0])]}
    t = mb.bench_timing(doc)
    assert t["measure_s"] == pytest.approx(8.5e-3)  # the last sample ends at 7.5 + 1 ms
    assert t["samples"] == 4 and t["samples_all"] == 6
    assert t["samples_per_s"] == pytest.approx(4 / 8.5e-3)
    assert t["overhead_us"] == pytest.approx((8.5e6 - 6e6) / 6 / 1e3)
    assert t["iterations"] == 1024


def test_bench_timing_without_samples():
    assert mb.bench_timing({"series": []}) == {}


# --------------------------------------------------------------------------- plan and report


def test_plan_counts_and_chunks():
    plan = mb.plan_trials({"c": 3, "py": 2}, {"c": 2, "ab1": 1, "ab3": 1}, {"pytest-benchmark": 1, "pyperf": 1}, 7)
    count = lambda **kw: sum(all(getattr(t, k) == v for k, v in kw.items()) for t in plan)  # noqa: E731
    assert count(design="pairbench", workload="c", kind="aa") == 6
    assert count(design="pairbench", workload="py", kind="aa") == 4
    assert count(design="pairbench", workload="c", kind="ab1") == 4
    assert count(design="pairbench", workload="c", kind="ab3") == 0
    assert count(design="pyperf", workload="c") == 0
    assert count(design="pytest-benchmark", workload="py") == 6  # 3 kinds x 2 conditions
    assert [t.index for t in plan] == list(range(len(plan)))
    for i in range(0, len(plan), mb.CHUNK):  # quiet trials first in each chunk
        conditions = [t.condition for t in plan[i:i + mb.CHUNK]]
        assert conditions == sorted(conditions, key=mb.CONDITIONS.index)
    assert plan == mb.plan_trials({"c": 3, "py": 2}, {"c": 2, "ab1": 1, "ab3": 1},
                                  {"pytest-benchmark": 1, "pyperf": 1}, 7)


def _record(kind, verdict, design="pairbench", condition="quiet", measure_s=1.0):
    return {"design": design, "workload": "c", "condition": condition, "kind": kind, "verdict": verdict,
            "wall_s": measure_s + 1, "measure_s": measure_s, "samples_per_s": 700.0, "overhead_us": 280.0}


def test_summary_of_synthetic_trials():
    records = ([_record("aa", "equivalent")] * 97 + [_record("aa", "slower")] * 2 + [_record("aa", None)]
               + [_record("ab1", "slower", measure_s=1.5)] * 18 + [_record("ab1", "slower", measure_s=3.0)]
               + [_record("ab1", "inconclusive", measure_s=5.0)])
    rows = {r["kind"]: r for r in mb.summarize(records)}
    aa, ab = rows["aa"], rows["ab1"]
    assert aa["trials"] == 99 and aa["failed"] == 1 and aa["changes"] == 2
    # P(X >= 2), X ~ Binomial(99, 0.01): 1 - 0.99^99 - 99 * 0.01 * 0.99^98
    assert aa["binom_p"] == pytest.approx(1 - 0.99**99 - 99 * 0.01 * 0.99**98)
    # the upper bound u solves P(X <= 2 | 99, u) = 0.05 (R: qbeta(0.95, 3, 97) = 0.06223)
    assert sum(math.comb(99, k) * aa["bound"] ** k * (1 - aa["bound"]) ** (99 - k) for k in range(3)) == \
        pytest.approx(0.05)
    assert ab["changes"] == 19 and ab["wrong"] == 0 and ab["within_goal"] == 18
    # the lower bound l solves P(X >= 19 | 20, l) = 0.05 (R: qbeta(0.05, 19, 2) = 0.7839)
    low = ab["bound"]
    assert 20 * low**19 * (1 - low) + low**20 == pytest.approx(0.05)
    assert ab["median_s"] == pytest.approx(1.5)


def test_wrong_direction_is_counted():
    rows = mb.summarize([_record("ab1", "faster"), _record("ab1", "slower")])
    assert rows[0]["wrong"] == 1 and rows[0]["changes"] == 1


def test_report_renders_tables():
    records = [_record("aa", "equivalent"), _record("ab1", "slower"),
               {**_record("aa", "no difference", design="pyperf"), "workload": "py"}]
    text = mb.render_report(records, {"uname": "Linux", "cpu": "AMD EPYC", "cores": 2})
    assert "| c | quiet | A/A | 1 | equivalent 1 | 0/1 (0%) | <= 95.0% | 1 | 0 | - |" in text
    assert "| c | quiet | +1% | 1 | slower 1 | 1/1 (100%) | >= 5.0% | - | 0 | 1/1 (100%) |" in text
    assert "| pyperf | quiet | A/A | 1 | no difference 1 |" in text
    assert not math.isnan(mb.summarize(records)[0]["samples_per_s"])
