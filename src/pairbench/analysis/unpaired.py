"""``pairbench diff OLD NEW``: two saved results compared per benchmark, without pairs.

The samples of two runs made at different times were never interleaved, so
nothing pairs them: the comparison is two-sample. Per benchmark (and side)
found in both:

* the change is the Hodges-Lehmann shift of the log values (new - old), as a
  percent change, with its interval, distribution-free (the interval of
  Wilcoxon's rank-sum test; R's ``wilcox.test(conf.int = TRUE)``); beside it the
  Hodges-Lehmann shift in the benchmark's unit;
* the p-value is the Mann-Whitney test's;
* the verdict is the same rule as a paired comparison's (``verdict.decide``)
  on the interval at alpha / m, m the benchmarks compared; Holm's procedure
  over the p-values decides slower/faster, and a Holm-only rejection is judged
  on the interval at its Holm level (``analysis.suite``).

The harness's own units (B/op, allocs/op, counters; ``analysis.metrics``) that
both results hold get one table each, benchstat's way, each its own Holm family
so they never weaken the time's verdicts. A unit's values per operation are
compared as the time's when every one is positive; equal values on both sides
(0 allocs/op, often) are ``same``; otherwise (zeros in some samples, or one
value on each side: no interval) the Mann-Whitney test alone decides, its
direction that of the ranks.

The caveat is part of the result (a ``runs-not-paired`` note, and the report
says it first): whatever the machine did between the two runs (load, clock,
thermal state, another host) is part of every difference here. The interleaved
answer is ``pairbench bench OLD_BUILD NEW_BUILD``. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.criteria import holm_steps
from pairbench.analysis.metrics import metric_units, unit_values, unit_verdict, worse_verdict
from pairbench.analysis.summary import kept
from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey, Run, Samples
from pairbench.notes import Note
from pairbench.verdict import Verdict, decide, refuse, within

MIN_SAMPLES = 4  # per side: fewer gives no rank-sum interval at any useful level


@frozen
class Difference:
    """One benchmark of one side in both results: the unpaired change and its verdict."""

    benchmark: BenchmarkKey
    side: str
    verdict: Verdict
    change_pct: float | None
    low_pct: float | None
    high_pct: float | None
    confidence: float
    shift: float | None  # Hodges-Lehmann shift in the unit, new - old
    pvalue: float | None  # Holm-adjusted
    pvalue_unadjusted: float | None
    old_n: int
    new_n: int
    old_median: float | None
    new_median: float | None
    notes: tuple[Note, ...] = ()
    method: str = "interval"  # a unit's: "equal" (the same in every sample), "test" (zeros: no ratio)


@frozen
class UnitDiff:
    """One harness unit both results hold: its differences, one Holm family, and which way is worse."""

    unit: str
    worse: str  # "higher", or "lower" for a rate (``metrics.worse_verdict``)
    differences: tuple[Difference, ...]

    def worsened(self) -> list[bool]:
        """Per benchmark, whether its verdict is the unit's worse one, not negligibly (as
        ``metrics.MetricTable.worsened``)."""
        return [unit_verdict(d.verdict.verdict, d.method) == self.worse and not d.verdict.negligible
                for d in self.differences]


@frozen
class Diff:
    """Every benchmark both results hold, those only one holds, and the notes (the caveat first)."""

    differences: tuple[Difference, ...]
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    alpha: float
    threshold: float
    notes: tuple[Note, ...]
    correction: str = "holm"
    units: tuple[UnitDiff, ...] = ()


def diff_runs(old: Run, new: Run, *, alpha: float, threshold: float) -> Diff:
    """Compare ``new`` with ``old`` per benchmark (and side), unpaired (see the module docstring)."""
    pairs, only_old, only_new = _matched(old, new)
    times = [(key, side, o.measured().values(), n.measured().values()) for key, side, o, n in pairs]
    units = [UnitDiff(unit, worse_verdict(unit), tuple(_family(values, alpha, threshold, unit=True)))
             for unit, values in _unit_values(old, new, pairs)]
    return Diff(tuple(_family(times, alpha, threshold)), tuple(only_old), tuple(only_new), alpha, threshold,
                (_caveat(old, new),), units=tuple(units))


_Values = tuple[BenchmarkKey, str, np.ndarray, np.ndarray]  # benchmark, side, old values, new values


def _family(values: Sequence[_Values], alpha: float, threshold: float, *, unit: bool = False) -> list[Difference]:
    """Each benchmark's difference at alpha / m, then Holm's procedure over the m of them."""
    m = max(len(values), 1)
    found = [_difference(key, side, o, n, alpha / m, threshold, unit) for key, side, o, n in values]
    return _holm(found, values, alpha, m, threshold)


def _unit_values(old: Run, new: Run, pairs) -> list[tuple[str, list[_Values]]]:
    """Per harness unit both runs hold (in ``metrics.metric_units``'s order): each matched series'
    values of it per operation (a ``/op`` unit's column is a total over the iterations)."""
    columns = [dict((unit, column) for column, unit in metric_units(run)) for run in (old, new)]
    found = []
    for unit in (u for _, u in metric_units(old) if u in columns[1]):
        per_op = unit.endswith("/op")
        values = [(dataclasses.replace(key, unit=unit), side,
                   *(unit_values(s.measured(), c, per_op=per_op) for s, c in ((o, columns[0][unit]), (n, columns[1][unit]))))
                  for key, side, o, n in pairs if columns[0][unit] in o.metrics and columns[1][unit] in n.metrics]
        if values:
            found.append((unit, values))
    return found


def _matched(old: Run, new: Run) -> tuple[list[tuple[BenchmarkKey, str, Samples, Samples]], list[str], list[str]]:
    """(benchmark, side, old samples, new samples) of every series both runs hold, and the names of
    those only one holds: by benchmark alone when each run has one side, else by benchmark and side."""
    by_side = len(old.sides) > 1 or len(new.sides) > 1

    def series(run: Run) -> dict[str, tuple[BenchmarkKey, str, Samples]]:
        return {run.benchmarks[b].label + (f" · {run.sides[s].name}" if by_side else ""):
                (run.benchmarks[b], run.sides[s].name, samples)
                for b, s, samples in run.all_series() if len(samples.measured())}

    a, b = series(old), series(new)
    pairs = [(a[name][0], b[name][1], a[name][2], b[name][2]) for name in a if name in b]
    return pairs, [name for name in a if name not in b], [name for name in b if name not in a]


def _difference(key: BenchmarkKey, side: str, y: np.ndarray, x: np.ndarray, level: float,
                threshold: float, unit: bool) -> Difference:
    """``x`` (new) against ``y`` (old) at ``level``: the log-scale interval and the Mann-Whitney p; for a
    harness unit (not the time) values equal everywhere are ``same``, and zeros leave the p alone."""
    base = dict(benchmark=key, side=side, old_n=int(y.size), new_n=int(x.size),
                old_median=float(np.median(y)) if y.size else None, new_median=float(np.median(x)) if x.size else None)
    if unit and min(x.size, y.size) >= 1 and np.ptp(np.concatenate([x, y])) == 0:
        return Difference(verdict=Verdict("equivalent", reason="equal in every sample"), change_pct=0.0, low_pct=None,
                          high_pct=None, confidence=1 - level, shift=0.0, pvalue=1.0, pvalue_unadjusted=1.0,
                          method="equal", **base)
    if min(x.size, y.size) < MIN_SAMPLES or (not unit and min(x.min(initial=1), y.min(initial=1)) <= 0):
        why = Note("not-enough-data", {"needed": MIN_SAMPLES, "got": int(min(x.size, y.size)),
                                       "purpose": "unpaired-interval"})
        return Difference(verdict=refuse(why), change_pct=None, low_pct=None, high_pct=None, confidence=1 - level,
                          shift=None, pvalue=None, pvalue_unadjusted=None, **base)
    notes: list[Note] = []
    logged = _log_interval(x, y, level, notes) if min(x.min(), y.min()) > 0 else None
    shift = _guarded(lambda: stats.hodges_lehmann(x, y, 1 - level).estimate, notes)
    pvalue = _guarded(lambda: kept(stats.mann_whitney(x, y), notes).pvalue, notes)
    if unit and logged is None:  # zeros (no ratio) or no spread on either side: the Mann-Whitney p alone
        return Difference(verdict=Verdict("inconclusive", reason="no interval: the test alone decides"),
                          change_pct=_medians_change(base), low_pct=None, high_pct=None, confidence=1 - level,
                          shift=shift, pvalue=pvalue, pvalue_unadjusted=pvalue,
                          notes=_distinct([n for n in notes if n.code != "rank-no-variance"]), method="test", **base)
    if logged is None:
        verdict = refuse(notes[-1] if notes else Note("no-samples", {}))
        return Difference(verdict=verdict, change_pct=None, low_pct=None, high_pct=None, confidence=1 - level,
                          shift=shift, pvalue=pvalue, pvalue_unadjusted=pvalue, notes=tuple(notes), **base)
    estimate, low, high = logged
    return Difference(verdict=decide(low, high, threshold), change_pct=estimate, low_pct=low, high_pct=high,
                      confidence=1 - level, shift=shift, pvalue=pvalue, pvalue_unadjusted=pvalue,
                      notes=_distinct(notes), **base)


def _log_interval(x: np.ndarray, y: np.ndarray, level: float, notes: list[Note]) -> tuple[float, float, float] | None:
    """The Hodges-Lehmann shift of the log values and its interval, as percent changes; None when
    it has no finite interval (the refusal or the note says why)."""
    try:
        hl = stats.hodges_lehmann(np.log(x), np.log(y), 1 - level)
    except StatisticsError as exc:
        notes.append(Note(exc.code or "not-enough-data", exc.data))
        return None
    notes.extend(hl.warnings)
    if not (np.isfinite(hl.low) and np.isfinite(hl.high)):
        return None
    return tuple(float(100 * np.expm1(v)) for v in (hl.estimate, hl.low, hl.high))


def _medians_change(base: dict) -> float | None:
    """The medians' change in percent; None from a median of 0 (a change from 0 has no percentage)."""
    old, new = base["old_median"], base["new_median"]
    return 100.0 * (new / old - 1.0) if old and new is not None else None


def _distinct(notes: list[Note]) -> tuple[Note, ...]:
    """Each note once; the ties the rank statistics each report, as one note naming them all."""
    tests = [t for n in notes if n.code == "rank-ties" for t in n.data.get("tests", [])]
    seen: dict[tuple[str, str], Note] = {}
    for note in notes:
        if note.code == "rank-ties":
            note = Note("rank-ties", {"tests": list(dict.fromkeys(tests))})
        seen.setdefault((note.code, repr(sorted(note.data.items()))), note)
    return tuple(seen.values())


def _guarded(compute, notes: list[Note]):
    try:
        return float(compute())
    except StatisticsError as exc:
        notes.append(Note(exc.code or "not-enough-data", exc.data))
        return None


def _holm(found: list[Difference], values: Sequence[_Values], alpha: float, m: int, threshold: float
          ) -> list[Difference]:
    """Holm-adjusted p-values; a Holm-only rejection judged on its interval at its Holm level, or, with
    no interval (a unit's zeros), given the direction of its shift."""
    tested = [i for i, d in enumerate(found) if d.pvalue_unadjusted is not None]
    out = list(found)
    for i, (adjusted, level) in zip(tested, holm_steps([found[i].pvalue_unadjusted for i in tested], m, alpha),
                                    strict=True):
        d = dataclasses.replace(found[i], pvalue=adjusted)
        if adjusted <= alpha and d.method == "test":
            d = _by_ranks(d, *values[i][2:], threshold)
        elif adjusted <= alpha and d.method == "interval" and d.verdict.verdict not in ("slower", "faster"):
            key, side, old, new = values[i]
            again = _difference(key, side, old, new, level, threshold, unit=False)
            if again.low_pct is not None and not (again.low_pct <= 0 <= again.high_pct):
                d = dataclasses.replace(again, pvalue=d.pvalue, pvalue_unadjusted=d.pvalue_unadjusted)
        out[i] = d
    return out


def _by_ranks(d: Difference, old: np.ndarray, new: np.ndarray, threshold: float) -> Difference:
    """A rejection with no interval: slower (higher) or faster (lower) as the new values' ranks lie
    above or below the old ones' (the rank-sum statistic, Mann-Whitney's U of the new values, against
    n m / 2, which a shift of 0 among many ties cannot tell), negligible when the medians' change lies
    within the threshold."""
    u_new = stats.mann_whitney(new, old).W
    higher = u_new > new.size * old.size / 2
    inside = d.change_pct is not None and within(d.change_pct, threshold)
    return dataclasses.replace(d, verdict=Verdict("slower" if higher else "faster",
                                                  negligible=inside, reason="the Mann-Whitney test"))


def _caveat(old: Run, new: Run) -> Note:
    """The note every diff carries: the runs were not paired."""
    return Note("runs-not-paired", {
        "old_started": old.started_at, "new_started": new.started_at,
        "old_host": str(old.environment.get("host", "")), "new_host": str(new.environment.get("host", "")),
    })
