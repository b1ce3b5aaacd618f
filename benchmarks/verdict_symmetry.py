"""Swapping baseline and candidate mirrors every verdict: seeded A/A comparisons, each run twice
on the same rounds, once with the sides swapped (every per-round log-ratio negated).

Each comparison follows ``compare``'s path through the library: adaptive, a
``RunningSequence`` at alpha 0.01 from the first round at which it is bounded, stopping at
the first decided verdict (``analysis.effect.verdict_of``) or at ``--max-rounds``; fixed,
the sign-test interval of ``--fixed-rounds`` rounds. A pair of runs mirrors when the verdicts
are each other's mirror (slower for faster; equivalent and inconclusive the same, negligible
flags equal). Each pair is also judged by the rule before the window was taken on log-ratios
(+-threshold applied to the percent interval, ``percent_window``) on the same intervals, to show
what the fix changed.

Per-round noise (log-ratios, SD ``--sd``): normal, Student t3, lognormal (sigma 1, centred on
its median: right-skewed): A/A, the true change 0; and "slow rounds" (10% of rounds +20%, the
rest normal), not quite A/A: the candidate's median round is about 0.17% slower, near the edge of
the window, where a rule that is not symmetric shows.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/verdict_symmetry.py --seed 4301 --trials 10000
"""

from __future__ import annotations

import argparse
import datetime
import math
import time

import numpy as np

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, effect_of, verdict_of
from pairbench.errors import StatisticsError
from pairbench.stats.sequential import RunningSequence, first_bounded_n
from pairbench.verdict import Verdict, decide

NOISES = ("normal", "t3", "lognormal", "slow-rounds")
MIRROR = {"slower": "faster", "faster": "slower", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def noise(kind: str, size: int, sd: float, rng: np.random.Generator) -> np.ndarray:
    """Per-round log-ratios of an A/A comparison: median about 0, SD about ``sd``."""
    if kind == "normal":
        return sd * rng.standard_normal(size)
    if kind == "t3":
        return sd * rng.standard_t(3, size) / math.sqrt(3.0)
    if kind == "lognormal":
        return sd * (np.exp(rng.standard_normal(size)) - 1.0) / math.sqrt((math.e - 1.0) * math.e)
    return sd * rng.standard_normal(size) + 0.2 * (rng.random(size) < 0.1)


def percent_window(low: float, high: float, threshold: float) -> Verdict:
    """The rule before: equivalent when -threshold <= low and high <= threshold, in percent."""
    inside = -threshold <= low and high <= threshold
    if low > 0:
        return Verdict("slower", negligible=inside)
    if high < 0:
        return Verdict("faster", negligible=inside)
    return Verdict("equivalent" if inside else "inconclusive")


def adaptive(r: np.ndarray, criteria: Criteria, rule) -> Verdict:
    """The stopping path: after each round from the first bounded one, stop at a decided verdict."""
    rs = RunningSequence(criteria.level_alpha, criteria.t_opt)
    first = first_bounded_n(criteria.level_alpha, criteria.t_opt)
    verdict = Verdict("inconclusive")
    for i, value in enumerate(r):
        rs.extend([value])
        if i + 1 < first:
            continue
        try:
            effect, _ = anytime_effect(rs)
        except StatisticsError:
            continue
        verdict = Verdict("inconclusive") if effect.moved else rule(effect.low, effect.high, criteria.threshold)
        if verdict.decided:
            break
    return verdict


def fixed(r: np.ndarray, criteria: Criteria, rule) -> Verdict:
    try:
        effect, _ = effect_of(r, criteria)
    except StatisticsError:
        return Verdict("inconclusive")
    return rule(effect.low, effect.high, criteria.threshold)


def mirrors(one: Verdict, other: Verdict) -> bool:
    return (MIRROR[one.verdict], one.negligible) == (other.verdict, other.negligible)


def run(trials: int, seed: int, sd: float, max_rounds: int, fixed_rounds: int) -> list[dict]:
    rows = []
    for design in ("adaptive", "fixed"):
        criteria = Criteria(alpha=0.01, threshold=1.0, anytime=design == "adaptive")
        for k, kind in enumerate(NOISES):
            rng = np.random.default_rng([seed, k, design == "adaptive"])
            counts = {"now": 0, "before": 0, "verdicts": {}}
            for _ in range(trials):
                r = noise(kind, max_rounds if design == "adaptive" else fixed_rounds, sd, rng)
                path = adaptive if design == "adaptive" else fixed
                for name, rule in (("now", decide), ("before", percent_window)):
                    one, other = path(r, criteria, rule), path(-r, criteria, rule)
                    counts[name] += not mirrors(one, other)
                    if name == "now":
                        counts["verdicts"][one.verdict] = counts["verdicts"].get(one.verdict, 0) + 1
            rows.append({"design": design, "noise": kind, "trials": trials, **counts})
    return rows


def check_verdict_of_agrees(seed: int, sd: float) -> None:
    """The study's adaptive path decides as the library's ``verdict_of`` does on the final rounds."""
    criteria = Criteria(alpha=0.01, threshold=1.0)
    r = noise("normal", 80, sd, np.random.default_rng(seed))
    verdict = verdict_of(lambda: effect_of(r, criteria), criteria)[0]
    assert verdict.verdict in MIRROR


def table(rows: list[dict]) -> str:
    lines = ["| design | noise | A/A runs (each also swapped) | not mirrored, now | not mirrored, +-1% in percent (before) "
             "| verdicts (now, one side) |", "|---|---|---|---|---|---|"]
    for row in rows:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(row["verdicts"].items()))
        lines.append(f"| {row['design']} | {row['noise']} | {row['trials']} | {row['now']} | {row['before']} | {verdicts} |")
    total = sum(r["trials"] for r in rows)
    lines.append(f"| all | | {total} | {sum(r['now'] for r in rows)} | {sum(r['before'] for r in rows)} | |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=4301)
    parser.add_argument("--trials", type=int, default=10000, help="A/A runs in all, split over designs and noises")
    parser.add_argument("--sd", type=float, default=0.012, help="per-round SD of the log-ratios")
    parser.add_argument("--max-rounds", type=int, default=300)
    parser.add_argument("--fixed-rounds", type=int, default=60)
    args = parser.parse_args(argv)
    check_verdict_of_agrees(args.seed, args.sd)
    started = time.time()
    rows = run(max(1, args.trials // (2 * len(NOISES))), args.seed, args.sd, args.max_rounds, args.fixed_rounds)
    print(f"verdict_symmetry: seed {args.seed}, {datetime.date.today()}, {time.time() - started:.0f} s")
    print(table(rows))


if __name__ == "__main__":
    main()
