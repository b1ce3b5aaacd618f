"""``pairbench.stats``' public names: ``__all__`` is the library's declared surface.

A name added to or removed from the surface is a change of the public API: it
changes ``SURFACE`` here too, on purpose. The helpers the analysis reaches
through the package stay out of ``__all__``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from pairbench import stats

ROOT = Path(__file__).resolve().parents[2]
SURFACE = [
    "BootstrapCI", "ConfidenceSequence", "Correlogram", "Description", "ExactEffect", "HodgesLehmann", "LastingEvidence",
    "LjungBox", "LowlandModes", "MannWhitney", "MeanError", "MedianCI", "OutlierBalance", "PairedEffect",
    "QuantileInterval", "RampEvidence", "RunningSequence", "Segmentation", "SerialNoise", "ShiftFunction", "SignedRank",
    "StepEvidence", "anytime_pvalue", "autocorrelation", "autocovariance", "benjamini_hochberg",
    "bootstrap_ci", "confidence_sequence", "describe", "exact_effect", "exact_rounds", "hodges_lehmann", "holm", "lasting_evidence",
    "ljung_box", "lowland_modes", "mann_whitney", "mean_error", "median_ci", "mvalue", "noise_scale",
    "outlier_balance", "paired_effect", "pelt", "power", "quantile_ci", "ramp_evidence", "running_bounds",
    "samples_needed",
    "segment", "serial_noise", "shift_function", "sign_test_pvalue", "signed_rank", "step_evidence",
]


def test_the_declared_surface_is_the_one_written_here():
    assert stats.__all__ == sorted(SURFACE)


@pytest.mark.parametrize("name", SURFACE)
def test_each_public_name_is_a_documented_function_or_record_of_a_stats_module(name):
    value = getattr(stats, name)
    assert inspect.isfunction(value) or inspect.isclass(value), name
    assert value.__module__.startswith("pairbench.stats."), name
    assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_a_star_import_gives_the_surface_and_nothing_else():
    namespace: dict = {}
    exec("from pairbench.stats import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(SURFACE)
    assert set(SURFACE) <= set(dir(stats)) and not set(stats._INTERNAL) & set(dir(stats))


def test_every_helper_outside_the_surface_is_one_the_analysis_uses():
    """A helper nothing of pairbench reaches through the package would be surface no one declared."""
    analysis = "\n".join(path.read_text() for path in (ROOT / "src" / "pairbench").rglob("*.py")
                         if "stats" not in path.relative_to(ROOT / "src" / "pairbench").parts[:1])
    assert not set(stats._INTERNAL) & set(SURFACE)
    unused = [name for name in stats._INTERNAL if not re.search(rf"\bstats\.{name}\b", analysis)]
    assert unused == []


def test_the_library_page_names_only_public_names():
    page = (ROOT / "docs" / "statistics.md").read_text()
    named = set(re.findall(r"\bstats\.([A-Za-z_]\w*)", page))
    assert named and named <= set(SURFACE)
