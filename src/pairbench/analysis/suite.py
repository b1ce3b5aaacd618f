"""A suite's comparisons together: Holm's procedure across them, and the suite summary.

**Multiple testing: Holm.** A suite compares hundreds of benchmarks, and a CI
gate fails on any regression, so the error that matters is a wrong verdict
*anywhere* in the suite: the family-wise error. Every benchmark is measured
(and stops) at level alpha / m, m the suite's comparisons (Bonferroni: its
level cannot wait for the other benchmarks' results), so its interval is one
of m simultaneous intervals at 1 - alpha. Then Holm's step-down procedure
(Holm 1979) on the comparisons' own p-values: sorted ascending, the j-th is
rejected at level alpha / (m - j + 1) while every one before it was. It keeps
the chance of any wrong slower/faster verdict at alpha under any dependence
between benchmarks, and never rejects less than Bonferroni. A comparison Holm
rejects whose alpha / m interval still held 0 is given the interval of the same
anytime-valid mixture at its Holm level, which then excludes 0 exactly as the
p-value says (``stats.sequential.tuning``), and its slower/faster verdict from
that interval. The ``equivalent`` verdicts rest on the alpha / m intervals.

Why not Benjamini-Hochberg: it controls the expected share of false verdicts
among those flagged, which lets a pull request that truly speeds up many
benchmarks loosen the bar for the rest, so real improvements would make false
regressions (and failed gates) more likely; and its guarantee needs
independence or positive dependence between benchmarks, which parallel jobs on
shared cores do not promise.

**The summary** orders the comparisons as a reviewer reads them: regressions
(largest first), improvements (largest first), then equivalent and
inconclusive ones (suite order), and apart from them those not measured
at all (no round: never counted as inconclusive); adds the geometric-mean change
(of the mean log-ratios, with a studentized bootstrap interval: see
``geometric_mean``), the benchmarks added and removed, those the suite's budget
left unmeasured, and the validation findings. Pure.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.budget import BudgetNeeded
from pairbench.analysis.comparison import Criteria
from pairbench.analysis.criteria import holm_steps
from pairbench.analysis.effect import effect_of, verdict_of
from pairbench.analysis.pairing import Pairing, block_effects, paired_blocks, paired_values
from pairbench.analysis.records import Comparison
from pairbench.analysis.validation import VALIDATION_CODES
from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note
from pairbench.stats.paired import log_ratios

CORRECTION = "holm"
GEOMEAN_CONFIDENCE = 0.95
GEOMEAN_RESAMPLES = 2000
FIRST_ROUNDS_METHOD = "studentized bootstrap of each benchmark's first rounds, taken before its stopping rule could stop it"

# a comparison's index -> the values its verdict is drawn from (per-round log-ratios or block medians)
DecidedOn = Callable[[int], np.ndarray]


def verdict_values(pairing: Pairing, metric: str = "wall") -> np.ndarray:
    """What a comparison's verdict is drawn from, in round order: the per-round log-ratios of
    ``metric``, or one median per block of fresh worker processes (``pairing.block_effects``)."""
    base, cand = paired_values(pairing.base, pairing.cand, metric)
    if not base.size:
        return np.zeros(0)
    r = log_ratios(base, cand)
    blocks = paired_blocks(pairing.base, pairing.cand, metric)
    return r if blocks is None else block_effects(r, blocks)


# --------------------------------------------------------------------------- Holm


def holm(comparisons: Sequence[Comparison], criteria: Criteria, decided_on: DecidedOn) -> list[Comparison]:
    """The comparisons with Holm-adjusted p-values over the family (``criteria.family``, at least
    the comparisons given: benchmarks of other shards, or not measured, count with p = 1), and a
    slower/faster verdict for each that Holm rejects at a level its alpha / m interval did not reach.
    The A/A self-check is left out of the family, as always."""
    family = [i for i, c in enumerate(comparisons) if not c.self_check]
    pvalues = [1.0 if comparisons[i].pvalue_unadjusted is None else comparisons[i].pvalue_unadjusted for i in family]
    result = list(comparisons)
    for i, (adjusted, level) in zip(family, holm_steps(pvalues, max(criteria.family, len(family)), criteria.alpha),
                                    strict=True):
        c = dataclasses.replace(comparisons[i], pvalue=adjusted, adjustment=CORRECTION)
        if adjusted <= criteria.alpha and c.pvalue_unadjusted is not None and not _directional(c):
            c = _at_holm_step(c, criteria.at_holm_step(level), decided_on(i))
        result[i] = c
    return result


DIRECTIONAL = ("slower", "faster")


def _directional(c: Comparison) -> bool:
    return c.verdict.verdict in DIRECTIONAL


def _at_holm_step(c: Comparison, criteria: Criteria, values: np.ndarray) -> Comparison:
    """``c`` judged on the interval at its Holm step's level, when that gives a slower or faster verdict
    (it does for the anytime mixture the measuring used, whose p-value Holm adjusted; a fixed-rounds
    sign-test interval may not, and then the verdict stays)."""
    verdict, effect, _ = verdict_of(lambda: effect_of(values, criteria), criteria)
    return dataclasses.replace(c, effect=effect, verdict=verdict) if verdict.verdict in DIRECTIONAL else c


# --------------------------------------------------------------------------- the summary


@frozen
class GeometricMean:
    """The suite's geometric-mean change in percent: exp of the mean over benchmarks of each
    benchmark's mean log-ratio (the geometric mean of its per-round ratios, or of its blocks'),
    minus 1; with a studentized bootstrap interval, each benchmark's values resampled on their own
    (``stats.mean_of_means_ci``). When the rounds stopped adaptively, of each benchmark's first
    rounds, those it took before it could stop (``unstopped``)."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float
    benchmarks: int
    method: str = "studentized bootstrap, each benchmark's rounds resampled"


@frozen
class Listed:
    """Names of benchmarks found on one side only (at most 20 shown), and how many there are."""

    count: int = 0
    names: tuple[str, ...] = ()


@frozen
class SuiteSummary:
    """A suite at a glance: the comparisons in reading order, the overall change, what changed in
    the suite itself, and the validation findings (notes about benchmarks and sides)."""

    correction: str
    family: int
    alpha: float
    regressions: tuple[Comparison, ...]
    improvements: tuple[Comparison, ...]
    equivalent: tuple[Comparison, ...]
    inconclusive: tuple[Comparison, ...]  # measured, and undecided
    unmeasured: tuple[Comparison, ...]  # not one round measured (the budget was spent, or it failed at once)
    geometric_mean: GeometricMean | None
    added: Listed
    removed: Listed
    not_measured: Listed
    findings: tuple[Note, ...]
    budget: BudgetNeeded | None = None  # what would decide the inconclusive and the not measured


def summarize_suite(comparisons: Sequence[Comparison], decided_on: Sequence[np.ndarray], run_notes: Sequence[Note],
                    criteria: Criteria, seed: int, min_rounds: int = 0) -> SuiteSummary:
    """The summary of a suite's ``comparisons`` (``decided_on[i]``: the values comparison i's
    verdict was drawn from), with the run's notes for what was added, removed and not measured;
    ``min_rounds``: the rounds every benchmark took before its stopping rule could stop it
    (``--min-runs``), for the geometric mean (``unstopped``)."""
    real = [(c, v) for c, v in zip(comparisons, decided_on, strict=True) if not c.self_check]
    unmeasured = [c for c, _ in real if not c.rounds]
    real = [(c, v) for c, v in real if c.rounds]

    def group(verdict: str, negligible: bool | None = None) -> list[Comparison]:
        return [c for c, _ in real if c.verdict.verdict == verdict
                and (negligible is None or c.verdict.negligible == negligible)]

    by_change = lambda c: c.effect.estimate if c.effect else 0.0  # noqa: E731 - a sort key
    regressions = sorted(group("slower", False), key=by_change, reverse=True)
    improvements = sorted(group("faster", False), key=by_change)
    negligible = {id(c) for c in (*group("slower", True), *group("faster", True))}
    equivalent = [c for c, _ in real if c.verdict.verdict == "equivalent" or id(c) in negligible]
    return SuiteSummary(
        correction=CORRECTION, family=criteria.family, alpha=criteria.alpha,
        regressions=tuple(regressions), improvements=tuple(improvements), equivalent=tuple(equivalent),
        inconclusive=tuple(group("inconclusive")), unmeasured=tuple(unmeasured),
        geometric_mean=_suite_geometric_mean(real, criteria, seed, min_rounds),
        added=_listed(run_notes, "benchmarks-added"), removed=_listed(run_notes, "benchmarks-removed"),
        not_measured=_listed(run_notes, "suite-budget-spent"),
        findings=tuple(n for n in run_notes if n.code in VALIDATION_CODES))


def _suite_geometric_mean(real, criteria: Criteria, seed: int, min_rounds: int) -> GeometricMean | None:
    g = geometric_mean([unstopped(v, c.rounds, criteria, min_rounds) for c, v in real if c.effect is not None], seed)
    return dataclasses.replace(g, method=FIRST_ROUNDS_METHOD) if g is not None and criteria.anytime else g


def unstopped(values: np.ndarray, rounds: int, criteria: Criteria, min_rounds: int) -> np.ndarray:
    """A comparison's first values, as many as it was sure to take whatever they said: the mean of
    these has no bias from when the sequence stopped it, the mean of all its values has.

    With adaptive stopping a benchmark stops as soon as its interval decides. Under skewed ratios
    that is sooner when its first rounds held fewer slow ones, so the mean of the rounds taken is
    biased low, and across a suite the bias does not average out while the interval narrows: the
    95% interval of the mean of all rounds covered in 0.60-0.65 of simulated suites of 30
    benchmarks with occasional slow rounds, 0.80-0.875 with lognormal ratios
    (``benchmarks/suite_geomean_stopped.py``). No benchmark stops before ``min_rounds`` rounds, nor
    before the sequence is bounded (``Criteria.first_verdict_round`` values), so its first
    max(that, ``min_rounds`` in values) values are a sample of a size fixed in advance, and their
    mean is unbiased. ``rounds``: the rounds ``values`` were drawn from (more than the values when
    they are medians of blocks of rounds). With fixed rounds (``--runs``), every value. A benchmark
    the budget stopped before that many was stopped by the clock, not by its values: all of them."""
    if not criteria.anytime or values.size == 0:
        return values
    per_value = max(rounds / values.size, 1.0)
    return values[:max(criteria.first_verdict_round(), int(min_rounds // per_value))]


def geometric_mean(values: Sequence[np.ndarray], seed: int, confidence: float = GEOMEAN_CONFIDENCE,
                   n_resamples: int = GEOMEAN_RESAMPLES) -> GeometricMean | None:
    """The geometric-mean change over benchmarks whose verdict values are ``values`` (log-ratios),
    None without any. The interval is omitted (None) when a benchmark has fewer than 2 values or
    none of them vary.

    Why the means of the log-ratios and not their medians (which each benchmark's verdict is
    about): the median of a few skewed values is biased, by about +0.1 percentage points at 10
    rounds of a skewed per-round ratio (a candidate with occasional slow rounds), and that bias
    does not average out over benchmarks while the interval narrows as the suite grows: the mean of
    30 benchmarks' medians at 10 rounds was covered by its 95% interval in 51% of simulated suites.
    The mean log-ratio has no such bias; its studentized interval covered 0.927-0.968 (0.952
    pooled) at 10-100 benchmarks of 10-100 rounds, symmetric, skewed or heavy-tailed
    (``benchmarks/suite_geomean.py``). That is at a number of rounds fixed in advance: for rounds
    the sequence stopped, the summary gives each benchmark's ``unstopped`` values."""
    samples = [np.asarray(v, dtype=np.float64) for v in values if len(v)]
    if not samples:
        return None
    estimate = _percent(float(np.mean([np.mean(s) for s in samples])))
    if any(s.size < 2 for s in samples):
        return GeometricMean(estimate, None, None, confidence, len(samples))
    try:
        ci = stats.mean_of_means_ci(tuple(samples), confidence=confidence, n_resamples=n_resamples, seed=seed)
    except StatisticsError:
        return GeometricMean(estimate, None, None, confidence, len(samples))
    return GeometricMean(estimate, _percent(ci.low), _percent(ci.high), confidence, len(samples))


def _percent(log_ratio: float) -> float:
    return float(100.0 * math.expm1(log_ratio))


def _listed(notes: Sequence[Note], code: str) -> Listed:
    found = [n for n in notes if n.code == code]
    if not found:
        return Listed()
    names = tuple(name for n in found for name in n.data.get("names", []))
    return Listed(sum(int(n.data.get("count", 0)) for n in found), names)
