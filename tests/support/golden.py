"""The golden-file convention of every test that compares output with a file.

``assert_golden(path, actual)`` passes when ``path`` holds exactly ``actual``.
On a mismatch it writes ``actual`` beside the expected file, as
``<name>.actual`` (git ignores those), and fails with the diff command to run.
After an intended change, ``PAIRBENCH_UPDATE_GOLDEN=1 make test`` rewrites the
golden files; review them with ``git diff`` before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def assert_golden(path: Path, actual: str) -> None:
    path = Path(path)
    actual_path = path.with_name(path.name + ".actual")
    if os.environ.get("PAIRBENCH_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    if actual == expected:
        actual_path.unlink(missing_ok=True)
        return
    actual_path.write_text(actual, encoding="utf-8")
    missing = "" if expected is not None else " (no golden file yet: PAIRBENCH_UPDATE_GOLDEN=1 writes it)"
    pytest.fail(f"output differs from {path}{missing}; see: diff {path} {actual_path}")
