"""scipy's modules, imported at their first use.

Importing ``scipy.stats`` costs 0.5-0.8 s of CPU. A statistic that needs scipy
reaches it through this stand-in, so that it is imported only when such a
statistic is first computed, after the last sample of a measuring command. A
run's or compare's own summary needs none of scipy (``stats/_special.py`` has
its special functions; ``tests/cli/test_startup.py``).
"""

from __future__ import annotations

import importlib


class LazyModule:
    """A module imported when one of its attributes is first read."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        module = importlib.import_module(self._name)
        self.__dict__.update(vars(module))  # later reads are plain attribute reads
        return getattr(module, attribute)


scipy_stats = LazyModule("scipy.stats")
