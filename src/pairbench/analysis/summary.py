"""The summary of one series: its samples in, a :class:`~pairbench.analysis.records.Summary` out.

``stats`` works on arrays and knows nothing of runs. This module hands it one
operation's values (``Samples.values``: a sample's total over its iterations)
and keeps what it cannot compute as a note, the way benchstat footnotes
"need >= 6 samples": a refusal (:class:`~pairbench.errors.StatisticsError`)
becomes a note with its code and figures, and every note a statistic returns
is kept, said of the series.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from pairbench import stats
from pairbench.analysis.records import CONFIDENCE, Summary
from pairbench.analysis.rules import RESOURCES, at_rss_floor, switches_note
from pairbench.errors import StatisticsError
from pairbench.model import BenchmarkKey, Samples, Side
from pairbench.notes import Note
from pairbench.stats._order import middle


def refusal_note(exc: StatisticsError) -> Note:
    """The note of a statistic's refusal (too few values, no variance) with its figures.

    A refusal without a code is not about the data's size or spread but a bug
    or hostile input, and is raised again.
    """
    if not exc.code:
        raise exc
    return Note(exc.code, exc.data, message=str(exc))


def guarded(notes: list[Note], compute: Callable):
    """``compute()``, or None with the refusal kept in ``notes``."""
    try:
        return compute()
    except StatisticsError as exc:
        notes.append(refusal_note(exc))
        return None


def kept(result, notes: list[Note]):
    """``result``, its notes added to ``notes``."""
    notes.extend(result.warnings)
    return result


def summarize(benchmark: BenchmarkKey, side: Side, samples: Samples, *,
              rss_floor_kib: int | None = None, recorded: frozenset[str] = frozenset(RESOURCES)) -> Summary:
    """Summarise the successful, non-warmup samples of one series (notes not yet said of it);
    a resource column not in ``recorded`` (an import's tool never measured it) is None, not 0."""
    measured = samples.measured()
    base = Summary(benchmark=benchmark, side=side.name, label=side.label, command=side.command.text,
                   n=len(measured), n_failed=len(samples.failed()),
                   n_warmup=int(np.count_nonzero(samples["warmup"])))
    notes: list[Note] = []
    if base.n_failed:
        notes.append(Note("failed-samples", {"count": base.n_failed}))
    if base.n == 0:
        return replace(base, notes=(*notes, Note("no-samples")))
    values = measured.in_order().values()
    fields: dict = {}
    fields.update(_location_and_shape(values, notes))
    fields.update(_median_interval(values, notes))
    fields.update(_mean_interval(values, notes))
    fields.update(_serial_dependence(values))
    fields.update(_resource_usage(measured, recorded))
    fields["max_rss_at_floor"] = fields["max_rss_kib"] is not None and at_rss_floor(fields["max_rss_kib"],
                                                                                     rss_floor_kib)
    switches = switches_note(measured["involuntary_cs"], measured["wall_ns"]) if "involuntary_cs" in recorded else None
    notes += [switches] if switches else []
    return replace(base, **fields, notes=tuple(notes))


def _location_and_shape(values: np.ndarray, notes: list[Note]) -> dict:
    d = stats.describe(values)
    notes.extend(d.warnings)
    return {
        "min": d.min, "q1": d.q1, "median": d.median, "q3": d.q3, "max": d.max, "mean": d.mean,
        "sd": d.sd, "cv": d.cv, "lower_fence": d.lower_fence, "upper_fence": d.upper_fence,
        "beyond_upper_fence": len(d.above_fence), "beyond_lower_fence": len(d.below_fence),
        "mean_min_gap": d.mean_min_gap, "max_sigma": d.max_sigma, "grubbs_critical": d.grubbs_critical,
        "skewness": d.skewness, "mvalue": d.mvalue, "modality": d.modality,
    }


def _median_interval(values: np.ndarray, notes: list[Note]) -> dict:
    ci = guarded(notes, lambda: stats.median_ci(values, CONFIDENCE))
    if ci is None:
        return {}
    notes.extend(w for w in ci.warnings if not _said_by_describe(w, notes))
    return {"median_low": ci.low, "median_high": ci.high}


def _said_by_describe(note: Note, notes: list[Note]) -> bool:
    """A median interval whose ends are equal says no more than describe's no-variance note."""
    return note.code == "median-interval-tied" and any(n.code == "no-variance" for n in notes)


def _mean_interval(values: np.ndarray, notes: list[Note]) -> dict:
    if values.size > 1 and np.all(values == values[0]):
        return {}  # describe said "no variance": no error of the mean to give
    me = guarded(notes, lambda: stats.mean_error(values, CONFIDENCE))
    if me is None:
        return {}
    notes.extend(me.warnings)
    return {"mean_se": me.se, "mean_low": me.low, "mean_high": me.high, "mean_method": me.method,
            "n_eff": me.n_eff}


def _serial_dependence(values: np.ndarray) -> dict:
    """Lag-1 autocorrelation and Ljung-Box p; shown in the tables only, so a refusal is no note
    (the error of the mean already says what serial dependence does to these numbers)."""
    try:
        correlogram = stats.autocorrelation(values, max_lag=1)
        lb = stats.ljung_box(values)
    except StatisticsError:
        return {}
    return {"lag1_autocorrelation": correlogram.lag1, "ljung_box_pvalue": lb.pvalue}


def _resource_usage(measured: Samples, recorded: frozenset[str]) -> dict:
    """CPU times per operation (means), the median max RSS, and context switches per second of
    sampling; None for what was not ``recorded``."""
    wall_s = measured["wall_ns"].astype(np.float64).sum() / 1e9
    switches = measured["voluntary_cs"].sum() + measured["involuntary_cs"].sum()
    usage = {
        "user_ns": float(np.mean(measured.per_operation("user_ns"))),
        "sys_ns": float(np.mean(measured.per_operation("sys_ns"))),
        "max_rss_kib": middle(measured["max_rss_kib"]),
        "cs_per_s": float(switches / wall_s) if wall_s > 0 else None,
        "involuntary_cs_per_s": float(measured["involuntary_cs"].sum() / wall_s) if wall_s > 0 else None,
    }
    needs = {"user_ns": ("user_ns",), "sys_ns": ("sys_ns",), "max_rss_kib": ("max_rss_kib",),
             "cs_per_s": ("voluntary_cs", "involuntary_cs"), "involuntary_cs_per_s": ("involuntary_cs",)}
    return {key: value if recorded.issuperset(needs[key]) else None for key, value in usage.items()}
