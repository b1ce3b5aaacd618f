"""Loading the statistics before the first sample, so that nothing of pairbench's runs beside one.

Importing scipy.stats and pairbench's statistics costs about 0.6 s of CPU:
more than everything else a ``compare`` does before its first sample. Until
issue 24 a background thread imported them while the first rounds ran. On a
machine with every CPU busy, that thread took CPU time from the command being
measured: with one other busy process on two CPUs, the samples of a 20 ms
command taken in the first 1.5 s were 1.8 times (``run``) and 3.1 times
(``compare``) slower than later ones (``benchmarks/RESULTS.md``, "pairbench
beside what it measures").

So a measuring command calls :func:`load` in its own thread before its first
sample: the CLI while the machine's activity window passes, and the session,
``bench`` and ``compare_functions`` again before sampling (at no cost once
done). Sampling then never imports, and no thread of pairbench's runs while a
sample runs (``tests/cli/test_startup.py`` checks both). Imports happen in one
thread only, so a Ctrl-C can never catch two threads inside one import."""

from __future__ import annotations

import importlib

MODULES = (
    "pairbench.analysis.comparison",
    "pairbench.analysis.process_cpu",
    "pairbench.stats.descriptive",
    "pairbench.stats.timeseries",
    "pairbench.stats.ranks",
    "pairbench.stats.paired",
    "pairbench.stats.modality",
    "pairbench.stats.shift",
    "pairbench.stats.multiple",
    "pairbench.report.text",
    "pairbench.report.jsonfile",
)
"""What the stopping rule, ``analyse`` and the terminal report import (``analyse`` reaches the
``stats`` submodules through the package's lazy names)."""


def load(modules: tuple[str, ...] = MODULES) -> None:
    """Import ``modules`` now, in this thread (each one once: again it costs a dictionary lookup)."""
    for name in modules:
        importlib.import_module(name)
