"""What a stored series is as a point of an unpaired history: the metric it is kept on and its median
in that metric, with the median's 95% interval.

A record's ``--metric`` chooses the metric, as in ``compare``: ``wall`` or ``cpu`` (or any metric of
``model.METRICS``), or ``auto``, decided here on the series' own samples by the rule ``compare``
applies to a comparison's first rounds (``analysis.rules.cpu_use`` and ``chosen_metric``: CPU time
for a benchmark that runs on the CPU, else wall time). The history keeps each point's metric and
never puts points of two metrics in one series (``pairbench history`` shows one history per metric).
Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from pairbench import stats
from pairbench.analysis.records import CONFIDENCE
from pairbench.analysis.rules import chosen_metric, cpu_use
from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.model import Run, Samples


@frozen
class StoredPoint:
    """A series as the history keeps it: ``metric``, and one operation's median on it with its
    interval (None where there is no successful sample, or too few for an interval)."""

    metric: str
    median: float | None
    low: float | None
    high: float | None
    mean: float | None = None


def point_metric(samples: Samples, asked: str) -> str:
    """The metric a series is kept on: ``asked`` (the record's ``--metric``), or for ``auto`` the one
    ``compare`` would choose from these samples."""
    if asked != "auto":
        return asked
    measured = samples.measured()
    if not len(measured):
        return "wall"
    use = cpu_use(measured["wall_ns"], measured["user_ns"] + measured["sys_ns"], measured["involuntary_cs"],
                  measured["voluntary_cs"])
    return chosen_metric(use)


def stored_point(run: Run, benchmark: int, side: int) -> StoredPoint:
    """The point series (``benchmark``, ``side``) of ``run`` makes, on the metric of its settings."""
    samples = run.samples[(benchmark, side)]
    metric = point_metric(samples, run.settings.decision.metric)
    measured = samples.measured()
    if not len(measured):
        return StoredPoint(metric, None, None, None)
    values = measured.metric_values(metric)
    median, mean = float(np.median(values)), float(np.mean(values))
    try:
        ci = stats.median_ci(values, CONFIDENCE)
    except StatisticsError:
        return StoredPoint(metric, median, None, None, mean)
    return StoredPoint(metric, median, ci.low, ci.high, mean)
