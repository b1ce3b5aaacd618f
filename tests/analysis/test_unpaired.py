"""``pairbench diff``: two saved results compared per benchmark without pairs (Hodges-Lehmann on log
values with the rank-sum interval, Mann-Whitney, Holm), always with the not-paired caveat."""

from __future__ import annotations

import numpy as np
import pytest
from runs import make_run, series, side

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
