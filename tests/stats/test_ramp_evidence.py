"""The Bayes evidence of a ramp against one step (``stats.ramp_evidence``): its sums checked against
the whitened columns built in full, a ramp of width 1 is the step, and the evidence tells a ramp
from a step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from pairbench import stats
from pairbench.stats import evidence
from pairbench.stats.changepoint import whitened


def full_log_marginal(y: np.ndarray, column: np.ndarray, phi: float) -> float:
    """log p(y | phi) of a level plus ``column`` (module docstring of ``stats.evidence``), with the
    whitened design built as a matrix and solved by least squares."""
    m = y.size
    x = np.stack([whitened(np.ones(m), phi), whitened(column, phi)], axis=1)
    w = whitened(y, phi)
    beta, *_ = np.linalg.lstsq(x, w, rcond=None)
    rss = float(np.sum((w - x @ beta) ** 2))
    _, logdet = np.linalg.slogdet(x.T @ x)
    return (0.5 * math.log(1 - phi * phi) - 0.5 * logdet - 0.5 * (m - 2) * math.log(rss)
            + gammaln((m - 2) / 2) - 0.5 * (m - 2) * math.log(math.pi) - math.log(2.0))


def test_the_ramp_evidence_equals_the_marginal_likelihood_of_every_ramp_built_in_full():
    rng = np.random.default_rng(5)
    m, low = 28, 3
    y = rng.standard_normal(m) + 2.0 * np.clip((np.arange(m) - 10) / 8.0, 0, 1)
    found = evidence.ramp_evidence(y, low, 4, 9)
    y0 = y - np.median(y)
    ramps, steps = [], []
    for phi in evidence.RAMP_PHIS:
        ramps.append([full_log_marginal(y0, np.clip((np.arange(m) - a) / w, 0, 1), phi)
                      for w in range(4, 10) for a in range(low - 1, m - low - w + 1)])
        steps.append([full_log_marginal(y0, (np.arange(m) >= q).astype(float), phi) for q in range(low, m - low + 1)])
    ramps, steps = np.array(ramps), np.array(steps)
    assert found.ramp == pytest.approx(logsumexp(ramps) - math.log(ramps.size), rel=1e-9)
    assert found.step == pytest.approx(logsumexp(steps) - math.log(steps.size), rel=1e-9)


def test_a_ramp_over_one_commit_is_the_step():
    y = np.random.default_rng(6).standard_normal(20)
    v = whitened(y - np.median(y), 0.4)
    rr, orr, rv = evidence._whitened_ramps(v, np.array([9.0]), np.array([1.0]), 0.4)
    step = whitened((np.arange(20) >= 10).astype(float), 0.4)
    assert (rr[0], orr[0], rv[0]) == pytest.approx((step @ step, step @ whitened(np.ones(20), 0.4), step @ v))


def test_a_slow_rise_is_told_from_a_step_and_a_step_from_a_slow_rise():
    rng = np.random.default_rng(46)
    t = np.arange(150)
    ramp = stats.ramp_evidence(rng.standard_normal(150) + 2.0 * np.clip((t - 50) / 49.0, 0, 1), 3, 16)
    step = stats.ramp_evidence(rng.standard_normal(150) + 3.0 * (t >= 75), 3, 16)
    assert ramp.against_step > 2.0 and 40 <= ramp.start <= 60 and 85 <= ramp.end <= 105
    assert step.against_step < -2.0


def test_a_ramp_evidence_is_the_same_in_any_unit():
    y = np.random.default_rng(8).standard_normal(60) + np.clip((np.arange(60) - 20) / 20.0, 0, 1)
    assert stats.ramp_evidence(y, 3, 16).against_step == pytest.approx(
        stats.ramp_evidence(1000.0 * y, 3, 16).against_step, rel=1e-9)
