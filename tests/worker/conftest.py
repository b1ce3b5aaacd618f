"""Fixtures of the harness's tests: benchmark files written into a temporary tree, and imports
that leave ``sys.path`` and ``sys.modules`` as they found them."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

RECORDER = '''
"""Appends what a benchmark observed, as JSON lines, to the file $HARNESS_RECORD."""
import json
import os


def record(**observed):
    with open(os.environ["HARNESS_RECORD"], "a") as file:
        file.write(json.dumps(observed) + "\\n")
'''


@pytest.fixture
def write(tmp_path):
    """``write("dir/bench_x.py", source)``: the file under ``tmp_path``, source dedented; its path."""

    def write_file(relative: str, source: str = "") -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return path

    return write_file


@pytest.fixture
def recorded(tmp_path, write):
    """A ``recorder.py`` module beside the benchmark files, and the records it wrote so far:
    ``recorded.env`` is the environment for the worker, ``recorded()`` the list of records."""
    write("recorder.py", RECORDER)
    path = tmp_path / "records.jsonl"

    def records() -> list[dict]:
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    records.env = {"HARNESS_RECORD": str(path)}
    return records


@pytest.fixture
def isolated_imports(monkeypatch, tmp_path):
    """Imports of benchmark files inside the test do not outlive it: ``sys.path`` is restored and
    the modules imported from ``tmp_path`` are forgotten."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        if file.startswith(str(tmp_path)):
            del sys.modules[name]
