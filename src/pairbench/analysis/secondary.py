"""The secondary statistics of a comparison: the numbers shown beside its verdict, never deciding it.

The paired report table (minimum, mean, paired difference), the two-sample
view (Hodges-Lehmann with Mann-Whitney), the signed-rank test, the
diagnostics of the pairs (lag-1 autocorrelation, outlier balance), and what a
comparison's charts plot (the pairs in round order, their correlogram, the
shift function). Each statistic that cannot be computed leaves its refusal as
a note. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pairbench import stats
from pairbench.analysis.records import (
    ComparisonFigure,
    Lag1,
    MinMean,
    OutlierCounts,
    PairCounts,
    Secondary,
    Shift,
)
from pairbench.analysis.summary import guarded, kept, refusal_note
from pairbench.errors import NoVariance, StatisticsError
from pairbench.notes import Note


def secondary_statistics(base: np.ndarray, cand: np.ndarray, r: np.ndarray, confidence: float,
                         notes: list[Note]) -> Secondary:
    """The numbers shown beside the verdict: the paired report table (minimum, mean, paired
    difference), the two-sample view (Hodges-Lehmann with Mann-Whitney), the signed-rank test,
    and the diagnostics of the pairs; each statistic's notes are kept in ``notes``."""
    if base.size == 0:
        return Secondary()
    return Secondary(
        min_mean=_min_mean(base, cand),
        pairs=PairCounts(int(np.count_nonzero(r < 0)), int(np.count_nonzero(r > 0)),
                         int(np.count_nonzero(r == 0))),
        hodges_lehmann=guarded(notes, lambda: _hodges_lehmann(cand, base, confidence, notes)),
        mann_whitney_pvalue=guarded(notes, lambda: kept(stats.mann_whitney(cand, base), notes).pvalue),
        signed_rank_pvalue=guarded(notes, lambda: kept(stats.signed_rank(cand, base), notes).pvalue),
        autocorrelation=_of_pairs(r, notes, lambda: _lag1(r, notes)),
        outlier_balance=_of_pairs(r, notes, lambda: _outliers(r, notes)),
    )


def _of_pairs(r: np.ndarray, notes: list[Note], compute: Callable):
    """``compute()`` on the log-ratios ``r``, or None with its refusal kept in ``notes``; the
    refusal of a constant ``r`` is said of the pairs (their common ratio), not as a duration."""
    try:
        return compute()
    except NoVariance:
        notes.append(Note("no-variance", {"n": int(r.size), "change_pct": float(100.0 * np.expm1(r[0])),
                                          "pairs": True}))
        return None
    except StatisticsError as exc:
        notes.append(refusal_note(exc))
        return None


def _min_mean(base: np.ndarray, cand: np.ndarray) -> MinMean:
    difference = float(np.mean(cand - base))
    return MinMean(float(base.min()), float(cand.min()), float(100.0 * (cand.min() / base.min() - 1.0)),
                   float(base.mean()), float(cand.mean()), difference,
                   float(100.0 * difference / base.mean()))


def _hodges_lehmann(cand: np.ndarray, base: np.ndarray, confidence: float, notes: list[Note]) -> Shift:
    hl = kept(stats.hodges_lehmann(cand, base, confidence), notes)
    finite = math.isfinite(hl.low) and math.isfinite(hl.high)
    return Shift(hl.estimate, hl.low if finite else None, hl.high if finite else None, hl.confidence)


def _lag1(r: np.ndarray, notes: list[Note]) -> Lag1:
    correlogram = stats.autocorrelation(r, max_lag=1)
    lag1, band = correlogram.lag1, float(correlogram.white_noise_band)
    significant = abs(lag1) > band
    if significant:
        notes.append(Note("pairs-autocorrelated", {"lag1": lag1, "band": band}))
    return Lag1(lag1, band, bool(significant))


def _outliers(r: np.ndarray, notes: list[Note]) -> OutlierCounts:
    balance = kept(stats.outlier_balance(r), notes)
    return OutlierCounts(balance.n_above, balance.n_below, balance.p_value, balance.enabled)


def figure_of(base: np.ndarray, cand: np.ndarray, r: np.ndarray, confidence: float,
            notes: list[Note]) -> ComparisonFigure:
    """The pairs in round order, their correlogram and the shift function (its notes kept)."""
    correlogram = _quietly(lambda: stats.autocorrelation(r))
    shift = guarded(notes, lambda: kept(stats.shift_function(base, cand, confidence=confidence), notes)
                    ) if base.size else None
    return ComparisonFigure(r, base, cand, correlogram, shift)


def _quietly(compute: Callable):
    """``compute()``, or None when its data cannot give it (too few values, no spread): a chart
    that is not drawn, whose reason the notes already give."""
    try:
        return compute()
    except StatisticsError:
        return None
