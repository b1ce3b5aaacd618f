"""A harness's own metrics (Go's B/op and allocs/op, Google Benchmark's counters): one table per unit.

benchstat prints one table per unit; so does pairbench. Each metric a
harness reported on both sides of a ``bench`` is compared like time, on the
same rounds, with the same machinery, and gets its own family in Holm's
procedure: the time verdicts keep their family (adding metrics never weakens
them), and each unit's verdicts hold at alpha over that unit's comparisons.

**One operation's value.** A metric whose name ends in ``/op`` is stored as
the total over a sample's iterations (``measure.harnesses.gotest``) and is
divided by them; any other (a rate such as ``MB/s``, a Google Benchmark
counter) is the value the harness reported for the sample. Go results written
before the names kept ``/op`` (``B``, ``allocs``) read as ``B/op`` and
``allocs/op`` (``per_op_name``).

**The verdict.** Per round both sides measured, the pair of values:

* every pair equal (allocs/op is often 0, or the same count, on both sides):
  ``same``, no p-value test needed (p = 1, counted in the family);
* both sides positive and the log-ratios vary: exactly the time's path,
  ``effect.effect_of`` on the per-round log-ratios (the anytime-valid
  confidence sequence under adaptive stopping, valid whatever stopped the run;
  the sign-test interval for fixed rounds) and ``verdict.decide`` against
  ``--threshold``; ``higher`` / ``lower`` for slower / faster;
* otherwise (a side is 0 in some round, so there is no ratio; or the ratio is
  the same in every round, so there is no spread): the sign test on the
  per-round differences (``scipy.stats.binomtest`` on the rounds that went up
  against those that went down, two-sided, as ``stats.paired_effect``'s
  p-value), ``higher`` / ``lower`` when Holm rejects; the change is the
  medians' ratio, or their difference when the baseline's median is 0 (a
  change from 0 has no percentage). The rounds are as many as the time's
  stopping rule took, which does not look at this metric.

Which direction is worse: a higher value, except for rates (a unit ending in
``/s``, Google Benchmark's ``*_per_second``), where lower is worse
(``worse_verdict``); ``--fail-on-metric`` gates on it. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import effect_of, verdict_of
from pairbench.analysis.pairing import common_rounds, per_round
from pairbench.analysis.records import Comparison, Secondary
from pairbench.analysis.suite import CORRECTION, holm
from pairbench.frozen import frozen
from pairbench.harness_registry import GO, REGISTRY
from pairbench.model import (
    CPU_METRIC,
    CYCLES_MODEL_METRIC,
    FIXED_CPU_METRIC,
    INSTRUCTIONS_METRIC,
    PRIMARY_METRIC,
    REPETITION_METRIC,
    RESIDENT_METRIC,
    VALIDATION_METRIC,
    Run,
    Samples,
)
from pairbench.verdict import Verdict, within

NOT_UNITS = frozenset({PRIMARY_METRIC, CPU_METRIC, FIXED_CPU_METRIC, INSTRUCTIONS_METRIC, CYCLES_MODEL_METRIC,
                       VALIDATION_METRIC, RESIDENT_METRIC, REPETITION_METRIC, "block", "rounds", "minor_faults",
                       "major_faults"})
"""Metric columns pairbench keeps for itself (the time, a Go process's CPU time besides its loops, the
instructions and modelled cycles --metric compares, the validation samples, a Go round's repetition number,
the worker's block and its page faults, as rusage counts them; pytest-benchmark's rounds per invocation):
never a table."""
FIRST_UNITS = {"B/op": 0, "allocs/op": 1}
"""The units whose tables come first, as benchstat's do."""
METHODS = ("ratio", "equal", "sign test")
RATIO_SPREAD = 1e-12
"""Log-ratios that differ by no more are one ratio (a constant change, up to rounding in the division)."""
WORDS = {"slower": "higher", "faster": "lower", "equivalent": "equivalent", "inconclusive": "inconclusive"}


@frozen
class MetricComparison:
    """One benchmark's metric, a candidate against the baseline: the time's ``Comparison`` record (its
    ``benchmark.unit`` is the metric's unit, its verdict slower/faster for higher/lower) and what a
    table of this unit shows beside it: both sides' median per operation, how it was decided
    (``METHODS``), and the change when it has no percentage (from 0)."""

    comparison: Comparison
    base_median: float
    cand_median: float
    method: str
    difference: float  # cand_median - base_median
    change_pct: float | None  # the estimate: the effect's, or the medians' ratio; None from 0
    differing: int = 0  # rounds whose two values differ

    @property
    def verdict(self) -> str:
        """"higher", "lower", "same", "equivalent" or "inconclusive"."""
        return unit_verdict(self.comparison.verdict.verdict, self.method)

    @property
    def negligible(self) -> bool:
        return self.comparison.verdict.negligible


@frozen
class MetricTable:
    """Every comparison of one unit, with the family Holm's procedure held it over."""

    unit: str
    family: int
    alpha: float
    comparisons: tuple[MetricComparison, ...]
    correction: str = CORRECTION

    @property
    def worse(self) -> str:
        return worse_verdict(self.unit)

    def worsened(self) -> list[bool]:
        """Per comparison, whether its verdict is the unit's worse one, not negligibly: what
        ``--fail-on-metric`` gates on."""
        return [c.verdict == self.worse and not c.negligible for c in self.comparisons]


def unit_verdict(verdict: str, method: str) -> str:
    """A time verdict as a unit's table says it: higher, lower, equivalent, inconclusive; "same" for
    values equal everywhere (``method`` "equal")."""
    return "same" if method == "equal" else WORDS[verdict]


def worse_verdict(unit: str) -> str:
    """The verdict that is a regression for ``unit``: "lower" for a rate, else "higher"."""
    return "lower" if unit.endswith("/s") or unit.endswith("_per_second") else "higher"


def per_op_name(name: str, legacy: bool) -> str:
    """The unit a table shows for the metric column ``name``: in a Go result written before the names
    kept ``/op``, a name without "/" was a per-operation unit with ``/op`` taken off (``B``,
    ``allocs``, a ``b.ReportMetric`` unit); a rate kept its name (``MB/s``)."""
    return f"{name}/op" if legacy and "/" not in name else name


def harness_settings(run: Run) -> frozenset[str]:
    """The metrics ``run``'s harness reports that are its own settings (criterion's samples a run, which
    pairbench chooses), not measurements of the code: a ``bench`` run's harness, or an import's format."""
    imported = run.environment.get("import")
    name = run.suite.harness if run.suite else imported.get("format") if isinstance(imported, dict) else None
    return frozenset(REGISTRY[name].settings) if name in REGISTRY else frozenset()


def metric_units(run: Run) -> list[tuple[str, str]]:
    """(column, unit) of every harness metric in ``run``'s series, as benchstat orders its tables: B/op,
    allocs/op, then the others by name (a series' columns have no order of their own)."""
    own = NOT_UNITS | harness_settings(run)
    columns = {name for _, _, s in run.all_series() for name in s.metrics if name not in own}
    legacy = run.suite is not None and run.suite.harness == GO and not any(n.endswith("/op") for n in columns)
    units = [(name, per_op_name(name, legacy)) for name in columns]
    return sorted(units, key=lambda pair: (FIRST_UNITS.get(pair[1], len(FIRST_UNITS)), pair[1]))


def metric_tables(run: Run, base: int, others: Sequence[int], criteria: Criteria) -> tuple[MetricTable, ...]:
    """One table per unit, each its own Holm family (the self-check copy left out). A shard's family is
    the whole suite's (``criteria.family``), so its verdicts hold once merged."""
    tables = []
    for column, unit in metric_units(run):
        found = [_compare(run, b, base, c, column, unit) for b in range(len(run.benchmarks)) for c in others
                 if run.sides[c].label != "self-check" and _has(run, b, base, c, column)]
        if not found:
            continue
        family = max(len(found), criteria.family if run.suite is not None and run.suite.shard else 0)
        unit_criteria = dataclasses.replace(criteria, family=family)
        tables.append(MetricTable(unit, family, criteria.alpha, tuple(_judged(found, unit_criteria))))
    return tuple(tables)


def _has(run: Run, b: int, base: int, c: int, column: str) -> bool:
    return column in run.series(b, base).metrics and column in run.series(b, c).metrics


@frozen
class _Pending:
    """A comparison before its family's correction: the pairs, their log-ratios (empty off the ratio
    path), and the criteria are applied by ``_judged``."""

    run: Run
    benchmark: int
    baseline: str
    candidate: str
    unit: str
    base: np.ndarray
    cand: np.ndarray


def _compare(run: Run, b: int, base: int, c: int, column: str, unit: str) -> _Pending:
    values = paired_metric(run.series(b, base), run.series(b, c), column, per_op=unit.endswith("/op"))
    return _Pending(run, b, run.sides[base].name, run.sides[c].name, unit, *values)


def paired_metric(baseline: Samples, candidate: Samples, column: str, *, per_op: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' value of ``column`` (per operation when ``per_op``) in the rounds both measured
    successfully, in round order, a round's repetitions taken as the time's are (``per_round``); a
    value of 0 is kept (it is a count, not a time)."""
    b, c, b_index, c_index = common_rounds(baseline, candidate)
    return (per_round(b, unit_values(b, column, per_op=per_op), b_index),
            per_round(c, unit_values(c, column, per_op=per_op), c_index))


def unit_values(samples: Samples, column: str, *, per_op: bool) -> np.ndarray:
    """Each sample's value of the metric ``column`` (float64): per operation when ``per_op`` (the column
    holds the total over the sample's iterations), else as the harness reported it."""
    return samples.per_operation(column) if per_op else samples[column].astype(np.float64)


def method_of(base: np.ndarray, cand: np.ndarray) -> str:
    """``METHODS``: equal in every round, the ratio path, or the sign test on the differences."""
    if np.array_equal(base, cand):
        return "equal"
    if np.all(base > 0) and np.all(cand > 0) and np.ptp(np.log(cand / base)) > RATIO_SPREAD:
        return "ratio"
    return "sign test"


def sign_test_pvalue(base: np.ndarray, cand: np.ndarray) -> float:
    """The two-sided sign test of the per-round differences: rounds that went up against rounds that
    went down, equal rounds left out (``stats.sign_test_pvalue``, as ``stats.paired_effect``'s); 1
    when every round is equal."""
    return stats.sign_test_pvalue(int(np.count_nonzero(cand > base)), int(np.count_nonzero(cand < base)))


def _first(p: _Pending, criteria: Criteria) -> tuple[Comparison, str, np.ndarray]:
    """The comparison at the family's Bonferroni level (before Holm), its method, and the values a
    Holm step may judge again (the log-ratios on the ratio path, else none)."""
    method = method_of(p.base, p.cand) if p.base.size else "sign test"
    key = dataclasses.replace(p.run.benchmarks[p.benchmark], unit=p.unit)
    r = np.log(p.cand / p.base) if method == "ratio" else np.zeros(0)
    if method == "ratio":
        verdict, effect, notes = verdict_of(lambda: effect_of(r, criteria), criteria)
        pvalue = effect.pvalue if effect else None
    else:
        verdict, effect, notes = Verdict("inconclusive"), None, ()
        pvalue = sign_test_pvalue(p.base, p.cand) if p.base.size else None
    comparison = Comparison(
        benchmark=key, baseline=p.baseline, candidate=p.candidate, self_check=False, verdict=verdict,
        effect=effect, pvalue=pvalue, pvalue_unadjusted=pvalue, adjustment="none", alpha=criteria.alpha,
        threshold=criteria.threshold, rounds=int(p.base.size), rounds_needed=None, secondary=Secondary(),
        notes=tuple(notes))
    return comparison, method, r


def _judged(pending: Sequence[_Pending], criteria: Criteria) -> list[MetricComparison]:
    """The family's comparisons through Holm's procedure (``analysis.suite.holm``, as the time's), then
    the sign-test ones given their direction where Holm rejects."""
    first = [_first(p, criteria) for p in pending]
    corrected = holm([c for c, _, _ in first], criteria, lambda i: first[i][2])
    return [_finished(p, c, method, criteria) for p, c, (_, method, _) in zip(pending, corrected, first, strict=True)]


def _finished(p: _Pending, c: Comparison, method: str, criteria: Criteria) -> MetricComparison:
    base_median = float(np.median(p.base)) if p.base.size else float("nan")
    cand_median = float(np.median(p.cand)) if p.cand.size else float("nan")
    ratio_pct = 100.0 * (cand_median / base_median - 1.0) if base_median > 0 else None
    if method == "equal":
        c = dataclasses.replace(c, verdict=Verdict("equivalent", reason="equal in every round"))
    elif method == "sign test" and c.pvalue is not None and c.pvalue <= criteria.alpha:
        inside = ratio_pct is not None and within(ratio_pct, criteria.threshold)
        up = np.count_nonzero(p.cand > p.base) > np.count_nonzero(p.cand < p.base)
        c = dataclasses.replace(c, verdict=Verdict("slower" if up else "faster", negligible=inside,
                                                   reason="the sign test of the rounds' differences"))
    change = c.effect.estimate if c.effect is not None else ratio_pct
    return MetricComparison(c, base_median, cand_median, method, cand_median - base_median,
                            0.0 if method == "equal" else change, int(np.count_nonzero(p.base != p.cand)))
