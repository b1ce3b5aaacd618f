"""What a difference in where two byte-identical files' pages lie does to A/A verdicts, and what
running each invocation from a fresh copy (``measure.placement``) costs in power.

Pure and seeded, no timing (run under ``nice -n 10``), except that ``--gbench`` reads the per-round
log-ratios of real Google Benchmark +3% result files.

* **A/A, a file's placement fixed for the run** (before): each side's file has an offset drawn once
  per run, N(0, tau^2) in log time, so every round's log-ratio is (offset_B - offset_A) + noise;
  **drawn per invocation** (a fresh copy each time): each sample gets its own offsets. Per-round noise
  normal, SD ``--sigma``. Each run stops as ``bench`` does: anytime-valid interval at alpha 0.01 over a
  suite of 14 (the benchmark's level alpha / 14), at least 32 rounds, looked at every 4 rounds, at most
  ``--max-rounds``. Counted: runs ending `slower` or `faster` (a false change).
* **Power** (``--gbench FILES``): each real +3% run's first 32 rounds (the verdict's metric), with a
  fresh copy's placement noise added to each sample (``--tau`` values), judged as bench judges one
  benchmark (alpha 0.01, family 1) at 32 rounds, 200 seeds a file: the share still `slower`.

    nice -n 10 .venv/bin/python benchmarks/placement_simulation.py --runs 400 --seed 29 \\
        --gbench /tmp/pairbench-harness-equivalence/results/gbench-2026*-?.json \\
                 /tmp/pairbench-harness-equivalence/results/gbench-2026*-10.json
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pairbench.analysis.comparison import metric_of
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import anytime_effect, effect_of, verdict_of
from pairbench.analysis.pairing import Pairing, paired_values
from pairbench.stats.sequential import RunningSequence

SUITE = 14
MIN_ROUNDS = 32
LOOK_EVERY = 4
TAUS = (0.0025, 0.005, 0.01)


def aa_run(rng: np.random.Generator, tau: float, sigma: float, per_invocation: bool, criteria: Criteria,
           max_rounds: int) -> str:
    """The verdict of one simulated A/A run (see the module docstring)."""
    if per_invocation:
        offsets = rng.normal(0.0, tau, (max_rounds, 2))
        shift = offsets[:, 1] - offsets[:, 0]
    else:
        a, b = rng.normal(0.0, tau, 2)
        shift = np.full(max_rounds, b - a)
    r = shift + rng.normal(0.0, sigma, max_rounds)
    running = RunningSequence(criteria.level_alpha, criteria.t_opt)
    verdict = "inconclusive"
    for n in range(max_rounds):
        running.extend([r[n]])
        if n + 1 >= MIN_ROUNDS and ((n + 1) % LOOK_EVERY == 0 or n + 1 == max_rounds):
            verdict = verdict_of(lambda: anytime_effect(running), criteria)[0].verdict
            if verdict != "inconclusive":
                break
    return verdict


def aa_table(runs: int, seed: int, sigma: float, max_rounds: int) -> None:
    criteria = Criteria(alpha=0.01, threshold=1.0, anytime=True, family=SUITE)
    print(f"A/A runs at alpha 0.01 over a suite of {SUITE} (level {criteria.level_alpha:.2g}), per-round noise SD "
          f"{100 * sigma:.1f}%, {MIN_ROUNDS}-{max_rounds} rounds, {runs} runs a cell, seed {seed}")
    print("| placement SD (tau) | placement | false changes | equivalent | inconclusive |")
    print("|---|---|---|---|---|")
    for tau in TAUS:
        for per_invocation in (False, True):
            rng = np.random.default_rng([seed, int(tau * 1e5), per_invocation])
            found = [aa_run(rng, tau, sigma, per_invocation, criteria, max_rounds) for _ in range(runs)]
            false = sum(v in ("slower", "faster") for v in found)
            print(f"| {100 * tau:.2g}% | {'drawn per invocation (a fresh copy)' if per_invocation else 'fixed for the run'} "
                  f"| {false} of {runs} ({false / runs:.3f}) | {found.count('equivalent')} | {found.count('inconclusive')} |")
            sys.stdout.flush()


def first_rounds(path: str, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' values per round of a real result file's only comparison, in its verdict's metric."""
    from pairbench.store.resultfile import read_result

    run = read_result(path)
    pairing = Pairing(run.benchmarks[0], run.sides[0].name, run.sides[1].name, run.series(0, 0), run.series(0, 1))
    metric, _ = metric_of(pairing, Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1, metric="auto"))
    base, cand = paired_values(pairing.base, pairing.cand, metric)
    return base[:rounds], cand[:rounds]


def power_table(files: list[str], seed: int, seeds: int) -> None:
    criteria = Criteria(alpha=0.01, threshold=1.0, anytime=True, family=1)
    print(f"Google Benchmark +3% (n log n), each file's first {MIN_ROUNDS} rounds, {seeds} seeds a file, seed {seed}")
    print("| placement noise added to each sample (tau) | files | `slower` (share of file x seed) | median estimate |")
    print("|---|---|---|---|")
    data = [first_rounds(f, MIN_ROUNDS) for f in files]
    for tau in (0.0, *TAUS):
        rng = np.random.default_rng([seed, int(tau * 1e5)])
        slower, estimates = 0, []
        for base, cand in data:
            for _ in range(seeds if tau else 1):
                noise = rng.normal(0.0, tau, (2, base.size)) if tau else np.zeros((2, base.size))
                r = np.log(cand / base) + noise[1] - noise[0]
                verdict, effect, _ = verdict_of(lambda r=r: effect_of(r, criteria), criteria)
                slower += verdict.verdict == "slower"
                estimates.append(effect.estimate if effect else np.nan)
        total = len(data) * (seeds if tau else 1)
        print(f"| {100 * tau:.2g}% | {len(data)} | {slower} of {total} ({slower / total:.3f}) | "
              f"{np.nanmedian(estimates):+.2f}% |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--sigma", type=float, default=0.02, help="per-round SD of the log-ratios (0.02: 2%%)")
    parser.add_argument("--max-rounds", type=int, default=320)
    parser.add_argument("--gbench", nargs="*", default=[])
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args(argv)
    aa_table(args.runs, args.seed, args.sigma, args.max_rounds)
    if args.gbench:
        power_table(args.gbench, args.seed, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
