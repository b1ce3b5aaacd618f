"""Description of one sample: location, spread, shape, outliers and modes (seeds 003, 004).

Timings are skewed, long-tailed and often multimodal (seeds 000, 003, 004), so
``describe`` reports the robust summary (median, quartiles, MAD) beside the
classical one (mean, SD) and adds these shape diagnostics:

* the relative gap of the mean over the minimum, (mean - min) / mean (Lemire: on a quiet
  machine it is often under 1%);
* how many standard deviations the max and the min lie from the mean, against
  Grubbs' one-sided 5% critical value for that n (timings show "13-sigma events");
* the sample skewness;
* Tukey's fences Q1 - 1.5 IQR and Q3 + 1.5 IQR and the values beyond them
  (the Swift benchmark suite's outlier rule), reported and never removed;
* the number of modes and where they lie, by perfolizer's lowland detector
  (``pairbench.stats.modality``) at sensitivity 0.6, which gives
  ``modality``: "unimodal", "bimodal" or "multimodal" (from n = 12;
  "unimodal" only from n = 30);
* the multimodality score ``mvalue`` (Brendan Gregg; perfolizer's
  MValueCalculator), a score only: on skewed unimodal timings it often
  exceeds BenchmarkDotNet's "bimodal" threshold, so no label derives from it
  (``benchmarks/RESULTS.md, "Modality label"``).

``median_ci`` is the distribution-free (sign-test) interval for the median.

Conventions: quantiles are numpy's default "linear" method, which is R's
``quantile(type = 7)``; the SD divides by n - 1 and is computed in two passes
(NIST StRD NumAcc4 passes); ``mad`` is scipy's ``median_abs_deviation`` with
``scale=1.0`` (raw) and ``mad_normal`` the same with ``scale="normal"``
(x 1.482602..., R's ``mad()`` uses the rounded constant 1.4826).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats import _special
from pairbench.stats._order import (
    median_interval_ranks,
    middle,
    quantiles,
    smallest_n_for_median_interval,
)
from pairbench.stats._validation import as_sample, check_confidence, check_count, level_text
from pairbench.stats.modality import _lowland_modes_sorted
from pairbench.stats.paired import NORMAL_MAD_SCALE

TUKEY_K = 1.5
# The lowland detector runs from BenchmarkDotNet's n = 12 on, and a single mode is
# called "unimodal" only from n = 30: below, it misses two clear clusters too often
# to rule them out (benchmarks/RESULTS.md, "Modality label", has the rates).
MODALITY_MIN_N = 12
UNIMODAL_MIN_N = 30
# perfolizer's default 0.5 calls two equal normals 4 SD apart one mode (the true
# density fills 63% of the lowland's water rectangle); 0.6 finds them in 97-100%
# of samples from n = 1000 while keeping false alarms on normal, lognormal, gamma
# and heavy-tailed data at or below 1% (benchmarks/RESULTS.md, "Modality label").
MODALITY_SENSITIVITY = 0.6
MODALITY_LABELS = {1: "unimodal", 2: "bimodal"}  # 3 or more: "multimodal"


@frozen
class Description:
    """The summary of one sample: location, spread, shape diagnostics and warnings.

    Fields that are undefined for this sample are None: ``sd``, ``cv``,
    ``skewness`` and the sigma distances need n >= 2 and some variance;
    ``grubbs_critical`` needs n >= 3; ``mean_min_gap`` needs min > 0;
    ``modes`` and ``mode_locations`` need n >= 12, and so does ``modality``,
    which in addition stays None when n < 30 and one mode is found: so few
    values cannot show that a sample is unimodal.
    ``above_fence`` / ``below_fence`` are the 0-based indices (in input order)
    of the values beyond the Tukey fences. ``modes`` counts the modes the
    lowland detector finds and ``mode_locations`` gives their centres,
    ascending; ``modality`` names the count ("unimodal", "bimodal",
    "multimodal"). ``mvalue`` is Gregg's score, reported but not interpreted.
    """

    n: int
    min: float
    q1: float
    median: float
    q3: float
    max: float
    mean: float
    sd: float | None
    cv: float | None
    iqr: float
    mad: float
    mad_normal: float
    mean_min_gap: float | None
    max_sigma: float | None
    min_sigma: float | None
    grubbs_critical: float | None
    max_beyond_grubbs: bool
    min_beyond_grubbs: bool
    skewness: float | None
    lower_fence: float
    upper_fence: float
    below_fence: tuple[int, ...]
    above_fence: tuple[int, ...]
    mvalue: float
    modality: str | None
    modes: int | None
    mode_locations: tuple[float, ...]
    warnings: tuple[Note, ...] = ()
    quantile_method: str = "linear (R type 7)"


@frozen
class MedianCI:
    """The sample median with its distribution-free confidence interval.

    ``[low, high]`` = [x_(low_rank), x_(high_rank)] (1-based order statistics)
    covers the population median with probability at least
    ``achieved_confidence`` (>= ``confidence``) for any continuous distribution;
    with ties it is conservative. ``estimate`` is the sample median (R's
    ``median``).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float
    n: int
    low_rank: int
    high_rank: int
    warnings: tuple[Note, ...] = ()


def describe(x) -> Description:
    """Describe one sample; see the module docstring for every field's definition.

    O(n log n): one sort serves ``mvalue`` and the modes; 0.6 s at n = 1e6,
    mostly ``mvalue``. Raises ``StatisticsError`` on empty, NaN or infinite
    input; n = 1 and identical values work, with warnings.
    """
    arr = as_sample(x, "x", min_n=1, what="to describe")
    n = arr.size
    warnings: list[Note] = []
    q1, median, q3 = (float(v) for v in quantiles(arr, [0.25, 0.5, 0.75]))
    lo, hi = float(arr.min()), float(arr.max())
    rough, correction, sd = _mean_sd(arr)
    mean = rough + correction
    spread = _spread(arr, q1, q3, mean, sd, warnings)
    shape = _shape(arr, (rough, correction), sd, lo, hi, warnings)
    fences = _fences(arr, q1, q3, warnings)
    ordered = np.sort(arr)
    mval = _mvalue_sorted(ordered)
    modes = _modes(ordered, mval, warnings)
    return Description(
        n=n,
        min=lo,
        q1=q1,
        median=median,
        q3=q3,
        max=hi,
        mean=mean,
        sd=sd,
        **spread,
        **shape,
        **fences,
        mvalue=mval,
        **modes,
        warnings=tuple(warnings),
    )


def median_ci(x, confidence: float = 0.95) -> MedianCI:
    """The sample median with its distribution-free (sign-test) confidence interval.

    The interval is [x_(k), x_(n-k+1)] with k the largest rank such that
    P(Binom(n, 1/2) <= k - 1) <= alpha/2 (Conover, *Practical Nonparametric
    Statistics*, 3rd ed., section 3.2). It equals
    ``scipy.stats.quantile_test(x, q, p=0.5).confidence_interval()`` (checked up
    to n = 1e6); benchstat's median interval (go-moremath ``QuantileCI``) is of
    the same binomial kind and likewise needs 6 values at 95%. O(n): one
    ``np.partition``, so n = 1e6 takes about 20 ms.

    Raises ``NotEnoughData`` when n is too small for any interval at this
    confidence (n >= 6 at 95%, n >= 8 at 99%).
    """
    conf = check_confidence(confidence)
    arr = as_sample(x, "x", min_n=1, what="for an interval of the median")
    n = arr.size
    ranks = median_interval_ranks(n, conf)
    if ranks is None:
        need = smallest_n_for_median_interval(conf)
        raise NotEnoughData(
            f"x: need at least {need} values for a {level_text(conf)} interval of the median, got {n}",
            needed=need, got=n, purpose="median-interval", confidence=conf,
        )
    low_i, high_i = ranks.low - 1, ranks.high - 1
    part = np.partition(arr, sorted({low_i, high_i, (n - 1) // 2, n // 2}))
    estimate = 0.5 * (float(part[(n - 1) // 2]) + float(part[n // 2]))
    warnings = []
    if part[low_i] == part[high_i]:
        warnings.append(note(
            "median-interval-tied",
            f"no variance between the interval's order statistics: x_({ranks.low}) = "
            f"x_({ranks.high}) = {float(part[low_i])!r}; is the timer resolution too coarse?",
            low_rank=ranks.low, high_rank=ranks.high, value=float(part[low_i]),
        ))
    return MedianCI(
        estimate=estimate,
        low=float(part[low_i]),
        high=float(part[high_i]),
        confidence=conf,
        achieved_confidence=ranks.achieved_confidence,
        n=n,
        low_rank=ranks.low,
        high_rank=ranks.high,
        warnings=tuple(warnings),
    )


def grubbs_critical(n: int, alpha: float = 0.05) -> float:
    """Grubbs' one-sided critical value for the largest (or smallest) z-score of n values.

    G = ((n - 1) / sqrt(n)) * sqrt(t^2 / (n - 2 + t^2)), t the upper alpha/n
    quantile of Student's t with n - 2 degrees of freedom (Grubbs 1969,
    Technometrics 11:1; NIST/SEMATECH e-Handbook 1.3.5.17). Under normality
    P(max z > G) <= alpha. alpha = 0.05 gives 2.18 at n = 10, 2.75 at 30,
    3.21 at 100, 3.88 at 1000, 4.42 at 10000.
    """
    return _grubbs_critical(check_count(n, "n", "an integer >= 3 for Grubbs' test", minimum=3),
                            check_confidence(alpha, "alpha"))


@functools.lru_cache(maxsize=16)  # pure; a compare's sides mostly have the same n
def _grubbs_critical(n: int, alpha: float) -> float:
    t = -float(_special.stdtrit(n - 2, alpha / n))  # scipy.stats.t.isf(alpha / n, n - 2)
    return (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))


def fence_excess_pvalue(above: int, n: int, rate: float) -> float:
    """P(Binomial(n, rate) >= above): how surprising ``above`` of ``n`` samples beyond a fence are
    when clean timings put ``rate`` of a sample there (``scipy.stats.binom.sf``, computed
    by ``_special.bdtrc``); 1.0 for none."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 or not 0 <= above <= n:
        raise StatisticsError(f"`above` must be a count in [0, n] of n >= 1 samples, got {above!r} of {n!r}")
    rate = check_confidence(rate, "rate")
    return float(_special.bdtrc(int(above) - 1, int(n), rate)) if above else 1.0


def mvalue(x) -> float:
    """Brendan Gregg's multimodality score, computed as perfolizer's ``MValueCalculator``.

    For histogram bin counts c_1..c_B padded with a zero at both ends,
    mvalue = sum |c_i - c_{i-1}| / max c: about 2 for one mode, 4 for two, 6
    for three (Gregg, "Frequency Trails: Modes and Modality",
    brendangregg.com/FrequencyTrails/modes.html). Following perfolizer
    (``Mathematics/Multimodality/MValueCalculator.cs``, MIT): drop the Tukey
    outliers (type-7 quartiles, k = 1.5), start at bin width 0.75 x Scott's
    rule (3.5 s / n^(1/3)), double it until it exceeds the range, and return the
    largest score. Bins come from perfolizer's adaptive histogram, ported in
    ``_adaptive_bin_counts``; no Python library has it. BenchmarkDotNet calls
    > 2.8 "can have several modes", > 3.2 bimodal and > 4.2 multimodal, for
    n >= 12 only. O(n log n) per bin width; 0.5 s at n = 1e6.

    It is a heuristic; know its limits, which is why ``describe`` takes its
    ``modality`` from the lowland detector instead. The bins are never
    narrower than 2% of the values, so it is not shift invariant (1e9 ns +
    jitter is one mode). On widely spread skewed data the bins alternate
    between full and partial widths and the score rises above BenchmarkDotNet's
    "bimodal" threshold on unimodal timings (the rates are in
    ``benchmarks/RESULTS.md``, "Modality label").
    """
    return _mvalue_sorted(np.sort(as_sample(x, "x", min_n=1, what="for an mvalue")))


def _mvalue_sorted(arr: np.ndarray) -> float:
    """``mvalue`` of an already validated, sorted array."""
    q1, q3 = quantiles(arr, [0.25, 0.75])
    iqr = q3 - q1
    kept = arr[(arr >= q1 - TUKEY_K * iqr) & (arr <= q3 + TUKEY_K * iqr)]
    n = kept.size
    sd = float(np.std(kept, ddof=1)) if n > 1 else 0.0
    value_range = float(kept[-1] - kept[0])
    bin_size = 0.75 * 3.5 * sd / n ** (1.0 / 3.0)
    if abs(bin_size) < 1e-9:
        bin_size = 1.0
    result = 0.0
    while True:
        counts = _adaptive_bin_counts(kept, bin_size)
        if counts is None:
            return 1.0  # perfolizer's "invalid" marker (an mvalue is always >= 2)
        padded = np.concatenate(([0], counts, [0]))
        result = max(result, float(np.abs(np.diff(padded)).sum()) / float(padded.max()))
        if bin_size > value_range:
            return result
        bin_size *= 2.0


# ---------------------------------------------------------------- describe's parts


def _mean_sd(arr: np.ndarray) -> tuple[float, float, float | None]:
    """Mean as (rough, correction), and the n-1 SD, in two passes (Chan-Golub-LeVeque).

    rough = the float mean; correction = the mean of x - rough, so deviations
    (x - rough) - correction stay exact to rounding even when the data sit on a
    large offset (1e9 ns + a few ns of jitter), where the mean itself cannot be
    stored closer than half an ulp. The variance is (sum d^2 - (sum d)^2 / n) /
    (n - 1) over d = x - rough - correction, the "corrected two-pass algorithm"
    (Chan, Golub & LeVeque 1983, Am. Stat. 37:242).
    """
    rough = float(arr.mean())
    d = arr - rough
    correction = float(d.mean())
    if arr.size < 2:
        return rough, correction, None
    d -= correction
    ss = float(np.dot(d, d)) - float(d.sum()) ** 2 / arr.size
    return rough, correction, math.sqrt(max(ss, 0.0) / (arr.size - 1))


def _spread(arr, q1, q3, mean, sd, warnings) -> dict:
    """CV, IQR and both MAD scales; adds the n = 1 and no-variance warnings."""
    n = arr.size
    if n == 1:
        warnings.append(note("single-value",
                             "only 1 value: sd, cv, skewness and the sigma distances are undefined"))
    elif sd == 0.0:
        warnings.append(note(
            "no-variance",
            f"no variance: all {n} values are identical ({float(arr[0])!r}); "
            "is the timer resolution too coarse?",
            n=n, value=float(arr[0]),
        ))
    mad = middle(np.abs(arr - middle(arr)))  # scipy.stats.median_abs_deviation's steps
    return {
        "cv": sd / mean if sd is not None and mean != 0.0 else None,
        "iqr": float(q3 - q1),
        "mad": mad,
        "mad_normal": mad / NORMAL_MAD_SCALE,
    }


def _skewness(arr: np.ndarray) -> float:
    """The moment skewness m3 / m2^1.5, NaN where m2 is zero to rounding: ``scipy.stats.skew(arr,
    bias=True)`` by its own formula, written out because ``scipy.stats`` costs 0.5-0.8 s of CPU to
    import and every summary of three samples or more needs this (a command's fixed cost,
    ``benchmarks/results/startup.md``); ``tests/stats/test_descriptive.py`` checks it against scipy."""
    mean = float(np.mean(arr))
    deviations = arr - mean
    m2 = float(np.mean(deviations ** 2))
    m3 = float(np.mean(deviations ** 3))
    if m2 <= (np.finfo(np.float64).eps * mean) ** 2:
        return math.nan
    return m3 / m2 ** 1.5


def _shape(arr, center, sd, lo, hi, warnings) -> dict:
    """Mean-min gap, sigma distances against Grubbs, and skewness.

    ``center`` is the mean as (rough, correction); distances from the mean are
    taken as (v - rough) - correction, exact even on a large offset.
    """
    n = arr.size
    rough, correction = center
    mean = rough + correction
    above, below = (hi - rough) - correction, correction - (lo - rough)
    gap = below / mean if lo > 0.0 else None
    if lo <= 0.0:
        warnings.append(note("nonpositive-min",
                             f"min = {lo!r} <= 0: the mean-min gap is undefined (timings are > 0)",
                             min=lo))
    g = grubbs_critical(n) if n >= 3 else None
    if not sd:  # n = 1 or no variance
        return {"mean_min_gap": gap, "max_sigma": None, "min_sigma": None, "grubbs_critical": g,
                "max_beyond_grubbs": False, "min_beyond_grubbs": False, "skewness": None}
    max_sigma, min_sigma = above / sd, below / sd
    max_out = g is not None and max_sigma > g
    min_out = g is not None and min_sigma > g
    for flag, side, z in ((max_out, "max", max_sigma), (min_out, "min", min_sigma)):
        if flag:
            warnings.append(note(
                "grubbs-tail",
                f"the {side} lies {z:.2f} sd from the mean, beyond Grubbs' 5% critical "
                f"value {g:.2f} for n = {n}: a tail heavier than normal",
                side=side, sigma=z, critical=g, n=n,
            ))
    skew = _skewness((arr - rough) - correction)
    return {
        "mean_min_gap": gap,
        "max_sigma": max_sigma,
        "min_sigma": min_sigma,
        "grubbs_critical": g,
        "max_beyond_grubbs": max_out,
        "min_beyond_grubbs": min_out,
        "skewness": skew,
    }


def _fences(arr, q1, q3, warnings) -> dict:
    """Tukey's fences Q1 - 1.5 IQR, Q3 + 1.5 IQR and the indices beyond them."""
    iqr = q3 - q1
    lower, upper = q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr
    below = tuple(int(i) for i in np.flatnonzero(arr < lower))
    above = tuple(int(i) for i in np.flatnonzero(arr > upper))
    sides = ((len(above), "above", upper), (len(below), "below", lower))
    for count, side, fence in sides:
        if count:
            where = "above the upper" if side == "above" else "below the lower"
            warnings.append(note(
                "tukey-fence",
                f"{count} value(s) {where} Tukey fence ({fence:.6g}); reported, not removed",
                side=side, count=count, fence=fence,
            ))
    return {"lower_fence": lower, "upper_fence": upper, "below_fence": below, "above_fence": above}


def _modes(ordered: np.ndarray, mval: float, warnings: list[Note]) -> dict:
    """``modality``, ``modes`` and ``mode_locations`` from the lowland detector.

    None and () below ``MODALITY_MIN_N`` values; no label for one mode below
    ``UNIMODAL_MIN_N``; a warning only when the detector finds several modes.
    """
    if ordered.size < MODALITY_MIN_N:
        return {"modality": None, "modes": None, "mode_locations": ()}
    found = _lowland_modes_sorted(ordered, MODALITY_SENSITIVITY)
    label = MODALITY_LABELS.get(found.count, "multimodal")
    if found.count == 1 and ordered.size < UNIMODAL_MIN_N:
        label = None
    elif found.count > 1:
        near = ", ".join(f"{v:.6g}" for v in found.locations)
        warnings.append(note(
            "modes",
            f"the distribution looks {label}: the lowland detector finds {found.count} modes, "
            f"near {near} (mvalue {mval:.2f})",
            modality=label, count=found.count, locations=[float(v) for v in found.locations],
            mvalue=mval,
        ))
    return {"modality": label, "modes": found.count, "mode_locations": found.locations}


# ------------------------------------------------- perfolizer's adaptive histogram

_RESOLUTION = 1e-4  # perfolizer's grid, in the data's unit (it works in nanoseconds)
_MARGIN = 0.1
_ADAPTIVE_FACTOR = 0.02


def _adaptive_bin_counts(values: np.ndarray, bin_size: float) -> np.ndarray | None:
    """Bin counts of perfolizer's ``AdaptiveHistogramBuilder.Build(values, binSize)``.

    A port of ``Mathematics/Histograms/AdaptiveHistogramBuilder.cs`` (MIT):
    repeatedly split the first too-wide gap between bin edges next to its
    densest window of width ``bin_size``, so that bins centre on clusters,
    then trim empty end bins and merge bins narrower than max(bin_size / 3,
    2% of the values seen). ``values`` must be sorted. Differences from the C#:
    the densest-window search is vectorised (same choice: most values, then
    smallest spread, then leftmost), and the grid resolution 1e-4 is scaled
    down for data whose range is below 1 unit, where perfolizer's absolute grid
    (built for nanoseconds) would swallow the spread. Returns None where
    perfolizer would throw.
    """
    res = _RESOLUTION * min(1.0, float(values[-1] - values[0]) or 1.0)
    bin_size = _nice_ceiling(max(bin_size, res), res)
    if values[-1] - values[0] < bin_size:
        return np.array([values.size])
    points = _split_points(values, bin_size, res)
    if points is None:
        return None
    edges = np.searchsorted(values, np.asarray(points[1:-1]), side="left")
    counts = np.diff(np.concatenate(([0], edges, [values.size])))
    ends = np.concatenate((edges, [values.size]))
    bins = [
        [points[i], points[i + 1], int(c), float(values[e - 1]) if c else None]
        for i, (c, e) in enumerate(zip(counts, ends, strict=True))
    ]
    while bins and bins[0][2] == 0:
        bins.pop(0)
    while bins and bins[-1][2] == 0:
        bins.pop()
    return np.array([b[2] for b in _merge_narrow_bins(bins, bin_size)])


def _split_points(values: np.ndarray, bin_size: float, res: float) -> list[float] | None:
    """Bin edges of the adaptive histogram (the C# ``while (true)`` loop)."""
    eps = 1e-9 * res / _RESOLUTION
    window = _WindowIndex(values, bin_size)
    points = [
        _nice_floor(values[0] - bin_size / 2, res),
        _nice_ceiling(values[-1] + bin_size / 2, res),
    ]
    processed = cursor = 0
    while True:
        if len(points) > 10 * values.size:
            return None
        index = _first_wide_gap(points, max(processed, cursor), bin_size)
        if index is None:
            return points
        cursor = index
        lower, upper = points[index], points[index + 1]
        start = int(np.searchsorted(values, lower - eps, side="right"))
        stop = int(np.searchsorted(values, upper - eps, side="left"))
        best = window.densest(start, stop) if start < stop else None
        if best is None:
            points.insert(index + 1, _nice_floor(lower + bin_size, res))
            processed += 1
            continue
        center = (values[best[0]] + values[best[1]]) / 2.0
        adaptive = max(bin_size, center * _ADAPTIVE_FACTOR)
        left = _nice_floor(center - adaptive / 2, res)
        right = _nice_floor(min(center + adaptive / 2, upper), res)
        if left > lower + bin_size * _MARGIN:
            points.insert(index + 1, left)
        elif upper - bin_size * _MARGIN > right > lower + bin_size * _MARGIN:
            points.insert(index + 1, right)
            processed += 1
        else:
            processed += 1


def _first_wide_gap(points: list[float], start: int, bin_size: float) -> int | None:
    """Index of the first gap from ``start`` wider than max(1.2 bin, 2% of its centre)."""
    for i in range(start, len(points) - 1):
        adaptive = (points[i] + points[i + 1]) / 2.0 * _ADAPTIVE_FACTOR
        if points[i + 1] - points[i] > max(bin_size * (1.0 + 2 * _MARGIN), adaptive):
            return i
    return None


class _WindowIndex:
    """For sorted values, the densest window of width < bin_size inside an index range.

    ``end[i]`` is the first j with values[j] - values[i] >= bin_size (computed
    with the same float subtraction as the C#), so a window starting at i holds
    min(end[i], stop) - i values. ``key`` ranks windows by count, then by
    smaller spread (spread < bin_size, so it only breaks ties).
    """

    def __init__(self, values: np.ndarray, bin_size: float):
        n = values.size
        idx = np.arange(n)
        end = np.searchsorted(values, values + bin_size, side="left")
        for _ in range(64):  # fix-up where values[j] < v + b and values[j] - v < b disagree
            back = (end - 1 > idx) & (values[np.maximum(end - 1, 0)] - values >= bin_size)
            fwd = (end < n) & (values[np.minimum(end, n - 1)] - values < bin_size)
            if not (back.any() or fwd.any()):
                break
            end = end - back + fwd
        self.values, self.end, self.bin_size = values, end, bin_size
        self.key = (end - idx) - 0.5 * (values[end - 1] - values) / bin_size

    def densest(self, start: int, stop: int) -> tuple[int, int]:
        """(first, last) index of the densest window starting in [start, stop), ending before stop."""
        clipped = max(start, int(np.searchsorted(self.end, stop, side="right")))
        best, best_key = -1, -math.inf
        if clipped > start:
            best = start + int(np.argmax(self.key[start:clipped]))
            best_key = float(self.key[best])
        if clipped < stop:
            spread = self.values[stop - 1] - self.values[clipped]
            key = (stop - clipped) - 0.5 * spread / self.bin_size
            if key > best_key:
                best = clipped
        return best, min(int(self.end[best]), stop) - 1


def _merge_narrow_bins(bins: list[list], bin_size: float) -> list[list]:
    """Join bins narrower than max(bin_size / 3, 2% of the largest value so far) to a neighbour.

    Each bin is [lower, upper, count, last value or None]; the narrower
    neighbour absorbs it (the right one on ties), as in the C#.
    """
    i, last = 0, 0.0
    while i < len(bins):
        if bins[i][3] is not None:
            last = max(last, bins[i][3])
        threshold = max(bin_size / 3, last * _ADAPTIVE_FACTOR)
        if bins[i][1] - bins[i][0] >= threshold:
            i += 1
            continue
        left_gap = bins[i - 1][1] - bins[i - 1][0] if i > 0 else math.inf
        right_gap = bins[i + 1][1] - bins[i + 1][0] if i < len(bins) - 1 else math.inf
        if left_gap < right_gap and i > 0:
            bins[i - 1] = _union(bins[i - 1], bins.pop(i))
        elif i < len(bins) - 1:
            bins[i] = _union(bins[i], bins.pop(i + 1))
        else:
            i += 1
    return bins


def _union(a: list, b: list) -> list:
    lasts = [v for v in (a[3], b[3]) if v is not None]
    return [min(a[0], b[0]), max(a[1], b[1]), a[2] + b[2], max(lasts) if lasts else None]


def _nice_floor(value: float, res: float) -> float:
    return math.floor(value / res) * res


def _nice_ceiling(value: float, res: float) -> float:
    return math.ceil(value / res) * res
