"""Report test helpers: fixture paths, golden-file comparison, a CLI runner (imported by the tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GOLDEN = HERE / "golden"
ARTIFACTS = HERE.parents[1] / "tests" / "artifacts"
HOSTILE = json.loads((DATA / "compare.json").read_text())["variants"][1]["name"]


def assert_golden(name: str, actual: str) -> None:
    """Compare with ``golden/NAME``; on mismatch write ``golden/NAME.got`` for `diff`."""
    expected_path = GOLDEN / name
    got_path = GOLDEN / f"{name}.got"
    expected = expected_path.read_text(encoding="utf-8") if expected_path.exists() else None
    if actual == expected:
        got_path.unlink(missing_ok=True)
        return
    got_path.write_text(actual, encoding="utf-8")
    pytest.fail(f"{name} differs from the golden file; see: diff {expected_path} {got_path}"
                + ("" if expected is not None else " (no golden file yet)"))


from cli_runner import CliResult, invoke  # noqa: E402,F401 - shared with the CLI tests
