"""The Python harness: in-process benchmarks declared with ``@pairbench.benchmark``, served to
pairbench by a worker (``python -m pairbench.harness FILE_OR_DIR...``).

``registry`` declares and names benchmarks, ``discovery`` finds and imports
benchmark files, ``worker`` speaks the worker protocol (``docs/worker-protocol.md``).
Standard library and ``pairbench.protocol`` only, so that a worker starts fast:
no numpy, no scipy, no click.
"""

from pairbench.harness.discovery import collect
from pairbench.harness.registry import Benchmark, HarnessError, benchmark

__all__ = ["Benchmark", "HarnessError", "benchmark", "collect"]
