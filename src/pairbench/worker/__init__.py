"""The Python harness: in-process benchmarks declared with ``@pairbench.benchmark``, served to
pairbench by a worker (``python -m pairbench.worker FILE_OR_DIR...``).

``registry`` declares and names benchmarks, ``discovery`` finds and imports
benchmark files, ``worker`` speaks the worker protocol (``docs/worker-protocol.md``).
Standard library and ``pairbench.worker.protocol`` only, so that a worker starts fast:
no numpy, no scipy, no click.
"""

from pairbench.worker.discovery import collect
from pairbench.worker.registry import Benchmark, HarnessError, benchmark

__all__ = ["Benchmark", "HarnessError", "benchmark", "collect"]
