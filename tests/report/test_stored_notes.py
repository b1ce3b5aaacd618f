"""A note read from a file is worded when its figures allow, and shown as its code and figures when
they are missing or malformed: no report crashes on a stored note (issue 14, item 18)."""

from __future__ import annotations

import json

import pytest
from report_helpers import DATA, invoke

from pairbench.notes import CODES, Note
from pairbench.report.wording import word

MALFORMED = ({}, {"count": "a", "name": 5, "copies": 3, "text": None, "side": [], "reason": {},
                  "floor_kib": "x", "command": 1, "operators": 5, "recovered": "z", "items": 7})


@pytest.mark.parametrize("code", sorted(CODES))
def test_a_note_with_missing_or_malformed_figures_is_shown_as_its_code_and_figures(code):
    for data in MALFORMED:
        text = word(Note(code, data))
        assert isinstance(text, str) and text


@pytest.mark.parametrize("fmt", ["show", "markdown", "csv", "json", "html"])
def test_every_report_of_a_result_with_malformed_stored_notes_is_written(tmp_path, fmt):
    document = json.loads((DATA / "compare.json").read_text(encoding="utf-8"))
    document["notes"] = [{"code": code, "data": data} for code in sorted(CODES) for data in MALFORMED]
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    args = ["show"] if fmt == "show" else ["report", "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")]
    result = invoke(*args, str(path))
    assert result.code == 0, result.err
