"""Short samples against the fixed cost of timing one: ``compare_functions`` of a function 3.5 times
slower than another, at --sample-time 10 us, 30 us, 100 us and 1 ms, without the floor (the rule before
2026-11-27: the count from --sample-time alone) and with it (``measure.fixed_cost``), alternated in
one run in a seeded random order; every effect is also given as a ratio against the 1 ms runs' median
ratio of the same run, the reference.

The functions are ``tests/bench/test_functions.py``'s ``spin(300)`` and ``triple(300)`` (spin(900),
about 3.5 times spin(300)). First the fixed cost is measured two ways: the median of empty samples
(what pairbench measures before a comparison), and the intercept of a least-squares line of the CPU
time of samples of 0, 1, 2, 4, ..., 64 calls of an empty function on their count (interleaved). Then
each trial runs every setting once (``measure_functions``, ``--max-time``, seed = the trial), printing
the count a sample ran, the CPU-time effect with its interval, the interval's width and the rounds.
The summary gives, per setting, the median effect, its ratio to the reference (1+e)/(1+e_ref), the
median interval width, rounds and seconds (what the floor costs). ``--part small`` compares spin(300)
with spin(330) instead (+10%), ``--part tiny`` with spin(303) (+1%, where the stopping rule needs
many rounds), to see whether the longer samples cost rounds, time or precision.

Usage::

    flock /work/.heavy.lock .venv/bin/python benchmarks/short_samples.py --trials 5 --seed 1
    flock /work/.heavy.lock .venv/bin/python benchmarks/short_samples.py --part small --trials 5 --seed 2
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pairbench.measure import fixed_cost
from pairbench.sessions import functions
from pairbench.worker.serve import NO_ARGUMENT, timed_loop

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS / "bench"), str(TESTS / "support")]
from test_functions import spin, triple  # noqa: E402  (the test's own functions)

SAMPLE_TIMES = ("10us", "30us", "100us", "1ms")
REFERENCE = ("1ms", "floor")


def _empty() -> None:
    """The trivial function of the regression."""


def fixed_cost_two_ways(rng: np.random.Generator, rounds: int = 200) -> dict:
    """The fixed cost as pairbench measures it, and the intercept of CPU time on the call count."""
    measured = fixed_cost.measure_fixed_cost()
    counts = [0, 1, 2, 4, 8, 16, 32, 64]
    xs, cpu, wall = [], [], []
    for _ in range(rounds):
        for n in rng.permutation(counts):
            reply = timed_loop(_empty, NO_ARGUMENT, int(n), collect=0)
            xs.append(int(n))
            cpu.append(reply.user_ns + reply.sys_ns)
            wall.append(reply.wall_ns)
    slope, intercept = np.polyfit(xs, cpu, 1)
    wall_slope, wall_intercept = np.polyfit(xs, wall, 1)
    return {"empty_wall": measured.wall_ns, "empty_cpu": measured.cpu_ns, "cpu_intercept": intercept,
            "cpu_per_call": slope, "wall_intercept": wall_intercept, "wall_per_call": wall_slope}


def tenth_more(n):
    """spin(n) and a tenth more: a change of about +10%, for ``--part small``."""
    return spin(n + n // 10)


def hundredth_more(n):
    """spin(n) and a hundredth more: a change of about +1%, for ``--part tiny``."""
    return spin(n + n // 100)


PARTS = {"large": triple, "small": tenth_more, "tiny": hundredth_more}


def one_run(sample_time: str, rule: str, seed: int, max_time: str, candidate=triple) -> dict:
    """One comparison at ``sample_time``, with the floor or without it (a fixed cost of 0)."""
    measure = fixed_cost.measure_fixed_cost if rule == "floor" else (lambda: fixed_cost.FixedCost())
    functions.measure_fixed_cost = measure
    try:
        start = time.perf_counter()
        run, analysis = functions.measure_functions(spin, candidate, (300,), {}, max_time=max_time,
                                                    sample_time=sample_time, seed=seed)
        seconds = time.perf_counter() - start
    finally:
        functions.measure_fixed_cost = fixed_cost.measure_fixed_cost
    comparison = analysis.comparisons[0]
    effect = comparison.effect
    counts = run.samples[(0, 0)].columns["iterations"]
    return {"count": int(counts[-1]), "estimate": effect.estimate, "low": effect.low, "high": effect.high,
            "rounds": run.rounds, "seconds": seconds, "verdict": comparison.verdict.verdict}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-time", default="2s")
    parser.add_argument("--part", choices=sorted(PARTS), default="large",
                        help="large: spin(300) against spin(900), +250%%; small: against spin(330), +10%%; "
                             "tiny: against spin(303), +1%%")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC  {platform.node()} {platform.platform()}  "
          f"Python {platform.python_version()}  load {Path('/proc/loadavg').read_text().split()[:3]}")
    cost = fixed_cost_two_ways(rng)
    print("fixed cost: empty samples' median wall {empty_wall:.0f} ns, CPU {empty_cpu:.0f} ns; "
          "least squares on 0..64 calls: CPU intercept {cpu_intercept:.0f} ns ({cpu_per_call:.1f} ns a call), "
          "wall intercept {wall_intercept:.0f} ns ({wall_per_call:.1f} ns a call)".format(**cost))
    settings = [(t, rule) for t in SAMPLE_TIMES for rule in ("none", "floor") if not (t == "1ms" and rule == "none")]
    results: dict[tuple[str, str], list[dict]] = {s: [] for s in settings}
    for trial in range(args.trials):
        for i in rng.permutation(len(settings)):
            setting = settings[int(i)]
            r = one_run(*setting, seed=args.seed * 1000 + trial, max_time=args.max_time, candidate=PARTS[args.part])
            results[setting].append(r)
            print(f"trial {trial} {setting[0]:>5} {setting[1]:5}  count {r['count']:4d}  effect "
                  f"{r['estimate']:+6.1f}% [{r['low']:+6.1f}, {r['high']:+6.1f}]  rounds {r['rounds']}  "
                  f"{r['seconds']:.2f} s  {r['verdict']}", flush=True)
    reference = 1 + statistics.median(r["estimate"] for r in results[REFERENCE]) / 100
    print("\n| --sample-time | floor | count (median) | effect (median, min..max) | ratio / 1 ms ref | "
          "interval width (median) | rounds (median) | seconds (median) |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for setting in settings:
        rs = results[setting]
        estimates = [r["estimate"] for r in rs]
        median = statistics.median(estimates)
        print(f"| {setting[0]} | {'on' if setting[1] == 'floor' else 'off (before)'} | "
              f"{statistics.median(r['count'] for r in rs):.0f} | {median:+.1f}% ({min(estimates):+.1f}..{max(estimates):+.1f}) | "
              f"{(1 + median / 100) / reference:.3f} | {statistics.median(r['high'] - r['low'] for r in rs):.1f} pts | "
              f"{statistics.median(r['rounds'] for r in rs):.0f} | {statistics.median(r['seconds'] for r in rs):.2f} |")


if __name__ == "__main__":
    main()
