"""How many rounds an A/A comparison needs to be called `equivalent` within +-1%, by the spread of a
round's value (issue 24: what budget a suite of costly rounds, Go's or criterion's, needs).

Pure and seeded, no timing (run under ``nice -n 10``): round values are drawn from a Student t with
5 degrees of freedom (heavier tails than the normal, as preempted rounds give), scaled to a MAD of
``--spreads`` percent and centred on 0; the verdict is pairbench's, from the anytime-valid running
interval (``stats.sequential.running_bounds``, alpha 0.01 tuned at 30 rounds, bench's default) after
each round. Per spread: the median
and quartiles of the first round at which the interval lies within +-1% and holds 0, and the share
of trials decided by 32, 64, 128 and 256 rounds (the brackets a budget gives).

    nice -n 10 .venv/bin/python benchmarks/rounds_to_equivalence.py --trials 200 --seed 2403
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from pairbench.stats.sequential import running_bounds

BRACKETS = (32, 64, 128, 256)
MOST = 512


def rounds_to_equivalence(values: np.ndarray, alpha: float = 0.01, t_opt: int = 30, threshold: float = 1.0) -> int | None:
    """The first n at which the running interval of ``values[:n]`` lies within +-threshold percent and
    holds 0 (``verdict.decide``'s `equivalent`), or None within ``values``."""
    limit_low, limit_high = math.log1p(-threshold / 100.0), math.log1p(threshold / 100.0)
    for n in range(11, values.size + 1):
        low, high = running_bounds(values[:n], alpha, t_opt)
        if limit_low <= low <= 0.0 <= high <= limit_high:
            return n
    return None


def row(spread_pct: float, trials: int, rng: np.random.Generator) -> dict:
    t_mad = 0.7266868438  # the MAD of Student's t with 5 degrees of freedom (scipy.stats.t(5).ppf(0.75))
    found = []
    for _ in range(trials):
        values = rng.standard_t(5, size=MOST) * (spread_pct / 100.0) / t_mad
        n = rounds_to_equivalence(values)
        found.append(math.inf if n is None else n)
    found = np.array(found, dtype=float)
    return {"spread": spread_pct, "median": float(np.median(found)), "q25": float(np.quantile(found, 0.25)),
            "q75": float(np.quantile(found, 0.75)), **{b: float(np.mean(found <= b)) for b in BRACKETS}}


def _rounds(v: float) -> str:
    return f"> {MOST}" if math.isinf(v) else f"{v:.0f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--seed", type=int, default=2403)
    p.add_argument("--spreads", default="0.5,0.75,1,1.25,1.5,2", help="MADs of a round's value, percent")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| MAD of a round's value | rounds to `equivalent`: median (quartiles) | "
          + " | ".join(f"by {b}" for b in BRACKETS) + " |")
    print("|---|---|" + "---|" * len(BRACKETS))
    for spread in (float(x) for x in args.spreads.split(",")):
        r = row(spread, args.trials, rng)
        print(f"| {spread:g}% | {_rounds(r['median'])} ({_rounds(r['q25'])}-{_rounds(r['q75'])}) | "
              + " | ".join(f"{100 * r[b]:.0f}%" for b in BRACKETS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
