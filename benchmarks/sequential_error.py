"""Error rate and stopping time of ``confidence_sequence`` under continuous monitoring.

Looks after *every* pair from n = 10 to ``--horizon`` (default 10,000):

1. Width: the sequence's ranks against the fixed-n sign-test interval's.
2. H0 (median log-ratio 0): the share of simulated runs in which the sequence
   *ever* excludes 0 must stay <= alpha; normal, t3, difference of lognormals,
   skewed (exp(Z) - 1), bimodal, coarse-timer atoms, drifting spread.
3. Naive peeking: the fixed-n sign-test interval, looked at after every pair,
   for contrast (it must inflate).
4. The function itself, called after every pair, against the count criterion.
5. Under an effect (median log-ratio 0.01, SD 0.02): stopping time when 0 is
   excluded, against a fixed-n sign test's n for 50-95% power; and under H0 the
   time until the sequence lies within +-1% ("no meaningful change").
6. Cost per call.

Runs are vectorised through the count criterion the sequence is defined by
(q is excluded at n iff #{D < q} >= c_n or #{D <= q} <= n - c_n), with c_n from
``pairbench.stats.sequential.upper_ranks``; part 4 checks that criterion against
``confidence_sequence`` itself.

Usage::

    .venv/bin/python benchmarks/sequential_error.py [--reps 5000] [--horizon 10000] [--seed 7]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import optimize, stats

from pairbench.stats import confidence_sequence
from pairbench.stats._order import median_interval_ranks
from pairbench.stats.sequential import METHODS, first_bounded_n, upper_ranks

FIRST_LOOK = 10
CHUNK = 250


def bimodal_median() -> float:
    def cdf(x):
        return 0.7 * stats.norm.cdf(x, -1.0, 0.1) + 0.3 * stats.norm.cdf(x, 2.0, 0.3)

    return optimize.brentq(lambda x: cdf(x) - 0.5, -2.0, 3.0, xtol=1e-14)


BIMODAL = bimodal_median()
KINDS = ["normal", "t3", "lognormal-difference", "skewed", "bimodal", "coarse-timer", "drifting"]


def h0(kind: str, rng, shape) -> np.ndarray:
    """Per-pair differences whose (conditional) median is exactly 0."""
    if kind == "normal":
        return rng.normal(size=shape)
    if kind == "t3":
        return rng.standard_t(3, size=shape)
    if kind == "lognormal-difference":
        return rng.lognormal(size=shape) - rng.lognormal(size=shape)
    if kind == "skewed":
        return rng.lognormal(size=shape) - 1.0
    if kind == "bimodal":
        first = rng.uniform(size=shape) < 0.7
        return np.where(first, rng.normal(-1, 0.1, shape), rng.normal(2, 0.3, shape)) - BIMODAL
    if kind == "coarse-timer":
        return rng.choice([-2.0, -1.0, 0.0, 0.0, 1.0, 3.0], size=shape)
    if kind == "drifting":
        return rng.normal(size=shape) * (1 + 0.9 * np.sin(np.arange(shape[1]) / 150.0))
    raise ValueError(kind)


def first_exclusion(d: np.ndarray, c: np.ndarray, side: bool = False):
    """1-based n at which 0 is first excluded (looks from FIRST_LOOK on), or 0 if never.

    With ``side``, also whether the sequence then lay below 0 ("faster").
    """
    t = np.arange(1, d.shape[1] + 1)
    below = np.cumsum(d < 0, axis=1) >= c  # x_(c) < 0: the whole sequence is below 0
    above = np.cumsum(d <= 0, axis=1) <= t - c  # x_(t+1-c) > 0: above 0
    excluded = below | above
    excluded[:, : FIRST_LOOK - 1] = False
    hit = excluded.any(axis=1)
    first = excluded.argmax(axis=1)
    stops = np.where(hit, first + 1, 0)
    if not side:
        return stops
    return stops, hit & below[np.arange(d.shape[0]), first]


def fixed_ranks(horizon: int, confidence: float) -> np.ndarray:
    """The fixed-n sign-test upper rank at each n (n + 1 where no interval exists)."""
    out = np.empty(horizon, dtype=np.int64)
    for n in range(1, horizon + 1):
        r = median_interval_ranks(n, confidence)
        out[n - 1] = r.high if r is not None else n + 1
    return out


def width_table() -> list[str]:
    rows = [
        "| alpha | n | fixed-n rank | beta-binomial rank | normal-mixture rank |"
        " half-width ratio (bb / fixed) |",
        "|---|---|---|---|---|---|",
    ]
    for alpha in (0.05, 0.01):
        for n in (20, 50, 100, 200, 500, 1000, 2000, 10000):
            fixed = median_interval_ranks(n, 1 - alpha).high
            bb, nm = (int(upper_ranks(np.array([n]), alpha, 200, m)[0]) for m in METHODS)
            ratio = (bb - n / 2) / (fixed - n / 2)
            rows.append(f"| {alpha} | {n} | {fixed} | {bb} | {nm} | {ratio:.2f} |")
    firsts = ", ".join(
        f"alpha {a}: {first_bounded_n(a, 200, 'beta-binomial')} (beta-binomial),"
        f" {first_bounded_n(a, 200, 'normal-mixture')} (normal mixture)"
        for a in (0.05, 0.01)
    )
    rows.append(f"\nFirst n with a finite sequence: {firsts}.")
    return rows


def h0_table(reps: int, horizon: int, seed: int) -> list[str]:
    t = np.arange(1, horizon + 1)
    bounds = {
        (a, m): upper_ranks(t, a, 200, m) for a in (0.05, 0.01) for m in METHODS
    }  # fmt: skip
    naive = {a: fixed_ranks(horizon, 1 - a) for a in (0.05, 0.01)}
    rows = [
        "| H0 differences | alpha | beta-binomial: ever excludes 0 | normal mixture | 99% upper"
        " bound (bb) | naive peeking of fixed-n interval |",
        "|---|---|---|---|---|---|",
    ]
    for k, kind in enumerate(KINDS):
        counts = dict.fromkeys(list(bounds) + [("naive", a) for a in naive], 0)
        rng = np.random.default_rng([seed, k])
        for start in range(0, reps, CHUNK):
            d = h0(kind, rng, (min(CHUNK, reps - start), horizon))
            for key, c in bounds.items():
                counts[key] += int((first_exclusion(d, c) > 0).sum())
            for a, c in naive.items():
                counts[("naive", a)] += int((first_exclusion(d, c) > 0).sum())
        for a in (0.05, 0.01):
            bb, nm, nv = counts[(a, METHODS[0])], counts[(a, METHODS[1])], counts[("naive", a)]
            upper = stats.binomtest(bb, reps).proportion_ci(0.99).high
            rows.append(
                f"| {kind} | {a} | {bb / reps:.4f} | {nm / reps:.4f} | {upper:.4f} | {nv / reps:.3f} |"
            )
    return rows


def function_check(reps: int, looks: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    t = np.arange(1, looks + 1)
    c = upper_ranks(t, 0.05, 200, "beta-binomial")
    alarms = mismatches = calls = 0
    start = time.perf_counter()
    for _ in range(reps):
        d = rng.normal(size=looks)
        expected = (np.cumsum(d < 0) >= c) | (np.cumsum(d <= 0) <= t - c)
        ever = False
        for n in range(FIRST_LOOK, looks + 1):
            cs = confidence_sequence(d[:n], alpha=0.05)
            out = not cs.low <= 0.0 <= cs.high
            mismatches += out != expected[n - 1]
            ever |= out
            calls += 1
        alarms += ever
    elapsed = time.perf_counter() - start
    return [
        f"{reps} normal H0 runs, `confidence_sequence(values[:n], alpha=0.05)` called at every"
        f" n = {FIRST_LOOK}..{looks} ({calls:,} calls, {1e6 * elapsed / calls:.0f} us per call):"
        f" {alarms} runs ever excluded 0 ({alarms / reps:.3f}); disagreements with the count"
        f" criterion: {mismatches}."
    ]


def sign_test_n(p_positive: float, alpha: float, power: float) -> int:
    """Smallest n at which the fixed-n sign-test interval excludes 0 with the given power."""
    for n in range(6, 100_000):
        r = median_interval_ranks(n, 1 - alpha)
        if r is None:
            continue
        reject = stats.binom.cdf(r.low - 1, n, 1 - p_positive) + stats.binom.cdf(
            r.low - 1, n, p_positive
        )
        if reject >= power:
            return n
    raise RuntimeError("not found")


def effect_table(reps: int, horizon: int, seed: int) -> list[str]:
    effect, sd = 0.01, 0.02
    p_pos = stats.norm.cdf(effect / sd)
    rows = [
        f"Log-ratios N({effect}, {sd}^2) (P(slower) = {p_pos:.3f}); stop when 0 leaves the"
        f" sequence; horizon {horizon}; {reps} runs.",
        "",
        "| alpha | method | t_opt | stopped | wrong side (faster) | median stop | mean | 90th pct |"
        " fixed-n sign test n for 50 / 80 / 90 / 95% power |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    t = np.arange(1, horizon + 1)
    for alpha in (0.05, 0.01):
        fixed = " / ".join(str(sign_test_n(p_pos, alpha, w)) for w in (0.5, 0.8, 0.9, 0.95))
        for method, t_opt in [("beta-binomial", 50), ("beta-binomial", 200),
                              ("beta-binomial", 1000), ("normal-mixture", 200)]:  # fmt: skip
            c = upper_ranks(t, alpha, t_opt, method)
            rng = np.random.default_rng([seed, int(alpha * 100)])
            runs = [
                first_exclusion(rng.normal(effect, sd, (min(CHUNK, reps - s), horizon)), c, True)
                for s in range(0, reps, CHUNK)
            ]
            stops = np.concatenate([r[0] for r in runs])
            wrong = int(sum(r[1].sum() for r in runs))
            done = stops[stops > 0]
            rows.append(
                f"| {alpha} | {method} | {t_opt} | {done.size / reps:.3f} | {wrong}"
                f" | {np.median(done):.0f} | {done.mean():.1f} | {np.quantile(done, 0.9):.0f}"
                f" | {fixed} |"
            )
    return rows


def equivalence_table(reps: int, horizon: int, seed: int) -> list[str]:
    """H0 with SD 0.02: how long until the sequence lies inside +-ln(1.01)."""
    rows = ["| alpha | SD | stopped within horizon | median n to 'within +-1%' | 90th pct |",
            "|---|---|---|---|---|"]  # fmt: skip
    margin = math.log(1.01)
    t = np.arange(1, horizon + 1)
    for alpha in (0.05, 0.01):
        c = upper_ranks(t, alpha, 200, "beta-binomial")
        rng = np.random.default_rng([seed, 3])
        stops = []
        for s in range(0, reps, CHUNK):
            d = rng.normal(0.0, 0.02, (min(CHUNK, reps - s), horizon))
            # inside +-margin at n iff x_(n+1-c) >= -margin and x_(c) <= margin (counts of
            # the first n values)
            low_ok = np.cumsum(d < -margin, axis=1) <= t - c  # x_(n+1-c) >= -margin
            high_ok = np.cumsum(d <= margin, axis=1) >= c  # x_(c) <= margin
            inside = low_ok & high_ok & (c <= t)
            inside[:, : FIRST_LOOK - 1] = False
            stops.append(np.where(inside.any(axis=1), inside.argmax(axis=1) + 1, 0))
        stops = np.concatenate(stops)
        done = stops[stops > 0]
        rows.append(
            f"| {alpha} | 0.02 | {done.size / reps:.3f} | {np.median(done):.0f}"
            f" | {np.quantile(done, 0.9):.0f} |"
        )
    return rows


def cost_table() -> list[str]:
    rows = ["| n | us per call |", "|---|---|"]
    rng = np.random.default_rng(0)
    for n in (100, 1000, 10_000, 100_000, 1_000_000):
        x = rng.normal(size=n)
        calls = max(3, 200_000 // n)
        start = time.perf_counter()
        for _ in range(calls):
            confidence_sequence(x, alpha=0.01)
        rows.append(f"| {n:,} | {1e6 * (time.perf_counter() - start) / calls:.0f} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5000)
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sections = [
        ("Width: sequence ranks vs the fixed-n sign-test interval (t_opt = 200)", width_table()),
        (
            f"H0: share of runs that ever exclude 0, looks at n = {FIRST_LOOK}..{args.horizon},"
            f" {args.reps} runs each",
            h0_table(args.reps, args.horizon, args.seed),
        ),
        ("The function itself, called after every pair", function_check(100, 1000, args.seed)),
        ("Under an effect: stopping time", effect_table(args.reps, 2000, args.seed)),
        (
            "Under H0: time to 'no meaningful change' (inside +-1%)",
            equivalence_table(args.reps // 5, 20_000, args.seed),
        ),  # fmt: skip
        ("Cost per call", cost_table()),
    ]
    for title, rows in sections:
        print(f"## {title}\n")
        print("\n".join(rows) + "\n")
    print(
        f"(run time {time.perf_counter() - start:.0f} s; --reps {args.reps}"
        f" --horizon {args.horizon} --seed {args.seed})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
