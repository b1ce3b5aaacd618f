"""The iteration count ``compare_functions`` chooses beside load: one probe per count (the rule
before 2026-11-27, the reference) against ``measure.worker.quickest_probe``, alternated in one run.

The functions are ``tests/bench/test_functions.py``'s ``spin(300)`` and ``triple(300)`` (about
10 and 36 us a call here, so 32 calls make the 1 ms sample). Each trial chooses the count once
by each rule, in a seeded random order; the script prints how often each rule chose each count,
the share of counts below the quiet one (``--expected``), and what choosing cost (the probes'
own time) by each rule. With ``--compare N``, N full ``measure_functions`` runs (max_time 5 s,
seed 3) follow, alternated between the rules, each printed with its count and its CPU-time effect
(estimate and 99% interval); a count chosen too small shows up as a smaller effect.

The load is the caller's (``make test`` and two busy loops, for the figures in RESULTS.md).

Usage::

    flock /work/.heavy.lock .venv/bin/python benchmarks/function_probe.py --trials 400 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path

import numpy as np

from pairbench.measure import worker
from pairbench.sessions import functions

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS / "bench"), str(TESTS / "support")]
from test_functions import spin, triple  # noqa: E402  (the test's own functions)


def single_probe(take):
    """The rule before: the time of one sample, interrupted or not."""
    return take()[0]


RULES = {"single probe (before)": single_probe, "quickest_probe": worker.quickest_probe}


def chosen(rule) -> tuple[int, int]:
    """The count ``rule`` chooses for spin/triple at 1 ms, and what choosing it took (ns)."""
    functions.quickest_probe = rule
    start = time.perf_counter_ns()
    count = worker.choose_iterations(functools.partial(functions.slowest_probe, (spin, triple), (300,), {}),
                                     1_000_000)
    return count, time.perf_counter_ns() - start


def effect_of(rule, seed: int) -> str:
    functions.quickest_probe = rule
    run, analysis = functions.measure_functions(spin, triple, (300,), {}, max_time="5s", seed=seed)
    effect = analysis.comparisons[0].effect
    count = int(run.samples[(0, 0)]["iterations"][0])
    return f"count {count:3d}  effect {effect.estimate:+6.1f}% [{effect.low:+6.1f}, {effect.high:+6.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--expected", type=int, default=32, help="the count on a quiet machine")
    parser.add_argument("--compare", type=int, default=0, help="full runs per rule after the trials")
    args = parser.parse_args()
    order = np.random.default_rng(args.seed)
    counts = {name: collections.Counter() for name in RULES}
    costs = {name: [] for name in RULES}
    for _ in range(args.trials):
        for i in order.permutation(len(RULES)):
            name = list(RULES)[int(i)]
            count, cost = chosen(RULES[name])
            counts[name][count] += 1
            costs[name].append(cost)
    reference = float(np.median(costs["single probe (before)"]))
    for name in RULES:
        low = sum(n for count, n in counts[name].items() if count < args.expected)
        print(f"{name:22s} counts {dict(sorted(counts[name].items()))}  below {args.expected}: "
              f"{low}/{args.trials}  choosing: median {np.median(costs[name]) / 1e6:.2f} ms "
              f"({np.median(costs[name]) / reference:.2f}x the single probe's)")
    for k in range(args.compare):
        for name in (list(RULES) if k % 2 == 0 else list(RULES)[::-1]):
            print(f"run {k + 1:2d} {name:22s} {effect_of(RULES[name], 3)}", flush=True)


if __name__ == "__main__":
    main()
