"""``--export-json``: hyperfine's JSON schema, so that a script written for hyperfine reads it.

hyperfine 1.15-1.19 write ``{"results": [{"command", "mean", "stddev", "median",
"user", "system", "min", "max", "times", "exit_codes", "parameters"}]}``, every
time in seconds, one result per command and parameter value. Here one result
is a series (a side on a benchmark): its measured samples, the same ones the
summaries describe, in execution order; ``mean``, ``stddev`` (n - 1, null for
one run, as hyperfine), ``median``, ``min`` and ``max`` are the summary's,
``user`` and ``system`` the mean CPU times (null when never recorded), and
``parameters`` the ``-P``/``-L`` values when there are any. A series measured in
another unit (a harness's bytes) has no place in it and is left out.
pairbench's own document, with every sample and the verdicts, is ``--json``'s.
"""

from __future__ import annotations

import json

from pairbench.analysis import Analysis
from pairbench.model import Run, json_safe
from pairbench.report.safe import json_escaped
from pairbench.report.tables import series_name

SECONDS = 1e-9


def hyperfine_document(run: Run, analysis: Analysis) -> dict:
    """The ``{"results": [...]}`` of hyperfine's ``--export-json`` for ``run``."""
    with_benchmark = len(run.benchmarks) > 1
    results = []
    for summary, figure in zip(analysis.summaries, analysis.series_figures, strict=True):
        if summary.unit != "ns":
            continue
        result = {
            "command": series_name(summary, with_benchmark=with_benchmark),
            "mean": _seconds(summary.mean), "stddev": _seconds(summary.sd if summary.n > 1 else None),
            "median": _seconds(summary.median), "user": _seconds(summary.user_ns),
            "system": _seconds(summary.sys_ns), "min": _seconds(summary.min), "max": _seconds(summary.max),
            "times": [float(v) * SECONDS for v in figure.values], "exit_codes": [0] * len(figure.values),
        }
        if summary.benchmark.params:
            result["parameters"] = dict(summary.benchmark.params)
        results.append(result)
    return json_safe({"results": results})


def render_hyperfine_json(run: Run, analysis: Analysis) -> str:
    return json_escaped(json.dumps(hyperfine_document(run, analysis), indent=2, allow_nan=False,
                                   ensure_ascii=False)) + "\n"


def _seconds(ns: float | None) -> float | None:
    return None if ns is None else float(ns) * SECONDS
