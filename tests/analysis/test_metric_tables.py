"""A harness's own units (Go's B/op and allocs/op, counters): one table per unit, each its own Holm family,
decided on the same rounds by the time's machinery; constants are "same", a change from 0 is said as a
difference, and adding metrics never changes a time verdict."""

from __future__ import annotations

import numpy as np
import pytest
from runs import GO_ROUNDS as ROUNDS
from runs import go_suite
from scipy import stats as sps

from pairbench import stats
from pairbench.analysis import analyse
from pairbench.analysis.metrics import method_of, metric_units, sign_test_pvalue, worse_verdict
from pairbench.store import shards


def table(analysis, unit: str):
    (found,) = [t for t in analysis.metric_tables if t.unit == unit]
    return found


def test_each_unit_gets_its_own_table_b_op_and_allocs_op_first_and_time_columns_get_none():
    run = go_suite({"BenchmarkA": {"widgets/op": (3, 3), "allocs/op": (1, 1), "MB/s": (5, 5), "B/op": (16, 16)},
                    "BenchmarkB": {"B/op": (8, 8)}})
    analysis = analyse(run)
    assert [t.unit for t in analysis.metric_tables] == ["B/op", "allocs/op", "MB/s", "widgets/op"]
    assert [c.comparison.benchmark.name for c in table(analysis, "B/op").comparisons] == ["BenchmarkA", "BenchmarkB"]
    assert table(analysis, "B/op").family == 2 and table(analysis, "allocs/op").family == 1


def test_equal_values_in_every_round_are_the_same_with_no_ratio_needed_even_at_zero():
    analysis = analyse(go_suite({"BenchmarkZero": {"allocs/op": (0, 0)}, "BenchmarkThree": {"allocs/op": (3, 3)}}))
    zero, three = table(analysis, "allocs/op").comparisons
    for c in (zero, three):
        assert (c.verdict, c.method, c.change_pct, c.difference) == ("same", "equal", 0.0, 0.0)
        assert c.comparison.pvalue == 1.0 and c.comparison.rounds == ROUNDS
    assert (zero.base_median, three.cand_median) == (0.0, 3.0)


def test_a_change_from_zero_is_higher_by_the_sign_test_and_said_as_a_difference_without_a_percentage():
    c, = table(analyse(go_suite({"BenchmarkNew": {"allocs/op": (0, 2)}})), "allocs/op").comparisons
    assert (c.verdict, c.method, c.change_pct, c.difference) == ("higher", "sign test", None, 2.0)
    assert c.comparison.pvalue_unadjusted == pytest.approx(sps.binomtest(ROUNDS, ROUNDS, 0.5).pvalue)
    assert not c.negligible


def test_a_constant_change_is_decided_by_the_sign_test_with_the_medians_ratio_as_the_change():
    c, = table(analyse(go_suite({"BenchmarkGrow": {"B/op": (16, 24)}})), "B/op").comparisons
    assert (c.verdict, c.method) == ("higher", "sign test")
    assert c.change_pct == pytest.approx(50.0) and c.difference == 8.0
    assert c.comparison.pvalue_unadjusted == pytest.approx(2 * 0.5 ** ROUNDS)


def test_a_constant_change_within_the_threshold_is_higher_but_negligible():
    c, = table(analyse(go_suite({"BenchmarkTiny": {"B/op": (1000, 1001)}})), "B/op").comparisons
    assert c.verdict == "higher" and c.negligible and c.change_pct == pytest.approx(0.1)


def test_too_few_rounds_of_a_constant_change_stay_inconclusive_at_the_unit_s_level():
    # 2 * 0.5**5 = 0.0625 > 0.05: five rounds of 16 -> 24 do not reject
    run = go_suite({"BenchmarkGrow": {"B/op": (16, 24)}})
    short = run.replace(samples={k: s.select(np.arange(len(s)) < 5) for k, s in run.samples.items()})
    c, = table(analyse(short), "B/op").comparisons
    assert c.verdict == "inconclusive" and c.comparison.rounds == 5


def test_varying_positive_values_go_through_the_time_s_interval_and_verdict():
    rng = np.random.default_rng(4)
    base, cand = 1000 * np.exp(rng.normal(0, 0.01, (2, ROUNDS)))
    c, = table(analyse(go_suite({"BenchmarkVary": {"B/op": (base, cand * 1.2)}})), "B/op").comparisons
    assert (c.verdict, c.method) == ("higher", "ratio")
    effect = c.comparison.effect
    assert effect.method.startswith("anytime-valid") and effect.low > 15 and effect.high < 25
    assert c.change_pct == effect.estimate


def test_a_rate_is_worse_when_lower_and_a_count_when_higher():
    assert worse_verdict("MB/s") == "lower" and worse_verdict("bytes_per_second") == "lower"
    assert worse_verdict("B/op") == "higher" and worse_verdict("allocs/op") == "higher"


def test_a_rate_is_compared_as_reported_not_divided_by_the_iterations():
    c, = table(analyse(go_suite({"BenchmarkRate": {"MB/s": (100, 50)}})), "MB/s").comparisons
    assert (c.base_median, c.cand_median) == (100, 50)
    assert c.verdict == "lower"


def test_each_unit_is_its_own_holm_family_and_the_time_verdicts_do_not_change_with_metrics():
    rng = np.random.default_rng(2)
    ratio = rng.normal(0.004, 0.004, ROUNDS)
    plain = analyse(go_suite({"BenchmarkA": {}, "BenchmarkB": {}}, time_ratio=ratio))
    with_units = analyse(go_suite({"BenchmarkA": {"B/op": (16, 24), "allocs/op": (0, 1)},
                                   "BenchmarkB": {"B/op": (8, 8), "allocs/op": (1, 1)}}, time_ratio=ratio))
    assert [(c.pvalue, c.verdict) for c in plain.comparisons] == [(c.pvalue, c.verdict) for c in with_units.comparisons]
    b_op = table(with_units, "B/op").comparisons
    raw = [c.comparison.pvalue_unadjusted for c in b_op]
    np.testing.assert_allclose([c.comparison.pvalue for c in b_op], stats.holm(raw))
    assert {c.comparison.adjustment for c in b_op} == {"holm"}


def test_a_shard_s_unit_family_is_the_whole_suite_s():
    run = go_suite({"BenchmarkA": {"B/op": (16, 24)}})
    names = ["BenchmarkA", *(f"BenchmarkOther{i}" for i in range(9))]
    shard = run.replace(suite=shards.suite_record(names, (1, 2), "go"))
    assert table(analyse(shard), "B/op").family == 10


def test_go_results_stored_before_the_names_kept_per_op_read_as_b_op_and_allocs_op():
    run = go_suite({"BenchmarkA": {"B/op": (16, 24), "allocs/op": (1, 2), "widgets/op": (3, 3), "MB/s": (9, 9)}},
                   legacy=True)
    assert metric_units(run) == [("B", "B/op"), ("allocs", "allocs/op"), ("MB/s", "MB/s"), ("widgets", "widgets/op")]
    assert table(analyse(run), "B/op").comparisons[0].cand_median == 24.0


def test_the_methods_and_the_sign_test_on_their_own():
    assert method_of(np.array([0.0, 0.0]), np.array([0.0, 0.0])) == "equal"
    assert method_of(np.array([1.0, 2.0]), np.array([2.0, 4.0])) == "sign test"  # one ratio: no spread
    assert method_of(np.array([0.3, 0.7]), np.array([0.3, 0.7]) * 1.002) == "sign test"  # one ratio, rounded
    assert method_of(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == "ratio"
    assert method_of(np.array([0.0, 1.0]), np.array([1.0, 1.0])) == "sign test"
    up, down = np.array([0.0, 0.0, 1.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 0.0, 1.0])
    assert sign_test_pvalue(up, down) == pytest.approx(sps.binomtest(2, 3, 0.5).pvalue)
    assert sign_test_pvalue(up, up) == 1.0


def test_a_time_only_suite_has_no_metric_tables():
    assert analyse(go_suite({"BenchmarkA": {}, "BenchmarkB": {}})).metric_tables == ()


def test_pairbench_s_own_columns_are_not_units():
    # a worker's page faults and block, the validation share: what pairbench measured, not the harness
    own = {"minor_faults": (0, 3), "major_faults": (0, 1), "block": (1, 2), "validation": (0, 1), "cpu_ns": (5, 9)}
    assert analyse(go_suite({"BenchmarkA": own})).metric_tables == ()


def test_a_rounds_repetitions_give_its_b_op_by_the_median_as_its_time_and_the_repetition_is_no_unit():
    from pairbench.analysis.metrics import NOT_UNITS, paired_metric
    from pairbench.model import PRIMARY_METRIC, REPETITION_METRIC, Sample, Samples

    def side(bytes_per_rep):  # two rounds of three repetitions each, 10 iterations a repetition
        rows = [Sample(wall_ns=1000, pair=p, iterations=10) for p in (0, 0, 0, 1, 1, 1)]
        return Samples.from_rows(rows, {PRIMARY_METRIC: [1000] * 6, REPETITION_METRIC: [1, 2, 3] * 2,
                                        "B/op": bytes_per_rep})

    base, cand = paired_metric(side([160, 900, 170, 160, 160, 160]), side([240, 230, 9000, 240, 240, 240]),
                               "B/op", per_op=True)
    assert base.tolist() == [17.0, 16.0] and cand.tolist() == [24.0, 24.0]  # each round's median, per operation
    assert REPETITION_METRIC in NOT_UNITS


def test_criterion_s_samples_a_run_is_a_harness_setting_and_gets_no_table():
    # criterion reports how many samples it took, which pairbench asks for (--sample-size 10): a
    # setting, not a property of the code, so no "samples (higher is worse): 14 same" table
    run = go_suite({"itoa/u64": {"samples": (10, 10)}, "itoa/i8": {"samples": (10, 10), "widgets": (3, 4)}})
    criterion = run.replace(suite=shards.suite_record(["itoa/u64", "itoa/i8"], None, "criterion"))
    assert [unit for _, unit in metric_units(criterion)] == ["widgets"]
    assert [t.unit for t in analyse(criterion).metric_tables] == ["widgets"]
    imported = criterion.replace(suite=None, environment={"import": {"format": "criterion", "tool": "criterion"}})
    assert [unit for _, unit in metric_units(imported)] == ["widgets"]
    assert "samples" in [column for column, _ in metric_units(run)]  # another harness's counter of that name stays


def test_the_go_harness_name_the_metric_tables_test_for_is_the_go_harness_s():
    from pairbench.analysis import metrics
    from pairbench.measure.harnesses.gotest import NAME

    assert metrics.GO == NAME
