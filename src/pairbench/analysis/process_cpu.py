"""A harness process's own CPU time per operation, where the harness reports none: what an invocation
costs besides its loops.

A Go test binary reports the wall time around each repetition's loop and nothing else; its runtime's
threads park and wake hundreds of times an invocation, so its voluntary context switches say nothing
of the benchmark, and its wall time under load is mostly other tasks' slices. Its process's CPU time
(the rusage ``wait4`` returns) is steady under load (the per-round log-ratios of an A/A at load 10
spread 0.01-0.05 where the loops' wall time spread 0.2-0.8, ``benchmarks/results/harness_equivalence.md``),
but it also holds what the invocation costs besides its loops (the runtime's and the testing
package's start, a benchmark's own set-up): 4.5-8 ms of the 27-114 ms of a round's invocation of
``internal/strconv``, which would shrink every change by that share. So that cost is taken out: it is
the intercept of the process CPU time of the benchmark's validation invocations (one repetition at
1/8, 1/4, 1/2 and all of a sample's iterations) on their iterations, both sides' together, so that
the same amount is taken from both and an A/A stays symmetric. Theil-Sen's line (``scipy.stats.
theilslopes``): an invocation another task slowed moves it little. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as _sps

MIN_POINTS = 4
"""Fewer validation invocations than this (two sizes on two sides) give no line to read a cost from."""


def fixed_cpu_ns(iterations: Sequence[float], cpu_ns: Sequence[float]) -> float | None:
    """The CPU time an invocation costs besides its loops: the Theil-Sen intercept of ``cpu_ns`` on
    ``iterations`` (one invocation each), at least 0; None with fewer than ``MIN_POINTS`` invocations
    or fewer than two iteration counts."""
    x, y = np.asarray(iterations, dtype=np.float64), np.asarray(cpu_ns, dtype=np.float64)
    keep = (x > 0) & (y > 0)
    x, y = x[keep], y[keep]
    if x.size < MIN_POINTS or np.unique(x).size < 2:
        return None
    slope, intercept, _, _ = _sps.theilslopes(y, x)
    return float(max(intercept, 0.0)) if np.isfinite(intercept) else None
