"""``scripts/seed_pycache.py``: the bytecode pip wrote, put where a ``PYTHONPYCACHEPREFIX`` run reads
it, and the project's own compiled there; checked by a real interpreter's import with the prefix."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # real interpreters import with the prefix

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "seed_pycache.py"


def _script():
    spec = importlib.util.spec_from_file_location("seed_pycache", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _imported_from_cache(root: Path, prefix: Path, name: str) -> str:
    """What ``python -v`` says of importing ``name`` from ``root`` with the prefix: the code object's
    source ("matches" a cached file, or "code object from" a compile)."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run = subprocess.run([sys.executable, "-v", "-c", f"import {name}"], env=env, capture_output=True,
                         text=True, timeout=60)
    return "\n".join(line for line in run.stderr.splitlines() if name in line)


def test_pips_bytecode_is_linked_where_the_prefix_reads_it_and_used(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "pycache_prefix", sys.pycache_prefix)  # seed() sets it
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (site / "lone.py").write_text("X = 2\n")  # no bytecode: nothing to link
    pip_wrote = site / "pkg" / "__pycache__" / f"__init__.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(site / "pkg" / "__init__.py"), cfile=str(pip_wrote))
    prefix = tmp_path / "prefix"

    assert _script().seed(prefix, [site]) == 1
    sys.pycache_prefix = str(prefix)
    target = Path(importlib.util.cache_from_source(str(site / "pkg" / "__init__.py")))
    assert target.read_bytes() == pip_wrote.read_bytes()
    assert _script().seed(prefix, [site]) == 0  # once: what is there stays
    assert "matches" in _imported_from_cache(site, prefix, "pkg")


def test_the_projects_own_directories_are_compiled_into_the_prefix(tmp_path):
    own = tmp_path / "src"
    own.mkdir()
    (own / "mine.py").write_text("Y = 3\n")
    prefix = tmp_path / "prefix"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    run = subprocess.run([sys.executable, str(SCRIPT), str(prefix), str(own)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("seeded ")
    assert list(prefix.rglob("mine.*.pyc"))
    assert "matches" in _imported_from_cache(own, prefix, "mine")
    assert not (own / "__pycache__").exists()  # nothing written beside the sources
