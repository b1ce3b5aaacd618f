"""setup.py's test of a static program, which decides the wheel's manylinux tag: a program with an
interpreter (dynamically linked) is not static, the spawner as built here is, anything else is not."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from installs import REPO

pytestmark = pytest.mark.e2e  # starts real programs


def _setup_function(name: str):
    """One function of setup.py with the module-level constants it reads (setup.py runs setup() when
    imported, so it is not imported)."""
    tree = ast.parse((REPO / "setup.py").read_text())
    keep = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) and
            any(a.name == "struct" for a in node.names)]
    keep += [node for node in tree.body if isinstance(node, ast.Assign) and "PT_" in ast.unparse(node.targets[0])
             or isinstance(node, ast.FunctionDef) and node.name == name]
    namespace: dict = {}
    exec(compile(ast.Module(keep, []), "setup.py", "exec"), namespace)  # noqa: S102 - our own file
    return namespace[name]


is_static_elf = _setup_function("is_static_elf")


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("elf")
    source = out / "hello.c"
    source.write_text("int main(void) { return 0; }\n")
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (scripts/install-test-deps.sh installs gcc)"
    for name, flags in (("static", ["-static"]), ("dynamic", [])):
        subprocess.run([compiler, *flags, "-o", str(out / name), str(source)], check=True, timeout=120)
    (out / "text").write_text("#!/bin/sh\nexit 0\n")
    (out / "short").write_bytes(b"\x7fELF\x02\x01")
    return {p.name: p for p in out.iterdir()}


def test_a_statically_linked_program_is_static_and_a_dynamic_one_is_not(programs):
    assert is_static_elf(programs["static"])
    assert not is_static_elf(programs["dynamic"])


def test_a_script_and_a_truncated_elf_header_are_not_static(programs):
    assert not is_static_elf(programs["text"]) and not is_static_elf(programs["short"])
