"""Bootstrap confidence intervals: a guarded wrapper over ``scipy.stats.bootstrap``.

scipy does the resampling (vectorized, in batches); this module picks sane
defaults and refuses the three ways a bootstrap quietly goes wrong on timing data:

* BCa's jackknife costs n evaluations of an O(n) statistic, O(n^2) in all: 140 s
  at n = 1e5. ``method="auto"`` uses BCa up to ``BCA_MAX_N`` values and the
  percentile interval above; an explicit ``"BCa"`` above it is refused.
* Constant data have no sampling spread: ``NoVariance``. When the data vary but
  the bootstrap distribution is degenerate enough that BCa is undefined (scipy
  returns NaN), the percentile interval of the same resamples is returned, with
  a warning.
* The naive bootstrap of a minimum or maximum is inconsistent:
  P*(min* = x_(1)) = 1 - (1 - 1/n)^n -> 0.632, so its "interval" does not shrink
  to the truth. Those statistics are refused; bootstrap a low quantile instead.
"""

from __future__ import annotations

import math
import warnings as _warnings

import numpy as np
from scipy import stats as _sps

from pairbench.errors import NoVariance, StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats._validation import as_sample, check_confidence, check_count

# Largest total n for which method="auto" uses BCa. Measured on the 2-core CI box
# (2026-11-22, scipy 1.17.1, median, 9999 resamples): BCa 3.4 s vs percentile
# 2.2 s at n = 1e4, so the jackknife costs ~1.2 s there and ~120 s at n = 1e5.
BCA_MAX_N = 10_000

# Keep one batch of resamples under ~80 MB of float64 (batch * n <= 1e7).
_BATCH_CELLS = 10_000_000

_METHODS = {"auto": "auto", "bca": "BCa", "percentile": "percentile", "basic": "basic"}

# Statistics whose naive bootstrap is inconsistent (extreme order statistics).
_EXTREMES = {
    np.min: "np.min", np.max: "np.max", np.amin: "np.amin", np.amax: "np.amax",
    np.nanmin: "np.nanmin", np.nanmax: "np.nanmax", np.ptp: "np.ptp", min: "min", max: "max",
}  # fmt: skip


@frozen
class BootstrapCI:
    """A bootstrap confidence interval [low, high] for a statistic of one or more samples.

    ``method`` is the method actually used ("BCa", "percentile" or "basic");
    ``standard_error`` is the SD of the bootstrap distribution.
    """

    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    standard_error: float
    warnings: tuple[Note, ...] = ()


def bootstrap_ci(
    data,
    statistic=np.median,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    method: str = "auto",
    paired: bool = False,
    seed: int = 0,
) -> BootstrapCI:
    """A bootstrap CI of ``statistic`` via ``scipy.stats.bootstrap`` (Efron & Tibshirani 1993).

    ``data`` is one sample (a 1-D sequence) or a *tuple* of samples; with
    ``paired=True`` the samples must have equal lengths and are resampled as
    pairs. ``statistic(*samples, axis=-1)`` must reduce along ``axis`` (numpy
    reductions do), so whole batches of resamples are evaluated at once.
    ``method``: "auto" (BCa up to ``BCA_MAX_N`` values in all, percentile
    above), "BCa", "percentile" or "basic". ``seed`` fixes the resamples, so the
    same call gives the same interval.
    """
    confidence = check_confidence(confidence)
    samples = _as_samples(data, paired)
    _check_statistic(statistic)
    n_resamples = check_count(n_resamples, "n_resamples")
    total = sum(s.size for s in samples)
    chosen, notes = _choose_method(method, total)
    if all(np.all(s == s[0]) for s in samples):
        raise NoVariance(
            f"no variance: every value of the data is identical ({float(samples[0][0])!r}), so"
            " every resample gives the same statistic; is the timer resolution too coarse?",
            n=total, value=float(samples[0][0]),
        )
    kwargs = {
        "n_resamples": n_resamples,
        "batch": max(1, min(n_resamples, _BATCH_CELLS // total)),
        "paired": paired,
        "confidence_level": confidence,
        "rng": np.random.default_rng(seed),
    }
    result, caught = _run(samples, statistic, method=chosen, **kwargs)
    low, high = result.confidence_interval
    if chosen == "BCa" and not (math.isfinite(low) and math.isfinite(high)):
        notes.append(note(
            "bootstrap-bca-undefined",
            "BCa is undefined for these data (degenerate bootstrap or jackknife distribution);"
            " the percentile interval of the same resamples is given instead",
        ))
        chosen = "percentile"
        kwargs.update(n_resamples=0, rng=None)
        result, _ = _run(samples, statistic, method=chosen, bootstrap_result=result, **kwargs)
        low, high = result.confidence_interval
        caught = []  # they were about the BCa attempt, replaced by the note above
    return BootstrapCI(
        low=float(low),
        high=float(high),
        confidence=confidence,
        method=chosen,
        n_resamples=n_resamples,
        standard_error=float(result.standard_error),
        warnings=tuple(notes + caught),
    )


def _run(samples, statistic, **kwargs):
    """Call scipy.stats.bootstrap, returning the result and its warnings as strings."""
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        result = _sps.bootstrap(tuple(samples), statistic, **kwargs)
    return result, [note("bootstrap-warning", f"scipy: {w.message}", text=str(w.message))
                    for w in caught]


def _as_samples(data, paired: bool) -> list[np.ndarray]:
    """Validate one sample or a tuple of samples (each finite, 1-D, >= 2 values)."""
    raw = data if isinstance(data, tuple) else (data,)
    if not raw:
        raise StatisticsError("data must be a sample or a non-empty tuple of samples, got ()")
    names = ["data"] if len(raw) == 1 else [f"data[{i}]" for i in range(len(raw))]
    samples = [
        as_sample(s, name, min_n=2, what="to bootstrap") for s, name in zip(raw, names, strict=True)
    ]
    if paired and len({s.size for s in samples}) > 1:
        sizes = ", ".join(f"{n}: {s.size}" for n, s in zip(names, samples, strict=True))
        raise StatisticsError(f"paired=True needs samples of equal length, got {sizes}")
    return samples


def _check_statistic(statistic) -> None:
    """Refuse a non-callable statistic and the extremes, whose naive bootstrap is inconsistent."""
    if not callable(statistic):
        raise StatisticsError(f"`statistic` must be callable, got {statistic!r}")
    name = _EXTREMES.get(statistic) if _hashable(statistic) else None
    if name is not None:
        raise StatisticsError(
            f"refusing to bootstrap {name}: the naive bootstrap of a minimum or maximum is"
            " inconsistent (a resample repeats the sample's extreme with probability"
            " 1 - (1 - 1/n)**n -> 0.632), so its interval is wrong at every n; bootstrap a"
            " low quantile such as lambda x, axis: np.percentile(x, 5, axis=axis) instead"
        )


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _choose_method(method, total: int) -> tuple[str, list[Note]]:
    """Resolve ``method`` ("auto" -> BCa or percentile by n); refuse BCa above BCA_MAX_N."""
    key = method.lower() if isinstance(method, str) else None
    if key not in _METHODS:
        raise StatisticsError(
            f"`method` must be one of 'auto', 'BCa', 'percentile', 'basic', got {method!r}"
        )
    chosen = _METHODS[key]
    if chosen == "auto":
        if total <= BCA_MAX_N:
            return "BCa", []
        return "percentile", [note(
            "bootstrap-bca-too-large",
            f"percentile interval: BCa's jackknife is O(n^2) and n = {total} exceeds {BCA_MAX_N}",
            n=total, limit=BCA_MAX_N,
        )]
    if chosen == "BCa" and total > BCA_MAX_N:
        raise StatisticsError(
            f"method='BCa' with n = {total} values: its jackknife is O(n^2) (about 140 s at"
            f" n = 1e5); use method='percentile' or 'auto' above {BCA_MAX_N} values"
        )
    return chosen, []


def mean_of_means_ci(samples, confidence: float = 0.95, n_resamples: int = 1999, seed: int = 0) -> BootstrapCI:
    """A studentized bootstrap interval (bootstrap-t; Efron & Tibshirani 1993, ch. 12; Hall 1988
    [1]_) for the mean over ``samples`` (a tuple of 1-D samples, each of at least 2 values) of each
    sample's mean: the estimate theta = mean_k mean(x_k), its standard error
    se = sqrt(sum_k s_k^2 / n_k) / K, and the interval theta - q_(1-a/2) se .. theta - q_(a/2) se,
    q the quantiles of (theta* - theta) / se* over resamples that draw each sample's values anew
    from it (each sample on its own); at each end the Student's t interval's end instead where it
    lies further out (t with the samples' pooled degrees of freedom): the bootstrap-t corrects for
    skew, and the t interval keeps its level where the bootstrap's quantiles come out narrow
    (heavy tails: 0.917 for the bootstrap-t alone at 30 benchmarks of 30 t3 values).

    Written here because ``scipy.stats.bootstrap`` has no studentized interval, and its percentile
    and BCa intervals undercover this statistic: each sample's bootstrap variance is (n - 1) / n of
    its own (0.917 at 10 benchmarks of 10 normal values), and skewed values skew the mean's
    distribution (0.897 for the t interval alone at 10 benchmarks of 10 values of a lognormal);
    this interval covers 0.927-0.968 over the grid of ``benchmarks/suite_geomean.py``
    (``benchmarks/RESULTS.md``). O(n_resamples x total values), in batches of bounded memory.

    .. [1] P. Hall (1988). Theoretical comparison of bootstrap confidence intervals. Annals of
       Statistics 16(3), 927-953.
    """
    confidence = check_confidence(confidence)
    n_resamples = check_count(n_resamples, "n_resamples")
    samples = [as_sample(s, "samples", min_n=2) for s in samples]
    if not samples:
        raise StatisticsError("a mean of means needs at least one sample")
    k = len(samples)
    theta = float(np.mean([s.mean() for s in samples]))
    se = math.sqrt(sum(float(np.var(s, ddof=1)) / s.size for s in samples)) / k
    if se == 0.0:
        raise NoVariance("no variance: every sample's values are identical, so every resample is the same",
                         n=sum(s.size for s in samples), value=theta)
    rng = np.random.default_rng(seed)
    means, variances = np.zeros(n_resamples), np.zeros(n_resamples)
    for s in samples:
        step = max(1, _BATCH_CELLS // 5 // s.size)  # about 16 MB of values and as much of indices
        for start in range(0, n_resamples, step):
            drawn = s[rng.integers(0, s.size, (min(step, n_resamples - start), s.size))]
            means[start:start + drawn.shape[0]] += drawn.mean(axis=1)
            variances[start:start + drawn.shape[0]] += drawn.var(axis=1, ddof=1) / s.size
    spread = np.sqrt(variances) / k
    usable = spread > 0  # a resample of identical values in every sample has no t
    t = (means[usable] / k - theta) / spread[usable]
    alpha = 1.0 - confidence
    q_low, q_high = np.quantile(t, [alpha / 2, 1 - alpha / 2])
    q_t = float(_sps.t.ppf(1 - alpha / 2, sum(s.size - 1 for s in samples)))
    return BootstrapCI(low=theta - max(float(q_high), q_t) * se, high=theta - min(float(q_low), -q_t) * se,
                       confidence=confidence, method="studentized", n_resamples=int(usable.sum()),
                       standard_error=se)
