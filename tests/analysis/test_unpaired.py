"""``pairbench diff``: two saved results compared per benchmark without pairs (Hodges-Lehmann on log
values with the rank-sum interval, Mann-Whitney, Holm), always with the not-paired caveat."""

from __future__ import annotations

import numpy as np
import pytest
from runs import make_run, series, side
from scipy import stats as sps

from pairbench import stats
from pairbench.analysis.unpaired import diff_runs
from pairbench.model import BenchmarkKey


def saved(values: dict[str, np.ndarray], name: str = "build", started: str = "2026-11-24T00:00:00+00:00",
          host: str = "ci-1"):
    samples = {(b, 0): series(v, pairs=[-1] * len(v)) for b, v in enumerate(values.values())}
    run = make_run("run", [side(name)], samples, benchmarks=[BenchmarkKey(n) for n in values])
    return run.replace(started_at=started, environment={"host": host})


def test_a_ten_percent_slowdown_between_two_saved_runs_is_found_with_the_shift_of_the_log_times():
    rng = np.random.default_rng(7)
    old = {"BM_a": np.floor(1e6 * rng.lognormal(0, 0.02, 40)), "BM_b": np.floor(5e5 * rng.lognormal(0, 0.02, 40))}
    new = {"BM_a": np.floor(1.1e6 * rng.lognormal(0, 0.02, 40)), "BM_b": np.floor(5e5 * rng.lognormal(0, 0.02, 40))}
    diff = diff_runs(saved(old), saved(new), alpha=0.01, threshold=1.0)
    a, b = diff.differences
    assert a.verdict.verdict == "slower" and 8 < a.change_pct < 12
    hl = stats.hodges_lehmann(np.log(new["BM_a"]), np.log(old["BM_a"]), 1 - 0.01 / 2)
    assert a.change_pct == pytest.approx(100 * np.expm1(hl.estimate))
    assert a.low_pct == pytest.approx(100 * np.expm1(hl.low)) and a.confidence == pytest.approx(0.995)
    assert b.verdict.verdict != "slower"
    raw = [stats.mann_whitney(new[k], old[k]).pvalue for k in ("BM_a", "BM_b")]
    np.testing.assert_allclose([d.pvalue for d in diff.differences], stats.holm(raw))


def test_every_diff_says_first_that_the_runs_were_not_paired_and_on_which_machines():
    values = {"BM_a": np.linspace(1, 2, 10)}
    diff = diff_runs(saved(values, host="ci-1"), saved(values, started="2026-11-25T00:00:00+00:00", host="ci-2"),
                     alpha=0.01, threshold=1.0)
    (caveat,) = diff.notes
    assert caveat.code == "runs-not-paired"
    assert caveat.data == {"old_started": "2026-11-24T00:00:00+00:00", "new_started": "2026-11-25T00:00:00+00:00",
                           "old_host": "ci-1", "new_host": "ci-2"}


def test_benchmarks_on_one_side_only_are_listed_and_runs_of_several_sides_match_by_side():
    old = saved({"BM_a": np.linspace(1, 2, 10), "BM_gone": np.linspace(1, 2, 10)})
    new = saved({"BM_a": np.linspace(1, 2, 10), "BM_new": np.linspace(1, 2, 10)})
    diff = diff_runs(old, new, alpha=0.01, threshold=1.0)
    assert [d.benchmark.name for d in diff.differences] == ["BM_a"]
    assert (diff.only_old, diff.only_new) == (("BM_gone",), ("BM_new",))


def test_too_few_samples_give_no_verdict_and_say_how_many_are_needed():
    diff = diff_runs(saved({"BM_a": np.array([1.0, 2.0, 3.0])}), saved({"BM_a": np.array([1.0, 2.0, 3.0])}),
                     alpha=0.01, threshold=1.0)
    (d,) = diff.differences
    assert d.verdict.refused and d.verdict.refusal.data == {"needed": 4, "got": 3, "purpose": "unpaired-interval"}


def saved_with_units(counts: dict[str, dict[str, np.ndarray]], iterations: int = 100):
    """BM_* benchmarks of 1 ms with these harness metrics per operation (stored, as Go's, as totals)."""
    rng = np.random.default_rng(9)
    samples = {(b, 0): series(np.floor(1e6 * iterations * rng.lognormal(0, 0.01, 12)), pairs=[-1] * 12,
                              iterations=iterations,
                              metrics={unit: np.asarray(v, dtype=np.int64) * iterations for unit, v in units.items()})
               for b, units in enumerate(counts.values())}
    return make_run("run", [side("build")], samples, benchmarks=[BenchmarkKey(n) for n in counts])


def test_a_harness_unit_in_both_results_gets_its_own_table_with_its_own_holm_family():
    rng = np.random.default_rng(3)
    old_bytes, new_bytes = 1000 + rng.integers(0, 50, 12), 1300 + rng.integers(0, 50, 12)
    old = saved_with_units({"BM_same": {"allocs/op": [2] * 12}, "BM_more": {"allocs/op": [1] * 12, "B/op": old_bytes}})
    new = saved_with_units({"BM_same": {"allocs/op": [2] * 12}, "BM_more": {"allocs/op": [3] * 12, "B/op": new_bytes}})
    diff = diff_runs(old, new, alpha=0.01, threshold=1.0)
    assert [(u.unit, u.worse, len(u.differences)) for u in diff.units] == [("B/op", "higher", 1), ("allocs/op",
                                                                                                  "higher", 2)]
    (more_bytes,), (same, more) = diff.units[0].differences, diff.units[1].differences
    hl = stats.hodges_lehmann(np.log(new_bytes.astype(float)), np.log(old_bytes.astype(float)), 1 - 0.01)
    assert more_bytes.verdict.verdict == "slower" and more_bytes.change_pct == pytest.approx(100 * np.expm1(hl.estimate))
    assert (same.method, same.verdict.verdict, same.pvalue) == ("equal", "equivalent", 1.0)
    # one count on each side: no interval, so the Mann-Whitney test (scipy's, with the tie correction)
    # decides; Holm over the two allocs/op comparisons, the equal one's p of 1 counted
    reference = sps.mannwhitneyu([3] * 12, [1] * 12, alternative="two-sided", method="asymptotic").pvalue
    assert more.method == "test" and more.verdict.verdict == "slower" and more.change_pct == pytest.approx(200.0)
    assert more.pvalue == pytest.approx(min(1.0, 2 * reference))
    assert [d.benchmark.unit for d in diff.differences] == ["ns", "ns"]


def test_a_unit_that_is_zero_in_some_samples_is_judged_by_its_ranks_not_refused():
    old = saved_with_units({"BM_a": {"allocs/op": [0] * 10 + [1] * 2}})
    new = saved_with_units({"BM_a": {"allocs/op": [0] * 2 + [1] * 10}})
    (fewer,) = diff_runs(new, old, alpha=0.05, threshold=1.0).units[0].differences
    (more,) = diff_runs(old, new, alpha=0.05, threshold=1.0).units[0].differences
    assert (more.method, more.verdict.verdict, fewer.verdict.verdict) == ("test", "slower", "faster")
    assert more.change_pct is None and (more.old_median, more.new_median) == (0.0, 1.0)
