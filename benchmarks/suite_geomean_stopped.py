"""Coverage of the suite's geometric-mean interval when each benchmark's rounds stopped by the
sequence (every default run), not at a fixed number.

A simulated suite has K benchmarks. Benchmark k's per-round log-ratios are mu_k + e, mu_k ~ N(0,
1%) (most near the +-1% window, where stopping is slowest) and e noise of mean exactly 0:

* ``normal``: N(0, 1%);
* ``lognormal``: SD 1%, lognormal(sigma 1) centred on its mean (right-skewed);
* ``slow-rounds``: N(0, 1%) + 20% in 10% of rounds, minus 2% (a candidate with occasional slow
  rounds; mean exactly 0, median about -1.6%).

Each benchmark follows ``compare``'s stopping path through the library: a ``RunningSequence`` at
alpha 0.01 / K, from ``--min-rounds`` (10 as ``compare``, 32 as ``bench``) or its first bounded round,
stopping at the first decided verdict (``analysis.effect.verdict_of``), at most ``--max-rounds``.
Then ``analysis.suite.geometric_mean`` of the values the verdicts were drawn from:

* ``all rounds``: every round each benchmark took (pairbench before);
* ``first rounds``: each benchmark's first rounds, as many as it takes whatever its values say
  (``analysis.suite.unstopped``: ``--min-rounds``, or the rounds before the sequence is bounded at
  alpha 0.01 / K if more), so their number is fixed in advance (pairbench now, for stopped rounds).

The target is exp(mean_k mu_k) - 1 (the mean log-ratio's, which the estimator's docstring names);
coverage is the share of suites whose 95% interval holds it, MC SE sqrt(p (1 - p) / suites).

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/suite_geomean_stopped.py --seed 702 --suites 200 --jobs 2
"""

from __future__ import annotations

import argparse
import datetime
import math
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, verdict_of
from pairbench.analysis.suite import geometric_mean, unstopped
from pairbench.stats.sequential import RunningSequence

NOISES = ("normal", "lognormal", "slow-rounds")
SD = 0.01


def noise(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return SD * rng.standard_normal(size)
    if kind == "lognormal":
        z = np.exp(rng.standard_normal(size))
        return SD * (z - math.exp(0.5)) / math.sqrt((math.e - 1.0) * math.e)
    return SD * rng.standard_normal(size) + 0.2 * (rng.random(size) < 0.1) - 0.02


def stopped(values: np.ndarray, criteria: Criteria, min_rounds: int) -> np.ndarray:
    """The rounds ``compare``'s path takes of ``values``: from ``min_rounds`` on, until decided."""
    rs = RunningSequence(criteria.level_alpha, criteria.t_opt)
    rs.extend(values[:min_rounds - 1])
    for i in range(min_rounds - 1, values.size):
        rs.extend(values[i:i + 1])
        if verdict_of(lambda: anytime_effect(rs), criteria)[0].decided:
            return values[:i + 1]
    return values


def one_suite(args) -> dict:
    kind, k, min_rounds, max_rounds, seed = args
    rng = np.random.default_rng(seed)
    criteria = Criteria(alpha=0.01, threshold=1.0, family=k)
    mu = rng.normal(0.0, 0.01, k)
    taken = [stopped(mu[j] + noise(kind, max_rounds, rng), criteria, min_rounds) for j in range(k)]
    truth = 100.0 * math.expm1(float(mu.mean()))
    out = {"rounds": float(np.median([t.size for t in taken]))}
    first = [unstopped(t, t.size, criteria, min_rounds) for t in taken]
    out["first_n"] = float(np.median([f.size for f in first]))
    for name, values in (("all", taken), ("first", first)):
        g = geometric_mean(values, seed=seed)
        out[name] = (g.low <= truth <= g.high, g.estimate - truth, g.high - g.low)
    return out


def cell(kind: str, k: int, min_rounds: int, max_rounds: int, suites: int, seed: int, jobs: int) -> dict:
    seeds = np.random.SeedSequence([seed, NOISES.index(kind), k, min_rounds]).generate_state(suites)
    work = [(kind, k, min_rounds, max_rounds, int(s)) for s in seeds]
    with ProcessPoolExecutor(jobs) as pool:
        found = list(pool.map(one_suite, work, chunksize=4))
    row = {"noise": kind, "K": k, "min": min_rounds, "suites": suites,
           "rounds": float(np.median([f["rounds"] for f in found])), "first_n": found[0]["first_n"]}
    for name in ("all", "first"):
        cover = float(np.mean([f[name][0] for f in found]))
        row[name] = (cover, math.sqrt(cover * (1 - cover) / suites), float(np.mean([f[name][1] for f in found])),
                     float(np.median([f[name][2] for f in found])))
    return row


def table(rows: list[dict]) -> str:
    lines = ["| noise | K | min rounds | suites | median rounds taken | first rounds used | all rounds: coverage "
             "(MC SE), bias pp, width pp | first rounds: coverage (MC SE), bias pp, width pp |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{c:.3f} ({se:.3f}), {b:+.3f}, {w:.2f}" for c, se, b, w in (r["all"], r["first"])]
        lines.append(f"| {r['noise']} | {r['K']} | {r['min']} | {r['suites']} | {r['rounds']:g} | {r['first_n']:g} "
                     f"| {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=702)
    parser.add_argument("--suites", type=int, default=200)
    parser.add_argument("--benchmarks", type=int, nargs="+", default=[30, 100])
    parser.add_argument("--min-rounds", type=int, nargs="+", default=[10, 32])
    parser.add_argument("--max-rounds", type=int, default=200)
    parser.add_argument("--noises", nargs="+", default=list(NOISES), choices=NOISES)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.time()
    rows = [cell(kind, k, m, args.max_rounds, args.suites, args.seed, args.jobs)
            for kind in args.noises for k in args.benchmarks for m in args.min_rounds]
    print(f"suite_geomean_stopped: seed {args.seed}, {datetime.date.today()}, {time.time() - started:.0f} s")
    print(table(rows))


if __name__ == "__main__":
    main()
