"""pairbench.stats: the statistics every verdict rests on.

Pure functions: numpy arrays in, frozen result records out; no I/O, no printing.
This package imports only numpy, scipy and ``pairbench.errors`` so it can be used
as a library on its own::

    from pairbench import stats
    hl = stats.hodges_lehmann(x, y)          # HodgesLehmann(estimate, low, high, confidence)

Names are resolved lazily (PEP 562) so that importing one function does not pay
for scipy submodules another needs.
"""

from __future__ import annotations

import importlib

# public name -> submodule that defines it
_EXPORTS = {
    # shape and location of one sample
    "describe": "descriptive",
    "Description": "descriptive",
    "median_ci": "descriptive",
    "MedianCI": "descriptive",
    "mvalue": "descriptive",
    "grubbs_critical": "descriptive",
    "fence_excess_pvalue": "descriptive",
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
    "kth_pairwise_difference": "_select",
    "kth_walsh_average": "_select",
    # paired effects (paired benchmarking)
    "paired_effect": "paired",
    "PairedEffect": "paired",
    "outlier_balance": "paired",
    "sign_test_pvalue": "paired",
    "OutlierBalance": "paired",
    # power and sample size
    "power": "sample_size",
    "samples_needed": "sample_size",
    # resampling and multiplicity
    "bootstrap_ci": "resample",
    "BootstrapCI": "resample",
    "mean_of_means_ci": "resample",
    "holm": "multiple",
    "benjamini_hochberg": "multiple",
    # quantiles and the shift function (Doksum)
    "quantile_ranks": "shift",
    "quantile_ci": "shift",
    "QuantileInterval": "shift",
    "shift_function": "shift",
    "ShiftFunction": "shift",
    # change points in a series (the history of a benchmark)
    "pelt": "changepoint",
    "noise_scale": "changepoint",
    "segment": "changepoint",
    "with_lines": "changepoint",
    "Segmentation": "changepoint",
    "serial_noise": "changepoint",
    "SerialNoise": "changepoint",
    "fitted": "changepoint",
    "median_fitted": "changepoint",
    "running_median": "skewed",
    "midranks": "skewed",
    "quantile_skewness": "skewed",
    "is_skewed": "skewed",
    "two_piece": "skewed",
    "placed_by_density": "skewed",
    "slope": "changepoint",
    "refined": "changepoint",
    "window_scores": "changepoint",
    "step_evidence": "evidence",
    "StepEvidence": "evidence",
    "lasting_evidence": "evidence",
    "LastingEvidence": "evidence",
    "ramp_evidence": "evidence",
    "RampEvidence": "evidence",
    "credible_places": "evidence",
    # anytime-valid stopping
    "confidence_sequence": "sequential",
    "ConfidenceSequence": "sequential",
    "running_bounds": "sequential",
    "RunningSequence": "sequential",
    "anytime_pvalue": "sequential",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'pairbench.stats' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
