"""How much the rounds-needed estimate varies between identical trials, and how near it is to the
rounds the distribution itself needs: the sample's quantiles read at two neighbouring order
statistics near the median (pairbench before 2026-11-29) against the sparsity over Hall and
Sheather's bandwidth (``analysis.effect._NearMedian``).

Pure and seeded, no timing (run under ``nice -n 10``). Per distribution of the per-round log-ratios
(normal, sd 0.05; Student t with 3 degrees of freedom, scale 0.03; "loaded": normal sd 0.02 with 30%
of the rounds hit by another task's time slice, an exponential of mean 0.15 either way) and per
number of rounds already measured (32, 64, 256): ``--sets`` sets of ten identical trials, each
``plan_rounds`` at bench's defaults (alpha 0.01, the anytime-valid interval, +-1%); the median and
90th percentile over the sets of the largest estimate of the ten over the smallest, and the median
estimate of the total rounds over the rounds the distribution needs (the same planning on 400,000
draws, where the sample's quantiles are the distribution's).

    nice -n 10 .venv/bin/python benchmarks/rounds_needed_stability.py --sets 200 --seed 29

``--ranges``: the advice as it is given now, below 256 rounds with its own 90% interval
(``analysis.effect.rounds_span``): per distribution and rounds measured (32, 64, 128), the share of
trials whose interval holds the rounds the distribution needs, the share of sets of ten whose ten
intervals share a point (the ten pieces of advice agree), the median over sets of the largest
interval's upper end over the smallest's lower end, and the point estimates' max/min as before.

    nice -n 10 .venv/bin/python benchmarks/rounds_needed_stability.py --ranges --sets 200 --seed 29
"""

from __future__ import annotations

import argparse
import math
import sys
from unittest import mock

import numpy as np

from pairbench.analysis import effect as comparison
from pairbench.analysis.criteria import Criteria

SIZES = (32, 64, 256)
KINDS = ("normal", "t3", "loaded")
TRIALS = 10


def draw(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """``n`` per-round log-ratios of an A/A comparison of ``kind``."""
    if kind == "normal":
        return rng.normal(0.0, 0.05, n)
    if kind == "t3":
        return 0.03 * rng.standard_t(3, n)
    hit = rng.random(n) < 0.3
    return rng.normal(0.0, 0.02, n) + hit * rng.choice([-1.0, 1.0], n) * rng.exponential(0.15, n)


def total_rounds(values: np.ndarray, criteria: Criteria) -> int | None:
    """The total rounds ``plan_rounds`` asks for (what was measured and what it needs more)."""
    plan = comparison.plan_rounds(values, criteria)
    return None if plan.needed is None else values.size + plan.needed


def needed_by_distribution(kind: str, criteria: Criteria, seed: int) -> int:
    """The rounds the distribution itself needs: the smallest n whose interval, read from the
    quantiles of 400,000 draws, spans at most ln(1.01) (the planning's own search, on a sample so
    large that its quantiles are the distribution's)."""
    r = np.sort(draw(np.random.default_rng(seed), 400_000, kind))
    quantile, target = comparison._TiedQuantile(r), math.log1p(criteria.threshold / 100.0)
    lo, hi = 10, comparison.MAX_ROUNDS_PLANNED
    while hi - lo > 1:
        mid = (lo + hi) // 2
        low_rank, high_rank = comparison._interval_ranks(mid, criteria.level_alpha, criteria.t_opt)
        wide = low_rank < 1 or quantile((high_rank - 0.5) / mid) - quantile((low_rank - 0.5) / mid) > target
        lo, hi = (mid, hi) if wide else (lo, mid)
    return hi


def neighbours(tied):
    """The quantile function plan_rounds read before: the sample's own, near the median too."""
    return tied


def row(kind: str, n: int, criteria: Criteria, sets: int, seed: int, truth: int) -> list[str]:
    cells = []
    for estimator in ("neighbours", "sparsity"):
        patch = mock.patch.object(comparison, "_NearMedian", neighbours) if estimator == "neighbours" else mock.MagicMock()
        ratios, totals = [], []
        with patch:
            for s in range(sets):
                rng = np.random.default_rng([seed, n, s])
                found = [total_rounds(draw(rng, n, kind), criteria) for _ in range(TRIALS)]
                found = [f for f in found if f is not None]
                if len(found) == TRIALS:
                    ratios.append(max(found) / min(found))
                    totals.append(float(np.median(found)))
        cells += [f"{np.median(ratios):.1f}x", f"{np.percentile(ratios, 90):.1f}x", f"{np.mean(np.array(ratios) <= 2):.2f}",
                  f"{np.median(totals) / truth:.2f}"]
    return cells


RANGE_SIZES = (32, 64, 128)


def range_row(kind: str, n: int, criteria: Criteria, sets: int, seed: int, truth: int) -> list[str]:
    """Coverage and agreement of the 90% intervals of ten identical trials (``--ranges``)."""
    covered, agree, points, widths, medians = [], [], [], [], []
    for s in range(sets):
        rng = np.random.default_rng([seed, n, s])
        plans = [comparison.plan_rounds(draw(rng, n, kind), criteria) for _ in range(TRIALS)]
        plans = [p for p in plans if p.needed is not None and p.span is not None]
        if len(plans) < TRIALS:
            continue
        lows = np.array([n + p.span[0] for p in plans])
        highs = np.array([n + p.span[1] for p in plans])
        totals = np.array([n + p.needed for p in plans])
        covered += list((lows <= truth) & (truth <= highs))
        agree.append(lows.max() <= highs.min())
        points.append(totals.max() / totals.min())
        widths.append(highs.max() / lows.min())
        medians.append(float(np.median(totals)))
    return [f"{np.mean(covered):.2f}", f"{np.mean(agree):.2f}", f"{np.median(widths):.1f}x",
            f"{np.median(points):.1f}x", f"{np.median(medians) / truth:.2f}"]


def ranges(criteria: Criteria, sets: int, seed: int) -> None:
    print(f"the rounds-needed advice with its 90% interval, {TRIALS} identical trials, {sets} sets, seed {seed}")
    print("| distribution | rounds measured | rounds it needs | interval holds it | ten intervals share a point "
          "| highest end / lowest end (median) | point estimates max/min (median) | median / needed |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in KINDS:
        truth = needed_by_distribution(kind, criteria, seed)
        for n in RANGE_SIZES:
            print(f"| {kind} | {n} | {truth} | " + " | ".join(range_row(kind, n, criteria, sets, seed, truth)) + " |")
            sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--ranges", action="store_true", help="the advice's 90%% intervals (module docstring)")
    args = parser.parse_args(argv)
    criteria = Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1)
    if args.ranges:
        ranges(criteria, args.sets, args.seed)
        return 0
    print(f"rounds-needed estimate over {TRIALS} identical trials, {args.sets} sets, seed {args.seed}")
    print("| distribution | rounds measured | rounds it needs | neighbours: max/min median | p90 | within 2x "
          "| median / needed | sparsity: max/min median | p90 | within 2x | median / needed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in KINDS:
        truth = needed_by_distribution(kind, criteria, args.seed)
        for n in SIZES:
            print(f"| {kind} | {n} | {truth} | " + " | ".join(row(kind, n, criteria, args.sets, args.seed, truth)) + " |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
