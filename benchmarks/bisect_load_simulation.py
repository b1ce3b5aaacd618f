"""Bisect under load that moves a step's relative size between comparisons: a seeded simulation.

A short command's start-up work grows with the load and dilutes a fixed added cost, so each
comparison of ``pairbench bisect`` sees the step at its own scale. Here each comparison's true
change is the step's times a factor drawn per comparison (uniform on ``[--scale-low, 1]``), each
interval centred on a normal draw around it (SD ``--sd`` percent) with the half-width its level
calls for (``Search.level``). One 3% step among 63 commits, ``--trials`` searches; counts of right
and wrong commits, "spread" and inconclusive answers. Pure (nothing is timed): run it under
``nice -n 10``, without the lock.

``--rule-from FILE`` loads another ``analysis/bisection.py`` with the same ``Search`` interface
(for example an older one: ``git show 1775f50:src/pairbench/analysis/bisection.py > old.py``).

Usage::

    nice -n 10 .venv/bin/python benchmarks/bisect_load_simulation.py --scale-low 0.4 --trials 2000
    nice -n 10 .venv/bin/python benchmarks/bisect_load_simulation.py --scale-low 0.4 --rule-from old.py
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
from scipy.stats import norm

from pairbench.analysis.records import Effect

COMMITS = 63
STEP_PCT = 3.0


def rule_module(path: Path | None):
    """This tree's ``analysis.bisection``, or the one in ``path``."""
    if path is None:
        from pairbench.analysis import bisection

        return bisection
    spec = importlib.util.spec_from_file_location("bisection_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def simulate(rule, trials: int, scale_low: float, sd: float, seed: int) -> dict[str, int]:
    """What ``trials`` seeded searches answered (module docstring)."""
    rng = np.random.default_rng(seed)
    counts = {"right": 0, "wrong": 0, "spread": 0, "inconclusive": 0}
    for _ in range(trials):
        position = int(rng.integers(1, COMMITS + 1))
        truth = [STEP_PCT if k >= position else 0.0 for k in range(COMMITS + 1)]
        search = rule.Search([f"c{k}" for k in range(COMMITS + 1)], alpha=0.01, threshold=1.0)
        z = float(norm.ppf(1 - search.level / 2))

        def measured(true: float, scale: float, z: float = z) -> Effect:
            estimate = scale * true + float(rng.normal(0.0, sd))
            return Effect(estimate, estimate - sd * z, estimate + sd * z, 0.99, "sim", 0.5, "sim", 30)

        while (pair := search.next()) is not None:
            scale = float(rng.uniform(scale_low, 1.0))
            search.record(pair, {"b": measured(truth[pair.cand] - truth[pair.base], scale)})
        answer = search.answer()
        counts[answer.kind if answer.kind != "found" else
               ("right" if answer.commit == position else "wrong")] += 1
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=2000)
    p.add_argument("--scale-low", type=float, default=0.4, help="the least share of the step a comparison sees")
    p.add_argument("--sd", type=float, default=0.1, help="each estimate's SD, percent")
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--rule-from", type=Path, help="another analysis/bisection.py to simulate")
    args = p.parse_args(argv)
    counts = simulate(rule_module(args.rule_from), args.trials, args.scale_low, args.sd, args.seed)
    print(f"scale U({args.scale_low:g}, 1), SD {args.sd:g}%, {args.trials} searches: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
