"""Bisect when the step's measured size varies between comparisons (as it does under changing
load): a seeded simulation of every comparison as the stopping rule runs it.

One step commit, uniform on 1..63 of 64 commits (``analysis.bisection.Search``, alpha 0.01,
threshold 1%: each comparison at alpha / 8). Each comparison feeds a ``RunningSequence`` at the
search's level with per-round log-ratios = its true change + noise, and from the first bounded
round stops as soon as ``Boundary.side`` of ``anytime_effect`` is decided (the search's own
boundaries), or at ``--max-rounds``; the effect is then recorded. The true change of a comparison
is ln(1 + step) x a factor drawn for that comparison when the step lies in (base, cand], else 0:
the factor is 1 (a fixed step), U(0.5, 1.5), U(0.4, 1) or lognormal(0, 0.3).

Counts per cell: the right commit, a wrong commit, "spread" (always false here: there is one
step), inconclusive; the median comparisons and rounds per search. Goals: false "spread" at most
alpha, the right commit in at least 0.8 of searches at a 5% step and 1% noise.

``--rule-from FILE`` loads another ``analysis/bisection.py`` with the same ``Search`` interface, for
the rule before (``git show 4d6dc80~1:src/pairbench/analysis/bisection.py > before.py``: the
boundary at half the step).

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/bisect_varying_step.py --seed 600 --searches 200
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import math
import sys
import time
from pathlib import Path

import numpy as np

from pairbench.analysis.bisection import Search
from pairbench.analysis.criteria import UNDECIDED, Boundary, Criteria
from pairbench.analysis.effect import anytime_effect
from pairbench.errors import StatisticsError
from pairbench.stats.sequential import RunningSequence, first_bounded_n

COMMITS = 64
FACTORS = ("1", "U(0.5,1.5)", "U(0.4,1)", "lognormal(0,0.3)")
CELLS = [(2.0, "normal", 1.0), (5.0, "normal", 1.0), (10.0, "normal", 1.0), (5.0, "t3", 3.0)]


def factor(kind: str, rng: np.random.Generator) -> float:
    if kind == "1":
        return 1.0
    if kind == "U(0.5,1.5)":
        return float(rng.uniform(0.5, 1.5))
    if kind == "U(0.4,1)":
        return float(rng.uniform(0.4, 1.0))
    return float(rng.lognormal(0.0, 0.3))


def noise(kind: str, sd_pct: float, size: int, rng: np.random.Generator) -> np.ndarray:
    sd = sd_pct / 100.0
    if kind == "normal":
        return sd * rng.standard_normal(size)
    return sd * rng.standard_t(3, size) / math.sqrt(3.0)


def comparison(true: float, bound: Boundary, level: float, noise_kind: str, sd: float, max_rounds: int,
               rng: np.random.Generator):
    """One comparison as the stopping rule runs it: the effect it stopped on, and its rounds."""
    criteria = Criteria(alpha=level)
    rs = RunningSequence(criteria.level_alpha, criteria.t_opt)
    first = first_bounded_n(criteria.level_alpha, criteria.t_opt)
    values = true + noise(noise_kind, sd, max_rounds, rng)
    effect = None
    for i in range(max_rounds):
        rs.extend(values[i:i + 1])
        if i + 1 < first:
            continue
        try:
            effect, _ = anytime_effect(rs)
        except StatisticsError:
            continue
        if bound.side(effect) != UNDECIDED:
            return effect, i + 1
    return effect, max_rounds


SEARCH = Search


def rule_from(path: Path):
    """The ``Search`` of another ``analysis/bisection.py``."""
    spec = importlib.util.spec_from_file_location("bisection_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.Search


def search(step_pct: float, kind: str, noise_kind: str, sd: float, max_rounds: int, rng: np.random.Generator):
    k = int(rng.integers(1, COMMITS))
    s = SEARCH([f"c{i}" for i in range(COMMITS)], 0.01, 1.0)
    rounds = 0
    while (pair := s.next()) is not None:
        b = s.boundaries()
        bound = b if isinstance(b, Boundary) else b["bm"]
        true = math.log1p(step_pct / 100.0) * factor(kind, rng) if pair.base < k <= pair.cand else 0.0
        effect, used = comparison(true, bound, s.level, noise_kind, sd, max_rounds, rng)
        rounds += used
        s.record(pair, {"bm": effect})
    a = s.answer()
    outcome = a.kind if a.kind != "found" else ("right" if a.commit == k else "wrong")
    return outcome, len(s.trials), rounds, a.why


def run(searches: int, seed: int, max_rounds: int) -> list[dict]:
    rows = []
    for c, (step, noise_kind, sd) in enumerate(CELLS):
        for f, kind in enumerate(FACTORS):
            rng = np.random.default_rng([seed, c, f])
            found = [search(step, kind, noise_kind, sd, max_rounds, rng) for _ in range(searches)]
            counts = {o: sum(1 for x in found if x[0] == o) for o in ("right", "wrong", "spread", "inconclusive")}
            whys: dict[str, int] = {}
            for x in found:
                if x[0] == "inconclusive":
                    whys[x[3]] = whys.get(x[3], 0) + 1
            rows.append({"step": step, "noise": f"{noise_kind}, SD {sd:g}%", "factor": kind, "searches": searches,
                         **counts, "whys": whys, "comparisons": float(np.median([x[1] for x in found])),
                         "rounds": float(np.median([x[2] for x in found]))})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| step | noise | factor | searches | right | wrong | spread | inconclusive (why) | comparisons (median) "
             "| rounds (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        whys = ", ".join(f"{k} {v}" for k, v in sorted(r["whys"].items()))
        lines.append(f"| {r['step']:g}% | {r['noise']} | {r['factor']} | {r['searches']} | {r['right']} | {r['wrong']} "
                     f"| {r['spread']} | {r['inconclusive']}{f' ({whys})' if whys else ''} | {r['comparisons']:g} "
                     f"| {r['rounds']:g} |")
    varying = [r for r in rows if r["factor"] != "1"]
    lines.append(f"\nfalse spread: {sum(r['spread'] for r in varying)} of {sum(r['searches'] for r in varying)} "
                 f"searches with a varying step, {sum(r['spread'] for r in rows if r['factor'] == '1')} of "
                 f"{sum(r['searches'] for r in rows if r['factor'] == '1')} with a fixed one; wrong commits "
                 f"{sum(r['wrong'] for r in rows)} of {sum(r['searches'] for r in rows)}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=600)
    parser.add_argument("--searches", type=int, default=200, help="searches per cell")
    parser.add_argument("--max-rounds", type=int, default=600, help="rounds a comparison may take at most")
    parser.add_argument("--rule-from", type=Path, default=None, help="another analysis/bisection.py")
    args = parser.parse_args(argv)
    global SEARCH
    SEARCH = rule_from(args.rule_from) if args.rule_from else Search
    started = time.time()
    rows = run(args.searches, args.seed, args.max_rounds)
    print(f"bisect_varying_step: seed {args.seed}, {datetime.date.today()}, {time.time() - started:.0f} s")
    print(table(rows))


if __name__ == "__main__":
    main()
