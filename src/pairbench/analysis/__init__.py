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
from pairbench.analysis.budget import budget_needed, out_of_reach_note, round_ns
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
from pairbench.analysis.relative import relative_speeds
from pairbench.analysis.rules import (
    executor_rss_floor_kib,
    machine_notes,
    recorded_resources,
    rss_floor_note,
    self_check_note,
)
from pairbench.analysis.summary import summarize
from pairbench.errors import StatisticsError
from pairbench.model import ANCHOR_LABEL, METRICS, Run, Samples
from pairbench.notes import Note, Subject

__all__ = ["CONFIDENCE", "Analysis", "Comparison", "Criteria", "Effect", "Summary", "analyse",
           "baseline_and_candidates", "comparison_pairs", "compares"]

SELF_CHECK_LABEL = "self-check"
COMPARISON_RUN_NOTES = frozenset({"sample-time-raised"})
"""Notes taken while measuring that qualify every comparison of their benchmark (all benchmarks'
when they name none): said beside each comparison's verdict as well as among the run's notes."""


def analyse(run: Run) -> Analysis:
    """Everything computed from ``run``'s samples (see the module docstring)."""
    floor = executor_rss_floor_kib(run)
    recorded = recorded_resources(run.environment)
    summaries, figures = [], []
    for b, s, samples in run.all_series():
        summary = summarize(run.benchmarks[b], run.sides[s], samples, rss_floor_kib=floor, recorded=recorded)
        subject = _series_subject(run, b, s)
        summaries.append(dataclasses.replace(summary, notes=tuple(n.about(subject) for n in summary.notes)))
        figures.append(_series_figure(b, s, samples, recorded))
    comparisons, comparison_figures, values = _comparisons(run)
    at_floor = [s.side for s in summaries if s.max_rss_at_floor]
    floor_note = rss_floor_note(list(dict.fromkeys(at_floor)), floor or 0)
    notes = (*_measuring_notes(run), *machine_notes(run.environment, run.kind, len(run.sides), run.settings.decision.metric),
             *([floor_note] if floor_note else []))
    suite = _suite_summary(run, comparisons, values, notes) if is_suite(run) else None
    return Analysis(tuple(summaries), comparisons, tuple(notes), tuple(figures), comparison_figures, suite,
                    relative_speeds(run, summaries), doctor=_doctor_report(run), metric_tables=_metric_tables(run))


def _doctor_report(run: Run):
    """The findings on the command of a ``doctor COMMAND`` run (None for any other run)."""
    from pairbench.analysis.doctor import doctor_report  # with scipy: see _comparisons

    return doctor_report(run) if run.kind == "doctor" else None


def _metric_tables(run: Run) -> tuple:
    """A harness's own metrics (B/op, allocs/op, counters), one table per unit (``analysis.metrics``)."""
    if not compares(run):
        return ()
    from pairbench.analysis.metrics import metric_tables  # with scipy: see _comparisons

    base, others = baseline_and_candidates(run)
    return metric_tables(run, base, others, criteria_of(run))


def _measuring_notes(run: Run) -> tuple[Note, ...]:
    """What was noticed while measuring, and what the benchmarks' validation samples say
    (``analysis.validation``): judged again from the samples, so a result file that lost its notes
    says the same. Results written before validation samples were marked keep their stored words."""
    from pairbench.analysis.validation import validation_notes  # with scipy: see _comparisons

    judged = validation_notes(run)
    again = {(n.code, n.subject) for n in judged}
    return (*(n for n in run.notes if (n.code, n.subject) not in again), *judged)


def _suite_summary(run: Run, comparisons, values, notes):
    from pairbench.analysis.suite import summarize_suite  # with scipy: see _comparisons

    summary = summarize_suite(comparisons, values, notes, criteria_of(run), run.settings.sampling.seed,
                              run.settings.sampling.min_runs)
    return dataclasses.replace(summary, budget=budget_needed(run, comparisons, summary.not_measured.count))


def is_suite(run: Run) -> bool:
    """Whether ``run`` compares a suite (``bench`` with a baseline and a candidate): its verdicts
    are corrected with Holm's procedure and summarized (``analysis.suite``)."""
    return run.kind == "bench" and compares(run)


def baseline_and_candidates(run: Run) -> tuple[int, list[int]]:
    """Index of the baseline (label "baseline", else the first side) and of the other sides (an
    anchor's comparisons are :func:`comparison_pairs`'s)."""
    labels = [side.label for side in run.sides]
    base = labels.index("baseline") if "baseline" in labels else 0
    return base, [i for i in range(len(run.sides)) if i != base and labels[i] != ANCHOR_LABEL]


def comparison_pairs(run: Run) -> list[tuple[int, int]]:
    """Every comparison of ``run`` as (its baseline side, its candidate side): the baseline against
    each other side, then each anchor side against each candidate (a paired history's record: the
    commit against its predecessor and against the window's anchor, in the same rounds)."""
    base, others = baseline_and_candidates(run)
    anchors = [i for i, side in enumerate(run.sides) if side.label == ANCHOR_LABEL and i != base]
    candidates = [i for i in others if run.sides[i].label == "candidate"]
    return [(base, c) for c in others] + [(a, c) for a in anchors for c in candidates]


COMPARING_KINDS = ("compare", "bench")


def compares(run: Run) -> bool:
    """Whether ``run`` compares candidates with a baseline (compare, or bench with two workers)."""
    return run.kind in COMPARING_KINDS and len(run.sides) > 1


def family_size(run: Run) -> int:
    """The comparisons the family-wise error is split over: each candidate (the self-check copy is
    not one) on each benchmark (a suite's benchmarks, compare's parameter values), since a gate
    that fails on any of them asks one question many times. A shard of a suite counts the whole
    suite's benchmarks (``run.suite``), so its verdicts hold when the shards are merged."""
    candidates = sum(1 for side in run.sides if side.label == "candidate") or max(len(run.sides) - 1, 1)
    suite = run.suite.benchmarks if run.suite else 0
    return candidates * max(len(run.benchmarks), suite, 1)


def criteria_of(run: Run) -> Criteria:
    return Criteria.of(run.settings, family_size(run))


def _comparisons(run: Run) -> tuple[tuple[Comparison, ...], tuple[ComparisonFigure, ...], list[np.ndarray]]:
    """Every comparison (with the family's correction), its chart data, and the values its verdict
    was drawn from."""
    if not compares(run):
        return (), (), []
    # imported here: the statistics (scipy: ~0.6 s) are for the commands that compare, after their
    # last sample, not for every command that reads a run
    from pairbench.analysis.comparison import bonferroni, compare
    from pairbench.analysis.pairing import Pairing
    from pairbench.analysis.suite import holm, verdict_values

    criteria = criteria_of(run)
    found, figures, values = [], [], []
    pairs = comparison_pairs(run)
    qualifying = [n for n in run.notes if n.code in COMPARISON_RUN_NOTES]
    for b, key in enumerate(run.benchmarks):
        for base, c in pairs:
            pairing = Pairing(key, run.sides[base].name, run.sides[c].name, run.series(b, base),
                              run.series(b, c), self_check=run.sides[c].label == SELF_CHECK_LABEL)
            comparison, figure = compare(pairing, criteria)
            subject = Subject(_benchmark_name(run, b), pairing.candidate, pairing.baseline)
            reach = out_of_reach_note(comparison, figure.baseline, figure.candidate, run.environment,
                                      round_ns(run, b))
            notes = [n.about(subject) for n in (*comparison.notes, *([reach] if reach else []))]
            if pairing.self_check and (aa := self_check_note(comparison.verdict.verdict, pairing.candidate,
                                                             pairing.baseline)):
                notes.append(aa.about(subject))
            notes += [n for n in qualifying if n.subject.benchmark in ("", key.label)]
            found.append(dataclasses.replace(comparison, notes=tuple(notes)))
            figures.append(figure)
            values.append(verdict_values(pairing, comparison.metric))
    if is_suite(run):
        return tuple(holm(found, criteria, values.__getitem__)), tuple(figures), values
    return tuple(bonferroni(found, criteria.family)), tuple(figures), values


def _benchmark_name(run: Run, benchmark: int) -> str:
    """The benchmark as a note's subject names it: only when a run has several."""
    return run.benchmarks[benchmark].label if len(run.benchmarks) > 1 else ""


def _series_subject(run: Run, benchmark: int, side: int) -> Subject:
    return Subject(_benchmark_name(run, benchmark), run.sides[side].name)


def _series_figure(benchmark: int, side: int, samples: Samples, recorded: frozenset[str]) -> SeriesFigure:
    measured = samples.measured().in_order()
    values = measured.values()
    try:
        correlogram = stats.autocorrelation(values)
    except StatisticsError:  # too few samples or no spread: the summary's notes say so
        correlogram = None
    resources = {name: measured[name].astype(np.float64)
                 for name in ("max_rss_kib", "voluntary_cs", "involuntary_cs") if name in recorded}
    return SeriesFigure(benchmark, side, measured["seq"], values, resources, correlogram, _other_times(measured))


def _other_times(measured: Samples) -> dict[str, np.ndarray]:
    """The samples' values by each time but wall time that they recorded (what a verdict may be on):
    one never recorded (an import's CPU time) reads 0 throughout, and is left out."""
    found = {metric: measured.metric_values(metric) for metric in METRICS if metric != "wall"}
    return {metric: values for metric, values in found.items() if np.any(values > 0)}
