"""False verdicts of a harness unit's sign test when ``bench`` stops on the time's verdict.

A unit such as allocs/op that is 0 in some rounds has no ratio, so ``analysis.metrics`` decides it
by the two-sided sign test of the rounds' differences, a fixed-n test. But the rounds are as many
as the *time's* stopping rule took, and the time can be correlated with the unit (a round that
allocates more is slower). Does stopping on the time inflate the unit's false "higher"/"lower"?

Each simulated ``bench`` benchmark is an A/A comparison: per round both sides' counts of the unit
are independent Poisson(lambda) draws, and the time's log-ratio is
s (sqrt(1 - rho^2) e + rho (c - b) / sqrt(2 lambda)), e normal or Student t3 of SD 1, so s is the
rounds' spread and rho the correlation of the time with the unit's difference. The time is monitored after *every* round from
``--first`` on (more looks than ``bench`` takes, so a worse case) by the anytime-valid confidence
sequence at alpha, intersected over rounds, exactly as ``stats.sequential.upper_ranks`` defines
it; the benchmark stops at the first round where the interval excludes 0 or lies within +-1%,
else at ``--horizon``. The unit's sign test is then taken on the rounds so far
(``pairbench.stats.sign_test_pvalue``, scipy's binomtest) and a p-value <= alpha is a false verdict.
For contrast, the same test at a fixed number of rounds (``--first`` and ``--horizon``).

Usage::

    nice -n 10 .venv/bin/python benchmarks/metric_sign_test.py [--reps 10000] [--seed 2044]
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from scipy import stats as sps

from pairbench.analysis.criteria import tuning_rounds
from pairbench.stats import sign_test_pvalue
from pairbench.stats.sequential import upper_ranks

ALPHA = 0.01
EQUIVALENT = (math.log(0.99), math.log(1.01))  # the interval within +-1%, as verdict.decide's
LAMBDAS = (0.3, 3.0)
RHOS = (0.0, 0.5, 0.9, 1.0)
SPREADS = (0.01, 0.04)
NOISES = ("normal", "t3")


def stopping_rounds(r: np.ndarray, first: int, alpha: float) -> np.ndarray:
    """Per row of log-ratios ``r`` (rows x rounds): the round at which the time's anytime-valid
    interval, intersected over rounds, first decides (excludes 0, or lies within +-1%)
    at or after ``first``; the last round when it never does. An empty intersection decides nothing
    (``verdict.moved``)."""
    reps, horizon = r.shape
    ranks = upper_ranks(np.arange(1, horizon + 1), alpha, tuning_rounds(alpha), "beta-binomial")
    low = np.full(reps, -np.inf)
    high = np.full(reps, np.inf)
    stop = np.full(reps, horizon)
    open_ = np.ones(reps, dtype=bool)
    for n in range(1, horizon + 1):
        c = int(ranks[n - 1])
        if c > n:
            continue
        ordered = np.sort(r[:, :n], axis=1)
        low = np.maximum(low, ordered[:, n - c])
        high = np.minimum(high, ordered[:, c - 1])
        if n < first:
            continue
        within = (low >= EQUIVALENT[0]) & (high <= EQUIVALENT[1])
        decided = open_ & (low <= high) & ((low > 0) | (high < 0) | within)
        stop[decided] = n
        open_ &= ~decided
    return stop


def false_rate(base: np.ndarray, cand: np.ndarray, rounds: np.ndarray, alpha: float) -> float:
    """The share of rows whose sign test over their first ``rounds`` rounds has p <= alpha."""
    hits = 0
    for b, c, n in zip(base, cand, rounds, strict=True):
        up, down = int(np.count_nonzero(c[:n] > b[:n])), int(np.count_nonzero(c[:n] < b[:n]))
        hits += sign_test_pvalue(up, down) <= alpha
    return hits / len(rounds)


def cell(lam: float, spread: float, rho: float, noise: str, reps: int, first: int, horizon: int, rng) -> dict:
    base = rng.poisson(lam, size=(reps, horizon)).astype(float)
    cand = rng.poisson(lam, size=(reps, horizon)).astype(float)
    e = rng.normal(size=base.shape) if noise == "normal" else rng.standard_t(3, size=base.shape) / math.sqrt(3)
    r = spread * (math.sqrt(1 - rho * rho) * e + rho * (cand - base) / math.sqrt(2 * lam))
    stop = stopping_rounds(r, first, ALPHA)
    return {"adaptive": false_rate(base, cand, stop, ALPHA),
            "first": false_rate(base, cand, np.full(reps, first), ALPHA),
            "horizon": false_rate(base, cand, np.full(reps, horizon), ALPHA),
            "median_stop": float(np.median(stop)), "decided": float(np.mean(stop < horizon))}


def upper_bound(rate: float, reps: int) -> float:
    """The one-sided 95% Clopper-Pearson upper bound of a rate seen in ``reps`` trials."""
    hits = round(rate * reps)
    return float(sps.beta.ppf(0.95, hits + 1, reps - hits)) if hits < reps else 1.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=10000)
    parser.add_argument("--first", type=int, default=32, help="bench's --min-runs")
    parser.add_argument("--horizon", type=int, default=256)
    parser.add_argument("--seed", type=int, default=2044)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"alpha {ALPHA}, {args.reps} A/A benchmarks per row, looks from round {args.first} to "
          f"{args.horizon}, seed {args.seed}\n")
    print("| lambda | spread | noise | rho | stopped on the time: false verdicts [95% upper] | fixed "
          f"{args.first} rounds | fixed {args.horizon} | median stop | time decided |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lam, spread, noise, rho in itertools.product(LAMBDAS, SPREADS, NOISES, RHOS):
        got = cell(lam, spread, rho, noise, args.reps, args.first, args.horizon, rng)
        print(f"| {lam:g} | {spread:.0%} | {noise} | {rho:g} | {got['adaptive']:.4f} "
              f"[{upper_bound(got['adaptive'], args.reps):.4f}] | {got['first']:.4f} | "
              f"{got['horizon']:.4f} | {got['median_stop']:.0f} | {got['decided']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
