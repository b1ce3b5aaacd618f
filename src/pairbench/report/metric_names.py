"""What each metric a verdict can rest on (``--metric``) is called, in one place for every renderer.

A sentence says "CPU time"; a table header "CPU min". A metric without an entry here (one
added later) is called by its own name in both, so nothing is shown unnamed.
"""

from __future__ import annotations

from collections.abc import Iterable

NAMES = {"wall": ("wall time", "wall"), "cpu": ("CPU time", "CPU"), "instructions": ("instructions", "instr"),
         "cycles-model": ("estimated cycles (Callgrind's cache model)", "cycles")}
"""metric -> (its words in a sentence, its label in a table header)."""


def metric_words(metric: str) -> str:
    """ "wall time", "CPU time": the metric in a sentence."""
    return NAMES.get(metric, (metric, metric))[0]


def metric_label(metric: str) -> str:
    """ "wall", "CPU": the metric in a table header, before what it qualifies ("CPU min")."""
    return NAMES.get(metric, (metric, metric))[1]


def common_metric(metrics: Iterable[str | None]) -> str | None:
    """The one metric of every figure given (None for figures that are not times), or None when they
    differ or there are none: a table then names the metric in each row instead of its header."""
    found = set(metrics)
    return found.pop() if len(found) == 1 else None
