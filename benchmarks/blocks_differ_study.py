"""How often does the ``blocks-differ`` note fire, on blocks that agree and on blocks that do not?

``analysis.blocks.blocks_differ`` says a comparison's blocks of fresh worker processes disagree
when the 10th..90th percentile range of their effects is over 3 times what their rounds' noise
explains (allowing for rounds correlated within a block) and over 20% as a ratio. This study
measures, on simulated per-round log-ratios (pure, seeded):

* *agree*: every block has the same true effect; the rounds' noise is normal, Student t3,
  skewed (a quarter of rounds slowed on one side), AR(1) at 0.5 and 0.8 within a block, or
  quantized to a few values (a CPU clock's steps); and processes that differ by a few percent
  (a normal offset per block, SD 2%, 3% and 5%), which the verdict was built to absorb. The
  note should seldom fire;
* *differ*: a share of the blocks (one process of the pair slowed, as this project's virtual
  machine does in phases) measures a change half as large (it should fire), or 0.7 or 0.8
  times as large.

    .venv/bin/python benchmarks/blocks_differ_study.py [--trials 2000] [--seed 1]
"""

from __future__ import annotations

import argparse

import numpy as np

from pairbench.analysis.blocks import block_medians, blocks_differ, rounds_by_block

EFFECT = np.log(3.0)
NOISES = ("normal", "t3", "skewed", "ar0.5", "ar0.8", "quantized")
SHAPES = ((4, 32), (8, 32), (23, 160), (60, 10))
"""(blocks, rounds a block): the fewest blocks the rule looks at, short runs, the bisect
comparison that showed the phases (23 blocks of 160 rounds), many short blocks."""


def noise(kind: str, rng: np.random.Generator, blocks: int, rounds: int, scale: float) -> np.ndarray:
    """Per-round log-ratio noise, ``blocks`` rows of ``rounds``."""
    shape = (blocks, rounds)
    if kind == "normal":
        return scale * rng.standard_normal(shape)
    if kind == "t3":
        return scale * rng.standard_t(3, shape)
    if kind == "skewed":  # a quarter of the rounds have one side slowed by an exponential amount
        slowed = rng.random(shape) < 0.25
        sign = np.where(rng.random(shape) < 0.5, 1.0, -1.0)
        return scale * (rng.standard_normal(shape) + slowed * sign * rng.exponential(4.0, shape))
    if kind.startswith("ar"):
        phi = float(kind[2:])
        e = scale * np.sqrt(1.0 - phi**2) * rng.standard_normal(shape)
        out = np.empty(shape)
        out[:, 0] = scale * rng.standard_normal(blocks)
        for t in range(1, rounds):
            out[:, t] = phi * out[:, t - 1] + e[:, t]
        return out
    if kind == "quantized":  # a CPU clock of 4 steps over the sample: log-ratios on a coarse grid
        return np.round(scale * rng.standard_normal(shape) / 0.02) * 0.02
    raise ValueError(kind)


def fire_rate(rng: np.random.Generator, trials: int, blocks: int, rounds: int, make) -> float:
    """The share of ``trials`` simulated comparisons whose blocks ``blocks_differ`` calls different;
    ``make(rng)`` gives one comparison's (blocks, rounds) log-ratios."""
    ids = np.repeat(np.arange(blocks), rounds)
    fired = 0
    for _ in range(trials):
        groups = rounds_by_block(make(rng).ravel(), ids)
        fired += blocks_differ(groups, block_medians(groups)) is not None
    return fired / trials


def agreeing(kind: str, scale: float, blocks: int, rounds: int, offset: float = 0.0):
    """Comparisons whose blocks share the effect (+200%), each block off by ``offset`` x N(0, 1)."""
    def make(rng):
        per_block = offset * rng.standard_normal((blocks, 1))
        return EFFECT + per_block + noise(kind, rng, blocks, rounds, scale)
    return make


def differing(kind: str, scale: float, blocks: int, rounds: int, share: float, factor: float):
    """Comparisons in which each block, with chance ``share``, measures ``factor`` times the +200%."""
    def make(rng):
        slowed = rng.random((blocks, 1)) < share
        return np.where(slowed, np.log1p(factor * 2.0), EFFECT) + noise(kind, rng, blocks, rounds, scale)
    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"trials {args.trials}, seed {args.seed}; the share of comparisons the note fired on\n")
    print("blocks that agree (noise SD of a round's log-ratio 1%, 5%, 20%, 50%):")
    print(f"{'noise':<22}" + "".join(f"{b:>4}x{r:<6}" for b, r in SHAPES))
    for kind in NOISES:
        for scale in (0.01, 0.05, 0.2, 0.5):
            rates = [fire_rate(rng, args.trials, b, r, agreeing(kind, scale, b, r)) for b, r in SHAPES]
            print(f"{kind + f' {scale:.0%}':<22}" + "".join(f"{x:>11.4f}" for x in rates))
    for offset in (0.02, 0.03, 0.05):
        rates = [fire_rate(rng, args.trials, b, r, agreeing("normal", 0.05, b, r, offset)) for b, r in SHAPES]
        print(f"{f'processes {offset:.0%} apart':<22}" + "".join(f"{x:>11.4f}" for x in rates))
    print("\nblocks that differ (noise normal 5%; the share of blocks whose ratio is lower):")
    for share, factor in ((0.5, 0.5), (0.25, 0.5), (0.5, 0.7), (0.5, 0.8)):
        rates = [fire_rate(rng, args.trials, b, r, differing("normal", 0.05, b, r, share, factor))
                 for b, r in SHAPES]
        label = f"{share:.0%} at {factor:.1f}x change"
        print(f"{label:<22}" + "".join(f"{x:>11.4f}" for x in rates))


if __name__ == "__main__":
    main()
