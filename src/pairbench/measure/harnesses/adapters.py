"""The adapter that drives each harness's programs, by the harness's name (``Harness.name``).

Every other trait of a harness is data in ``pairbench.harness_registry``; this is where its name
meets the code that runs its programs (a harness served by pairbench's workers has none).
"""

from __future__ import annotations

from pairbench.measure.harnesses import Adapter
from pairbench.measure.harnesses.criterion import Criterion
from pairbench.measure.harnesses.gbench import Gbench
from pairbench.measure.harnesses.gotest import GoTest
from pairbench.measure.harnesses.pytest_benchmark import PytestBenchmark

ADAPTERS: dict[str, type] = {adapter.name: adapter for adapter in (Gbench, GoTest, Criterion, PytestBenchmark)}


def adapter_for(harness: str) -> Adapter:
    """A new adapter for the programs of ``harness`` (``KeyError``: a harness with no adapter)."""
    return ADAPTERS[harness]()
