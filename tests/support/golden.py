"""The golden-file convention of every test that compares output with a file.

``assert_golden(path, actual)`` passes when ``path`` holds ``actual``: text
exactly; a JSON or CSV file (by its suffix) value by value, every number
within a relative ``RELATIVE_TOLERANCE`` (numbers written at full precision
differ in their last digits between numpy builds and CPUs: a SIMD path sums in
another order) and everything else exactly. On a mismatch it writes ``actual``
beside the expected file, as ``<name>.actual`` (git ignores those), and fails
with the first difference and the diff command to run. After an intended
change, ``PAIRBENCH_UPDATE_GOLDEN=1 make test`` rewrites the golden files;
review them with ``git diff`` before committing.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path

import pytest

RELATIVE_TOLERANCE = 1e-9
ABSOLUTE_TOLERANCE = 1e-12  # for numbers that are 0 on one host and 1e-17 on another


def assert_golden(path: Path, actual: str) -> None:
    path = Path(path)
    actual_path = path.with_name(path.name + ".actual")
    if os.environ.get("PAIRBENCH_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    difference = "no golden file yet: PAIRBENCH_UPDATE_GOLDEN=1 writes it" if expected is None else \
        first_difference(path.suffix, expected, actual)
    if difference is None:
        actual_path.unlink(missing_ok=True)
        return
    actual_path.write_text(actual, encoding="utf-8")
    pytest.fail(f"output differs from {path} ({difference}); see: diff {path} {actual_path}")


def first_difference(suffix: str, expected: str, actual: str) -> str | None:
    """Where ``actual`` first differs from ``expected`` (None: it does not), as the convention
    compares a file with that suffix."""
    if expected == actual:
        return None
    if suffix == ".json":
        return _values_differ(json.loads(expected), json.loads(actual), "$")
    if suffix == ".csv":
        return _values_differ(_cells(expected), _cells(actual), "row")
    return "the text differs"


def _cells(text: str) -> list[list[object]]:
    """CSV rows, with each cell that reads as a number as that number."""
    return [[_number_or_text(cell) for cell in row] for row in csv.reader(io.StringIO(text))]


def _number_or_text(cell: str) -> object:
    try:
        return float(cell)
    except ValueError:
        return cell


def _values_differ(expected: object, actual: object, where: str) -> str | None:
    if _is_number(expected) and _is_number(actual):
        if math.isclose(expected, actual, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE) or \
                (math.isnan(expected) and math.isnan(actual)):
            return None
        return f"{where}: {actual!r}, expected {expected!r}"
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            return f"{where}: keys {list(actual)}, expected {list(expected)}"
        return _first(_values_differ(expected[k], actual[k], f"{where}.{k}") for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where}: {len(actual)} items, expected {len(expected)}"
        return _first(_values_differ(e, a, f"{where}[{i}]") for i, (e, a) in enumerate(zip(expected, actual, strict=True)))
    return None if expected == actual and type(expected) is type(actual) else \
        f"{where}: {actual!r}, expected {expected!r}"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _first(differences) -> str | None:
    return next((d for d in differences if d is not None), None)
