"""What the analysis derived, as JSON records for other tools.

Every result document holds them after its samples (``sessions.result.save``:
``summaries``, ``comparisons``, ``analysis_notes``, a suite's
``suite_summary``, a harness's ``metric_tables``), and ``pairbench report
--format json`` shows them with each note's words (``report.jsonfile``).
pairbench never reads them back: ``show`` and ``report`` analyse the samples
again. A note is its data, ``{"code", "data", "subject"}``; the words are the
report layer's. The fields of each record are listed in ``report.jsonfile``'s
format history. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from pairbench.analysis.records import Analysis, Comparison, Summary
from pairbench.model import Run, json_safe
from pairbench.notes import Note

NoteRecord = Callable[[Note, str], dict]
"""A note as a record, given the unit of the benchmark it is about."""


def note_record(note: Note, unit: str = "ns") -> dict:
    """A note as data: ``{"code", "data", "subject"}`` (``unit``: for callers that word it)."""
    return {**note.to_dict(), "subject": note.subject.to_dict()}


def derived_records(run: Run, analysis: Analysis, note: NoteRecord | None = None) -> dict:
    """The analysis as JSON-ready records: ``summaries``, ``comparisons``, ``analysis_notes`` (and a
    suite's summary, a ``run``'s relative speeds, a harness's unit tables). Each note is
    ``note(note, unit)``: its data (``note_record``) unless the caller adds more (the report layer
    adds its words)."""
    note = note or note_record
    unit_of = _units(analysis)
    return json_safe({
        "summaries": [summary_record(s, note) for s in analysis.summaries],
        "comparisons": [comparison_record(c, run.stopped_because, note) for c in analysis.comparisons],
        "analysis_notes": [note(n, unit_of(n)) for n in analysis.all_notes()],
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


def summary_record(s: Summary, note: NoteRecord | None = None) -> dict:
    note = note or note_record
    record = {f.name: getattr(s, f.name) for f in dataclasses.fields(s) if f.name not in ("benchmark", "notes")}
    return {"benchmark": s.benchmark.to_dict(), **record, "unit": s.unit,
            "notes": [note(n, s.unit) for n in s.notes]}


def comparison_record(c: Comparison, stopped_because: str, note: NoteRecord | None = None) -> dict:
    """One comparison: the verdict and effect (percent) first, as CI scripts read them."""
    note = note or note_record
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
        "refusal": note(c.verdict.refusal, c.benchmark.unit) if c.verdict.refusal else None,
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
        "rounds_needed_span": list(c.rounds_needed_span) if c.rounds_needed_span else None,
        "stopped_because": stopped_because,
        "secondary": _secondary(c),
        "notes": [note(n, c.benchmark.unit) for n in c.notes],
    }


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


def _units(analysis: Analysis):
    """``unit_of(note)``: the unit of the benchmark a note is about (the first summary's for the run's
    own notes, ``ns`` without any); the benchmarks' units looked up once, not once per note."""
    units: Mapping[str, str] = {s.benchmark.label: s.unit for s in analysis.summaries}
    default = analysis.summaries[0].unit if analysis.summaries else "ns"
    return lambda note: units.get(note.subject.benchmark, "ns") if note.subject.benchmark else default
