"""Shards: a deterministic, balanced share of a suite, so that several machines measure it together.

``--shard K/N`` measures share K of N of the benchmarks the sides have in
common (after ``-k``). Every machine lists the same suite, so each computes the
same split without talking to the others:

* by name (the default): the names sorted, then dealt out in turn, so shard
  sizes differ by at most one;
* by time (``--balance RESULT``): the time each benchmark took in an earlier
  result (a merged suite, or any shard), longest first, each to the shard with
  the least time so far (the longest-processing-time rule; ties by name, then by
  the lower shard). A benchmark the earlier result lacks counts the median time.

A shard stores the whole suite's size and a digest of its names (``Run.suite``),
so that its verdicts are drawn at the suite's family-wise level and ``pairbench
merge`` can tell shards of one suite from shards of another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from pairbench.model import Run, SuiteInfo


def digest(labels: Sequence[str]) -> str:
    """The suite's fingerprint: SHA-256 of its benchmarks' names, sorted, one a line."""
    return hashlib.sha256("\n".join(sorted(labels)).encode("utf-8")).hexdigest()


def select(labels: Sequence[str], k: int, n: int, times: Mapping[str, float] | None = None) -> list[str]:
    """The labels of shard ``k`` of ``n`` (1-based), in ``labels``' order."""
    if not 1 <= k <= n:
        raise ValueError(f"shard {k} of {n} does not exist")
    mine = _by_time(labels, n, times)[k - 1] if times else set(sorted(labels)[k - 1::n])
    return [label for label in labels if label in mine]


def _by_time(labels: Sequence[str], n: int, times: Mapping[str, float]) -> list[set[str]]:
    known = [times[label] for label in labels if label in times]
    default = float(np.median(known)) if known else 1.0
    cost = {label: float(times.get(label, default)) for label in labels}
    shards: list[set[str]] = [set() for _ in range(n)]
    load = [0.0] * n
    for label in sorted(labels, key=lambda x: (-cost[x], x)):
        lightest = min(range(n), key=lambda i: (load[i], i))
        shards[lightest].add(label)
        load[lightest] += cost[label]
    return shards


def measuring_times(run: Run) -> dict[str, float]:
    """How long measuring each benchmark took in ``run`` (ns): from its first sample's start to its
    last sample's end, on any side, warmups included."""
    spans: dict[str, list[float]] = {}
    for b, _, samples in run.all_series():
        if len(samples):
            start, end = samples["start_ns"], samples["start_ns"] + samples["wall_ns"]
            span = spans.setdefault(run.benchmarks[b].label, [float(start.min()), float(end.max())])
            span[0], span[1] = min(span[0], float(start.min())), max(span[1], float(end.max()))
    return {label: end - start for label, (start, end) in spans.items()}


def suite_record(labels: Sequence[str], shard: tuple[int, int] | None, harness: str) -> SuiteInfo:
    """``Run.suite`` of a bench run over the suite ``labels`` (all of it, whatever the shard)."""
    return SuiteInfo(len(labels), digest(labels), shard, harness)
