"""Error control over a stream of paired links: which rule decides a step, studied by seeded simulation.

A paired history records, at every commit, one *link* per benchmark: the commit against its
predecessor in interleaved randomized rounds. Each link's test is the anytime-valid p-value of
"median log-ratio = 0" (``stats.sequential``: the beta-binomial mixture and Ville's inequality),
so it holds whenever the record stops. The question is the level each link is tested at, so that
the error rate holds over the whole stream of commits and every benchmark of the suite.

Rules compared (m benchmarks, links ordered by commit, then benchmark):

* **constant rate** (pairbench's choice): every link at r / m, r the false steps allowed per
  commit of the whole suite (1 / 1,000). By linearity of expectation the expected number of false
  steps in any N commits is at most N r, whatever the dependence between links: a per-commit error
  rate over an unbounded stream, with the same power at commit 10 and at commit 100,000.
* **alpha-spending per benchmark**: link i of a benchmark at (alpha / m) 6 / (pi^2 i^2):
  family-wise error <= alpha over the whole infinite stream; the level falls as 1 / i^2.
* **LORD++** (Ramdas, Yang, Wainwright & Jordan 2017, "Online control of the false discovery rate
  with decaying memory", NeurIPS) at FDR alpha over the one stream of all links, W0 = alpha / 2,
  gamma_j = 0.0722 ln(max(j, 2)) / (j e^sqrt(ln j)) (their default). Under independent p-values.
* **e-LOND** (Xu & Ramdas 2024, "Online multiple testing with e-values", AISTATS): the e-value of a
  link is the mixture supermartingale at its last round (E <= 1 under H0 by optional stopping);
  reject when e >= 1 / (alpha gamma_t (R_{t-1} + 1)): FDR <= alpha under arbitrary dependence.

Noise of one round's log-ratio ln(candidate / baseline): two executions of a loaded machine,
each ln-time = level + sigma t3/sqrt(3) + a one-sided spike (probability 5%, Exp(mean 30%)),
plus the machine's change between the two halves of the round (AR(1) phi 0.9 of SD sigma), whose
sign the randomized order flips. ``sigma`` is the per-execution noise: 0.5% (a quiet machine's CPU
time), 1%, 2% (wall time beside busy loops).

Reported:
1. A/A streams (every link null): false steps per 1,000 commits of a 20-benchmark suite.
2. Power: a stream in which 2% of commits change one benchmark by +-5% (so the online-FDR rules
   earn wealth as CI histories do), and a 2% step placed at commit c; the share of those steps
   decided at its link, by c.

Usage (pure simulation, no lock needed; about 2 minutes):
    nice -n 10 .venv/bin/python benchmarks/paired_history_errors.py --seed 20261129
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from pairbench.analysis.criteria import tuning_rounds
from pairbench.settings import DEFAULTS
from pairbench.stats.sequential import _best_a, _log_beta_binomial, running_bounds, upper_ranks

SUITE = 20
RATE = 1e-3  # false steps allowed per commit of the whole suite
FDR = 0.05
THRESHOLD = DEFAULTS["threshold"]  # percent


def round_log_ratios(rng, effect: np.ndarray, rounds: int, sigma: float) -> np.ndarray:
    """Rows of ``rounds`` log-ratios, one row per link, row i of true log-effect ``effect[i]``."""
    k = effect.size

    def execution():
        heavy = rng.standard_t(3, size=(k, rounds)) / math.sqrt(3.0)
        spikes = (rng.random((k, rounds)) < 0.05) * rng.exponential(0.30, size=(k, rounds))
        return sigma * heavy + spikes

    machine = np.empty((k, rounds))
    machine[:, 0] = rng.normal(0.0, sigma, k)
    shocks = rng.normal(0.0, sigma * math.sqrt(1 - 0.81), (k, rounds))
    for t in range(1, rounds):
        machine[:, t] = 0.9 * machine[:, t - 1] + shocks[:, t]
    drift_within = np.diff(machine, axis=1, prepend=machine[:, :1]) * rng.choice((-1.0, 1.0), (k, rounds))
    return effect[:, None] + execution() - execution() + drift_within


def evidence(d: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's anytime p-value (1 / running max of M_t at 0) and e-value (M_t at its last round),
    the mixture tuned for ``level`` as a record tunes it."""
    a = _best_a(level, tuning_rounds(level))
    t = np.arange(1, d.shape[1] + 1, dtype=np.float64)
    s = np.clip(t / 2.0, np.cumsum(d < 0, axis=1), np.cumsum(d <= 0, axis=1))
    log_m = _log_beta_binomial(s, t, a)
    return np.minimum(1.0, np.exp(-np.max(log_m, axis=1))), np.exp(log_m[:, -1])


def lord_gamma(n: int) -> np.ndarray:
    j = np.arange(1, n + 1, dtype=np.float64)
    g = np.log(np.maximum(j, 2.0)) / (j * np.exp(np.sqrt(np.log(j))))
    return g / g.sum() * (1.0 - 1e-12) if n > 0 else g


GAMMA = lord_gamma(2_000_000)


def rule_constant(p, e, m: int) -> np.ndarray:
    return p <= RATE / m


def rule_spending(p, e, m: int) -> np.ndarray:
    i = np.arange(p.size) // m + 1  # the link's position in its benchmark's stream
    return p <= (FDR / m) * 6.0 / (math.pi ** 2 * i.astype(np.float64) ** 2)


def rule_lord(p, e, m: int) -> np.ndarray:
    """LORD++ (Ramdas et al. 2017, Algorithm 'LORD++'), alpha = FDR, W0 = alpha / 2."""
    w0, rejected, times = FDR / 2.0, np.zeros(p.size, bool), []
    for t in range(p.size):
        level = GAMMA[t] * w0
        if times:
            level += (FDR - w0) * GAMMA[t - times[0]] + FDR * sum(GAMMA[t - tau] for tau in times[1:])
        if p[t] <= level:
            rejected[t] = True
            times.append(t)
    return rejected


def rule_elond(p, e, m: int) -> np.ndarray:
    """e-LOND (Xu & Ramdas 2024): reject when e_t >= 1 / (alpha gamma_t (R_{t-1} + 1))."""
    rejected, count = np.zeros(p.size, bool), 0
    for t in range(p.size):
        if e[t] * FDR * GAMMA[t] * (count + 1) >= 1.0:
            rejected[t] = True
            count += 1
    return rejected


RULES = {"constant rate r/m": rule_constant, "alpha-spending per benchmark": rule_spending,
         "LORD++ (FDR 5%)": rule_lord, "e-LOND (FDR 5%)": rule_elond}


def null_rates(rng, commits: int, rounds: int, sigma: float, chunk: int = 100_000) -> dict[str, tuple[int, int]]:
    """False steps (links rejected) and histories... of an A/A stream of ``commits`` x SUITE links."""
    level = RATE / SUITE
    p_all, e_all = [], []
    for start in range(0, commits * SUITE, chunk):
        d = round_log_ratios(rng, np.zeros(min(chunk, commits * SUITE - start)), rounds, sigma)
        p, e = evidence(d, level)
        p_all.append(p)
        e_all.append(e)
    p, e = np.concatenate(p_all), np.concatenate(e_all)
    return {name: int(rule(p, e, SUITE).sum()) for name, rule in RULES.items()}


def power(rng, commits: int, places: tuple[int, ...], rounds: int, sigma: float, trials: int,
          ) -> dict[str, list[float]]:
    """The share of 2% steps decided at their own link (p at the rule's level and the interval at
    r/m not negligible), placed at commit ``c`` of a stream where 2% of commits change one benchmark
    by +-5%."""
    level = RATE / SUITE
    found = {name: np.zeros(len(places)) for name in RULES}
    for _ in range(trials):
        effect = np.zeros(commits * SUITE)
        other = rng.random(commits) < 0.02
        effect[np.flatnonzero(other) * SUITE + rng.integers(0, SUITE, other.sum())] = \
            np.log1p(rng.choice((-0.05, 0.05), other.sum()))
        spots = [c * SUITE + int(rng.integers(0, SUITE)) for c in places]
        effect[spots] = math.log(1.02)
        # only the links up to the last place matter; the A/A links after it are never looked at
        last = spots[-1] + 1
        d = round_log_ratios(rng, effect[:last], rounds, sigma)
        p, e = evidence(d, level)
        for name, rule in RULES.items():
            decided = rule(p, e, SUITE)
            for i, spot in enumerate(spots):
                if decided[spot]:
                    low, high = running_bounds(d[spot], level, tuning_rounds(level), tuned_for=level)
                    found[name][i] += high > THRESHOLD / 100 or low > math.log1p(THRESHOLD / 100)
    return {name: (v / trials).tolist() for name, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--null-commits", type=int, default=50_000, help="A/A commits (x 20 links)")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    level = RATE / SUITE
    c = int(upper_ranks(np.array([args.rounds]), level, tuning_rounds(level), "beta-binomial")[0])
    print(f"level per link r/m = {level:g}; at {args.rounds} rounds a link needs {c} of "
          f"{args.rounds} signs on one side\n")
    print("### A/A: false steps per 1,000 commits of a 20-benchmark suite\n")
    print(f"{args.null_commits:,} commits x {SUITE} benchmarks = {args.null_commits * SUITE:,} A/A links, "
          f"{args.rounds} rounds each, seed {args.seed}\n")
    print("| rule | " + " | ".join(f"sigma {s:.1%}: false steps (per 1,000 commits)" for s in (0.005, 0.02)) + " |")
    print("|---|---|---|")
    rows: dict[str, list[str]] = {name: [] for name in RULES}
    for k, sigma in enumerate((0.005, 0.02)):
        begun = time.time()
        counts = null_rates(np.random.default_rng(args.seed + k), args.null_commits, args.rounds, sigma)
        for name, n in counts.items():
            rows[name].append(f"{n} ({1000 * n / args.null_commits:.3f})")
        print(f"<!-- sigma {sigma}: {time.time() - begun:.0f} s -->")
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells) + " |")
    places = (10, 100, 1000, 10000)
    for k, sigma in enumerate((0.005, 0.01, 0.02)):
        print(f"\n### Power: a 2% step decided at its own link, by the commit it is at (sigma {sigma:.1%}, "
              f"{args.rounds} rounds, {args.trials} streams, seed {args.seed + 10 + k})\n")
        print("| rule | " + " | ".join(f"commit {c:,}" for c in places) + " |")
        print("|---|" + "---|" * len(places))
        found = power(np.random.default_rng(args.seed + 10 + k), places[-1] + 1, places, args.rounds, sigma,
                      args.trials)
        for name, shares in found.items():
            print(f"| {name} | " + " | ".join(f"{s:.2f}" for s in shares) + " |")


if __name__ == "__main__":
    main()
