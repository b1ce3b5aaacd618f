"""Runs for the store's tests: two sides of one benchmark, or two benchmarks with a float metric."""

from __future__ import annotations

from runs import make_run, series, side

from pairbench.model import BenchmarkKey
from pairbench.notes import Note, Subject


def stored_run(n=5, state="complete", **changes):
    sides = (side("a", "baseline"), side("b", "candidate"))
    samples = {(0, 0): series([1_000 + i for i in range(n)], start_seq=0, stride=2, user_ns=[10] * n),
               (0, 1): series([2_000 + i for i in range(n)], start_seq=1, stride=2, sys_ns=[5] * n)}
    run = make_run("compare", sides, samples, runs=5, seed=7,
                   environment={"host": "box", "cpu_model": "Test CPU"})
    return run.replace(state=state, stopped_because="completed the requested 5 rounds",
                       notes=(Note("renamed", {"name": "a", "copies": ["a (2)"]}),
                              Note("leftover-processes", {"side": "b", "count": 1}, Subject(side="b"))),
                       **changes)


def two_benchmark_run():
    keys = (BenchmarkKey("sort", (("n", "1000"),)), BenchmarkKey("alloc", unit="B"))
    sides = (side("old", "baseline"), side("new", "candidate"))
    samples = {(0, 0): series([4_000, 4_100, 4_050], iterations=4, start_seq=0, stride=4),
               (0, 1): series([3_900, 3_950, 4_000], iterations=4, start_seq=1, stride=4),
               (1, 0): series([10, 11, 12], start_seq=2, stride=4, metrics={"value": [512.0, 512.5, 513.0]}),
               (1, 1): series([10, 11, 12], start_seq=3, stride=4, metrics={"value": [256.0, 256.0, 257.5]})}
    return make_run("compare", sides, samples, benchmarks=keys, runs=3)
