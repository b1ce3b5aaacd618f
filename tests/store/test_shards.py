"""Shards: every machine computes the same deterministic split of a suite, balanced by name or by the
time each benchmark took before."""

from __future__ import annotations

import itertools

import pytest
from runs import make_run, series, side

from pairbench.model import BenchmarkKey
from pairbench.store import shards

NAMES = [f"BM_{c}" for c in "qwertyuiopasdfghjklzxcvbnm"]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_shards_by_name_cover_the_suite_once_and_differ_in_size_by_one_at_most(n):
    parts = [shards.select(NAMES, k, n) for k in range(1, n + 1)]
    assert sorted(itertools.chain(*parts)) == sorted(NAMES)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    for part in parts:  # each keeps the suite's order
        assert part == [name for name in NAMES if name in part]


def test_the_split_does_not_depend_on_the_order_a_machine_lists_the_suite_in():
    assert set(shards.select(NAMES, 2, 3)) == set(shards.select(list(reversed(NAMES)), 2, 3))
    assert shards.digest(NAMES) == shards.digest(list(reversed(NAMES)))
    assert shards.digest(NAMES) != shards.digest(NAMES[:-1])


def test_shards_by_time_put_the_longest_first_each_on_the_lightest_shard():
    times = {"a": 10.0, "b": 9.0, "c": 6.0, "d": 5.0, "e": 4.0, "f": 1.0}
    one, two = (shards.select(list(times), k, 2, times) for k in (1, 2))
    assert set(one) == {"a", "d", "e"} and set(two) == {"b", "c", "f"}  # loads 19 and 16


def test_a_benchmark_the_earlier_result_lacks_counts_the_median_time():
    times = {"a": 10.0, "b": 2.0, "c": 4.0}
    parts = [shards.select(["a", "b", "c", "new"], k, 2, times) for k in (1, 2)]
    assert parts == [["a"], ["b", "c", "new"]]  # new counts 4: a | c 4, new 4, b 2


def test_the_time_each_benchmark_took_is_read_from_its_first_sample_to_its_last():
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], {
        (0, 0): series([10, 10], start_ns=[0, 100]), (0, 1): series([10, 10], start_ns=[50, 200]),
        (1, 0): series([5], start_ns=[1000]),
    }, benchmarks=[BenchmarkKey("a"), BenchmarkKey("b")])
    assert shards.measuring_times(run) == {"a": 210.0, "b": 5.0}


def test_a_shard_that_does_not_exist_is_refused():
    with pytest.raises(ValueError):
        shards.select(NAMES, 4, 3)
