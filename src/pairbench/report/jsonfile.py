"""The analysed result as JSON, for other tools: summaries and comparisons, no raw samples.

Format history (``"format"`` key):
    pairbench.report/1  (pairbench 0.1) the run's metadata (kind, tool, times,
                        state, environment, options, warnings), per variant its
                        name, label, command and sample counts, the variant
                        summaries (``analysis.VariantSummary`` fields, times in
                        ns) and the comparisons (the result document's format,
                        effects in percent). ``recomputed`` lists what was not
                        stored and was computed from the samples.

The raw samples stay in the result document (``--json``) and the samples CSV.
"""

from __future__ import annotations

import json

import numpy as np

from pairbench.report.analysed import Analysed
from pairbench.resultfile import run_header

REPORT_FORMAT = "pairbench.report/1"


def analysed_document(analysed: Analysed) -> dict:
    """The JSON-ready analysed result."""
    run = analysed.run
    return {
        **run_header(run),
        "format": REPORT_FORMAT,
        "variants": [_variant(v) for v in run.variants],
        "summaries": [s.to_dict() for s in analysed.summaries],
        "comparisons": [dict(c) for c in analysed.comparisons],
        "recomputed": list(analysed.recomputed),
    }


def render_json(analysed: Analysed) -> str:
    """The analysed result as indented JSON (no NaN or infinity; ends with a newline)."""
    return json.dumps(analysed_document(analysed), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _variant(variant) -> dict:
    samples = variant.samples
    warmup = samples["warmup"] == 1
    return {
        "name": variant.name,
        "label": variant.label,
        "command": variant.command.to_dict(),
        "samples": {
            "measured": len(samples.measured()),
            "failed": len(samples.failed()),
            "warmup": int(np.count_nonzero(warmup)),
        },
    }
