"""pairbench.stats: the statistics every verdict rests on.

Pure functions: numpy arrays in, frozen result records out; no I/O, no printing.
This package imports only numpy, scipy, ``pairbench.errors`` and ``pairbench.frozen``, so it
can be used as a library on its own::

    from pairbench import stats
    hl = stats.hodges_lehmann(x, y)          # HodgesLehmann(estimate, low, high, confidence)

Names are resolved lazily (PEP 562) so that importing one function does not pay
for scipy submodules another needs. ``__all__`` is the library's surface: the
functions and their result records; a few helpers the analysis uses are reachable
here too, and are not part of it.
"""

from __future__ import annotations

import importlib

# The library's surface: name -> the submodule that defines it. ``__all__``, documented in
# docs/statistics.md; a change here is a change of the public API (tests/stats/test_public_names.py).
_PUBLIC = {
    # counts the same in every round
    "exact_effect": "counts",
    "ExactEffect": "counts",
    "exact_rounds": "counts",
    # shape and location of one sample
    "describe": "descriptive",
    "Description": "descriptive",
    "median_ci": "descriptive",
    "MedianCI": "descriptive",
    "mvalue": "descriptive",
    "lowland_modes": "modality",
    "LowlandModes": "modality",
    # serial dependence and the error of the mean
    "autocovariance": "timeseries",
    "autocorrelation": "timeseries",
    "Correlogram": "timeseries",
    "ljung_box": "timeseries",
    "LjungBox": "timeseries",
    "mean_error": "timeseries",
    "MeanError": "timeseries",
    # rank tests and Hodges-Lehmann
    "mann_whitney": "ranks",
    "MannWhitney": "ranks",
    "hodges_lehmann": "ranks",
    "HodgesLehmann": "ranks",
    "signed_rank": "ranks",
    "SignedRank": "ranks",
    # paired effects (paired benchmarking)
    "paired_effect": "paired",
    "PairedEffect": "paired",
    "outlier_balance": "paired",
    "OutlierBalance": "paired",
    "sign_test_pvalue": "paired",
    # power and sample size
    "power": "sample_size",
    "samples_needed": "sample_size",
    # resampling and multiplicity
    "bootstrap_ci": "resample",
    "BootstrapCI": "resample",
    "holm": "multiple",
    "benjamini_hochberg": "multiple",
    # quantiles and the shift function (Doksum)
    "quantile_ci": "shift",
    "QuantileInterval": "shift",
    "shift_function": "shift",
    "ShiftFunction": "shift",
    # change points in a series (the history of a benchmark)
    "pelt": "changepoint",
    "segment": "changepoint",
    "Segmentation": "changepoint",
    "noise_scale": "changepoint",
    "serial_noise": "changepoint",
    "SerialNoise": "changepoint",
    "step_evidence": "evidence",
    "StepEvidence": "evidence",
    "lasting_evidence": "evidence",
    "LastingEvidence": "evidence",
    "ramp_evidence": "evidence",
    "RampEvidence": "evidence",
    # anytime-valid stopping
    "confidence_sequence": "sequential",
    "ConfidenceSequence": "sequential",
    "running_bounds": "sequential",
    "RunningSequence": "sequential",
    "anytime_pvalue": "sequential",
}

# Helpers pairbench's analysis reaches through the package, not part of the library: they may change
# or go without notice (import them from their submodule to use them anyway).
_INTERNAL = {
    "fence_excess_pvalue": "descriptive",
    "mean_of_means_ci": "resample",
    "with_lines": "changepoint",
    "median_fitted": "changepoint",
    "slope": "changepoint",
    "refined": "changepoint",
    "window_scores": "changepoint",
    "running_median": "skewed",
    "midranks": "skewed",
    "is_skewed": "skewed",
    "two_piece": "skewed",
    "placed_by_density": "skewed",
    "credible_places": "evidence",
}

_EXPORTS = {**_PUBLIC, **_INTERNAL}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'pairbench.stats' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) - set(_INTERNAL) | set(__all__))
