"""The tree as committed: no file keeps a merge's conflict markers (a docstring holding them is valid
Python, so nothing else would fail; one reached ``pairbench history --help`` on 2026-11-26)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # starts real programs

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(rb"^(<<<<<<< |>>>>>>> |\|\|\|\|\|\|\| )", re.MULTILINE)


def _tracked_files() -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout (an installed sdist): nothing was merged here")
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_keeps_merge_conflict_markers():
    marked = []
    for path in _tracked_files():
        if path.is_file() and not path.is_symlink() and MARKER.search(path.read_bytes()):
            marked.append(str(path.relative_to(ROOT)))
    assert marked == []


def test_no_two_test_modules_share_a_name():
    # The test folders are not packages: two modules of one basename stop the collection of the
    # whole suite ("import file mismatch"), as a rename once did.
    seen: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
