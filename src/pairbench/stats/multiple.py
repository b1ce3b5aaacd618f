"""Adjusted p-values for many comparisons at once: Holm (FWER) and Benjamini-Hochberg (FDR).

Comparing a suite of benchmarks at alpha = 0.05 flags about 5% of unchanged ones
(benchstat's docs). Holm controls the chance of *any* false regression;
Benjamini-Hochberg the expected share of false ones among those flagged (valid
under the positive dependence of benchmarks run on one machine). Both return
adjusted p-values in the input order, equal to R's ``p.adjust(p, "holm" | "BH")``.
"""

from __future__ import annotations

import numpy as np

from pairbench.errors import StatisticsError
from pairbench.stats._lazy import scipy_stats as _sps
from pairbench.stats._validation import as_sample


def _as_pvalues(pvalues) -> np.ndarray:
    """Return ``pvalues`` as a non-empty 1-D float array of values in [0, 1], or raise."""
    p = as_sample(pvalues, "pvalues", min_n=1, what="to adjust")
    bad = np.flatnonzero((p < 0.0) | (p > 1.0))
    if bad.size:
        i = int(bad[0])
        raise StatisticsError(f"pvalues must lie in [0, 1], got {float(p[i])!r} at index {i}")
    return p


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979, Scand. J. Statist. 6:65).

    With p sorted ascending and m values: p_adj(i) = max_{j <= i} min(1, (m - j + 1) p_(j)),
    returned in the input order; reject where p_adj <= alpha to control the
    family-wise error rate at alpha under any dependence. Written by hand because
    scipy has no Holm adjustment (``false_discovery_control`` offers only BH and BY);
    it is R's ``p.adjust(p, "holm")`` line for line. O(m log m).
    """
    p = _as_pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    factors = m - np.arange(m)  # m, m-1, ..., 1
    stepped = np.minimum(1.0, np.maximum.accumulate(factors * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) in the input order.

    p_adj(i) = min_{j >= i} min(1, m p_(j) / j) for p sorted ascending (Benjamini &
    Hochberg 1995, JRSS B 57:289); ``scipy.stats.false_discovery_control(p,
    method='bh')`` computes it. Reject where p_adj <= q to keep the false discovery
    rate at q under independence or positive dependence.
    """
    p = _as_pvalues(pvalues)
    return np.asarray(_sps.false_discovery_control(p, method="bh"), dtype=np.float64)
