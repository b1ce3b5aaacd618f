"""The worker and harness validation rules on samples a busy machine's scheduler stretched.

A validation sample lasts about a millisecond; on a loaded machine (a CI runner
whose two cores run two test workers and their children) one of the 24 can be
preempted for a time slice or more, 2 to 30 ms. This study builds validation
samples as ``pairbench bench`` takes them (each of N/8, N/4, N/2 and N six
times, in random order, with normal noise), stretches 0, 1 or 2 of them by a
uniform 2-30 ms, and counts what each rule says, for the rule as it is
(``analysis.validation``) and for the least-squares forms it replaced:

* elided body: Kendall's tau and Theil-Sen's slope, against the one-sided
  least-squares slope test (p < 0.01, slope >= 1 ns);
* setup overhead: the line through each count's median sample, against the
  line through every sample (``validation.judge_setup_overhead`` on all 24).

The truth is how the samples were made: a body of 40 us an iteration (N = 25)
is never elided; a 30% fixed cost is setup overhead, a 2% one is not.

    .venv/bin/python benchmarks/validation_preemption.py [--trials 400] [--seed 2039]
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import time

import numpy as np

from pairbench.analysis.validation import (
    RSS_ALPHA,
    judge_elided_body,
    judge_setup_overhead,
    judge_typical_setup_overhead,
    samples_by_count,
)
from pairbench.model import Sample
from pairbench.sessions.driver import validation_counts
from pairbench.sessions.lanes import WORKER_VALIDATION_ROUNDS as VALIDATION_ROUNDS
from pairbench.stats.regression import line_fit

# (label, ns per iteration, fixed ns per sample, iterations N, relative noise, truth of the rule)
ELIDED_CASES = (("40 us body, N = 25", 40_000.0, 0.0, 25, 0.10, "ok"),
                ("2 ns body, N = 2^19", 2.0, 0.0, 1 << 19, 0.02, "ok"),
                ("elided: 40 ns fixed, no growth", 0.0, 40.0, 1024, 0.05, "warn"))
SETUP_CASES = (("fixed 30% of N x 1 us", 1000.0, 0.30 * 1024_000, 1024, 0.02, "warn"),
               ("fixed 10%", 1000.0, 0.10 * 1024_000, 1024, 0.01, "warn"),
               ("fixed 2%", 1000.0, 0.02 * 1024_000, 1024, 0.01, "ok"),
               ("none, 40 us body, N = 25", 40_000.0, 0.0, 25, 0.10, "ok"))


def validation_samples(rng, per_iteration: float, fixed: float, chosen: int, noise: float,
                       stretched: int) -> list[Sample]:
    """One side's validation samples, ``stretched`` of them made 2-30 ms longer."""
    order = [n for _ in range(VALIDATION_ROUNDS) for n in rng.permutation(validation_counts(chosen))]
    taken = [Sample(wall_ns=max(1, round((fixed + n * per_iteration) * (1 + noise * rng.standard_normal()))),
                    iterations=int(n), warmup=1) for n in order]
    for i in rng.choice(len(taken), size=stretched, replace=False):
        taken[i] = dataclasses.replace(taken[i], wall_ns=taken[i].wall_ns + int(rng.uniform(2e6, 30e6)))
    return taken


def least_squares_elided(samples: list[Sample]) -> str:
    """The rule before: a one-sided least-squares slope test and the fitted slope."""
    fit = line_fit([s.iterations for s in samples], [s.wall_ns for s in samples], alternative="greater")
    if fit is None:
        return "unknown"
    return "warn" if fit.pvalue >= RSS_ALPHA or fit.slope < 1.0 else "ok"


def least_squares_setup(samples: list[Sample]) -> str:
    """The rule before: the line through every sample."""
    return judge_setup_overhead(samples_by_count(samples)).status


def table(title: str, cases, rules, trials: int, rng) -> list[str]:
    rows = [f"\n{title}, {trials} trials per cell: wrong answers (the other answers are `unknown`)\n",
            "| samples | stretched | truth | " + " | ".join(f"{name}: wrong" for name, _ in rules) + " |",
            "|---|---|---|" + "---|" * len(rules)]
    for label, per, fixed, chosen, noise, truth in cases:
        for stretched in (0, 1, 2):
            wrong = dict.fromkeys((name for name, _ in rules), 0)
            unknown = dict.fromkeys(wrong, 0)
            for _ in range(trials):
                samples = validation_samples(rng, per, fixed, chosen, noise, stretched)
                for name, rule in rules:
                    status = rule(samples)
                    wrong[name] += status not in (truth, "unknown")
                    unknown[name] += status == "unknown"
            cells = " | ".join(f"{wrong[n]}/{trials} ({unknown[n]} unknown)" for n, _ in rules)
            rows.append(f"| {label} | {stretched} | {truth} | {cells} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2039)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{platform.node()} {platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}, seed {args.seed}")
    elided_rules = (("least squares", least_squares_elided),
                    ("Kendall + Theil-Sen", lambda s: judge_elided_body(s).status))
    setup_rules = (("every sample", least_squares_setup),
                   ("count medians", lambda s: judge_typical_setup_overhead(samples_by_count(s)).status))
    print("\n".join(table("Elided body", ELIDED_CASES, elided_rules, args.trials, rng)))
    print("\n".join(table("Setup overhead", SETUP_CASES, setup_rules, args.trials, rng)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
