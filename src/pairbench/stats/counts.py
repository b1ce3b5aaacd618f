"""Counts that do not vary: the exact effect of identical counts, and the rounds it needs.

An instruction count under Callgrind is often the same in every sample: the program does the same
work whatever else runs on the machine. When every one of the first ``k`` rounds gave one count
on the baseline and one on the candidate, the effect is their ratio, with no interval to wait for.

How many rounds make that safe? The verdict is about the median of the per-round ratio. Say
the counts do vary after all (address-space layout, hash seeds, garbage collection), each round
independently. The rule errs only when the one pair of values it saw in all ``k`` rounds lies on
the wrong side of the truth: in a class of pairs (ratio above the threshold, below, within)
holding less than half of the probability, or the median would lie in it. The chance of seeing
pairs of that class in every one of ``k`` rounds, one pair throughout, is a sum of m_i^k over
pairs whose masses m_i sum to less than 1/2, so less than (1/2)^k. The rule therefore waits for
``exact_rounds(alpha)`` = ceil(log2(1/alpha)) identical rounds (7 at alpha 0.01, 5 at 0.05).
It is looked at after every round, yet errs at most once: identical rounds up to any n imply
identical rounds up to k. ``benchmarks/exact_counts.py`` measures the rule, with the interval
that takes over when the counts vary, on seeded simulations, and checks the bound against exact
sums over many distributions. For an A/A comparison (both sides one distribution) a false change
needs two different values each repeated k times: at most 2 * 4^-k (0.006% at k = 7).

Pure: numpy arrays in, a frozen record out.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.frozen import frozen

MIN_EXACT_ROUNDS = 2


def exact_rounds(alpha: float) -> int:
    """The identical rounds after which an exact effect errs with probability below ``alpha``:
    the least k with 2^-k <= alpha (at least ``MIN_EXACT_ROUNDS``)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"`alpha` must be in (0, 1), got {alpha!r}")
    return max(MIN_EXACT_ROUNDS, math.ceil(math.log2(1.0 / alpha) - 1e-12))


@frozen
class ExactEffect:
    """The effect of counts identical in every round: the candidate's count over the baseline's, as a
    percent change (exact), over ``rounds`` rounds; wrong with probability below ``alpha``."""

    estimate_pct: float
    rounds: int
    baseline: float
    candidate: float
    alpha: float


def exact_effect(baseline: np.ndarray, candidate: np.ndarray, alpha: float) -> ExactEffect | None:
    """The exact effect when each side's per-round count was one value in every round and there were
    at least ``exact_rounds(alpha)`` rounds (paired: the same rounds on both sides, positive counts);
    None otherwise (the counts varied, or too few rounds yet). O(n)."""
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if base.shape != cand.shape or base.ndim != 1:
        raise ValueError(f"the sides must be paired rounds of equal length, got {base.shape} and {cand.shape}")
    if base.size < exact_rounds(alpha):
        return None
    b, c = base[0], cand[0]
    if not (b > 0 and c > 0 and np.isfinite(b) and np.isfinite(c)):
        return None
    if not (np.all(base == b) and np.all(cand == c)):
        return None
    return ExactEffect(float(100.0 * math.expm1(math.log(c) - math.log(b))), int(base.size), float(b), float(c),
                       float(alpha))
