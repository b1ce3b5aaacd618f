"""The peers' change-point detectors on the histories of ``history_steps.py``, run in a venv of their own.

Not part of pairbench and not run by its tests: ``history_steps.py --peers PYTHON`` calls this file
with a Python that has the peers installed (they are no dependency of pairbench), e.g.::

    python3 -m venv /tmp/history-peers
    /tmp/history-peers/bin/pip install asv signal-processing-algorithms apache-otava

It reads ``{"series": [[value, ...], ...], "methods": [...]}`` (values are times, not logs) on
standard input and writes ``{"versions": {...}, "breaks": {method: [[index, ...], ...]}}``: for each
series, the index at which each segment after the first starts, as ``pairbench history`` counts.

* ``asv``: ``asv.step_detect.detect_steps(y)``, asv's weighted L1 Potts model with its
  BIC-chosen penalty (what ``asv publish`` marks regressions with), each step ``(left, right,
  ...)`` covering ``y[left:right]``;
* ``e-divisive``: E-divisive means with a permutation test, as MongoDB runs it
  (``signal_processing_algorithms.energy_statistics.e_divisive``, p < 0.05, 100 permutations);
* ``otava``: Apache Otava's (formerly Hunter's, used by DataStax and Datadog) E-divisive in
  sliding windows with Student's t test (``otava.analysis.compute_change_points``, window 50,
  p < 0.001, its defaults).
"""

from __future__ import annotations

import json
import sys
import warnings
from importlib import metadata


def asv_breaks(y: list[float]) -> list[int]:
    from asv.step_detect import detect_steps

    steps = detect_steps(y)
    return [int(step[1]) for step in steps[:-1]]


def e_divisive_breaks(y: list[float]) -> list[int]:
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    return sorted(int(b) for b in e_divisive(y, pvalue=0.05, permutations=100))


def otava_breaks(y: list[float]) -> list[int]:
    from otava.analysis import compute_change_points

    found, _weak = compute_change_points(y, window_len=50, max_pvalue=0.001)
    return sorted(int(c.index) for c in found)


METHODS = {"asv": (asv_breaks, "asv"), "e-divisive": (e_divisive_breaks, "signal-processing-algorithms"),
           "otava": (otava_breaks, "apache-otava")}


def main() -> int:
    warnings.simplefilter("ignore")
    request = json.load(sys.stdin)
    methods = request.get("methods") or list(METHODS)
    out = {"versions": {m: metadata.version(METHODS[m][1]) for m in methods}, "breaks": {}}
    for method in methods:
        find = METHODS[method][0]
        out["breaks"][method] = [find([float(v) for v in y]) for y in request["series"]]
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
