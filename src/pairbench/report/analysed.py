"""The analysed result every renderer starts from: a run with its summaries and comparisons.

A stored result already holds the summaries and comparisons computed when it was
measured (the verdict the run stopped on); they are used as stored. A journal,
a ``run`` result or an older document may lack them: then they are recomputed
from the raw samples, exactly as ``pairbench show`` does. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from pairbench import analysis
from pairbench.analysis import VariantSummary
from pairbench.model import Run


@dataclass(frozen=True)
class Analysed:
    """A run, its per-variant summaries and its comparisons (JSON-ready dicts), ready to render.

    ``comparisons`` is empty for a ``run``; ``recomputed`` names what was not
    stored in the document and had to be computed from the samples.
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
    """``run`` with its summaries and comparisons: as stored, else recomputed from the samples."""
    recomputed = []
    summaries = _stored_summaries(run)
    if summaries is None:
        summaries = analysis.summarize_run(run)
        recomputed.append("summaries")
    comparisons = tuple(dict(c) for c in run.comparisons)
    if run.kind == "compare" and not comparisons and len(run.variants) > 1:
        comparisons = _compute_comparisons(run)
        recomputed.append("comparisons")
    return Analysed(run=run, summaries=summaries, comparisons=comparisons,
                    recomputed=tuple(recomputed))


def _stored_summaries(run: Run) -> tuple[VariantSummary, ...] | None:
    if len(run.summaries) != len(run.variants):
        return None
    try:
        return analysis.summaries_from_dicts(run.summaries)
    except (TypeError, ValueError):  # written by another version: recompute
        return None


def _compute_comparisons(run: Run) -> tuple[dict, ...]:
    from pairbench.comparison import compare_run, settings_for_run

    settings = settings_for_run(run)
    return tuple(r.to_dict(settings, run.stopped_because) for r in compare_run(run, settings))
