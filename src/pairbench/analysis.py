"""The bridge from records to statistics: a Run's samples in, JSON-ready summaries out.

``stats`` works on arrays and knows nothing of runs; renderers know nothing of
statistics. This module turns a :class:`~pairbench.model.Variant` into a
:class:`VariantSummary` (per-command numbers with their uncertainty and the
caveats that apply), catching what ``stats`` cannot compute and keeping it as a
warning, the way benchstat footnotes "need >= 6 samples".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pairbench import stats
from pairbench.errors import StatisticsError
from pairbench.model import Run, Variant, json_safe
from pairbench.units import format_duration

# A median max RSS within 5% above the executor's floor is "at the floor": the command's own
# peak may be anywhere below it (RSS moves by tens of KiB between identical runs, seed 004).
RSS_FLOOR_MARGIN = 1.05

CONFIDENCE = 0.95


@dataclass(frozen=True)
class VariantSummary:
    """What we can say about one variant's samples; times in nanoseconds, None where undefined."""

    name: str
    command: str
    label: str
    n: int
    n_failed: int
    n_warmup: int
    min: float | None = None
    q1: float | None = None
    median: float | None = None
    median_low: float | None = None
    median_high: float | None = None
    q3: float | None = None
    max: float | None = None
    mean: float | None = None
    mean_se: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    mean_method: str = ""
    n_eff: float | None = None
    sd: float | None = None
    cv: float | None = None
    confidence: float = CONFIDENCE
    user_ns: float | None = None
    sys_ns: float | None = None
    max_rss_kib: float | None = None
    max_rss_at_floor: bool = False  # at the executor's floor: the command's own peak is at most this
    cs_per_s: float | None = None
    involuntary_cs_per_s: float | None = None
    beyond_upper_fence: int = 0
    beyond_lower_fence: int = 0
    mean_min_gap: float | None = None
    max_sigma: float | None = None
    grubbs_critical: float | None = None
    skewness: float | None = None
    mvalue: float | None = None
    lag1_autocorrelation: float | None = None
    ljung_box_pvalue: float | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        record = dataclasses.asdict(self)
        record["warnings"] = list(self.warnings)
        return json_safe(record)


def summaries_from_dicts(records) -> tuple[VariantSummary, ...]:
    """Summaries back from their stored (``to_dict``) form."""
    return tuple(VariantSummary(**{**r, "warnings": tuple(r.get("warnings", ()))}) for r in records)


def summarize_run(run: Run, confidence: float = CONFIDENCE) -> tuple[VariantSummary, ...]:
    floor = executor_rss_floor_kib(run.environment)
    return tuple(summarize_variant(v, confidence, rss_floor_kib=floor) for v in run.variants)


def executor_rss_floor_kib(environment: Mapping) -> int | None:
    """The executor's max RSS floor recorded in ``environment``; None unless a positive integer.

    ``environment["executor"]`` is written by the session; anything else there
    (a number, a list, a string floor) is treated as absent, not an error.
    """
    executor = environment.get("executor")
    floor = executor.get("rss_floor_kib") if isinstance(executor, Mapping) else None
    return floor if isinstance(floor, int) and not isinstance(floor, bool) and floor > 0 else None


def summarize_variant(variant: Variant, confidence: float = CONFIDENCE, *,
                      rss_floor_kib: int | None = None) -> VariantSummary:
    """Summarise the successful, non-warmup samples of ``variant``.

    ``rss_floor_kib`` is the smallest max RSS the executor can report (the size
    of the process commands are spawned from); a median at or below it (within
    ``RSS_FLOOR_MARGIN``) is flagged, since the command's own peak may be smaller.
    """
    samples = variant.samples
    measured = samples.measured()
    n_warmup = int(np.count_nonzero(samples["warmup"]))
    base = VariantSummary(
        name=variant.name,
        command=variant.command.text,
        label=variant.label,
        n=len(measured),
        n_failed=len(samples.failed()),
        n_warmup=n_warmup,
    )
    warnings: list[str] = []
    if base.n_failed:
        warnings.append(
            f"{base.n_failed} failed sample(s) are stored but left out of these statistics"
        )
    if base.n == 0:
        return dataclasses.replace(base, warnings=(*warnings, "no successful samples to analyse"))
    wall = measured["wall_ns"].astype(np.float64)
    fields: dict = {}
    fields.update(_location_and_shape(wall, warnings))
    fields.update(_median_interval(wall, confidence, warnings))
    fields.update(_mean_interval(wall, confidence, warnings))
    fields.update(_serial_dependence(wall, warnings))
    fields.update(_resource_usage(measured))
    if rss_floor_kib and fields["max_rss_kib"] <= RSS_FLOOR_MARGIN * rss_floor_kib:
        fields["max_rss_at_floor"] = True
    return dataclasses.replace(base, confidence=confidence, warnings=tuple(warnings), **fields)


def _location_and_shape(wall: np.ndarray, warnings: list[str]) -> dict:
    d = stats.describe(wall)
    warnings.extend(_shape_notes(d))
    return {
        "min": d.min,
        "q1": d.q1,
        "median": d.median,
        "q3": d.q3,
        "max": d.max,
        "mean": d.mean,
        "sd": d.sd,
        "cv": d.cv,
        "beyond_upper_fence": len(d.above_fence),
        "beyond_lower_fence": len(d.below_fence),
        "mean_min_gap": d.mean_min_gap,
        "max_sigma": d.max_sigma,
        "grubbs_critical": d.grubbs_critical,
        "skewness": d.skewness,
        "mvalue": d.mvalue,
    }


def _shape_notes(d) -> list[str]:
    """Unit-aware notes on a variant's shape, from ``describe``'s structured fields.

    The Tukey-fence counts and the mean-min gap are shown in the summary itself,
    so they need no note; ``describe``'s own messages do not know the unit.
    """
    notes = []
    if d.n > 1 and d.sd == 0.0:
        notes.append(f"no variance: all {d.n} samples took exactly {format_duration(d.min)}; "
                     "is the timer resolution too coarse?")
    if d.max_beyond_grubbs:
        notes.append(
            f"the slowest sample lies {d.max_sigma:.1f} SD above the mean, beyond Grubbs' 5% critical "
            f"value {d.grubbs_critical:.2f} for n = {d.n}: a heavy tail, so prefer the median to the mean"
        )
    if d.modality in ("bimodal", "multimodal"):
        notes.append(f"the samples look {d.modality}: `pairbench report` shows their histogram")
    return notes


def samples_note(exc: StatisticsError) -> str:
    """A statistic's refusal worded about the user's samples, not its parameter ``x``.

    "x: need at least 6 values for ..." -> "need at least 6 samples for ...";
    "x must hold at least 4 values for ..." -> "need at least 4 samples for ...".
    """
    text = re.sub(r"^x(: | must hold )", "", str(exc))
    text = re.sub(r"^at least ", "need at least ", text)
    return re.sub(r"\b(\d+) values\b", r"\1 samples", text)


def _median_interval(wall: np.ndarray, confidence: float, warnings: list[str]) -> dict:
    try:
        ci = stats.median_ci(wall, confidence)
    except StatisticsError as exc:
        warnings.append(samples_note(exc))
        return {}
    return {"median_low": ci.low, "median_high": ci.high}


def _mean_interval(wall: np.ndarray, confidence: float, warnings: list[str]) -> dict:
    try:
        me = stats.mean_error(wall, confidence)
    except StatisticsError as exc:
        warnings.append(samples_note(exc))
        return {}
    warnings.extend(me.warnings)
    return {
        "mean_se": me.se,
        "mean_low": me.low,
        "mean_high": me.high,
        "mean_method": me.method,
        "n_eff": me.n_eff,
    }


def _serial_dependence(wall: np.ndarray, warnings: list[str]) -> dict:
    try:
        correlogram = stats.autocorrelation(wall, max_lag=1)
        lb = stats.ljung_box(wall)
    except StatisticsError:
        return {}
    return {"lag1_autocorrelation": correlogram.lag1, "ljung_box_pvalue": lb.pvalue}


def _resource_usage(measured) -> dict:
    wall_s = measured["wall_ns"].astype(np.float64).sum() / 1e9
    switches = measured["voluntary_cs"].sum() + measured["involuntary_cs"].sum()
    return {
        "user_ns": float(np.mean(measured["user_ns"])),
        "sys_ns": float(np.mean(measured["sys_ns"])),
        "max_rss_kib": float(np.median(measured["max_rss_kib"])),
        "cs_per_s": float(switches / wall_s) if wall_s > 0 else None,
        "involuntary_cs_per_s": float(measured["involuntary_cs"].sum() / wall_s) if wall_s > 0 else None,
    }
