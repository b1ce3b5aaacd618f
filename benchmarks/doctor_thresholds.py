"""Where the doctor's sample-check thresholds come from, and what they cost.

1. Tukey fence: the share of clean samples above Q3 + 1.5 IQR at small n, and
   how often a benchmark would be flagged under "more than 5% beyond" versus
   the binomial rule ``analysis.doctor.check_outliers`` uses (P(Bin(n, 2%) >= k) < 1%).
2. Setup overhead: how often ``analysis.validation.judge_setup_overhead`` says warn / unknown / ok
   for true setup shares around the 5% line, with 2% noise per sample.
3. The cost of ``collect_environment`` (run and compare call it once).

    .venv/bin/python benchmarks/doctor_thresholds.py [--trials 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats as sps

from pairbench.analysis.validation import judge_setup_overhead
from pairbench.environment import collect_environment
from pairbench.model import Sample

DISTRIBUTIONS = {
    "normal": lambda rng, n: rng.normal(10, 1, n),
    "lognormal s=0.1": lambda rng, n: rng.lognormal(0, 0.1, n),
    "lognormal s=0.3": lambda rng, n: rng.lognormal(0, 0.3, n),
}


def fence_rates(trials: int, rng) -> list[str]:
    rows = ["| data | n | mean share above fence | P(flag), > 5% rule | P(flag), binomial rule |",
            "|---|---|---|---|---|"]
    for name, draw in DISTRIBUTIONS.items():
        for n in (10, 20, 30, 50, 100):
            x = draw(rng, (trials, n))
            q1, q3 = np.quantile(x, [0.25, 0.75], axis=1)
            above = (x > (q3 + 1.5 * (q3 - q1))[:, None]).sum(axis=1)
            old = np.mean(above > 0.05 * n)
            new = np.mean(sps.binom.sf(above - 1, n, 0.02) < 0.01)
            rows.append(f"| {name} | {n} | {np.mean(above) / n:.4f} | {old:.3f} | {new:.3f} |")
    return rows


def setup_verdicts(trials: int, rng) -> list[str]:
    rows = ["| true setup share at 8 iterations | warn | unknown | ok |", "|---|---|---|---|"]
    per_iteration = 10e6  # ns
    for share in (0.0, 0.02, 0.04, 0.06, 0.10, 0.25):
        # setup / (setup + 8 b) = share  =>  setup = share 8 b / (1 - share)
        setup = share * 8 * per_iteration / (1 - share)
        counts = {"warn": 0, "unknown": 0, "ok": 0}
        for _ in range(trials):
            samples = {}
            for k in (1, 2, 4, 8):
                mean = setup + k * per_iteration
                wall = mean * (1 + rng.normal(0, 0.02, 5))
                samples[k] = tuple(Sample(wall_ns=int(w), iterations=k) for w in wall)
            counts[judge_setup_overhead(samples).status] += 1
        rows.append(f"| {100 * share:.0f}% | {counts['warn'] / trials:.3f} | "
                    f"{counts['unknown'] / trials:.3f} | {counts['ok'] / trials:.3f} |")
    return rows


def collect_cost(repeats: int = 10) -> str:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        collect_environment()
        times.append(time.perf_counter() - start)
    return (f"collect_environment() (default 0.1 s activity window): median "
            f"{1000 * np.median(times):.0f} ms, min {1000 * min(times):.0f} ms over {repeats} calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20000, help="simulated samples per cell (default 20000)")
    args = parser.parse_args()
    rng = np.random.default_rng(20261122)
    print("\n".join(fence_rates(args.trials, rng)))
    print()
    print("\n".join(setup_verdicts(max(args.trials // 20, 200), rng)))
    print()
    print(collect_cost())


if __name__ == "__main__":
    main()
