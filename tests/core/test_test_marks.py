"""Every test that starts a process says so: it is marked ``e2e`` (read from the source, not timed).

``make test`` runs every test; ``make test-quick`` leaves out the ``e2e`` and ``slow`` ones, so
a test that starts real programs without its mark would slow the inner loop and, timed under
load, flake in it. A test starts processes when its body, a function or fixture of its module it
uses, a helper of ``tests/support`` it imports or a fixture of a ``conftest.py`` it takes runs a
program: ``subprocess``, ``os.fork``/``exec``/``system`` or pairbench's real executors. A measuring
command run in-process (``cli_runner.invoke``) with the real executor is caught when it runs: the
executor it gets outside an ``e2e`` test fails the test (``tests/conftest.py``).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
STARTS = {
    ("subprocess", name) for name in ("run", "Popen", "call", "check_call", "check_output", "getoutput",
                                      "getstatusoutput")
} | {("os", name) for name in ("system", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve",
                               "execvp", "execvpe", "execl", "execlp", "popen", "spawnv", "spawnl")} | {
    ("pty", "spawn"), ("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell"),
}
REAL_EXECUTORS = {"SpawnerExecutor", "PosixExecutor", "default_executor", "WorkerStart"}
KINDS = {"e2e"}  # the marks that say a test runs real programs

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _called_name(call: ast.Call) -> tuple[str | None, str | None]:
    """(module or object, attribute) of ``a.b(...)``; (None, name) of ``name(...)``."""
    if isinstance(call.func, ast.Attribute):
        owner = call.func.value
        return (owner.id if isinstance(owner, ast.Name) else None), call.func.attr
    if isinstance(call.func, ast.Name):
        return None, call.func.id
    return None, None


def _starts_directly(function: Function) -> bool:
    for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
        owner, name = _called_name(call)
        if (owner, name) in STARTS or name in REAL_EXECUTORS:
            return True
    return False


def _is_fixture(function: Function) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)


def _uses(function: Function) -> tuple[set[str], set[str]]:
    """The names ``function`` refers to (``name``, ``module.name``), and the fixtures it takes (its
    parameters and ``request.getfixturevalue("name")``)."""
    names = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}
    names |= {f"{node.value.id}.{node.attr}" for node in ast.walk(function)
              if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    requested = {call.args[0].value for call in ast.walk(function) if isinstance(call, ast.Call)
                 and _called_name(call)[1] == "getfixturevalue" and call.args and isinstance(call.args[0], ast.Constant)}
    return names, {arg.arg for arg in function.args.args + function.args.kwonlyargs} | requested


def _starters(tree: ast.Module, outside: set[str], fixtures: set[str]) -> set[str]:
    """The functions of ``tree`` that start processes: directly, or through one another, a helper
    of ``outside`` (``name`` or ``module.name``) or a fixture of ``fixtures`` (names of fixtures
    known to start processes elsewhere)."""
    functions: dict[str, Function] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, node)
    own_fixtures = {name for name, function in functions.items() if _is_fixture(function)}
    starting = {name for name, function in functions.items() if _starts_directly(function)}
    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            names, taken = _uses(function)
            if name not in starting and (names & (starting | outside)
                                         or taken & ((starting & own_fixtures) | fixtures)):
                starting.add(name)
                changed = True
    return starting


def _imported(tree: ast.Module, known: dict[str, set[str]]) -> set[str]:
    """The helpers of ``known`` (support module -> its helpers that start processes) that ``tree``
    imports, as it names them: ``name`` (``from module import name``) or ``module.name``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in known:
            found |= {alias.asname or alias.name for alias in node.names if alias.name in known[node.module]}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found |= {f"{alias.asname or alias.name}.{name}" for name in known.get(alias.name, ())}
    return found


@functools.cache
def _support() -> tuple[dict[str, set[str]], set[str]]:
    """The helpers of each tests/support module that start processes, and the fixtures of the
    conftest.py files that do."""
    modules = {path.stem: ast.parse(path.read_text()) for path in sorted((TESTS / "support").glob("*.py"))}
    known: dict[str, set[str]] = {name: set() for name in modules}
    for _ in range(3):  # support modules use one another
        for name, tree in modules.items():
            starting = _starters(tree, _imported(tree, known), set())
            classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)
                       and any(isinstance(f, ast.FunctionDef) and f.name in starting for f in node.body)}
            known[name] = starting | classes  # a class one of whose methods starts processes
    fixtures: set[str] = set()
    for _ in range(2):  # a conftest fixture may take another's
        for path in sorted(TESTS.rglob("conftest.py")):
            tree = ast.parse(path.read_text())
            declared = {node.name for node in ast.walk(tree)
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(node)}
            fixtures |= _starters(tree, _imported(tree, known), fixtures) & declared
    return known, fixtures



def _marks(decorators: list[ast.expr]) -> set[str]:
    marks = set()
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
                and target.value.attr == "mark"):
            marks.add(target.attr)
    return marks


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            return _marks(values)
    return set()


def unmarked_starters(source: str) -> list[str]:
    """The tests of a test module's ``source`` that start processes without an ``e2e`` mark."""
    tree = ast.parse(source)
    if _module_marks(tree) & KINDS:
        return []
    support, fixtures = _support()  # read at the first test, not while every worker collects
    starting = _starters(tree, _imported(tree, support), fixtures)
    missing = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test") and not _marks(node.decorator_list) & KINDS:
            tests = [child for child in node.body if isinstance(child, ast.FunctionDef)]
        elif isinstance(node, ast.FunctionDef):
            tests = [node]
        else:
            continue
        missing += [test.name for test in tests if test.name.startswith("test") and test.name in starting
                    and not _marks(test.decorator_list) & KINDS]
    return missing


@pytest.mark.parametrize("path", sorted(TESTS.rglob("test_*.py")), ids=lambda p: str(p.relative_to(TESTS)))
def test_a_test_that_starts_processes_is_marked_e2e(path):
    assert unmarked_starters(path.read_text()) == []


def test_the_check_finds_an_unmarked_test_that_starts_a_process():
    source = ("import subprocess\n\ndef helper():\n    subprocess.run(['true'])\n\n"
              "def test_a():\n    helper()\n\n@pytest.mark.e2e\ndef test_b():\n    helper()\n\n"
              "def test_c():\n    os.fork()\n\ndef test_d():\n    invoke('show', 'r.json')\n\n"
              "def test_e(postgres_url):\n    pass\n")
    assert unmarked_starters(source) == ["test_a", "test_c", "test_e"]
    assert unmarked_starters("import pytest\npytestmark = pytest.mark.e2e\n" + source) == []
