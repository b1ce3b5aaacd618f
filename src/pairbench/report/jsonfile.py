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

The same ``summaries``, ``comparisons`` and ``analysis_notes`` are written into
the result document (``--json``) for other tools; pairbench never reads them
back. The raw samples stay in the result document and the samples CSV.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from pairbench.analysis import Analysis, Comparison, Summary
from pairbench.model import Run, json_safe
from pairbench.notes import Note
from pairbench.report.safe import json_escaped
from pairbench.report.wording import word

REPORT_FORMAT = "pairbench.report/2"


def derived_document(run: Run, analysis: Analysis) -> dict:
    """The analysis as JSON-ready records: ``summaries``, ``comparisons``, ``analysis_notes``."""
    unit_of = _units(analysis)
    return json_safe({
        "summaries": [summary_record(s) for s in analysis.summaries],
        "comparisons": [comparison_record(c, run.stopped_because) for c in analysis.comparisons],
        "analysis_notes": [note_record(n, unit_of(n)) for n in analysis.all_notes()],
        **({"suite_summary": suite_record(analysis.suite)} if analysis.suite is not None else {}),
        **({"relative": [relative_record(r) for r in analysis.relative]} if analysis.relative else {}),
        **({"metric_tables": [metric_table_record(t) for t in analysis.metric_tables]}
           if analysis.metric_tables else {}),
    })


def metric_table_record(t) -> dict:
    """One unit a harness reported (``analysis.metrics.MetricTable``): its Holm family and a record per
    comparison, medians per operation in the unit, the change in percent (None from 0)."""
    return {"unit": t.unit, "correction": t.correction, "family": t.family, "alpha": t.alpha, "worse": t.worse,
            "comparisons": [_metric_record(c) for c in t.comparisons]}


def _metric_record(c) -> dict:
    effect = c.comparison.effect
    return {
        "benchmark": c.comparison.benchmark.to_dict(), "baseline": c.comparison.baseline,
        "candidate": c.comparison.candidate, "verdict": c.verdict, "negligible": c.negligible,
        "method": c.method, "baseline_median": c.base_median, "candidate_median": c.cand_median,
        "difference": c.difference, "change": c.change_pct,
        "interval": ({"low": effect.low, "high": effect.high, "confidence": effect.confidence,
                      "method": effect.method} if effect else None),
        "pvalue": c.comparison.pvalue, "pvalue_unadjusted": c.comparison.pvalue_unadjusted,
        "rounds": c.comparison.rounds, "rounds_differing": c.differing,
    }


def relative_record(r) -> dict:
    """One series of a ``run`` against its fastest (``analysis.relative.Relative``)."""
    return {"benchmark": r.benchmark.to_dict(), "side": r.side,
            "reference": {"benchmark": r.reference_benchmark.to_dict(), "side": r.reference_side},
            "times": r.times, "low": r.low, "high": r.high, "confidence": r.confidence, "rounds": r.rounds,
            "method": "median of the per-round ratios, sign-test interval"}


def suite_record(summary) -> dict:
    """A suite's summary (``analysis.suite.SuiteSummary``): the correction, each group's benchmarks in
    reading order, the geometric mean, and the benchmarks added, removed and not measured."""
    groups = {key: [c.benchmark.label for c in getattr(summary, key)]
              for key in ("regressions", "improvements", "equivalent", "inconclusive", "unmeasured")}
    g = summary.geometric_mean
    return {
        "correction": summary.correction, "family": summary.family, "alpha": summary.alpha, **groups,
        "geometric_mean": dataclasses.asdict(g) if g is not None else None,
        **{key: {"count": getattr(summary, key).count, "names": list(getattr(summary, key).names)}
           for key in ("added", "removed", "not_measured")},
    }


def analysed_document(run: Run, analysis: Analysis) -> dict:
    """``pairbench report --format json``: the run's header, sample counts, and the analysis."""
    return {
        "format": REPORT_FORMAT,
        **run.metadata(),
        "series": [{"benchmark": b, "side": s, **_counts(samples)} for b, s, samples in run.all_series()],
        **derived_document(run, analysis),
    }


def render_json(run: Run, analysis: Analysis) -> str:
    """The analysed result as indented JSON (no NaN or infinity; ends with a newline).

    Strings are exact; every control character in them is a ``\\u`` escape (``safe.json_escaped``),
    so the text is safe to print and valid UTF-8 whatever bytes a name held.
    """
    text = json.dumps(analysed_document(run, analysis), indent=2, allow_nan=False, ensure_ascii=False)
    return json_escaped(text) + "\n"


def summary_record(s: Summary) -> dict:
    record = {f.name: getattr(s, f.name) for f in dataclasses.fields(s) if f.name not in ("benchmark", "notes")}
    return {"benchmark": s.benchmark.to_dict(), **record, "unit": s.unit,
            "notes": [note_record(n, s.unit) for n in s.notes]}


def comparison_record(c: Comparison, stopped_because: str) -> dict:
    """One comparison: the verdict and effect (percent) first, as CI scripts read them."""
    effect = c.effect
    return {
        "benchmark": c.benchmark.to_dict(),
        "baseline": c.baseline,
        "candidate": c.candidate,
        "self_check": c.self_check,
        "verdict": c.verdict.verdict,
        "metric": c.metric,
        "negligible": c.verdict.negligible,
        "verdict_reason": c.verdict.reason,
        "refused": c.verdict.refused,
        "refusal": note_record(c.verdict.refusal, c.benchmark.unit) if c.verdict.refusal else None,
        "effect": ({"estimate": effect.estimate, "low": effect.low, "high": effect.high,
                    "confidence": effect.confidence, "method": effect.method} if effect else None),
        "pvalue": c.pvalue,
        "pvalue_unadjusted": c.pvalue_unadjusted,
        "pvalue_method": effect.pvalue_method if effect else None,
        "adjustment": c.adjustment,
        "alpha": c.alpha,
        "threshold": c.threshold,
        "rounds": c.rounds,
        "rounds_needed": c.rounds_needed,
        "stopped_because": stopped_because,
        "secondary": _secondary(c),
        "notes": [note_record(n, c.benchmark.unit) for n in c.notes],
    }


def note_record(note: Note, unit: str = "ns") -> dict:
    """A note as data, with its words: ``{"code", "data", "subject", "text"}``."""
    return {**note.to_dict(), "subject": note.subject.to_dict(), "text": word(note, unit)}


def _secondary(c: Comparison) -> dict:
    sec = c.secondary
    out: dict = {}
    if sec.min_mean:
        m = sec.min_mean
        out["min"] = {"baseline": m.baseline_min, "candidate": m.candidate_min, "delta_pct": m.min_delta_pct}
        out["mean"] = {"baseline": m.baseline_mean, "candidate": m.candidate_mean,
                       "paired_difference": m.paired_difference,
                       "paired_difference_pct": m.paired_difference_pct}
    for name in ("pairs", "hodges_lehmann", "autocorrelation", "outlier_balance"):
        value = getattr(sec, name)
        out[name] = dataclasses.asdict(value) if value is not None else None
    out["mann_whitney_pvalue"] = sec.mann_whitney_pvalue
    out["signed_rank_pvalue"] = sec.signed_rank_pvalue
    return out


def _counts(samples) -> dict:
    return {"measured": len(samples.measured()), "failed": len(samples.failed()),
            "warmup": int(samples["warmup"].sum())}


def _units(analysis: Analysis):
    """``unit_of(note)``: the unit of the benchmark a note is about (the first summary's for the run's
    own notes, ``ns`` without any); the benchmarks' units looked up once, not once per note."""
    units: Mapping[str, str] = {s.benchmark.label: s.unit for s in analysis.summaries}
    default = analysis.summaries[0].unit if analysis.summaries else "ns"
    return lambda note: units.get(note.subject.benchmark, "ns") if note.subject.benchmark else default
