"""Does a count's verdict hold its error rate? The stopping rule of ``--metric instructions``,
simulated on counts that do not vary, that vary a little, and that vary adversarially.

Every run drives pairbench's own ``StoppingRule`` (the one ``compare`` and ``bench`` use) with
synthetic rounds: each round one baseline and one candidate count per operation, drawn from the
model below, until the rule decides or ``--horizon`` rounds pass; then ``analyse``'s verdict
function sees the same rounds (``effect.exact_or_interval``). A verdict is wrong when it
says ``slower`` while the median paired ratio is not above 1 (or ``faster`` while not below), or
``equivalent`` while the median ratio lies beyond the threshold. The rule's alpha is 0.01 unless
``--alpha``; its threshold 1%.

Models (a count per operation; the baseline's typical count 100,000):

* ``constant``: the same count in every round (a C loop under Callgrind): A/A, +0.5%, -2%;
* ``jitter``: the count plus a uniform integer in [0, 40] (0.04%: allocator addresses, a few
  instructions of difference per round): A/A and +0.5%;
* ``aslr``: one of five counts per process, drawn per round (a layout that changes a loop's
  alignment, hash seeds): spread 0.3%, A/A and +2%;
* ``two-point q``: adversarial for the exact rule: the baseline constant, the candidate equal to
  it with probability q and 5% higher otherwise (q = 0.45, 0.49, 0.55): the median lies at
  +5% for q < 1/2, so ``k`` rounds of the low value mislead the exact rule with probability q^k.

Also checked: the bound the exact rule rests on (``stats.counts``): over random distributions
of 2 to 6 values per side, the probability that the first ``k`` rounds show one value per side
on the wrong side of the median, summed exactly, against 2^-k.

Usage::

    .venv/bin/python benchmarks/exact_counts.py [--reps 2000] [--seed 41] [--alpha 0.01]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import numpy as np

from pairbench import preload
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import exact_or_interval, verdict_of
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.sampler import Measured, RoundEnd
from pairbench.model import Sample
from pairbench.stats.counts import exact_rounds

BASE = 100_000.0


def draw_constant(rng, change):
    return lambda n: (np.full(n, BASE), np.full(n, round(BASE * (1 + change))))


def draw_jitter(rng, change):
    return lambda n: (BASE + rng.integers(0, 41, n), round(BASE * (1 + change)) + rng.integers(0, 41, n))


def draw_aslr(rng, change):
    levels = BASE * (1 + np.linspace(0, 0.003, 5))
    return lambda n: (rng.choice(levels, n).round(), (rng.choice(levels, n) * (1 + change)).round())


def draw_two_point(rng, q):
    return lambda n: (np.full(n, BASE), np.where(rng.random(n) < q, BASE, BASE * 1.05))


MODELS = {  # name -> (maker, parameter, true median ratio - 1)
    "constant A/A": (draw_constant, 0.0, 0.0),
    "constant +0.5%": (draw_constant, 0.005, 0.005),
    "constant -2%": (draw_constant, -0.02, -0.02),
    "jitter A/A": (draw_jitter, 0.0, 0.0),
    "jitter +0.5%": (draw_jitter, 0.005, 0.005),
    "aslr A/A": (draw_aslr, 0.0, 0.0),
    "aslr +2%": (draw_aslr, 0.02, 0.02),
    "two-point q=0.45": (draw_two_point, 0.45, 0.05),
    "two-point q=0.49": (draw_two_point, 0.49, 0.05),
    "two-point q=0.55": (draw_two_point, 0.55, 0.0),
}


def wrong(verdict: str, true_change: float, threshold_pct: float) -> bool:
    if verdict == "slower":
        return not true_change > 0
    if verdict == "faster":
        return not true_change < 0
    if verdict == "equivalent":
        return abs(true_change) * 100 > threshold_pct
    return False


def one_run(draw, criteria: Criteria, horizon: int) -> tuple[str, int, str]:
    """(verdict, rounds, method) of one simulated comparison driven by the real stopping rule."""
    rule = StoppingRule(criteria, 0, [1])
    base, cand = draw(horizon)
    for n in range(1, horizon + 1):
        samples = tuple(Measured(side, 0, Sample(wall_ns=1000, iterations=1), {"instructions": float(v)})
                        for side, v in ((0, base[n - 1]), (1, cand[n - 1])))
        rule.on_round(RoundEnd(n, False, samples, n, 2 * n, 0))
        if n >= 2 and rule.decide():
            break
    b, c = np.asarray(base[:n], dtype=np.float64), np.asarray(cand[:n], dtype=np.float64)
    verdict, effect, _ = verdict_of(lambda: exact_or_interval(b, c, np.log(c / b), criteria), criteria)
    stopped = rule.latest[(0, 1)][0].verdict
    assert stopped == verdict.verdict or not verdict.decided, (stopped, verdict)  # the rule and analyse agree
    return verdict.verdict, n, effect.method if effect else "none"


def bound_check(rng, trials: int, ks=range(2, 11)) -> dict:
    """The most, over random distributions, of P(the first k rounds show one pair throughout, on
    the wrong side of the median ratio), summed exactly, against 2^-k."""
    worst = {k: 0.0 for k in ks}
    for _ in range(trials):
        m, n = rng.integers(1, 7, 2)
        p, q = rng.dirichlet(np.ones(m) * rng.uniform(0.2, 3)), rng.dirichlet(np.ones(n) * rng.uniform(0.2, 3))
        x, y = rng.uniform(0.95, 1.05, m), rng.uniform(0.95, 1.05, n)
        pairs = [(y[j] / x[i], p[i] * q[j]) for i, j in itertools.product(range(m), range(n))]
        ratios = np.array([r for r, _ in pairs])
        masses = np.array([w for _, w in pairs])
        order = np.argsort(ratios)
        cumulative = np.cumsum(masses[order])
        median = ratios[order][np.searchsorted(cumulative, 0.5)]
        for k in ks:  # a pair on the other side of 1 than the median (or at 1 when the median is not)
            side = np.sign(ratios - 1)
            bad = side != np.sign(median - 1)
            worst[k] = max(worst[k], float(np.sum(masses[bad] ** k)))
    return {k: {"worst": worst[k], "bound": 2.0 ** -k} for k in ks}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--horizon", type=int, default=400)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    preload.load()
    criteria = Criteria(alpha=args.alpha, threshold=1.0, metric="instructions")
    started = time.monotonic()
    print(f"alpha {args.alpha}: the exact rule at alpha/2 decides after {exact_rounds(criteria.level)} identical "
          f"rounds; the interval gets alpha/2. {args.reps} runs per model, seed {args.seed}.\n")
    print(f"{'model':<20} {'wrong':>7} {'slower':>7} {'faster':>7} {'equiv':>7} {'incon':>7} "
          f"{'exact':>6} {'rounds p50':>10} {'p90':>5}")
    results = {}
    for index, (name, (maker, parameter, truth)) in enumerate(MODELS.items()):
        rng = np.random.default_rng([args.seed, index])
        draw = maker(rng, parameter)
        counts = {"slower": 0, "faster": 0, "equivalent": 0, "inconclusive": 0}
        errors, exact, rounds = 0, 0, []
        for _ in range(args.reps):
            verdict, n, method = one_run(draw, criteria, args.horizon)
            counts[verdict] += 1
            errors += wrong(verdict, truth, criteria.threshold)
            exact += method.startswith("exact")
            rounds.append(n)
        p50, p90 = np.percentile(rounds, [50, 90])
        results[name] = {"wrong": errors / args.reps, **{k: v / args.reps for k, v in counts.items()},
                         "exact": exact / args.reps, "rounds_p50": float(p50), "rounds_p90": float(p90)}
        print(f"{name:<20} {errors / args.reps:>7.4f} {counts['slower']:>7} {counts['faster']:>7} "
              f"{counts['equivalent']:>7} {counts['inconclusive']:>7} {exact / args.reps:>6.2f} {p50:>10.0f} "
              f"{p90:>5.0f}")
    bound = bound_check(np.random.default_rng([args.seed, 99]), 20_000)
    print("\nThe exact rule's bound: worst P(k rounds of one wrong pair) over 20,000 random distributions")
    for k, row in bound.items():
        print(f"  k={k:>2}: worst {row['worst']:.5f}  bound 2^-k {row['bound']:.5f}"
              f"{'  EXCEEDED' if row['worst'] > row['bound'] else ''}")
    print(f"\n{time.monotonic() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"alpha": args.alpha, "seed": args.seed, "reps": args.reps, "models": results,
                       "bound": {str(k): v for k, v in bound.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
