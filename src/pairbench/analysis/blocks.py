"""Whether a comparison's blocks of fresh worker processes disagree about its effect. Pure.

``pairbench bench`` draws its verdict from blocks of rounds, each measured by freshly started
workers (``pairing.block_effects``), so that what differs between two processes of one program
counts as noise. That difference is usually a few percent. On some machines it is not: on this
project's virtual test machine a C worker's 2,000-iteration loop that crossed a 64-byte boundary
ran 1.3 or 3.0 us a call by the process, in phases of seconds, while the other build's 6,000
iterations, placed otherwise, ran 3.9-4.8 us (2026-11-27, benchmarks/RESULTS.md "Blocks that
disagree, and code layout"). Such blocks measure a ratio of 3.0 or 1.5 for the same code. The
interval stays valid, since it covers the blocks' median, but the size of the change then depends
on which processes ran, and a rerun can give another. :func:`blocks_differ` says so when the
blocks' effects spread wider than their own rounds' noise explains.

The rule: the 10th to 90th percentile range of the block effects (median log-ratios) is compared
with the range normal sampling alone would give, ``2 z_0.9 s``, where ``s`` is the root mean square
of the blocks' median errors, ``sqrt(pi / 2) MAD-SD / sqrt(n)`` each (the asymptotic error of a
median of normal values), widened by ``sqrt((1 + r) / (1 - r))`` for the rounds' lag-1
correlation ``r`` within blocks. The blocks differ when the range exceeds ``NOISE_FACTOR`` times
that and is wider than ``LEAST_SPREAD`` (20%), so that a few percent between processes, which the
verdict was built to absorb, is not reported. Its rate on blocks that do not differ is measured
in ``benchmarks/blocks_differ_study.py``.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.notes import Note
from pairbench.stats.changepoint import MAD_TO_SD

SPREAD_PERCENTILES = (10.0, 90.0)
NOISE_FACTOR = 3.0
LEAST_SPREAD = 0.20
"""As a ratio: blocks whose effects' 90th percentile is less than 20% above their 10th do not differ."""
LEAST_BLOCKS = 4
LEAST_ROUNDS = 5
"""A block of fewer rounds has no median error worth the name; it is left out of the rule."""
MOST_AUTOCORRELATION = 0.95
_Z90 = 1.2815515655446004  # the standard normal's 0.9 quantile, scipy.stats.norm.ppf(0.9)
_MEDIAN_ERROR = math.sqrt(math.pi / 2.0) * MAD_TO_SD


def rounds_by_block(log_ratios: np.ndarray, blocks: np.ndarray) -> list[np.ndarray]:
    """Each block's log-ratios in round order, the blocks in the order they ran (of their first
    round). ``blocks`` gives each round's block. One stable sort: O(n log n)."""
    if blocks.size == 0:
        return []
    order = np.argsort(blocks, kind="stable")
    cuts = np.flatnonzero(np.diff(blocks[order])) + 1
    groups = np.split(log_ratios[order], cuts)
    firsts = order[np.concatenate(([0], cuts))]  # a block's first round: the stable sort keeps it first
    return [groups[k] for k in np.argsort(firsts)]


def block_medians(groups: list[np.ndarray]) -> np.ndarray:
    """Each block's median log-ratio: the values the verdict is drawn from."""
    return np.array([np.median(g) for g in groups])


def blocks_differ(groups: list[np.ndarray], medians: np.ndarray) -> Note | None:
    """A ``blocks-differ`` note when the blocks' effects spread wider than their rounds' noise
    explains (module docstring), else None. ``groups`` are :func:`rounds_by_block`'s, ``medians``
    their :func:`block_medians`."""
    kept = [k for k, g in enumerate(groups) if g.size >= LEAST_ROUNDS]
    if len(kept) < LEAST_BLOCKS:
        return None
    medians = medians[kept]
    deviations = [groups[k] - m for k, m in zip(kept, medians, strict=True)]
    # the raw MAD in numpy, not scipy's median_abs_deviation: on 32 values a call costs 14 times as much
    errors = np.array([_MEDIAN_ERROR * np.median(np.abs(d)) / math.sqrt(d.size) for d in deviations])
    low, high = np.percentile(medians, SPREAD_PERCENTILES)
    by_noise = 2.0 * _Z90 * float(np.sqrt(np.mean(errors**2))) * _autocorrelation_factor(deviations)
    if high - low <= max(NOISE_FACTOR * by_noise, math.log1p(LEAST_SPREAD)):
        return None
    return Note("blocks-differ", {"blocks": len(kept), "low_pct": float(np.expm1(low) * 100.0),
                                  "high_pct": float(np.expm1(high) * 100.0),
                                  "noise_pct": float(np.expm1(by_noise) * 100.0)})


def _autocorrelation_factor(deviations: list[np.ndarray]) -> float:
    """How much wider a median's error is than independent rounds' when consecutive rounds in a
    block are correlated: ``sqrt((1 + r) / (1 - r))`` for the pooled lag-1 correlation ``r`` of the
    deviations from each block's median (an AR(1)'s factor for the mean), ``r`` in [0, 0.95]."""
    lagged = sum(float(np.dot(d[1:], d[:-1])) for d in deviations)
    total = sum(float(np.dot(d, d)) for d in deviations)
    r = min(max(lagged / total, 0.0), MOST_AUTOCORRELATION) if total > 0 else 0.0
    return math.sqrt((1.0 + r) / (1.0 - r))
