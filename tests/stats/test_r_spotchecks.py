"""The statistics audit's spot-checks against R, kept as regression tests: Holm's adjustment
(``p.adjust``), the Mann-Whitney test and the Hodges-Lehmann interval (``wilcox.test``), and the
autoregressive error of the mean (``ar()`` with the documented bias correction).

Every expected number comes from R 4.2.2: ``tests/reference/audit_spotchecks.R`` (beside its
output, ``audit_spotchecks_reference.json``) says how each was made. The inputs are stored with
the outputs, so R is not needed here. Tolerances: Holm and the test statistics to rounding; the
normal route's interval ends to R's ``uniroot`` tolerance (tol.root 1e-4); the point estimate of
that route is pairbench's exact Hodges-Lehmann median, R's a root of the same equation, so they
may differ by the spacing of the pairwise differences."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pairbench import stats
from pairbench.stats import timeseries

REFERENCE = json.loads((Path(__file__).parent.parent / "reference" / "audit_spotchecks_reference.json").read_text())


@pytest.mark.parametrize("case", REFERENCE["holm"], ids=lambda c: f"m{len(c['p'])}")
def test_holm_adjusted_pvalues_equal_r_p_adjust(case):
    assert stats.holm(np.array(case["p"])) == pytest.approx(np.array(case["holm"]), rel=1e-15, abs=0)


@pytest.mark.parametrize("case", REFERENCE["wilcox"], ids=lambda c: f"n{len(c['x'])}-m{len(c['y'])}")
def test_mann_whitney_equals_r_wilcox_test(case):
    x, y = np.array(case["x"]), np.array(case["y"])
    found = stats.mann_whitney(x, y)
    assert (found.W, found.method) == (case["W"], "exact" if case["exact"] else "normal")
    assert found.pvalue == pytest.approx(case["p"], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("case", REFERENCE["wilcox"], ids=lambda c: f"n{len(c['x'])}-m{len(c['y'])}")
def test_hodges_lehmann_interval_equals_r_wilcox_test_conf_int(case):
    x, y = np.log(np.array(case["x"])), np.log(np.array(case["y"]))
    found = stats.hodges_lehmann(x, y, case["conf"])
    tolerance = 1e-12 if case["exact"] else 1e-4  # R's uniroot on the normal route: tol.root 1e-4
    assert found.low == pytest.approx(case["low"], abs=tolerance)
    assert found.high == pytest.approx(case["high"], abs=tolerance)
    assert found.estimate == pytest.approx(case["estimate"], abs=1e-12 if case["exact"] else 1e-3)


@pytest.mark.parametrize("case", REFERENCE["ar"], ids=lambda c: f"n{len(c['x'])}-phi{c['phi']}")
def test_autoregressive_error_of_the_mean_equals_r_ar_with_the_bias_correction(case):
    x = np.array(case["x"])
    found = timeseries._autoregressive(x - x.mean())
    assert (found.var_mean, int(found.bandwidth)) == (pytest.approx(case["var_mean"], rel=1e-12), case["order"])
