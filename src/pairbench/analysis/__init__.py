"""The analysis: a run's samples in, one :class:`Analysis` out, for every output to render.

``analyse(run)`` is the only place statistics are computed on a run. It
summarises every series (benchmark x side), compares every candidate side with
the baseline on every benchmark (with the verdict path the stopping rule uses),
gathers every note (what was noticed while measuring, the machine, each
statistic's caveats, the RSS floor, the A/A self-check), and prepares what the
charts plot. ``show``, ``report`` and the measuring commands all call it on
the samples, so no stored verdict can disagree with them. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pairbench import stats
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.records import (
    CONFIDENCE,
    Analysis,
    Comparison,
    ComparisonFigure,
    Effect,
    SeriesFigure,
    Summary,
)
from pairbench.analysis.rules import (
    executor_rss_floor_kib,
    machine_notes,
    rss_floor_note,
    self_check_note,
)
from pairbench.analysis.summary import summarize
from pairbench.errors import StatisticsError
from pairbench.model import Run, Samples
from pairbench.notes import Subject

__all__ = ["CONFIDENCE", "Analysis", "Comparison", "Criteria", "Effect", "Summary", "analyse",
           "baseline_and_candidates", "compares"]

SELF_CHECK_LABEL = "self-check"


def analyse(run: Run) -> Analysis:
    """Everything computed from ``run``'s samples (see the module docstring)."""
    floor = executor_rss_floor_kib(run.environment)
    summaries, figures = [], []
    for b, s, samples in run.all_series():
        summary = summarize(run.benchmarks[b], run.sides[s], samples, rss_floor_kib=floor)
        subject = _series_subject(run, b, s)
        summaries.append(dataclasses.replace(summary, notes=tuple(n.about(subject) for n in summary.notes)))
        figures.append(_series_figure(b, s, samples))
    comparisons, comparison_figures = _comparisons(run)
    at_floor = [s.side for s in summaries if s.max_rss_at_floor]
    floor_note = rss_floor_note(list(dict.fromkeys(at_floor)), floor or 0)
    notes = (*run.notes, *machine_notes(run.environment, run.kind, len(run.sides)),
             *([floor_note] if floor_note else []))
    return Analysis(tuple(summaries), comparisons, tuple(notes), tuple(figures), comparison_figures)


def baseline_and_candidates(run: Run) -> tuple[int, list[int]]:
    """Index of the baseline (label "baseline", else the first side) and of the other sides."""
    labels = [side.label for side in run.sides]
    base = labels.index("baseline") if "baseline" in labels else 0
    return base, [i for i in range(len(run.sides)) if i != base]


COMPARING_KINDS = ("compare", "bench")


def compares(run: Run) -> bool:
    """Whether ``run`` compares candidates with a baseline (compare, or bench with two workers)."""
    return run.kind in COMPARING_KINDS and len(run.sides) > 1


def family_size(run: Run) -> int:
    """The comparisons the family-wise error is split over: each candidate (the self-check copy is
    not one) on each benchmark (a worker's benchmarks, compare's parameter values), since a gate
    that fails on any of them asks one question many times."""
    candidates = sum(1 for side in run.sides if side.label == "candidate") or max(len(run.sides) - 1, 1)
    return candidates * max(len(run.benchmarks), 1)


def criteria_of(run: Run) -> Criteria:
    return Criteria.of(run.settings, family_size(run))


def _comparisons(run: Run) -> tuple[tuple[Comparison, ...], tuple[ComparisonFigure, ...]]:
    # imported here: scipy (~0.6 s) loads while a measuring command's first rounds run (preload)
    from pairbench.analysis.comparison import Pairing, bonferroni, compare

    if not compares(run):
        return (), ()
    criteria = criteria_of(run)
    base, others = baseline_and_candidates(run)
    found, figures = [], []
    for b, key in enumerate(run.benchmarks):
        for c in others:
            pairing = Pairing(key, run.sides[base].name, run.sides[c].name, run.series(b, base),
                              run.series(b, c), self_check=run.sides[c].label == SELF_CHECK_LABEL)
            comparison, figure = compare(pairing, criteria)
            subject = Subject(_benchmark_name(run, b), pairing.candidate, pairing.baseline)
            notes = [n.about(subject) for n in comparison.notes]
            if pairing.self_check and (aa := self_check_note(comparison.verdict.verdict, pairing.candidate,
                                                             pairing.baseline)):
                notes.append(aa.about(subject))
            found.append(dataclasses.replace(comparison, notes=tuple(notes)))
            figures.append(figure)
    return tuple(bonferroni(found, criteria.family)), tuple(figures)


def _benchmark_name(run: Run, benchmark: int) -> str:
    """The benchmark as a note's subject names it: only when a run has several."""
    return run.benchmarks[benchmark].label if len(run.benchmarks) > 1 else ""


def _series_subject(run: Run, benchmark: int, side: int) -> Subject:
    return Subject(_benchmark_name(run, benchmark), run.sides[side].name)


def _series_figure(benchmark: int, side: int, samples: Samples) -> SeriesFigure:
    measured = samples.measured().in_order()
    values = measured.values()
    try:
        correlogram = stats.autocorrelation(values)
    except StatisticsError:  # too few samples or no spread: the summary's notes say so
        correlogram = None
    resources = {name: measured[name].astype(np.float64)
                 for name in ("max_rss_kib", "voluntary_cs", "involuntary_cs")}
    return SeriesFigure(benchmark, side, measured["seq"], values, resources, correlogram)
