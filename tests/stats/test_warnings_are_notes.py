"""Every caveat a statistic returns is a typed note (pairbench.notes), on ordinary and degenerate data."""

from __future__ import annotations

import numpy as np
import pytest

from pairbench import stats
from pairbench.errors import StatisticsError
from pairbench.notes import CODES, Note

RNG = np.random.default_rng(7)
DATA = {
    "ordinary": (RNG.lognormal(0, 0.1, 40), RNG.lognormal(0.02, 0.1, 40)),
    "constant": (np.full(12, 5.0), np.full(12, 5.0)),
    "ties": (np.repeat(np.arange(1.0, 7.0), 3), np.repeat(np.arange(1.0, 7.0), 3) + 1.0),
    "tiny": (np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.5, 3.5])),
    "outliers": (np.r_[np.ones(30), 50.0, 60.0], np.r_[np.ones(30) * 1.01, 1.0, 70.0]),
}
CALLS = {
    "describe": lambda x, y: stats.describe(x),
    "median_ci": lambda x, y: stats.median_ci(x),
    "mean_error": lambda x, y: stats.mean_error(x),
    "mann_whitney": lambda x, y: stats.mann_whitney(x, y),
    "hodges_lehmann": lambda x, y: stats.hodges_lehmann(x, y),
    "signed_rank": lambda x, y: stats.signed_rank(x, y),
    "paired_effect": lambda x, y: stats.paired_effect(x, y),
    "outlier_balance": lambda x, y: stats.outlier_balance(y - x),
    "confidence_sequence": lambda x, y: stats.confidence_sequence(np.log(y / x)),
    "shift_function": lambda x, y: stats.shift_function(x, y),
}


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("call", CALLS)
def test_every_warning_a_statistic_returns_is_a_known_typed_note(call, data):
    try:
        result = CALLS[call](*DATA[data])
    except StatisticsError as exc:
        assert exc.code in CODES or not exc.code
        return
    for warning in result.warnings:
        assert isinstance(warning, Note) and warning.code in CODES and str(warning)
