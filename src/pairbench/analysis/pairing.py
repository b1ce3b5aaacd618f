"""Pairing: the rounds two sides of a comparison share, and each side's value in each of them.

A round ran every side once in random order, so the samples of baseline and
candidate that share a ``pair`` id were measured under the same machine state.
A :class:`Pairing` names the two series one comparison pairs; the functions
here find their common rounds (a failed or unusable sample leaves its round
out for both sides), take one value per side and round (the median of an
invocation's repetitions, where it repeated), and group rounds by the block of
fresh worker processes they ran in. Pure.
"""

from __future__ import annotations

import numpy as np

from pairbench.analysis.blocks import block_medians, rounds_by_block
from pairbench.frozen import frozen
from pairbench.model import REPETITION_METRIC, BenchmarkKey, Samples

BLOCK_METRIC = "block"
"""The metric of a sample that names the block of fresh worker processes it was taken in."""


@frozen
class Pairing:
    """The two series a comparison pairs, by side name, on one benchmark."""

    benchmark: BenchmarkKey
    baseline: str
    candidate: str
    base: Samples
    cand: Samples
    self_check: bool = False


def paired_values(baseline: Samples, candidate: Samples, metric: str = "wall") -> tuple[np.ndarray, np.ndarray]:
    """One operation's values by ``metric`` (``model.metric_total``) in the rounds where both sides
    succeeded with a positive value, in round order."""
    b, c, b_index, c_index = usable_rounds(baseline, candidate, metric)
    return round_values(b, b_index, metric), round_values(c, c_index, metric)


def round_values(samples: Samples, index: np.ndarray, metric: str = "wall") -> np.ndarray:
    """One operation's value by ``metric`` in each round of a side, given the index of the round's
    first sample: that sample's value, or, where an invocation repeated its benchmark (Go's
    ``-test.count``: samples marked ``REPETITION_METRIC`` share their round), the median of the
    round's repetitions. Both sides get the same rule, so A against A stays symmetric. O(n log n)."""
    return per_round(samples, samples.metric_values(metric), index)


def per_round(samples: Samples, values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values`` (one per sample of ``samples``) in each round given by the index of its first sample:
    that value, or the median of the round's repetitions where the invocation repeated (see
    ``round_values``); a harness's own metrics (B/op) are taken per round by the same rule."""
    if REPETITION_METRIC not in samples.metrics:
        return values[index]
    pairs = samples["pair"]
    order = np.argsort(pairs, kind="stable")
    ids, starts, counts = np.unique(pairs[order], return_index=True, return_counts=True)
    medians = np.array([np.median(values[order[s:s + n]]) for s, n in zip(starts, counts, strict=True)])
    return medians[np.searchsorted(ids, pairs[index])]


def paired_blocks(baseline: Samples, candidate: Samples, metric: str = "wall") -> np.ndarray | None:
    """The block (of fresh worker processes, ``measure.worker.Rotation``) of each round
    ``paired_values`` gives, or None when the samples were not taken in blocks."""
    if BLOCK_METRIC not in baseline.metrics:
        return None
    b, _, b_index, _ = usable_rounds(baseline, candidate, metric)
    return b[BLOCK_METRIC][b_index]


def common_rounds(baseline: Samples, candidate: Samples) -> tuple[Samples, Samples, np.ndarray, np.ndarray]:
    """Both sides' measured samples and the indices of the rounds both measured (each round's first
    sample), in round order."""
    b, c = baseline.measured(), candidate.measured()
    common, b_index, c_index = np.intersect1d(b["pair"], c["pair"], return_indices=True)
    keep = common >= 0
    return b, c, b_index[keep], c_index[keep]


def usable_rounds(baseline: Samples, candidate: Samples, metric: str = "wall"):
    """Both sides' measured samples and the indices of their rounds in common (each round's first
    sample), in round order, where both values by ``metric`` are positive (a CPU time below the
    clock's step reads 0, and has no ratio: such a round is left out whichever side it was, so the
    rule is the same for both)."""
    b, c, b_index, c_index = common_rounds(baseline, candidate)
    usable = (round_values(b, b_index, metric) > 0) & (round_values(c, c_index, metric) > 0)
    return b, c, b_index[usable], c_index[usable]


def block_effects(log_ratios: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """One value per block, in the order the blocks ran: the median log-ratio of its rounds.

    Rounds within a block share a pair of processes, and with it that pair's own difference
    (memory layout, hash seeds), so they are not independent observations of the code's effect;
    blocks are. The verdict is drawn from these values. O(n log n).
    """
    return block_medians(rounds_by_block(log_ratios, blocks))


def failed_rounds(baseline: Samples, candidate: Samples) -> int:
    """Measured rounds left out of the pairs because the baseline's or the candidate's sample failed.

    A round cut short by Ctrl-C (one side ran, the other never did) is not a failure.
    """
    pairs = [s.select((s["warmup"] == 0) & (s["pair"] >= 0)) for s in (baseline, candidate)]
    failed = [set(s["pair"][s["status"] != 0].tolist()) for s in pairs]
    return len(failed[0] | failed[1])
