"""The analysed result every renderer starts from: a run with its summaries and comparisons.

A stored result already holds the summaries and comparisons computed when it was
measured (the verdict the run stopped on); they are used as stored when they
have the shape the renderers read. A journal, a ``run`` result, an older
document, or one whose derived records lack a field, hold one of the wrong type
or name a command the run does not have, gets them recomputed from the raw
samples (which ``resultfile`` validated), exactly as ``pairbench show`` does.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pairbench import analysis
from pairbench.analysis import VariantSummary
from pairbench.model import Run


@dataclass(frozen=True)
class Analysed:
    """A run, its per-variant summaries and its comparisons (JSON-ready dicts), ready to render.

    ``comparisons`` is empty for a ``run``; ``recomputed`` names what was not
    stored in the document (or not usable as stored) and had to be computed from the samples.
    """

    run: Run
    summaries: tuple[VariantSummary, ...]
    comparisons: tuple[dict, ...]
    recomputed: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """Every warning of the run, its variants and its comparisons, once each, in that order."""
        seen: dict[str, None] = {}
        for note in self.run.warnings:
            seen.setdefault(note, None)
        for summary in self.summaries:
            for note in summary.warnings:
                seen.setdefault(f"{summary.name}: {note}", None)
        for c in self.comparisons:
            for note in c.get("warnings") or ():
                seen.setdefault(f"{c['candidate']} vs {c['baseline']}: {note}", None)
        return tuple(seen)


def analyse(run: Run) -> Analysed:
    """``run`` with its summaries and comparisons: as stored if usable, else recomputed from the samples."""
    recomputed = []
    summaries = _stored_summaries(run)
    if summaries is None:
        summaries = analysis.summarize_run(run)
        recomputed.append("summaries")
    comparisons = _stored_comparisons(run)
    if comparisons is None:
        comparisons = ()
        if run.kind == "compare" and len(run.variants) > 1:
            comparisons = _compute_comparisons(run)
            recomputed.append("comparisons")
    return Analysed(run=run, summaries=summaries, comparisons=comparisons,
                    recomputed=tuple(recomputed))


def _stored_summaries(run: Run) -> tuple[VariantSummary, ...] | None:
    """The stored summaries, one per variant in order, every field of its declared type; else None."""
    if len(run.summaries) != len(run.variants):
        return None
    try:
        summaries = analysis.summaries_from_dicts(run.summaries)
    except (TypeError, ValueError):  # written by another version: recompute
        return None
    if [s.name for s in summaries] != [v.name for v in run.variants]:
        return None
    return summaries if all(map(usable_summary, summaries)) else None


def _stored_comparisons(run: Run) -> tuple[dict, ...] | None:
    """The stored comparisons if there are any and each is usable; else None."""
    names = {v.name for v in run.variants}
    if not run.comparisons or not all(usable_comparison(c, names) for c in run.comparisons):
        return None
    return tuple(dict(c) for c in run.comparisons)


def _compute_comparisons(run: Run) -> tuple[dict, ...]:
    from pairbench.comparison import compare_run, settings_for_run

    settings = settings_for_run(run)
    return tuple(r.to_dict(settings, run.stopped_because) for r in compare_run(run, settings))


# --------------------------------------------------------------------------- the shapes renderers read

Check = Callable[[object], bool]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value) -> bool:
    return isinstance(value, str)


def _flag(value) -> bool:
    return isinstance(value, bool)


def _texts(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _record(**fields: Check) -> Check:
    """An object whose ``fields`` pass their checks (a missing field is None); other keys are free."""
    return lambda value: isinstance(value, Mapping) and all(
        check(value.get(key)) for key, check in fields.items())


_EFFECT = _record(estimate=_number, low=_number, high=_number, confidence=_number, method=_text)
_SECONDARY = _record(
    min=_optional(_record(baseline=_number, candidate=_number, delta_pct=_number)),
    mean=_optional(_record(baseline=_number, candidate=_number, paired_difference_pct=_number)),
    pairs=_optional(_record(candidate_faster=_integer, candidate_slower=_integer, tied=_integer)),
    hodges_lehmann=_optional(_record(estimate=_number, low=_number, high=_number, confidence=_number)),
    mann_whitney_pvalue=_optional(_number),
    signed_rank_pvalue=_optional(_number),
    autocorrelation=_optional(_record(lag1=_number, band=_number)),
    outlier_balance=_optional(_record(enabled=_flag, slow=_integer, fast=_integer,
                                      pvalue=_optional(_number))),
)
_COMPARISON = _record(
    baseline=_text, candidate=_text, verdict=_text, negligible=_flag, self_check=_optional(_flag),
    verdict_reason=_optional(_text), effect=_optional(_EFFECT), pvalue=_optional(_number),
    adjustment=_optional(_text), alpha=_number, threshold=_number, rounds=_integer,
    rounds_needed=_optional(_integer), stopped_because=_optional(_text), warnings=_optional(_texts),
    secondary=_optional(_SECONDARY),
)
# VariantSummary's field annotations (strings: ``from __future__ import annotations``) -> check
SUMMARY_FIELD_CHECKS: dict[str, Check] = {
    "str": _text, "int": _integer, "bool": _flag, "float": _number,
    "float | None": _optional(_number), "tuple[str, ...]": _texts,
}


def usable_comparison(record: object, variant_names: set[str]) -> bool:
    """Whether a stored comparison has every field the renderers read, of its type, and names
    two of the run's variants."""
    return _COMPARISON(record) and record["baseline"] in variant_names and (
        record["candidate"] in variant_names)


def usable_summary(summary: VariantSummary) -> bool:
    """Whether every field of ``summary`` holds a value of its declared type (numbers finite)."""
    return all(SUMMARY_FIELD_CHECKS.get(f.type, lambda value: False)(getattr(summary, f.name))
               for f in dataclasses.fields(summary))
