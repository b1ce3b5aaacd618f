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
    "environment": {"__init__", "errors", "units", "environment"},
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


def _imports(path: Path, source: str | None = None):
    """The absolute names of the modules ``path`` imports (relative imports resolved)."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module == "pairbench" or (node.level and not node.module):
                yield from _from_package(module, node.names)
            else:
                yield module


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """``node.module`` as an absolute name: ``from ..x import y`` in pairbench/a/b.py is pairbench.x."""
    if node.level == 0:
        return node.module
    package = ["pairbench", *path.relative_to(SRC).parent.parts]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _from_package(package: str, names):
    """``from PACKAGE import a, b``: each name that is a module of it, else the package itself."""
    folder = SRC.joinpath(*package.split(".")[1:])
    for alias in names:
        is_module = (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir()
        yield f"{package}.{alias.name}" if is_module else package


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



@pytest.mark.parametrize(("source", "imported"), [
    ("from ..cli import app", ["pairbench.cli"]),
    ("from .. import cli, errors", ["pairbench.cli", "pairbench.errors"]),
    ("from . import _rmath", ["pairbench.stats._rmath"]),
    ("from .descriptive import describe", ["pairbench.stats.descriptive"]),
    ("from ..report.html import render_html", ["pairbench.report.html"]),
])
def test_relative_imports_are_resolved_to_the_modules_they_name(source, imported):
    assert list(_imports(SRC / "stats" / "paired.py", source)) == imported


def test_a_relative_import_from_a_higher_layer_is_flagged():
    names = list(_imports(SRC / "stats" / "paired.py", "from ..cli import app"))
    assert [_pairbench_layer(n) for n in names] == ["cli"] and "cli" not in ALLOWED["stats"]
