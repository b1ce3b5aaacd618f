"""A benchmark's history: points per commit, steps with their size and interval, what confirm found."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pairbench.analysis.history import (
    Point,
    benchmark_history,
    clipped,
    detect,
    group_change_points,
    points_of,
)
from pairbench.model import BenchmarkKey
from pairbench.store.history import Confirmation, Series, StoredBenchmark

KEY = BenchmarkKey("parse")


def _points(values, commits=None) -> list[Point]:
    commits = commits or [f"{k:040x}" for k in range(len(values))]
    return [Point(c, f"2026-02-01T00:{k // 60:02d}:{k % 60:02d}+00:00", "main", False, "", 1, float(v), None, None,
                  (f"u{k}",)) for k, (c, v) in enumerate(zip(commits, values, strict=True))]


def _noisy(levels_and_lengths, sd=0.01, seed=1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.concatenate([np.full(n, level) for level, n in levels_and_lengths])
    return values * np.exp(rng.normal(0, sd, values.size))


def test_a_10_percent_step_is_found_at_its_commit_with_an_interval_around_its_size():
    values = _noisy([(1e6, 60), (1.1e6, 40)])
    history = benchmark_history(KEY, _points(values))
    [step] = history.steps
    assert step.index == 60 and step.before == f"{59:040x}" and step.after == f"{60:040x}"
    assert step.low < 10.0 < step.high and abs(step.change - 10.0) < 1.0
    assert step.status == "unconfirmed" and history.noise == pytest.approx(0.01, rel=0.25)


def test_noise_alone_makes_no_step_and_one_wild_result_makes_none_either():
    values = _noisy([(1e6, 300)], seed=3)
    values[150] *= 1.5
    assert benchmark_history(KEY, _points(values)).steps == ()


def test_clipping_keeps_a_step_and_bounds_an_outlier():
    z = np.concatenate([np.zeros(10), np.full(10, 20.0)])
    z[3] = 100.0
    c = clipped(z)
    assert c[3] == pytest.approx(3.0) and np.all(c[10:] == 20.0) and np.all(c[:3] == 0.0)


def test_too_short_a_history_has_no_steps():
    assert detect(np.log([1.0, 2.0, 3.0, 4.0, 5.0])) == ((), None)


def test_a_constant_history_has_no_steps():
    assert detect(np.zeros(50)) == ((), 0.0)


def _confirmation(before, after, status, verdict) -> Confirmation:
    return Confirmation(1, before, after, status, verdict, 9.0, 8.0, 10.0, None, "2026-03-01T00:00:00+00:00")


@pytest.mark.parametrize(("status", "verdict", "shown"), [
    ("confirmed", "slower", "confirmed"),
    ("confirmed", "faster", "rejected"),  # a change the other way is not this step
    ("rejected", "equivalent", "rejected"),
    ("inconclusive", "inconclusive", "unconfirmed"),
])
def test_a_step_shows_what_confirm_found_of_it(status, verdict, shown):
    points = _points(_noisy([(1e6, 30), (1.1e6, 30)]))
    history = benchmark_history(KEY, points, [_confirmation(f"{29:040x}", f"{30:040x}", status, verdict)])
    assert history.steps[0].status == shown


def test_a_confirmation_of_a_wider_range_of_commits_covers_the_step_inside_it():
    points = _points(_noisy([(1e6, 30), (1.1e6, 30)]))
    wide = _confirmation(f"{20:040x}", f"{40:040x}", "confirmed", "slower")
    elsewhere = _confirmation(f"{40:040x}", f"{50:040x}", "rejected", "equivalent")
    assert benchmark_history(KEY, points, [wide]).steps[0].status == "confirmed"
    assert benchmark_history(KEY, points, [elsewhere]).steps[0].status == "unconfirmed"


def test_steps_of_several_benchmarks_between_the_same_commits_are_one_change_point():
    values = _noisy([(1e6, 30), (1.1e6, 30)])
    parse = benchmark_history(KEY, _points(values))
    sort = benchmark_history(BenchmarkKey("sort"), _points(_noisy([(5e5, 30), (4.5e5, 30)], seed=2)))
    [change_point] = group_change_points([parse, sort])
    assert change_point.benchmarks == (KEY, BenchmarkKey("sort"))
    assert change_point.steps[1].change < 0 < change_point.steps[0].change


def _series(commits, medians, dirty=None) -> Series:
    n = len(commits)
    return Series(StoredBenchmark(1, KEY), tuple(f"u{i}" for i in range(n)), tuple(commits),
                  tuple(f"2026-02-01T00:00:0{i}+00:00" if c else None for i, c in enumerate(commits)),
                  ("main",) * n, tuple(dirty or [False] * n), tuple(f"2026-03-01T00:00:0{i}" for i in range(n)),
                  np.array(medians, dtype=float), np.array(medians, dtype=float) * 0.99,
                  np.array(medians, dtype=float) * 1.01, np.full(n, 9))


def test_results_of_one_commit_are_one_point_and_a_dirty_tree_or_no_commit_its_own():
    series = _series(["a", "a", "a", "b", None, None], [1.0, 3.0, 2.0, 5.0, 6.0, 7.0],
                     dirty=[False, False, True, False, False, False])
    points = points_of(series)
    assert [(p.commit, p.dirty, p.results, p.median) for p in points] == [
        ("a", False, 2, 2.0), ("a", True, 1, 2.0), ("b", False, 1, 5.0), (None, False, 1, 6.0),
        (None, False, 1, 7.0)]
    assert points[0].low == pytest.approx(0.99) and points[0].high == pytest.approx(3.03)


def test_a_commit_measured_again_after_later_commits_joins_its_own_point():
    """The store orders results by committer time, then start: ``confirm``'s later result of "b"
    (the same committer time as "c") comes last, and still belongs to b's point."""
    series = _series(["a", "b", "c", "b"], [1.0, 2.0, 3.0, 4.0])
    points = points_of(series)
    assert [(p.commit, p.results, p.median) for p in points] == [("a", 1, 1.0), ("b", 2, 3.0), ("c", 1, 3.0)]
    assert points[1].result_uids == ("u1", "u3") and points[1].started_at == "2026-03-01T00:00:03"


def test_a_result_without_a_successful_sample_is_no_point():
    assert [p.commit for p in points_of(_series(["a", "b"], [math.nan, 2.0]))] == ["b"]
