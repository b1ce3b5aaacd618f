"""How much longer each series of a ``run`` took than the fastest: hyperfine's relative summary,
paired by round.

hyperfine ends a run of several commands with "T1 ran 1.01 ± 0.14 times faster
than T2", the ratio of the means with their standard deviations propagated as
if the runs were independent. A ``run`` interleaves its commands and parameter
values in rounds (every one once per round, in a fresh random order), so each
round gives one ratio per series against the reference: the series with the
lowest median. The ratio shown is the median of those per-round ratios and its
interval the sign-test interval of that median (``stats.median_ci`` on the log
ratios: distribution-free, as every interval of a run's summaries), 95% for
each series on its own. It describes; a verdict is ``compare``'s. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pairbench.analysis.records import CONFIDENCE, Summary
from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey, Run


@frozen
class Relative:
    """``times``: how many times as long one operation of ``(benchmark, side)`` took as the reference
    ``(reference_benchmark, reference_side)``, the fastest series of the run (the median of the
    per-round ratios, >= 1 in the usual case); ``low``/``high`` its interval at ``confidence``
    (None when there are too few rounds, ``needed`` of them, or no spread); ``rounds`` paired."""

    benchmark: BenchmarkKey
    side: str
    reference_benchmark: BenchmarkKey
    reference_side: str
    times: float
    low: float | None
    high: float | None
    confidence: float
    rounds: int
    needed: int = 0


def relative_speeds(run: Run, summaries: Sequence[Summary]) -> tuple[Relative, ...]:
    """Each measured series of a ``run`` of several against the fastest (lowest median), in the
    summaries' order; empty for other kinds or fewer than two measured series."""
    if run.kind != "run":
        return ()
    # imported here: the pairing loads the blocks' rule, which a run measures without
    from pairbench.analysis.pairing import paired_values
    measured = [(i, s) for i, s in enumerate(summaries) if s.n and s.median is not None]
    if len(measured) < 2:
        return ()
    series = [(b, s, samples) for b, s, samples in run.all_series()]
    index, reference = min(measured, key=lambda item: item[1].median)
    base = series[index][2]
    return tuple(_relative(summary, reference, *paired_values(base, series[i][2]))
                 for i, summary in measured if i != index)


def _relative(summary: Summary, reference: Summary, b: np.ndarray, c: np.ndarray) -> Relative:
    """``summary``'s series against ``reference``'s, from their values paired by round (``b``, ``c``)."""
    from pairbench import stats

    keep = (b > 0) & (c > 0)
    ratios = np.log(c[keep] / b[keep])
    record = Relative(summary.benchmark, summary.side, reference.benchmark, reference.side,
                      times=math.exp(float(np.median(ratios))) if ratios.size else summary.median / reference.median,
                      low=None, high=None, confidence=CONFIDENCE, rounds=int(ratios.size))
    try:
        ci = stats.median_ci(ratios, CONFIDENCE)
    except StatisticsError as exc:
        return _refused(record, exc)
    return Relative(**{**record.__dict__, "times": math.exp(ci.estimate), "low": math.exp(ci.low),
                       "high": math.exp(ci.high)})


def _refused(record: Relative, exc: StatisticsError) -> Relative:
    needed = int(exc.data.get("needed", 0)) if exc.code == "not-enough-data" else 0
    return Relative(**{**record.__dict__, "needed": needed})
