"""The figures of benchmarks/perturbation.py: which samples are early and late, and their ratio."""

from __future__ import annotations

import math

import pytest
from scripts import benchmark_script


@pytest.fixture(scope="module")
def study():
    return benchmark_script("perturbation")


def test_early_is_the_first_one_and_a_half_seconds_and_late_from_three_on(study):
    first = 7_000_000_000  # start times count from the first sample, whatever the run's origin
    rows = [(first + int(t * 1e9), wall, 10) for t, wall in
            [(0.0, 30), (1.0, 32), (1.49, 34), (1.5, 99), (2.9, 99), (3.0, 20), (4.0, 21), (5.0, 22)]]
    found = study.early_late(rows)
    assert (found["n_early"], found["n_late"]) == (3, 3)
    assert (found["early"], found["late"], found["ratio"]) == (32, 21, pytest.approx(32 / 21))
    assert found["early_cpu"] == found["late_cpu"] == 10


def test_a_run_too_short_for_a_late_window_has_no_ratio(study):
    found = study.early_late([(0, 30, 10), (1_000_000_000, 31, 10)])
    assert found["n_late"] == 0 and math.isnan(found["ratio"])
    assert math.isnan(study.early_late([])["ratio"])


def test_each_block_takes_the_tools_in_a_rotated_order(study):
    assert [study.rotated(["a", "b", "c"], k) for k in range(4)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
