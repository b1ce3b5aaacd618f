"""The harnesses pairbench drives and reads, one entry each: every trait of a harness in one place.

``bench --harness`` and ``import --format`` take these names; detection reads
the marks, the reports their words and advice, ``bench`` whether a harness's
benchmarks are Python files, and which adapter (``measure.harnesses``) drives
its programs. Adding a harness is its adapter, an entry here and their tests
(``docs/architecture.md``, "Adding a harness adapter"); ``pairbench import`` also
needs a reader of its saved results (``store.imports.READERS``). Standard
library only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Harness:
    """A harness: its name (as options take it), how its users know it, how to advise them, and
    how pairbench recognises and runs its programs."""

    name: str
    words: str  # "Google Benchmark": in messages and report headers
    setup_advice: str = ""  # how to move preparation out of what the harness times
    keep_advice: str = ""  # how to keep a result the compiler would otherwise remove
    markers: tuple[bytes, ...] = ()  # bytes only a program of this harness holds (``detect``)
    python: bool = False  # its benchmarks may be Python files
    adapter: str | None = None  # "module:Class" driving its programs; None: the worker protocol, or none
    bench: bool = True  # ``bench`` measures its programs (hyperfine's results are only imported)
    imports: bool = False  # ``pairbench import`` reads its saved results
    worker: bool = False  # ``bench`` serves its benchmarks from long-lived workers (the worker protocol)
    python_worker: tuple[str, str] = ()  # the module serving its Python files in a worker, and its words

    def make_adapter(self):
        """A new adapter for this harness (``measure.harnesses.Adapter``)."""
        import importlib

        module, _, name = (self.adapter or "").partition(":")
        return getattr(importlib.import_module(module), name)()


PAIRBENCH = "pairbench"
_ADAPTERS = "pairbench.measure.harnesses"

REGISTRY: dict[str, Harness] = {h.name: h for h in (
    Harness("hyperfine", "hyperfine", bench=False, imports=True),
    Harness("gbench", "Google Benchmark",
            "move preparation before the `for (auto _ : state)` loop, or pause the timer around it",
            "pass the result to benchmark::DoNotOptimize(), or call benchmark::ClobberMemory() after writes",
            (b"benchmark_filter", b"_ZN9benchmark"), adapter=f"{_ADAPTERS}.gbench:Gbench", imports=True),
    Harness("go", "go test -bench", "move preparation before the b.N loop and call b.ResetTimer() after it",
            "keep the result alive (runtime.KeepAlive, or assign it to a package-level variable)",
            (b"test.benchtime",), adapter=f"{_ADAPTERS}.gotest:GoTest", imports=True),
    Harness("criterion", "criterion",
            "move preparation out of the closure given to iter (iter_batched takes an untimed setup)",
            "pass the input and the result through std::hint::black_box (criterion::black_box)",
            (b"Criterion.rs", b"CRITERION_HOME"), adapter=f"{_ADAPTERS}.criterion:Criterion", imports=True),
    Harness("pytest-benchmark", "pytest-benchmark",
            "move preparation out of the benchmarked function (benchmark.pedantic takes a setup)",
            "return the result from the benchmarked function", python=True, imports=True, worker=True,
            python_worker=("pairbench.worker.pytest_benchmark", "pytest-benchmark worker")),
    Harness("pytest-benchmark-processes", "pytest-benchmark",
            "move preparation out of the benchmarked function (benchmark.pedantic takes a setup)",
            "return the result from the benchmarked function", python=True,
            adapter=f"{_ADAPTERS}.pytest_benchmark:PytestBenchmark"),
    Harness(PAIRBENCH, "pairbench workers", "move preparation out of the timed body, into PAIRBENCH_SETUP or setup=",
            "pass the result to pairbench_keep() (C), return it (Python), or use black_box (Rust) or "
            "runtime.KeepAlive (Go)", (b"PAIRBENCH_WORKER_FDS",), python=True, worker=True,
            python_worker=("pairbench.worker", "python -m pairbench.worker")),
)}

HARNESS_CHOICES = tuple(name for name, h in REGISTRY.items() if h.bench)
"""What ``bench --harness`` takes."""
IMPORT_FORMATS = tuple(name for name, h in REGISTRY.items() if h.imports)
"""What ``import --format`` takes."""
WORKER_HARNESSES = tuple(name for name, h in REGISTRY.items() if h.worker)
"""The harnesses whose benchmarks ``bench`` serves from long-lived worker processes (the worker
protocol), timed inside them; the others run a program per sample."""


def harness(name: str) -> Harness:
    """The entry of ``name``; an unknown name (from a stored file) gets its name as its words."""
    return REGISTRY.get(name) or Harness(name, name)


def words(name: str) -> str:
    """The harness as users know it: "Google Benchmark", "go test -bench"."""
    return harness(name).words
