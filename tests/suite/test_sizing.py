"""Power-of-two brackets of rounds from the pilot, and a suite's budget shared as it is spent."""

from __future__ import annotations

from pairbench.sessions.sizing import SuiteBudget, bracket


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
