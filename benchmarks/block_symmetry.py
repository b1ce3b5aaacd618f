"""Are the block effects of a Python A/A pair centred on zero and independent?

``pairbench bench`` starts both sides' workers afresh for each block of rounds
and draws its verdict from the blocks' median log-ratios
(``analysis.pairing.block_effects``). Its interval assumes that under A/A
those values are independent with median zero. This script runs long A/A
comparisons of the microbenchmark study's Python workload (``microbench.py``
must have made ``benchmarks/out/microbench-15/py``: its ``a`` and ``a2``
copies) and tests both assumptions on the pooled blocks:

* centre: the sign test (``scipy.stats.binomtest``) and Wilcoxon's signed-rank
  test (``scipy.stats.wilcoxon``) of the block effects;
* independence: lag-1 Pearson and Spearman correlation of consecutive blocks
  within each run;
* a factor fixed per invocation: a chi-square test of the positive blocks per
  run against Bin(n, 1/2).

    flock /work/.heavy.lock .venv/bin/python benchmarks/block_symmetry.py [--runs 4] [--rounds 3200] [--first-seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

from pairbench.analysis.pairing import block_effects

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "benchmarks" / "out" / "microbench-15" / "py"


def run_blocks(seed: int, rounds: int, out: Path, source: str) -> np.ndarray:
    """One A/A comparison of ``rounds`` rounds by the pairbench in ``source`` (a package's
    parent directory; "" for the installed one); its block effects in the order the blocks ran."""
    sides = [str(WORKLOAD / name / "bench_micro.py") for name in ("a", "a2")]
    env = {**os.environ, **({"PYTHONPATH": os.path.abspath(source)} if source else {})}
    subprocess.run([str(Path(sys.executable).with_name("pairbench")), "bench", "-q", "--seed", str(seed),
                    "--runs", str(rounds), "--max-time", "120s", "--json", str(out), *sides],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    series = {s["side"]: s for s in json.loads(out.read_text())["series"]}
    base, cand = _measured(series[0]), _measured(series[1])
    pairs = sorted(set(base) & set(cand))
    ratios = np.log(np.array([cand[p][0] for p in pairs]) / np.array([base[p][0] for p in pairs]))
    return block_effects(ratios, np.array([base[p][1] for p in pairs]))


def _measured(series: dict) -> dict[int, tuple[int, float]]:
    """pair number -> (wall_ns, block) of the paired measured samples of one side."""
    samples, blocks = series["samples"], series["metrics"]["block"]
    return {samples["pair"][i]: (samples["wall_ns"][i], blocks[i]) for i, warm in enumerate(samples["warmup"])
            if not warm and samples["pair"][i] >= 0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3200)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR",
                        help="the pairbench package in DIR (repeatable: runs alternate between them)")
    args = parser.parse_args(argv)
    if not WORKLOAD.is_dir():
        sys.exit(f"{WORKLOAD} is missing: run benchmarks/microbench.py first (it makes the Python copies)")
    sources = dict(item.split("=", 1) for item in args.source) or {"installed": ""}
    runs: dict[str, list[np.ndarray]] = {label: [] for label in sources}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first_seed, args.first_seed + args.runs):
            for label, source in sources.items():
                effects = run_blocks(seed, args.rounds, Path(tmp) / f"r{seed}.json", source)
                runs[label].append(effects)
                rank = stats.spearmanr(effects[:-1], effects[1:])
                print(f"{label} seed {seed}: {effects.size} blocks, median {100 * np.median(effects):+.3f}%, "
                      f"positive {int(np.sum(effects > 0))}, lag-1 Spearman {rank.statistic:+.3f} "
                      f"(p {rank.pvalue:.3f})", flush=True)
    for label, effects in runs.items():
        summarize(label, effects)
    return 0


def summarize(label: str, runs: list[np.ndarray]) -> None:
    """The pooled centre tests and the per-run chi-square of positive blocks."""
    pooled = np.concatenate(runs)
    nonzero = pooled[pooled != 0]
    print(f"\n{label}: {pooled.size} blocks, median {100 * np.median(pooled):+.3f}%, mean "
          f"{100 * pooled.mean():+.3f}% ± {100 * pooled.std(ddof=1) / np.sqrt(pooled.size):.3f}% (standard error); "
          f"sign test p {stats.binomtest(int(np.sum(nonzero > 0)), nonzero.size).pvalue:.3f}, "
          f"Wilcoxon p {stats.wilcoxon(nonzero).pvalue:.3f}")
    positive = np.array([np.sum(e > 0) for e in runs])
    half = np.array([e.size / 2 for e in runs])
    chi2 = float(np.sum((positive - half) ** 2 / (half / 2)))  # Bin(n, 1/2): variance n/4
    print(f"{label}: positive blocks per run {positive.tolist()}: chi-square {chi2:.2f} on {len(runs)} df, "
          f"p {stats.chi2.sf(chi2, len(runs)):.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
