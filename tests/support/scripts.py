"""The scripts of ``benchmarks/`` as modules, for the tests of their pure parts (they are scripts, not
a package: each is loaded from its file once, under its own name, so one that imports another, as
``microbench`` and ``suites`` import ``calibration``, finds it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def benchmark_script(name: str):
    """The module of ``benchmarks/NAME.py`` (loaded once per test process)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(BENCHMARKS))  # for the scripts it imports in turn (``from calibration import ...``)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module
