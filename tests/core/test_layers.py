"""The layering of ARCHITECTURE.md holds: imports point downward only.

Each module may import only from the pairbench modules its layer allows; in
particular ``stats`` imports nothing but numpy, scipy, the standard library and
``pairbench.errors``, so it can be used as a library on its own.
"""

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "pairbench"

# layer of a module (by its first dotted component under pairbench) -> what it may import
ALLOWED = {
    "errors": set(),
    "units": {"errors"},
    "command": set(),
    "model": {"errors", "command"},
    "stats": {"errors", "stats"},
    "resultfile": {"errors", "model", "command"},
    "environment": {"__init__", "errors", "units"},
    "measure": {"__init__", "errors", "command", "model", "units", "measure", "resultfile", "environment"},
    "verdict": {"errors", "stats", "units"},
    "analysis": {"errors", "model", "stats", "verdict", "units"},
    "comparison": {"errors", "model", "stats", "verdict", "units"},
    "report": {"errors", "model", "stats", "verdict", "units", "analysis", "comparison", "report",
               "resultfile",
               "__init__"},
    "doctor": {"errors", "model", "stats", "units", "environment", "measure", "analysis", "doctor",
               "__init__"},
    "workloads": set(),
    "cli": None,  # the top: may import anything
    "__main__": {"cli"},
    "__init__": set(),
}
THIRD_PARTY_FOR_STATS = {"numpy", "scipy"}


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        yield path, rel.parts[0] if rel.parts[0] != "__init__" or len(rel.parts) > 1 else "__init__"


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "pairbench":
                for alias in node.names:
                    is_module = (SRC / f"{alias.name}.py").exists() or (SRC / alias.name).is_dir()
                    yield f"pairbench.{alias.name}" if is_module else "pairbench"
            else:
                yield node.module


def _pairbench_layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@pytest.mark.parametrize(("path", "layer"), list(_modules()), ids=lambda v: str(v).split("pairbench/")[-1])
def test_module_imports_only_from_lower_layers(path, layer):
    allowed = ALLOWED.get(layer)
    assert layer in ALLOWED, f"{path}: layer {layer!r} is not in the architecture's table"
    if allowed is None:
        return
    for name in _imports(path):
        if name.startswith("pairbench"):
            target = _pairbench_layer(name)
            assert target in allowed, f"{path.relative_to(SRC)} imports {name} (layer {layer} may not)"


@pytest.mark.parametrize("path", sorted((SRC / "stats").rglob("*.py")), ids=lambda p: p.name)
def test_stats_depends_only_on_numpy_scipy_and_the_standard_library(path):
    stdlib = set(sys.stdlib_module_names)
    for name in _imports(path):
        top = name.split(".")[0]
        assert top in stdlib | THIRD_PARTY_FOR_STATS | {"pairbench"}, f"{path.name} imports {name}"
