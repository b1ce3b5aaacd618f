"""The layers of the architecture, in their intended order: a module imports only from its own
layer and the layers below it.

From the top: ``cli`` (the only layer that prints and exits), ``sessions`` (a
measurement from settings to result file), ``report`` (renderers), ``analysis`` (every statistic on a run), ``store``
(result files and journals, joining and splitting them), ``measure`` (targets,
executors, the sampler), ``environment`` (reading and judging the machine),
``stats`` (pure statistics), ``worker`` (what runs inside a benchmark process:
the Python worker and the wire codec), and the vocabulary (model, settings,
notes, verdict, units, command, errors, and ``frozen``, how records are made). ``stats`` takes from
the vocabulary only ``errors``, ``notes`` and ``frozen``, so it can be used as a library on its own,
with numpy and scipy.

A module imported by its name (``importlib.import_module("pairbench.x")``, or a table of names a
loader imports) is an import too: every string that names a module of the package counts as one.
"""

import ast
import functools
import re
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "pairbench"
TEST_SUPPORT = SRC.parents[1] / "tests" / "support"

LAYERS = ("cli", "sessions", "report", "analysis", "store", "measure", "environment", "stats",
          "worker", "vocabulary")
VOCABULARY = {"errors", "units", "command", "notes", "settings", "parsers", "parameters", "model", "verdict", "harness_registry",
              "held_signals", "collector", "outputs", "limits", "frozen", "__init__"}
LAYER_OF = ({name: "vocabulary" for name in VOCABULARY} | {layer: layer for layer in LAYERS[:-1]}
            | {"pytest_plugin": "cli", "api": "cli", "blas_threads": "cli"})
MODULE_NAME = re.compile(r"pairbench(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")
NOT_IMPORTED_NAMES = {"__init__.py": "PEP 562: the package's public names, loaded on first use",
                      "harness_registry.py": "the modules a worker process runs (python -m), never imported here"}
IMPORTS_BY_NAME = {"__init__.py", "stats/__init__.py", "cli/app.py", "stats/_lazy.py"}
"""The lazy loaders: the only modules that call ``importlib.import_module`` (the package's public
names, the statistics' submodules, the commands, scipy's modules at the first statistic that needs
them)."""
STATS_MAY_USE = {"errors", "notes", "frozen"}
THIRD_PARTY_FOR_STATS = {"numpy", "scipy"}


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        yield path, rel.parts[0] if len(rel.parts) > 1 or rel.parts[0] != "__init__" else "__init__"


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The syntax tree of ``path``, parsed once for the session: every module is read by several
    tests here (the trees are only walked, never changed)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path, source: str | None = None, *, by_name: bool = True):
    """The absolute names of the modules ``path`` imports (relative imports resolved), and with
    ``by_name`` those its strings name (``"pairbench.report.text"``, ``"pairbench.api:compare"``)."""
    tree = ast.parse(source) if source is not None else _tree(path)
    if by_name and str(path.relative_to(SRC)) not in NOT_IMPORTED_NAMES:
        yield from _named(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module.startswith("pairbench") and (SRC.joinpath(*module.split(".")[1:]) / "__init__.py").exists():
                yield from _from_package(module, node.names)
            else:
                yield module


def _named(tree: ast.AST):
    """The modules of the package the string constants of ``tree`` name (a package's data file,
    ``pairbench.toml``, names none)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.fullmatch(node.value):
            module = node.value.partition(":")[0]
            if _module_path(module) is not None:
                yield module


def _module_path(module: str) -> Path | None:
    """The file of ``module`` (``pairbench.a.b``), or None when the package has no such module."""
    base = SRC.joinpath(*module.split(".")[1:])
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.exists()), None)


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


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rank(top: str) -> int:
    return LAYERS.index(LAYER_OF[top])


@pytest.mark.parametrize(("path", "top"), list(_modules()), ids=lambda v: str(v).split("pairbench/")[-1])
def test_module_imports_only_from_its_layer_and_those_below(path, top):
    assert top in LAYER_OF or top == "__main__", f"{path}: {top!r} belongs to no layer of the architecture"
    if top == "__main__":
        return
    for name in _imports(path):
        if not name.startswith("pairbench"):
            continue
        target = _top(name)
        assert target in LAYER_OF, f"{path.relative_to(SRC)} imports {name}, which belongs to no layer"
        if top == "stats":
            assert target in STATS_MAY_USE | {"stats"}, f"{path.relative_to(SRC)} imports {name}"
        assert _rank(target) >= _rank(top), (
            f"{path.relative_to(SRC)} ({LAYER_OF[top]}) imports {name} ({LAYER_OF[target]}), a higher layer")


def _module_name(path: Path) -> str:
    parts = ["pairbench", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (module -> modules it imports): its strongly connected
    components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            child = next((w for w in edges if w not in index or w in stack), None)
            if child is not None and child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
                continue
            if child is not None:
                low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_modules_import_each_other_in_a_circle():
    """A circle (``store/resultfile`` -> ``journal`` -> ``resultfile``) hides which module is the
    lower one; every module's imports, at module level or inside functions, form no circle."""
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph = {name: {i for i in _imports(path, by_name=False) if i in modules and i != name}
             for name, path in modules.items()}
    assert _cycles(graph) == []


def test_a_circle_of_imports_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("path", sorted((SRC / "stats").rglob("*.py")), ids=lambda p: p.name)
def test_stats_depends_only_on_numpy_scipy_the_standard_library_errors_and_notes(path):
    stdlib = set(sys.stdlib_module_names)
    for name in _imports(path):
        top = name.split(".")[0]
        assert top in stdlib | THIRD_PARTY_FOR_STATS | {"pairbench"}, f"{path.name} imports {name}"


@pytest.mark.parametrize(("path", "top"), [(p, t) for p, t in _modules() if t not in ("stats", "analysis")],
                         ids=lambda v: str(v).split("pairbench/")[-1])
def test_statistics_are_computed_in_stats_and_analysis_only(path, top):
    """scipy is reached through ``stats`` (checked against R) by ``analysis``; the doctor, the
    sessions, the reports and the measuring import none of it themselves."""
    for name in _imports(path):
        assert name.split(".")[0] != "scipy", f"{path.relative_to(SRC)} imports {name}"


@pytest.mark.parametrize("path", sorted((SRC / "report").rglob("*.py")), ids=lambda p: p.name)
def test_renderers_compute_no_statistics_and_read_no_result_file(path):
    """Renderers take a run and its analysis: no statistics, no comparison logic, no file format."""
    forbidden = ("pairbench.stats", "pairbench.analysis.comparison", "pairbench.analysis.summary",
                 "pairbench.analysis.rules", "pairbench.analysis.stopping", "pairbench.store")
    for name in _imports(path):
        assert not name.startswith(forbidden), f"report/{path.name} imports {name}"


@pytest.mark.parametrize("path", sorted((SRC / "sessions").rglob("*.py")), ids=lambda p: p.name)
def test_sessions_compute_no_statistics_and_render_nothing(path):
    """A session measures and saves: every statistic on a run is ``analyse``'s, every word the
    report layer's (the result file's records are ``analysis.derived``'s, notes as data)."""
    for name in _imports(path):
        assert not name.startswith(("pairbench.stats", "pairbench.report")), f"sessions/{path.name} imports {name}"


@pytest.mark.parametrize(("path", "top"), list(_modules()), ids=lambda v: str(v).split("pairbench/")[-1])
def test_product_code_imports_no_test_support(path, top):
    """Test doubles (``FakeExecutor``, ``FakeWorkers``) live with the tests: product code offers the
    seams they fill (``main(executor_factory=..., workers=...)``) and never imports them."""
    support = {p.stem for p in TEST_SUPPORT.glob("*.py")} | {"tests", "conftest"}
    for name in _imports(path):
        assert name.split(".")[0] not in support, f"{path.relative_to(SRC)} imports {name}, a test's support"


@pytest.mark.parametrize(("source", "imported"), [
    ("from ..cli import app", ["pairbench.cli.app"]),
    ("from .. import cli, errors", ["pairbench.cli", "pairbench.errors"]),
    ("from . import _rmath", ["pairbench.stats._rmath"]),
    ("from .descriptive import describe", ["pairbench.stats.descriptive"]),
    ("from ..report.html import render_html", ["pairbench.report.html"]),
])
def test_relative_imports_are_resolved_to_the_modules_they_name(source, imported):
    assert list(_imports(SRC / "stats" / "paired.py", source)) == imported


@pytest.mark.parametrize(("path", "top"), list(_modules()), ids=lambda v: str(v).split("pairbench/")[-1])
def test_only_the_lazy_loaders_import_modules_by_name(path, top):
    """Anything else imports with ``import``, which every test here reads."""
    tree = _tree(path)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr == "import_module")
        or (isinstance(n.func, ast.Name) and n.func.id in ("import_module", "__import__")))]
    assert not calls or str(path.relative_to(SRC)) in IMPORTS_BY_NAME, f"{path.relative_to(SRC)} imports by name"


def test_every_module_a_string_names_exists():
    """A lazy table naming a module that was moved or renamed fails here, not on first use."""
    for path, _ in _modules():
        for node in ast.walk(_tree(path)):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if MODULE_NAME.fullmatch(text) and not text.startswith("pairbench.toml"):
                module, _, attribute = text.partition(":")
                assert _module_path(module) is not None, f"{path.relative_to(SRC)} names {text}, no module"


def test_an_import_by_name_from_a_higher_layer_is_flagged():
    source = 'import importlib\n\ndef f():\n    return importlib.import_module("pairbench.cli.app")\n'
    names = list(_imports(SRC / "stats" / "paired.py", source))
    assert "pairbench.cli.app" in names and _rank(_top("pairbench.cli.app")) < _rank("stats")


def test_an_import_from_a_higher_layer_is_flagged():
    names = list(_imports(SRC / "analysis" / "summary.py", "from ..report import text"))
    assert [_rank(_top(n)) for n in names] == [LAYERS.index("report")] < [_rank("analysis")]
