"""The search of ``pairbench bisect`` with scripted comparisons: which pair comes next, how alpha is
split, what each outcome says, and the answer. No measuring: each comparison's interval is
scripted from a true change per commit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pairbench.analysis.bisection import Pair, Search, most_comparisons
from pairbench.analysis.criteria import Boundary
from pairbench.analysis.records import Effect


def effect(estimate: float, half_width: float) -> Effect:
    return Effect(estimate, estimate - half_width, estimate + half_width, 0.99, "scripted", 0.5, "scripted", 100)


def run(search: Search, truth, half_width: float = 0.5, names=("b",), undecided=()):
    """Measure every pair the search asks for: the true change of cand against base (percent,
    ``truth[name][commit]``) with an interval of ``half_width`` around it (``undecided``: pairs
    whose interval is as wide as the step, so it decides nothing)."""
    while (pair := search.next()) is not None:
        wide = (pair.base, pair.cand) in undecided
        effects = {name: effect(truth[name][pair.cand] - truth[name][pair.base], 50.0 if wide else half_width)
                   for name in names}
        search.record(pair, effects)
    return search.answer()


def step_at(position: int, n: int, size: float = 3.0) -> list[float]:
    """A true change per commit 0..n against GOOD: 0 before ``position``, ``size`` from it on."""
    return [size if c >= position else 0.0 for c in range(n + 1)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 63, 64, 100])
def test_a_single_step_is_found_at_every_position_within_the_bound(n):
    for position in range(1, n + 1):
        search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
        answer = run(search, {"b": step_at(position, n)})
        assert (answer.kind, answer.commit, answer.first, answer.last) == ("found", position, position, position)
        assert len(search.trials) <= most_comparisons(n)
        assert answer.benchmarks == ("b",)


@pytest.mark.parametrize(("n", "bound"), [(1, 1), (2, 3), (3, 4), (4, 4), (63, 8), (64, 8), (65, 9), (1000, 12)])
def test_the_most_comparisons_is_one_for_the_step_log2_n_to_narrow_and_one_for_the_ends(n, bound):
    assert most_comparisons(n) == bound == (1 if n == 1 else math.ceil(math.log2(n)) + 2)


def test_alpha_is_split_evenly_over_the_most_comparisons_the_search_can_make():
    search = Search([f"c{k}" for k in range(65)], alpha=0.01, threshold=1.0)
    assert search.limit == 8 and search.level == pytest.approx(0.01 / 8)


def test_64_commits_take_exactly_eight_comparisons_when_each_decides():
    search = Search([f"c{k}" for k in range(64)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": step_at(40, 63)})
    assert answer.commit == 40
    assert [t.pair.purpose for t in search.trials] == ["step", *["middle"] * 6, "ends"]
    assert [t.pair for t in search.trials[:3]] == [Pair(0, 63, "step"), Pair(0, 31, "middle"), Pair(0, 47, "middle")]
    assert search.trials[-1].pair == Pair(39, 40, "ends")


def test_middles_are_compared_with_good_and_the_ends_with_each_other():
    search = Search([f"c{k}" for k in range(9)], alpha=0.01, threshold=1.0)
    run(search, {"b": step_at(6, 8)})
    assert all(t.pair.base == 0 for t in search.trials if t.pair.purpose in ("step", "middle"))
    assert search.trials[-1].pair == Pair(5, 6, "ends")


def test_a_step_right_after_good_needs_no_comparison_of_the_ends():
    search = Search([f"c{k}" for k in range(9)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": step_at(1, 8)})
    assert answer.commit == 1 and all(t.pair.purpose != "ends" for t in search.trials)


def test_the_step_sets_each_benchmarks_boundary_at_a_quarter_of_its_estimate():
    search = Search(["g", "x", "b"], alpha=0.01, threshold=1.0)
    assert search.boundaries() == Boundary(1.0, 0.5)
    search.record(Pair(0, 2, "step"), {"b": effect(4.0, 1.0)})
    assert search.boundaries()["b"].at == pytest.approx(100 * (1.04 ** 0.25 - 1), rel=1e-12)  # a quarter of ln 1.04


def test_a_step_known_only_within_more_than_a_factor_of_two_is_no_step_yet():
    search = Search(["g", "x", "b"], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 2, "step"), {"b": effect(4.0, 2.5)})  # [1.5, 6.5]: low below half of 4
    answer = search.answer()
    assert search.next() is None
    assert (answer.kind, answer.why, answer.first, answer.last) == ("inconclusive", "no-step", 1, 2)


def test_bad_no_slower_than_the_threshold_is_no_slowdown():
    search = Search(["g", "x", "b"], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 2, "step"), {"b": effect(0.1, 0.5)})
    assert search.answer().kind == "no-slowdown" and search.next() is None


def test_an_undecided_middle_ends_the_narrowing_and_the_ends_say_where_the_step_lies():
    n = 16
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": step_at(11, n)}, undecided={(0, 12)})
    # 8 like GOOD, then 12 could not decide: the ends 8 and 16 are compared
    assert [t.pair for t in search.trials] == [Pair(0, 16, "step"), Pair(0, 8, "middle"), Pair(0, 12, "middle"),
                                               Pair(8, 16, "ends")]
    assert (answer.kind, answer.first, answer.last, answer.why, answer.at) == ("inconclusive", 9, 16, "undecided", 3)
    assert answer.commit is None


def test_an_undecided_comparison_of_adjacent_ends_names_no_commit():
    search = Search([f"c{k}" for k in range(5)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": step_at(3, 4)}, undecided={(2, 3)})
    assert (answer.kind, answer.first, answer.last, answer.commit) == ("inconclusive", 3, 3, None)


def test_a_drift_is_spread_over_the_commits_not_pinned_on_one():
    n = 33
    drift = [3.0 * (c / n) ** 2 for c in range(n + 1)]  # passes a quarter of the step between 16 and 17
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": drift}, half_width=0.02)
    assert (answer.kind, answer.commit, answer.first, answer.last) == ("spread", None, 1, n)
    assert search.trials[-1].pair == Pair(16, 17, "ends")


def test_a_drift_with_a_commit_at_a_quarter_of_the_step_is_inconclusive_over_what_remains():
    n = 32
    drift = [3.0 * c / n for c in range(n + 1)]  # commit 8 is exactly a quarter of the step: never decided
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": drift}, half_width=0.2)
    assert (answer.kind, answer.commit, answer.first, answer.last, answer.at) == ("inconclusive", None, 1, 16, 3)


def test_of_two_half_steps_the_first_is_named_as_where_the_slowdown_passes_a_quarter_of_it():
    n = 20
    truth = [0.0 if c < 7 else 1.5 if c < 14 else 3.0 for c in range(n + 1)]
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": truth}, half_width=0.1)
    assert (answer.kind, answer.commit) == ("found", 7)


def test_five_steps_of_a_fifth_are_spread_not_one_commit():
    n = 20
    truth = [0.36 * sum(c >= k for k in (4, 8, 12, 16, 20)) for c in range(n + 1)]  # 1.8% in all
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, {"b": truth}, half_width=0.05)
    assert answer.kind in ("spread", "inconclusive") and answer.commit is None


def test_a_commit_that_does_not_build_is_skipped_for_the_nearest_that_does():
    search = Search([f"c{k}" for k in range(9)], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 8, "step"), {"b": effect(3.0, 0.5)})
    assert search.next() == Pair(0, 4, "middle")
    search.skip(4)
    assert search.next() == Pair(0, 3, "middle")
    search.skip(3)
    assert search.next() == Pair(0, 5, "middle")


def test_when_every_commit_between_the_ends_fails_to_build_the_range_is_returned():
    search = Search([f"c{k}" for k in range(5)], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 4, "step"), {"b": effect(3.0, 0.5)})
    search.record(Pair(0, 2, "middle"), {"b": effect(0.0, 0.5)})
    search.skip(3)
    assert search.next() == Pair(2, 4, "ends")
    search.record(Pair(2, 4, "ends"), {"b": effect(3.0, 0.5)})
    answer = search.answer()
    assert (answer.kind, answer.first, answer.last, answer.why) == ("inconclusive", 3, 4, "unbuildable")


def test_good_and_bad_cannot_be_skipped():
    search = Search(["g", "x", "b"], alpha=0.01, threshold=1.0)
    with pytest.raises(ValueError, match="GOOD and BAD"):
        search.skip(2)


def test_a_spent_budget_returns_the_range_that_remains_inconclusive():
    search = Search([f"c{k}" for k in range(17)], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 16, "step"), {"b": effect(3.0, 0.5)})
    search.record(Pair(0, 8, "middle"), {"b": effect(3.0, 0.5)})
    search.stop("budget")
    answer = search.answer()
    assert search.next() is None
    assert (answer.kind, answer.first, answer.last, answer.why, answer.commit) == ("inconclusive", 1, 8, "budget",
                                                                                  None)


def test_a_budget_spent_before_anything_was_measured_returns_every_commit():
    search = Search([f"c{k}" for k in range(5)], alpha=0.01, threshold=1.0)
    search.stop()
    assert (search.answer().kind, search.answer().first, search.answer().last) == ("inconclusive", 1, 4)


def test_recording_another_pair_than_the_one_asked_for_is_refused():
    search = Search([f"c{k}" for k in range(5)], alpha=0.01, threshold=1.0)
    with pytest.raises(ValueError, match="asked for"):
        search.record(Pair(0, 2, "middle"), {"b": effect(3.0, 0.5)})


def test_with_several_benchmarks_the_search_follows_the_first_step_and_names_who_made_it():
    n = 16
    truth = {"a": step_at(5, n), "b": step_at(12, n), "flat": [0.0] * (n + 1)}
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    answer = run(search, truth, names=("a", "b", "flat"))
    assert (answer.kind, answer.commit, answer.benchmarks) == ("found", 5, ("a",))
    assert set(search.steps) == {"a", "b"}  # "flat" had no step: not measured against a boundary after


def test_a_benchmark_without_an_interval_decides_nothing():
    search = Search(["g", "x", "b"], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 2, "step"), {"b": effect(3.0, 0.5)})
    search.record(Pair(0, 1, "middle"), {"b": None})
    answer = search.answer()
    assert (answer.kind, answer.first, answer.last) == ("inconclusive", 1, 2)


@pytest.mark.parametrize(("low", "high", "side"), [(1.6, 4.0, "above"), (-1.0, 1.4, "below"), (1.0, 2.0, "inconclusive")])
def test_a_boundary_decides_by_where_the_interval_lies(low, high, side):
    found = Effect((low + high) / 2, low, high, 0.99, "m", 0.1, "m", 50)
    assert Boundary(1.5).side(found) == side


def test_a_step_boundary_needs_the_interval_above_half_its_own_estimate():
    assert Boundary(1.0, 0.5).side(Effect(4.0, 1.9, 6.0, 0.99, "m", 0.1, "m", 50)) == "inconclusive"
    assert Boundary(1.0, 0.5).side(Effect(4.0, 2.1, 6.0, 0.99, "m", 0.1, "m", 50)) == "above"
    assert Boundary(1.0, 0.5).side(Effect(0.2, -0.5, 0.9, 0.99, "m", 0.1, "m", 50)) == "below"


def test_an_interval_that_moved_decides_nothing():
    moved = Effect(3.0, 2.0, 4.0, 0.99, "m", 0.1, "m", 50, moved=True)
    assert Boundary(1.0).side(moved) == "inconclusive" and Boundary(1.0).side(None) == "inconclusive"


def test_wrong_commits_are_named_at_most_alpha_of_the_time_when_intervals_miss_at_their_level():
    """A seeded simulation of the union bound: each interval misses its true change with
    probability exactly its level (alpha / K, on a random side); a wrong commit is named in at most
    alpha of 4000 searches (Monte-Carlo error about 0.002 at alpha 0.05)."""
    from scipy.stats import norm

    rng = np.random.default_rng(20261126)
    alpha, n, trials, wrong = 0.05, 63, 4000, 0
    for _ in range(trials):
        position = int(rng.integers(1, n + 1))
        truth = step_at(position, n)
        search = Search([f"c{k}" for k in range(n + 1)], alpha=alpha, threshold=1.0)
        z = norm.ppf(1 - search.level / 2)
        while (pair := search.next()) is not None:
            true = truth[pair.cand] - truth[pair.base]
            estimate = true + float(rng.normal(0.0, 1.0))  # SD 1%: a 3% step is 3 SD
            search.record(pair, {"b": Effect(estimate, estimate - z, estimate + z, 1 - search.level, "sim",
                                             0.5, "sim", 30)})
        answer = search.answer()
        wrong += answer.kind == "found" and answer.commit != position
    assert wrong / trials <= alpha


def test_a_middle_commit_without_a_stepped_benchmark_is_to_be_skipped_unless_another_lies_above():
    search = Search([f"c{k}" for k in range(9)], alpha=0.01, threshold=1.0)
    search.record(Pair(0, 8, "step"), {"a": effect(3.0, 0.5), "b": effect(3.0, 0.5)})
    middle = search.next()
    assert middle == Pair(0, 4, "middle")
    assert search.lacking(middle, {"a": effect(0.0, 0.5)}) == ("b",)  # a is like GOOD: b decides
    assert search.lacking(middle, {"a": effect(3.0, 0.5)}) == ()  # a is slower by the step: hi = 4
    assert search.lacking(middle, {"a": effect(0.0, 0.5), "b": None}) == ()  # measured, no interval
    assert search.lacking(Pair(0, 8, "ends"), {"a": effect(0.0, 0.5)}) == ()


@pytest.mark.parametrize("position", [1, 17, 40, 63])
def test_a_step_seen_at_less_than_half_its_first_size_later_is_still_found_not_spread(position):
    # Load scales the step between comparisons: the step comparison sees 3% x 1.4, every later one
    # 3% x 0.6. With the boundary at half the first estimate (2.1%), a middle after the step lay
    # below it, the search moved past the step and answered "spread"; at a quarter it does not.
    n = 63
    search = Search([f"c{k}" for k in range(n + 1)], alpha=0.01, threshold=1.0)
    truth = step_at(position, n)
    while (pair := search.next()) is not None:
        scale = 1.4 if pair.purpose == "step" else 0.6
        search.record(pair, {"b": effect(scale * (truth[pair.cand] - truth[pair.base]), 0.3)})
    answer = search.answer()
    assert (answer.kind, answer.commit) == ("found", position)
