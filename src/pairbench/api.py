"""What Python callers use: :func:`compare_functions`, two functions compared in this process.

Like the command line and the pytest plugin, an entry point on top of the
sessions: it measures through ``sessions.functions`` and writes the result
document (``sessions.result.save``).
"""

from __future__ import annotations

from collections.abc import Callable

from pairbench.analysis import Comparison
from pairbench.sessions.functions import measure_functions
from pairbench.sessions.result import save


def compare_functions(baseline: Callable, candidate: Callable, *args, max_time: str | None = None,
                      alpha: float | None = None, threshold: float | None = None, sample_time: str | None = None,
                      seed: int | None = None, json_path: str | None = None, **kwargs) -> Comparison:
    """Is ``candidate(*args, **kwargs)`` faster or slower than ``baseline(*args, **kwargs)``?

    Returns the comparison record every pairbench output is made of: ``verdict``
    (``.verdict`` is "faster", "slower", "equivalent" or "inconclusive"),
    ``effect`` (the median change in percent with its interval), ``rounds`` and
    ``notes``. An exception raised by either function propagates. With
    ``json_path`` the run is written as a result document that ``pairbench
    show`` and ``pairbench report`` read. The budget (``max_time``, 10 s), the
    error rate (``alpha``), the smallest change that matters (``threshold``, in
    percent) and a sample's length (``sample_time``, 1 ms; raised, with a
    ``sample-time-raised`` note, until timing a sample costs at most 1% of it)
    default as for every in-process comparison (``settings.USE_DEFAULTS["functions"]``).

    >>> result = compare_functions(sorted, lambda xs: sorted(xs, reverse=True), list(range(100)))
    >>> result.verdict.verdict in ("faster", "slower", "equivalent", "inconclusive")
    True
    """
    given = {"max_time": max_time, "alpha": alpha, "threshold": threshold, "sample_time": sample_time,
             "seed": seed}
    run, analysis = measure_functions(baseline, candidate, args, kwargs,
                                      **{key: value for key, value in given.items() if value is not None})
    if json_path:
        save(run, analysis, json_path)
    return analysis.comparisons[0]
