"""Coverage of ``paired_effect``'s 95% interval, and the power its sign test gets from ``samples_needed``.

Part 1 (coverage). For each scenario and n, simulate ``reps`` paired benchmarks,
call ``pairbench.stats.paired_effect`` and count how often the interval contains
the true median log-ratio. The sign-test interval's exact level is discrete
(97.9% at n = 10, 95.7% at 30, 96.5% at 100, 95.4% at 1000), so each count is
also tested against that level with ``scipy.stats.binomtest``. Scenarios:

* ``lognormal``: log-ratios 0.01 + 0.05 (exp(Z) - 1): right-skewed.
* ``mixture``: log-ratios from a 70/20/10 lognormal mixture (multimodal,
  skewed), centred on 0.01.
* ``drift``: realistic paired timings: both arms share a slow sinusoidal drift
  and a 15% step half-way (thermal throttling), each run adds its own seed-000
  mixture noise, the candidate is 1% slower: median log-ratio ln(1.01).

Part 2 (power). ``samples_needed(paired=True)`` plans a t test; ``nonparametric``
divides by 0.864 (the Wilcoxon bound). ``paired_effect``'s verdict is a *sign*
test, whose efficiency at the normal is 2/pi = 0.637. Simulate the sign-test
verdict's power at each planned n for normal log-ratio differences.

Usage::

    .venv/bin/python benchmarks/coverage_paired.py [--reps 4000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import optimize, stats

from pairbench.stats import paired_effect, samples_needed
from pairbench.stats._order import median_interval_ranks

TRUE_MEDIAN = 0.01


def mixture(rng, size):
    """Seed 000's rmixed without the scale: 70% lognormal(0, .2), 20% 1 + ..., 10% 3 + ..."""
    component = rng.choice(3, size=size, p=[0.7, 0.2, 0.1])
    return np.array([0.0, 1.0, 3.0])[component] + rng.lognormal(0.0, 0.2, size)


def mixture_median() -> float:
    def cdf(x):
        return sum(
            w * stats.lognorm.cdf(x - s, 0.2) for w, s in [(0.7, 0.0), (0.2, 1.0), (0.1, 3.0)]
        )

    return optimize.brentq(lambda x: cdf(x) - 0.5, 0.5, 3.0, xtol=1e-14)


MIXTURE_MEDIAN = mixture_median()


def scenario(kind, rng, n):
    """(baseline, candidate, true median log-ratio) for one simulated paired benchmark."""
    if kind == "lognormal":
        b = rng.lognormal(np.log(1e6), 0.1, n)
        return b, b * np.exp(TRUE_MEDIAN + 0.05 * (rng.lognormal(0, 1, n) - 1)), TRUE_MEDIAN
    if kind == "mixture":
        b = rng.lognormal(np.log(1e6), 0.1, n)
        r = TRUE_MEDIAN + 0.05 * (mixture(rng, n) - MIXTURE_MEDIAN)
        return b, b * np.exp(r), TRUE_MEDIAN
    if kind == "drift":
        i = np.arange(n)
        drift = (1 + 0.1 * np.sin(2 * np.pi * i / max(n, 8) * 3)) * np.where(i < n // 2, 1, 1.15)
        base = 20e6 * drift  # 20 ms
        b = base * (1 + 0.05 * mixture(rng, n))
        c = 1.01 * base * (1 + 0.05 * mixture(rng, n))
        return b, c, math.log(1.01)  # ln c/b = ln 1.01 + (symmetric about 0)
    raise ValueError(kind)


def coverage_table(reps: int, seed: int) -> list[str]:
    rows = [
        "| scenario | n | reps | covered | exact level | binomial p vs exact | in 93-97% |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ("lognormal", "mixture", "drift"):
        for n in (10, 30, 100, 1000):
            r = reps if n < 1000 else reps // 2
            rng = np.random.default_rng([seed, n, len(kind)])
            covered = 0
            for _ in range(r):
                b, c, truth = scenario(kind, rng, n)
                e = paired_effect(b, c)
                covered += e.low <= truth <= e.high
            level = median_interval_ranks(n, 0.95).achieved_confidence
            p = stats.binomtest(covered, r, level).pvalue
            inside = "yes" if 0.93 <= covered / r <= 0.97 else "no"
            rows.append(
                f"| {kind} | {n} | {r} | {covered / r:.4f} | {level:.4f} | {p:.3f} | {inside} |"
            )
    return rows


def power_table(reps: int, seed: int) -> list[str]:
    effect, sd, alpha, target = 0.01, 0.02, 0.01, 0.95
    n_t = samples_needed(effect, sd, alpha, target, paired=True, nonparametric=False)
    plans = [
        ("t test (nonparametric=False)", n_t),
        ("rank allowance /0.864 (nonparametric=True)", samples_needed(effect, sd, alpha, target, paired=True)),
        ("sign-test allowance /(2/pi)", n_t / (2 / math.pi)),
    ]  # fmt: skip
    rows = [
        f"Normal log-ratio differences, median {effect}, SD {sd}; alpha = {alpha}, target power"
        f" {target}; {reps} simulated benchmarks per row.",
        "",
        "| plan | n (rounded up) | t-test power (simulated) | paired_effect 99% interval excludes 0 |",
        "|---|---|---|---|",
    ]
    rng = np.random.default_rng(seed)
    for label, n_float in plans:
        n = math.ceil(n_float)
        t_hits = sign_hits = 0
        for _ in range(reps):
            r = rng.normal(effect, sd, n)
            t_hits += stats.ttest_1samp(r, 0.0).pvalue < alpha
            e = paired_effect(np.ones(n), np.exp(r), confidence=1 - alpha)
            sign_hits += e.low > 0 or e.high < 0
        rows.append(f"| {label} | {n} | {t_hits / reps:.3f} | {sign_hits / reps:.3f} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("## paired_effect: coverage of the 95% interval\n")
    print("\n".join(coverage_table(args.reps, args.seed)))
    print("\n## samples_needed(paired=True) vs the sign-test verdict's power\n")
    print("\n".join(power_table(args.reps // 2, args.seed + 1)))
    print(
        f"\n(run time {time.perf_counter() - start:.0f} s, --reps {args.reps}, --seed {args.seed})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
