"""The analysis as JSON, for other tools: summaries, comparisons and notes as records.

Format history (``"format"`` key of ``pairbench report --format json``):
    pairbench.report/1  (pairbench 0.1) run metadata, per variant its name, label,
                        command and sample counts, variant summaries and comparisons.
    pairbench.report/2  (pairbench 0.2) run metadata (the result document's header:
                        sides, benchmarks, settings, notes), per series its sample
                        counts, and the analysis: ``summaries`` (one per benchmark and
                        side; values per operation in the benchmark's unit),
                        ``comparisons`` (effects in percent) and ``analysis_notes``
                        (every note: ``code``, ``data``, ``subject``, and ``text``, the
                        note in words); for a suite (bench), ``suite_summary``: the multiple-testing
                        correction, the benchmarks by verdict group, the geometric mean,
                        the benchmarks added, removed and not measured; for a ``run`` of
                        several series, ``relative``: each against the fastest (``times``,
                        its interval, the rounds paired); for a comparison whose
                        harness reported its own units (Go's B/op and allocs/op),
                        ``metric_tables``: one per unit, ``{"unit", "correction",
                        "family", "alpha", "worse", "comparisons"}``, each comparison
                        ``{"benchmark", "baseline", "candidate", "verdict"`` (higher,
                        lower, same, equivalent, inconclusive), ``"negligible",
                        "method"`` (ratio, equal, sign test), ``"baseline_median",
                        "candidate_median"`` (per operation, in the unit),
                        ``"difference", "change"`` (percent; null from 0),
                        ``"interval"`` (null off the ratio path), ``"pvalue"``
                        (Holm, in the unit's family), ``"pvalue_unadjusted",
                        "rounds", "rounds_differing"}`` (added in 0.3, without a format change: a
                        reader that does not know the key ignores it).

The records are ``analysis.derived``'s, which every result document (``--json``)
holds too, there without the notes' words. The raw samples stay in the result
document and the samples CSV.
"""

from __future__ import annotations

import json

from pairbench.analysis import Analysis
from pairbench.analysis.derived import derived_records, note_record
from pairbench.model import Run
from pairbench.notes import Note
from pairbench.report.safe import json_escaped
from pairbench.report.wording import word

REPORT_FORMAT = "pairbench.report/2"


def analysed_document(run: Run, analysis: Analysis) -> dict:
    """``pairbench report --format json``: the run's header, sample counts, and the analysis."""
    return {
        "format": REPORT_FORMAT,
        **run.metadata(),
        "series": [{"benchmark": b, "side": s, **_counts(samples)} for b, s, samples in run.all_series()],
        **derived_records(run, analysis, worded_note),
    }


def render_json(run: Run, analysis: Analysis) -> str:
    """The analysed result as indented JSON (no NaN or infinity; ends with a newline).

    Strings are exact; every control character in them is a ``\\u`` escape (``safe.json_escaped``),
    so the text is safe to print and valid UTF-8 whatever bytes a name held.
    """
    text = json.dumps(analysed_document(run, analysis), indent=2, allow_nan=False, ensure_ascii=False)
    return json_escaped(text) + "\n"


def worded_note(note: Note, unit: str = "ns") -> dict:
    """A note as data, with its words: ``{"code", "data", "subject", "text"}``."""
    return {**note_record(note, unit), "text": word(note, unit)}


def _counts(samples) -> dict:
    return {"measured": len(samples.measured()), "failed": len(samples.failed()),
            "warmup": int(samples["warmup"].sum())}
