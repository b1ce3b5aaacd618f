"""The harnesses pairbench drives and reads, one entry each: every trait of a harness in one place.

``bench --harness`` and ``import --format`` take these names; detection reads
the marks, the reports their words and advice, ``bench`` whether a harness's
benchmarks are Python files and its default budget, the validation whether its
runtime collects garbage. The adapter that drives a harness's programs is
bound to its name in ``measure.harnesses.ADAPTERS``, the reader of its saved
results in ``store.imports.READERS``. Adding a harness is its adapter, an
entry here and their tests (``docs/architecture.md``, "Adding a harness
adapter"). Standard library only: data, nothing imported.
"""

from __future__ import annotations

from pairbench.frozen import frozen


@frozen
class Harness:
    """A harness: its name (as options take it), how its users know it, how to advise them, how
    pairbench recognises and runs its programs, and what its runtime does to a measurement."""

    name: str
    words: str  # "Google Benchmark": in messages and report headers
    setup_advice: str = ""  # how to move preparation out of what the harness times
    keep_advice: str = ""  # how to keep a result the compiler would otherwise remove
    markers: tuple[bytes, ...] = ()  # bytes only a program of this harness holds (``detect``)
    python: bool = False  # its benchmarks may be Python files
    python_marker: str = ""  # a regular expression a Python benchmark file of this harness matches (``detect``)
    bench: bool = True  # ``bench`` measures its programs (hyperfine's results are only imported)
    imports: bool = False  # ``pairbench import`` reads its saved results
    worker: bool = False  # ``bench`` serves its benchmarks from long-lived workers (the worker protocol)
    python_worker: tuple[str, str] = ()  # the module serving its Python files in a worker, and its words
    max_time: str | None = None  # ``bench``'s default --max-time for its benchmarks (None: bench's own)
    collector: str | None = None  # the garbage-collected runtime its benchmarks run in ("Go"), None: none
    settings: tuple[str, ...] = ()  # metrics it reports that are its own settings, not the code's (no table)


PAIRBENCH = "pairbench"
GO = "go"  # the Go harness's name (its module's NAME), here for the metric tables, which must not load that layer
PYTEST_FIXTURE = r"def\s+test\w*\s*\([^)]*\bbenchmark\b"  # a test that takes pytest-benchmark's fixture

REGISTRY: dict[str, Harness] = {h.name: h for h in (
    Harness("hyperfine", "hyperfine", bench=False, imports=True),
    Harness("gbench", "Google Benchmark",
            "move preparation before the `for (auto _ : state)` loop, or pause the timer around it",
            "pass the result to benchmark::DoNotOptimize(), or call benchmark::ClobberMemory() after writes",
            (b"benchmark_filter", b"_ZN9benchmark"), imports=True),
    # Go and criterion: what their users spend by default on one benchmark, both sides: benchstat's
    # recommended -count 10 at Go's 1 s -test.benchtime is 10 s a side; criterion's 3 s warm-up and 5 s
    # of measurement, 8 s a side. A round of a Go benchmark repeated in its processes (--repetitions)
    # costs about 0.3 s and a criterion invocation about 0.1 s, so 5 s stopped most at the 32 rounds of
    # --min-runs, short of the rounds a verdict of equivalence within +-1% needs (RESULTS.md, "Budgets
    # that follow the peers'"); a benchmark still stops once decided
    Harness(GO, "go test -bench", "move preparation before the b.N loop and call b.ResetTimer() after it",
            "keep the result alive (runtime.KeepAlive, or assign it to a package-level variable)",
            (b"test.benchtime",), imports=True, max_time="20s", collector="Go"),
    Harness("criterion", "criterion",
            "move preparation out of the closure given to iter (iter_batched takes an untimed setup)",
            "pass the input and the result through std::hint::black_box (criterion::black_box)",
            (b"Criterion.rs", b"CRITERION_HOME"), imports=True, max_time="16s",
            settings=("samples",)),  # its samples a run: what pairbench asks for (--sample-size)
    # pytest-benchmark: each block of rounds starts two pytest sessions (a second or two each), and a
    # verdict needs about a dozen blocks, as the pytest fixture's comparison does (benchmarks/RESULTS.md)
    Harness("pytest-benchmark", "pytest-benchmark",
            "move preparation out of the benchmarked function (benchmark.pedantic takes a setup)",
            "return the result from the benchmarked function", python=True, python_marker=PYTEST_FIXTURE,
            imports=True, worker=True, python_worker=("pairbench.worker.pytest_benchmark", "pytest-benchmark worker"),
            max_time="60s", collector="Python"),
    Harness("pytest-benchmark-processes", "pytest-benchmark",
            "move preparation out of the benchmarked function (benchmark.pedantic takes a setup)",
            "return the result from the benchmarked function", python=True, collector="Python"),
    Harness(PAIRBENCH, "pairbench workers", "move preparation out of the timed body, into PAIRBENCH_SETUP or setup=",
            "pass the result to pairbench_keep() (C), return it (Python), or use black_box (Rust) or "
            "runtime.KeepAlive (Go)", (b"PAIRBENCH_WORKER_FDS",), python=True,
            python_marker=r"\bpairbench\s*\.\s*benchmark\b|from\s+pairbench\s+import\s+[^\n]*\bbenchmark\b",
            worker=True, python_worker=("pairbench.worker", "python -m pairbench.worker")),
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
