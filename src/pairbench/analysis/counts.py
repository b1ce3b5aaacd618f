"""What a count's verdict sits beside: the other measure of the same rounds, and where they disagree.

A verdict on instructions says how much work the code does, not how long it takes. Where the same
samples measured something closer to time, the comparison says so when the two disagree: in
direction (each interval excludes 0 on its own side), or in size (the intervals lie apart by more
than the threshold). Which other measure:

* counted by Callgrind, the cache model's cycles beside instructions (and instructions beside
  them): the samples' times are the simulated program's, 20 to 100 times slower, and are not
  compared (a ``times-under-callgrind`` note);
* counted by the processor's counter, CPU time, measured in the same samples at full speed.

Instructions fall while time rises where the change costs memory traffic (cache misses the
instruction count does not see), system calls (user space only is counted) or instructions of
unequal cost (a division for additions). Pure.
"""

from __future__ import annotations

import numpy as np

from pairbench import stats
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.pairing import Pairing, paired_values
from pairbench.analysis.records import Effect
from pairbench.errors import StatisticsError
from pairbench.model import CYCLES_MODEL_METRIC
from pairbench.notes import Note
from pairbench.stats.counts import exact_effect


def counted_by_callgrind(pairing: Pairing) -> bool:
    """Whether the samples were counted under Callgrind (they hold its cache model's cycles)."""
    return CYCLES_MODEL_METRIC in pairing.base.metrics and CYCLES_MODEL_METRIC in pairing.cand.metrics


def other_measure(pairing: Pairing, metric: str) -> str:
    """What a count's verdict is set beside: the other count under Callgrind, else CPU time."""
    if counted_by_callgrind(pairing):
        return "cycles-model" if metric == "instructions" else "instructions"
    return "cpu"


def count_notes(pairing: Pairing, metric: str, effect: Effect | None, criteria: Criteria) -> list[Note]:
    """The notes of a verdict on a count: that times under Callgrind are not compared, and what the
    other measure of the same rounds (``other_measure``) says: beside it, or disagreeing with it."""
    notes = [Note("times-under-callgrind", {})] if counted_by_callgrind(pairing) else []
    if effect is None:
        return notes
    other = other_measure(pairing, metric)
    if other == "cpu" and not (pairing.base.measured().has_cpu_time() and pairing.cand.measured().has_cpu_time()):
        return notes
    seen = _other_effect(*paired_values(pairing.base, pairing.cand, other), criteria)
    if seen is None:
        return notes
    how = disagreement((effect.estimate, effect.low, effect.high), seen, criteria.threshold)
    data = {"metric": metric, "other": other, "estimate": effect.estimate, "low": effect.low, "high": effect.high,
            "other_estimate": seen[0], "other_low": seen[1], "other_high": seen[2]}
    notes.append(Note("counts-beside", data) if how is None else Note("counts-disagree", {**data, "how": how}))
    return notes


def _other_effect(base: np.ndarray, cand: np.ndarray, criteria: Criteria) -> tuple[float, float, float] | None:
    """The other measure's effect (estimate, low, high) in percent: exact when a count kept one value
    per side, else the sign-test interval at the comparison's whole alpha (the note is no verdict: a
    count decided exactly in 8 rounds beside cycles that vary by a few in a million still gets its
    note, which an interval at half of alpha could not give before 9 rounds); None when there is none."""
    if base.size == 0:
        return None
    exact = exact_effect(base, cand, criteria.level) if base.size == cand.size else None
    if exact is not None:
        return exact.estimate_pct, exact.estimate_pct, exact.estimate_pct
    try:
        seen = stats.paired_effect(base, cand, 1.0 - min(0.5, criteria.level * criteria.split))
    except StatisticsError:
        return None
    return seen.estimate_pct, seen.low_pct, seen.high_pct


def disagreement(verdict: tuple[float, float, float], other: tuple[float, float, float],
                 threshold: float) -> str | None:
    """``direction`` when the two intervals exclude 0 on opposite sides, ``size`` when they lie apart
    with estimates more than ``threshold`` points apart, else None (each: estimate, low, high, %)."""
    (estimate, low, high), (o_estimate, o_low, o_high) = verdict, other
    if (low > 0 and o_high < 0) or (high < 0 and o_low > 0):
        return "direction"
    apart = o_low > high or o_high < low
    if apart and abs(o_estimate - estimate) > threshold:
        return "size"
    return None
