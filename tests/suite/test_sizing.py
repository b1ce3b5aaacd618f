"""Power-of-two brackets of rounds from the pilot, and a suite's budget shared as it is spent."""

from __future__ import annotations

from pairbench.sessions.sizing import HOPELESS, Spending, SuiteBudget, bracket


def test_the_bracket_is_the_power_of_two_of_rounds_nearest_to_what_fits_the_budget():
    assert bracket(5_000_000_000, 40_000_000, 10) == 128  # 125 rounds fit
    assert bracket(5_000_000_000, 56_000_000, 10) == 64  # 89.3 fit: below 64 x 1.41
    assert bracket(5_000_000_000, 52_000_000, 10) == 128  # 96.2 fit: above 64 x 1.41


def test_pilots_a_little_apart_land_in_the_same_bracket():
    assert {bracket(5_000_000_000, cost, 10) for cost in (36_000_000, 40_000_000, 44_000_000)} == {128}


def test_the_bracket_is_at_least_min_runs_and_at_most_max_runs():
    assert bracket(1_000_000_000, 100_000_000, 32) == 32
    assert bracket(10_000_000_000, 1_000_000, 32, max_runs=500) == 500


def test_no_bracket_when_it_would_stop_before_a_verdict_is_possible_or_nothing_sizes_it():
    assert bracket(1_000_000_000, 60_000_000, 10, first_verdict=19) is None  # 16 < 19: time decides
    assert bracket(1_000_000_000, 60_000_000, 10, max_runs=300, first_verdict=19) == 300
    assert bracket(None, 40_000_000, 10) is None
    assert bracket(5_000_000_000, 0, 10) is None


class Clock:
    def __init__(self):
        self.now = 0

    def __call__(self) -> int:
        return self.now


def test_without_a_suite_budget_every_benchmark_gets_the_per_benchmark_budget():
    budget = SuiteBudget(None, 5_000, 3, 1, clock=Clock())
    assert [budget.next() for _ in range(3)] == [(True, 5_000)] * 3


def test_a_suite_budget_is_shared_by_the_benchmarks_left_and_left_over_time_goes_to_the_rest():
    clock = Clock()
    budget = SuiteBudget(90, None, 3, 1, clock=clock)
    assert budget.next() == (True, 30)
    clock.now = 10  # the first decided early: 80 left for two
    assert budget.next() == (True, 40)
    clock.now = 90
    assert budget.next() == (False, None)


def test_jobs_share_a_suite_budget_in_parallel_and_the_per_benchmark_budget_caps_a_share():
    budget = SuiteBudget(100, 30, 4, 2, clock=Clock())
    assert budget.next() == (True, 30)  # 100 x 2 jobs / 4 = 50, capped at 30
    assert SuiteBudget(100, None, 4, 2, clock=Clock()).next() == (True, 50)


# --------------------------------------------------------------------------- what a benchmark spends


def spending(needed, *, bracket_rounds=64, limit=1_000, spare=0, decided=None):
    """A Spending whose stopping rule says ``decided`` and whose rounds-needed estimate is ``needed``,
    in a suite that has ``spare`` to give."""
    budget = SuiteBudget(None, limit, 2, 1, clock=Clock())
    budget.next()
    budget.spent(limit - spare)  # the first benchmark saved ``spare``
    budget.next()
    return Spending(lambda: decided, lambda: needed, bracket_rounds, limit, budget)


def test_a_benchmark_without_time_saved_elsewhere_stops_at_its_bracket():
    rule = spending(10)
    assert rule(32, 500) is None
    assert rule(64, 1_000) == "reached its bracket of 64 rounds"


def test_a_verdict_within_one_doubling_gets_the_rounds_other_benchmarks_saved():
    rule = spending(40, spare=900)  # 40 more rounds of 15.6 cost 625
    assert rule(64, 1_000) is None and (rule.bracket, rule.limit_ns) == (128, 1_625)
    assert rule(100, 1_500) is None
    assert rule(128, 1_625) == "reached its bracket of 128 rounds"  # 275 left to spare, 508 needed


def test_no_more_rounds_for_a_verdict_further_than_one_doubling_or_than_the_time_saved():
    assert spending(100, spare=10_000)(64, 1_000) == "reached its bracket of 64 rounds"
    assert spending(40, spare=300)(64, 1_000) == "reached its bracket of 64 rounds"


def test_its_own_time_left_pays_for_more_rounds_when_its_bracket_ends_first():
    rule = spending(10, spare=0)
    assert rule(64, 640) is None and rule.bracket == 128  # 360 of its own 1,000 left; 100 needed


def test_a_benchmark_no_budget_would_decide_stops_early_and_says_why():
    ties = spending(HOPELESS, bracket_rounds=256, limit=10_000)
    assert ties(16, 160) == "stopped early: no budget it could get would decide it (more rounds would not decide it)"
    far = spending(20_000, bracket_rounds=256, limit=10_000)  # 200,000 needed, 2,400 it may still get
    assert far(15, 150) is None and far(16, 160).startswith("stopped early") and "about 20000 more" in far(32, 320)
    near = spending(100, bracket_rounds=256, limit=10_000)
    assert near(16, 160) is None and near(32, 320) is None


def test_a_decided_verdict_stops_it_whatever_its_budget():
    assert spending(None, decided="the verdict was decided (slower)")(12, 100) == "the verdict was decided (slower)"


def test_an_estimate_not_known_yet_neither_extends_nor_stops():
    rule = spending(None, spare=10_000)
    assert rule(32, 320) is None and rule(64, 640) == "reached its bracket of 64 rounds"


def test_with_a_suite_budget_the_time_left_beyond_what_later_benchmarks_are_due_is_spare():
    clock = Clock()
    budget = SuiteBudget(100, 20, 3, 1, clock=clock)
    budget.next()
    clock.now = 10
    assert budget.spare_ns() == 100 - 10 - 2 * 20
