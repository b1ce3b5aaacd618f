"""Fewer rounds at the same error rate? Anytime-valid intervals for paired log-ratios, compared.

The study of issue 15, part 3. Every method below decides after every round
on the per-round log-ratios D = ln(candidate / baseline), as ``compare`` does:
"slower"/"faster" once the running interval excludes 0, "equivalent" once it
lies inside +-threshold. It reports, per noise distribution and true change:

- the share of runs whose interval ever excluded the true change (its
  anytime error; must be <= alpha), and the wrong verdicts;
- the median and 90th percentile of the rounds to a verdict;
- the *oracle*: the fewest rounds a fixed-n test at the same alpha needs for 95%
  power (or, for no change, for its interval to lie inside +-threshold in 95%
  of runs), the best of the t test, the Wilcoxon signed-rank test and the sign
  test, found by simulation on the same distribution.

Methods (all anytime-valid; proofs in ``pairbench.stats.sequential`` and
``pairbench.stats.betting``):

- ``sign t_opt=200``: the sign-based confidence sequence for the median
  (beta-binomial mixture tuned at 200 rounds), what ``compare`` used until now;
- ``sign t_opt=T``: the same, tuned at T rounds;
- ``symmetric``: betting on the signs of D - delta weighted by their clipped
  magnitudes (``stats.betting``), valid whenever D - delta is symmetric given
  the past, which randomized order makes exact under no change.

Noise (per-round SD of D 2% unless said): normal; t with 3 degrees of freedom;
contaminated (10% of rounds with 5x the SD); interrupts (each run hit by a
slow event with probability 0.1, exponential of mean 10%); lognormal runs;
drifting SD (x0.1 .. x1.9 over ~300 rounds); skewed-candidate (the candidate
alone has 15% of rounds 8% slower: D is not symmetric, the median and the
centre differ: coverage is counted against the median).

Usage::

    .venv/bin/python benchmarks/sequential_power.py [--reps 2000] [--horizon 2000] [--seed 15]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from pairbench.stats.sequential import upper_ranks
from symmetric_betting import SymmetricBetting

SD = 0.02
THRESHOLD = math.log(1.01)
NOISES = ("normal", "t3", "contaminated", "interrupts", "lognormal", "drifting", "skewed-candidate")
CHANGES = {"A/A": 0.0, "+1%": math.log(1.01), "+3%": math.log(1.03)}


def noise(kind: str, rng, shape) -> np.ndarray:
    """Per-round log-ratio noise with median 0 (symmetric except ``skewed-candidate``), SD about SD."""
    if kind == "normal":
        return rng.normal(0.0, SD, shape)
    if kind == "t3":
        return SD * rng.standard_t(3, shape) / math.sqrt(3.0)
    if kind == "contaminated":
        wide = rng.uniform(size=shape) < 0.1
        return rng.normal(0.0, SD, shape) * np.where(wide, 5.0, 1.0) / math.sqrt(0.9 + 0.1 * 25)
    if kind == "interrupts":
        def arm():
            hit = rng.uniform(size=shape) < 0.1
            return rng.normal(0.0, SD / 2, shape) + np.log1p(np.where(hit, rng.exponential(0.10, shape), 0.0))
        return arm() - arm()
    if kind == "lognormal":
        return SD * (rng.lognormal(0.0, 1.0, shape) - rng.lognormal(0.0, 1.0, shape)) / 2.9
    if kind == "drifting":
        scale = 1.0 + 0.9 * np.sin(np.arange(shape[1]) / 50.0)
        return rng.normal(0.0, SD, shape) * scale
    if kind == "skewed-candidate":
        slow = rng.uniform(size=shape) < 0.15
        d = rng.normal(0.0, SD, shape) + np.where(slow, math.log(1.08), 0.0)
        return d - skewed_median()
    raise ValueError(kind)


def skewed_median() -> float:
    from scipy import optimize

    def cdf(x):
        return 0.85 * stats.norm.cdf(x, 0, SD) + 0.15 * stats.norm.cdf(x, math.log(1.08), SD)

    return optimize.brentq(lambda x: cdf(x) - 0.5, -0.1, 0.1, xtol=1e-15)


# --------------------------------------------------------------------------- the sign sequence

def mixed_upper_ranks(t: np.ndarray, alpha: float, t_opts: tuple[int, ...]) -> np.ndarray:
    """c_t for the equal-weight mixture of the beta-binomial supermartingales tuned at ``t_opts``
    (a mixture of nonnegative supermartingales is one): the smallest s > t/2 with the mixture's
    M_t(s) >= 1/alpha, else t + 1."""
    from scipy import special

    from pairbench.stats.sequential import _best_a

    a = np.array([_best_a(alpha, t_opt) for t_opt in t_opts])
    tf = t.astype(np.float64)

    def log_m(s):
        parts = (tf * math.log(2.0))[None, :] + special.betaln(a[:, None] + s[None, :], a[:, None] + tf - s[None, :]) \
            - special.betaln(a, a)[:, None]
        return special.logsumexp(parts, axis=0) - math.log(a.size)

    threshold = math.log(1.0 / alpha) + 1e-9
    crosses = log_m(tf) >= threshold
    lo, hi = t // 2, t.copy()
    while True:
        active = crosses & (hi - lo > 1)
        if not active.any():
            break
        mid = (lo + hi) // 2
        up = log_m(mid.astype(np.float64)) >= threshold
        hi, lo = np.where(active & up, mid, hi), np.where(active & ~up, mid, lo)
    return np.where(crosses, hi, t + 1)


def sign_decisions(d: np.ndarray, alpha: float, t_opt, truth: float) -> dict:
    """Rounds to a verdict, the verdicts and whether the truth was ever excluded, for the running
    intersection of the sign-based sequence (vectorised through its count criterion); ``t_opt`` a
    tuple mixes the sequences tuned at each."""
    reps, horizon = d.shape
    t = np.arange(1, horizon + 1)
    c = (mixed_upper_ranks(t, alpha, t_opt) if isinstance(t_opt, tuple)
         else upper_ranks(t, alpha, t_opt, "beta-binomial"))

    def excluded_above(q):  # the sequence lies above q at t: #{D <= q} <= t - c
        return np.cumsum(d <= q, axis=1) <= t - c

    def excluded_below(q):  # lies below q: #{D < q} >= c
        return np.cumsum(d < q, axis=1) >= c

    slower, faster = excluded_above(0.0), excluded_below(0.0)
    inside = (np.maximum.accumulate(excluded_above(-THRESHOLD), axis=1)
              & np.maximum.accumulate(excluded_below(THRESHOLD), axis=1))
    missed = np.any(excluded_above(truth) | excluded_below(truth), axis=1)
    return _first_verdicts(slower, faster, inside, missed)


def _first_verdicts(slower, faster, inside, missed) -> dict:
    """From per-round boolean arrays (reps x horizon) of "decided so": the first round decided."""
    decided = slower | faster | inside
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), -1)
    rows = np.arange(decided.shape[0])
    at = np.maximum(first, 0)
    verdict = np.where(first < 0, "inconclusive",
                       np.where(slower[rows, at], "slower",
                                np.where(faster[rows, at], "faster", "equivalent")))
    return {"rounds": np.where(first < 0, decided.shape[1], first + 1), "verdict": verdict, "missed": missed}


# --------------------------------------------------------------------------- the symmetric bets

def symmetric_decisions(d: np.ndarray, alpha: float, truth: float) -> dict:
    """The same for the symmetric betting sequence: its wealth at 0, at +-threshold and at the truth."""
    points = np.array([0.0, -THRESHOLD, THRESHOLD, truth])
    bets = SymmetricBetting(alpha)
    above, below = bets.excluded(d, points)  # reps x horizon x points: the centre lies above / below
    slower, faster = above[:, :, 0], below[:, :, 0]
    inside = np.maximum.accumulate(above[:, :, 1], axis=1) & np.maximum.accumulate(below[:, :, 2], axis=1)
    missed = np.any(above[:, :, 3] | below[:, :, 3], axis=1)
    return _first_verdicts(slower, faster, inside, missed)


# --------------------------------------------------------------------------- the oracle

def oracle(kind: str, change: float, alpha: float, seed: int, reps: int = 1000) -> tuple[int, str]:
    """The fewest rounds any of the t, Wilcoxon signed-rank and sign tests needs at ``alpha`` for 95%
    power to reject no change (or, with no change, for its 1 - alpha interval to lie inside
    +-threshold in 95% of runs), and which test; by simulation and bisection over n."""
    return min((_fewest_rounds(kind, change, alpha, seed, reps, k, test), test)
               for k, test in enumerate(("t", "wilcoxon", "sign")))


def _fewest_rounds(kind: str, change: float, alpha: float, seed: int, reps: int, k: int, test: str) -> int:
    """The smallest n at which ``test`` decides rightly in 95% of ``reps`` simulated runs."""
    def power(n: int) -> float:
        rng = np.random.default_rng([seed, n, k])
        d = noise(kind, rng, (reps, n)) + change
        return float(np.mean(_fixed_decides(d, test, alpha, change == 0.0)))

    lo, hi = 4, 8
    while power(hi) < 0.95 and hi <= 20000:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power(mid) >= 0.95 else (mid, hi)
    return hi


def _fixed_decides(d: np.ndarray, test: str, alpha: float, equivalence: bool) -> np.ndarray:
    low, high = fixed_interval(d, test, alpha)
    if equivalence:
        return (low >= -THRESHOLD) & (high <= THRESHOLD)
    return (low > 0) | (high < 0)


def fixed_interval(d: np.ndarray, test: str, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Each run's fixed-n 1 - alpha interval: the t interval for the mean, the sign-test interval
    for the median, or the Hodges-Lehmann interval (Walsh averages, the signed-rank test's ranks by
    the normal approximation) for the centre of symmetry; (-inf, inf) where n is too small."""
    n = d.shape[1]
    unbounded = np.full(d.shape[0], -np.inf), np.full(d.shape[0], np.inf)
    if test == "t":
        mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
        half = stats.t.ppf(1 - alpha / 2, n - 1) * se
        low, high = mean - half, mean + half
    elif test == "sign":
        k = int(stats.binom.ppf(alpha / 2, n, 0.5))  # the largest k with P(Binom(n, 1/2) <= k - 1) <= alpha/2
        k += bool(stats.binom.cdf(k, n, 0.5) <= alpha / 2)
        if k < 1:
            return unbounded
        s = np.sort(d, axis=1)
        low, high = s[:, k - 1], s[:, n - k]
    else:  # Wilcoxon: Hodges-Lehmann interval from Walsh averages, normal approximation of the ranks
        walsh = (d[:, :, None] + d[:, None, :]) / 2.0
        iu = np.triu_indices(n)
        w = np.sort(walsh[:, iu[0], iu[1]], axis=1)
        m = w.shape[1]
        z = stats.norm.ppf(1 - alpha / 2)
        k = int(math.floor(m / 2 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)))
        if k < 1:
            return unbounded
        low, high = w[:, k - 1], w[:, m - k]
    return low, high


def fixed_table(reps: int, seed: int, alpha: float, noises) -> list[str]:
    """With --runs: how often each fixed-n interval covers the median of D, and its median width."""
    lines = ["| noise | n | sign test: covers the median | width | Hodges-Lehmann: covers the median | width |",
             "|---|---|---|---|---|---|"]
    for k, kind in enumerate(noises):
        for n in (30, 100):
            d = noise(kind, np.random.default_rng([seed, 99, k, n]), (reps, n))  # median 0
            cells = []
            for test in ("sign", "wilcoxon"):
                low, high = fixed_interval(d, test, alpha)
                cells += [f"{np.mean((low <= 0) & (high >= 0)):.4f}", f"{100 * np.median(high - low):.2f}%"]
            lines.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    return lines


# --------------------------------------------------------------------------- report

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--t-opt", type=int, nargs="*", default=[200, 50])
    parser.add_argument("--noises", nargs="*", default=list(NOISES))
    parser.add_argument("--mix", type=int, nargs="*", default=[20, 100, 500],
                        help="also the mixture of the sequences tuned at these (none: skip)")
    parser.add_argument("--no-symmetric", action="store_true", help="skip the symmetric betting sequence")
    args = parser.parse_args(argv)
    started = time.monotonic()
    print(f"alpha {args.alpha}, threshold 1%, noise SD {SD:.0%}, {args.reps} runs per cell, "
          f"horizon {args.horizon} rounds, seed {args.seed}\n")
    print("| noise | change | method | ever missed the truth (95% upper bound) | wrong verdicts | verdicts | median rounds "
          "| p90 rounds | oracle (test) | median / oracle | p90 / oracle |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k, kind in enumerate(args.noises):
        for j, (label, change) in enumerate(CHANGES.items()):
            rng = np.random.default_rng([args.seed, k, j])
            d = noise(kind, rng, (args.reps, args.horizon)) + change
            truth = change
            n_oracle, test = oracle(kind, change, args.alpha, args.seed)
            tunings = [*args.t_opt, *([tuple(args.mix)] if args.mix else [])]
            for t_opt in tunings:
                name = f"sign mixture {'+'.join(map(str, t_opt))}" if isinstance(t_opt, tuple) else f"sign t_opt={t_opt}"
                found = sign_decisions(d, args.alpha, t_opt, truth)
                print(_row(kind, label, name, change, found, n_oracle, test), flush=True)
            if not args.no_symmetric:
                found = symmetric_decisions(d, args.alpha, truth)
                print(_row(kind, label, "symmetric", change, found, n_oracle, test), flush=True)
    print(f"\nFixed rounds (--runs), {args.reps} runs per cell, intervals at 1 - alpha = {1 - args.alpha:g}:\n")
    print("\n".join(fixed_table(args.reps, args.seed, args.alpha, args.noises)))
    print(f"\n(run time {time.monotonic() - started:.0f} s)")
    return 0


def _row(kind, label, name, change, found, n_oracle, test) -> str:
    rounds, verdict = found["rounds"], found["verdict"]
    right = "equivalent" if change == 0 else "slower"
    wrong = int(np.sum((verdict != right) & (verdict != "inconclusive")))
    counts = ", ".join(f"{v} {int(np.sum(verdict == v))}" for v in ("slower", "faster", "equivalent", "inconclusive")
                       if np.any(verdict == v))
    med, p90 = float(np.median(rounds)), float(np.percentile(rounds, 90))
    missed = int(np.sum(found["missed"]))
    upper = stats.beta.ppf(0.95, missed + 1, rounds.size - missed)  # one-sided 95% Clopper-Pearson
    return (f"| {kind} | {label} | {name} | {missed / rounds.size:.4f} (<= {upper:.4f}) | {wrong} | {counts} | {med:.0f} "
            f"| {p90:.0f} | {n_oracle} ({test}) | {med / n_oracle:.2f} | {p90 / n_oracle:.2f} |")


if __name__ == "__main__":
    raise SystemExit(main())
