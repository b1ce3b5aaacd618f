"""Coverage of pairbench's 95% intervals for the mean (``mean_error``) and the median (``median_ci``).

For each data model and method, draw ``--reps`` series of length ``--n`` with a
fixed seed, compute the nominal 95% interval, and count how often it contains
the true mean (or median). Prints the coverage, its exact binomial 99%
interval (Clopper-Pearson, ``scipy.stats.binomtest``), and whether the count is
consistent with a true coverage in the 93-97% band, or significantly below or
above it (one-sided binomial tests at the 0.1% level). "fallbacks" counts the
truncated-lag estimates that went negative and were replaced by batch means;
the autoregressive default gives no interval when n_eff < 4, and such series
are left out of its count (the table's denominator says how many remain).

Data models (all with a known truth):

* lognormal   iid lognormal(mu = 0, sigma = 0.5): skewed, like timings
* mixture     iid 80% N(10, 1) + 20% N(14, 1.5): bimodal
* ar1_0.5     AR(1) with phi = 0.5 and N(0, 1) innovations, started stationary
* ar1_0.9     AR(1) with phi = 0.9 (strong serial dependence)

``median_ci`` assumes independent samples, so it is run on the iid models and,
to show what happens when that assumption fails, on AR(1) phi = 0.5.

Usage::

    .venv/bin/python benchmarks/coverage_mean.py [--reps 2000] [--n 1000] [--seed 20261122]

The fast version of this check is ``tests/stats/test_timeseries.py`` /
``tests/stats/test_describe.py`` (400 replications).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import optimize, signal
from scipy import stats as sps

from pairbench import stats
from pairbench.errors import NotEnoughData, StatisticsError

LOG_SIGMA = 0.5
MIX_P, MIX_A, MIX_B = 0.8, (10.0, 1.0), (14.0, 1.5)
MEAN_METHODS = ("autoregressive", "batch-means", "truncated-lag", "newey-west", "iid")


def lognormal(rng, reps, n):
    return rng.lognormal(0.0, LOG_SIGMA, size=(reps, n))


def mixture(rng, reps, n):
    first = rng.random((reps, n)) < MIX_P
    a = rng.normal(MIX_A[0], MIX_A[1], (reps, n))
    b = rng.normal(MIX_B[0], MIX_B[1], (reps, n))
    return np.where(first, a, b)


def ar1(phi):
    def draw(rng, reps, n):
        e = rng.normal(0.0, 1.0, (reps, n))
        x0 = rng.normal(0.0, 1.0 / math.sqrt(1.0 - phi * phi), reps)  # stationary start
        y, _ = signal.lfilter([1.0], [1.0, -phi], e, axis=1, zi=(phi * x0)[:, None])
        return y

    return draw


def mixture_median() -> float:
    def cdf(v):
        return MIX_P * sps.norm.cdf(v, *MIX_A) + (1 - MIX_P) * sps.norm.cdf(v, *MIX_B)

    return optimize.brentq(lambda v: cdf(v) - 0.5, 5.0, 20.0, xtol=1e-14)


MODELS = {
    # name: (generator, true mean, true median)
    "lognormal": (lognormal, math.exp(LOG_SIGMA**2 / 2), 1.0),
    "mixture": (mixture, MIX_P * MIX_A[0] + (1 - MIX_P) * MIX_B[0], mixture_median()),
    "ar1_0.5": (ar1(0.5), 0.0, 0.0),
    "ar1_0.9": (ar1(0.9), 0.0, 0.0),
}


def coverage(intervals, truth) -> int:
    return sum(1 for low, high in intervals if low <= truth <= high)


def verdict(hits: int, reps: int) -> str:
    if sps.binomtest(hits, reps, 0.93, alternative="less").pvalue < 1e-3:
        return "below"
    if sps.binomtest(hits, reps, 0.97, alternative="greater").pvalue < 1e-3:
        return "above"
    return "consistent"


def _mean_error(row, method):
    """The error of the mean, or None when it gives no interval (n_eff < 4, autoregressive only)."""
    try:
        return stats.mean_error(row, method=method)
    except StatisticsError as exc:
        if exc.code != "effective-sample-too-small":
            raise
        return None


def run(reps: int, n: int, seed: int) -> list[tuple]:
    rows = []
    for index, (name, (draw, mean, median)) in enumerate(MODELS.items()):
        data = draw(np.random.default_rng([seed, index]), reps, n)
        for method in MEAN_METHODS:
            results = [r for r in (_mean_error(row, method) for row in data) if r is not None]
            fallbacks = sum(r.method != method for r in results)
            hits = coverage(((r.low, r.high) for r in results), mean)
            rows.append((name, f"mean_error {method}", hits, len(results), fallbacks))
        if name != "ar1_0.9":
            try:
                cis = [stats.median_ci(row) for row in data]
            except NotEnoughData:
                continue
            hits = coverage(((c.low, c.high) for c in cis), median)
            rows.append((name, "median_ci", hits, reps, 0))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(args.reps, args.n, args.seed)
    print(f"n = {args.n}, {args.reps} replications, seed {args.seed}, nominal 95%\n")
    print("| data | method | intervals | coverage | 99% CI | vs 93-97% band | fallbacks |")
    print("|---|---|---|---|---|---|---|")
    for name, method, hits, reps, fallbacks in rows:
        ci = sps.binomtest(hits, reps).proportion_ci(0.99)
        print(
            f"| {name} | {method} | {reps} | {hits / reps:.3f} | {ci.low:.3f}-{ci.high:.3f} "
            f"| {verdict(hits, reps)} | {fallbacks} |"
        )
    print(f"\n{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
