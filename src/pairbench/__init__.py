"""pairbench: benchmark commands with interleaved, randomized pairs and verdicts you can trust.

The statistics are usable on their own: ``from pairbench import stats``.
In-process benchmarks are declared with ``@pairbench.benchmark``.
"""

__version__ = "0.2.0"

_LAZY = {
    "benchmark": "pairbench.worker.registry:benchmark",
    "compare_functions": "pairbench.api:compare_functions",
}
"""The public names loaded on first use (PEP 562), as ``name -> "module:attribute"``, so that
``import pairbench`` stays cheap: a benchmark worker must not load numpy, scipy or click."""

__all__ = ["__version__", *_LAZY]  # the lazy names are public API too


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'pairbench' has no attribute {name!r}")
    import importlib

    module_name, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
