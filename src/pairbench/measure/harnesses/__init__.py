"""Harness adapters: benchmark programs of other harnesses, driven one benchmark at a time.

``pairbench bench`` measures two kinds of benchmark program through one suite
driver: pairbench's own *workers* (``measure.worker``: long-lived processes
that time a loop when asked) and the programs of the harnesses people already
use, here. Each adapter knows one harness: how to list a program's benchmarks
(:meth:`Adapter.discover`), how to run one of them once, short, with a filter
that matches it alone (:meth:`Adapter.invocation`), and how to read the time
the harness measured around its own loop (:meth:`Adapter.read`). A
:class:`~pairbench.measure.harnesses.target.HarnessTarget` is the sampler's
view of that: one execution is one invocation, and yields one row.

=====================  ============================================================
``gbench``             Google Benchmark binaries (``measure.harnesses.gbench``)
``go``                 Go test binaries from ``go test -c`` (``measure.harnesses.gotest``)
``criterion``          criterion.rs bench binaries (``measure.harnesses.criterion``)
``pytest-benchmark-    pytest tests using the ``benchmark`` fixture, a pytest run per
processes``            sample (``...pytest_benchmark``); ``pytest-benchmark`` alone
                       serves them from workers (``worker.pytest_benchmark``)
=====================  ============================================================

Each is an entry of ``pairbench.harness_registry.REGISTRY`` (its words, advice, marks,
budget) bound to its adapter class in ``adapters.ADAPTERS``. The parsers of their output formats are also what
``pairbench import`` reads saved results with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pairbench.measure.harnesses.base import Discovery, Invocation, Program, Report


class Adapter(Protocol):
    """One harness: listing a program's benchmarks, running one, reading its report."""

    name: str

    def discover(self, program: Program, scratch: Path, timeout_s: float | None) -> Discovery:
        """The program's benchmarks (``DiscoveryError`` if it cannot list them)."""
        ...

    def invocation(self, program: Program, name: str, iterations: int | None, sample_time_ns: int,
                   scratch: Path) -> Invocation:
        """The command that runs benchmark ``name`` once: ``iterations`` of it exactly (when the
        harness takes a count, else None) or about ``sample_time_ns`` of it."""
        ...

    def read(self, invocation: Invocation, output: bytes) -> Report:
        """The benchmark's report after the invocation exited 0 (``output``: its standard output and
        error); ``NoResult`` or ``FormatError`` when there is none that can be read."""
        ...
