"""`pairbench show` and `pairbench report` on stored documents whose derived records or values are
hostile: refused with one line naming the file (exit 4), or recomputed from the raw samples."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.analysis import VariantSummary
from pairbench.errors import EXIT_RESULT_FILE, NotEnoughData
from pairbench.report.analysed import SUMMARY_FIELD_CHECKS

FIXTURE = Path(__file__).resolve().parents[1] / "report" / "data" / "compare.json"
FORMATS = ("x.md", "x.html", "x.csv", "x.json")


def _document(**changes) -> dict:
    document = json.loads(FIXTURE.read_text(encoding="utf-8"))
    document.update(changes)
    return document


def _write(tmp_path, document) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _one_error_line(result, path) -> str:
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"error: {path}: "), result.err
    return result.err


STORED_COMPARISONS = {
    "an empty object": [{}],
    "only a verdict and names": [{"verdict": "slower", "baseline": "a", "candidate": "b"}],
    "names of commands the run lacks": lambda good: [{**good, "baseline": "a", "candidate": "b"}],
    "an effect that is not an object": lambda good: [{**good, "effect": "x"}],
    "a secondary number that is a string": lambda good: [
        {**good, "secondary": {**good["secondary"], "min": {**good["secondary"]["min"], "delta_pct": "x"}}}],
    "a boolean round count": lambda good: [{**good, "rounds": True}],
}


@pytest.mark.parametrize("case", sorted(STORED_COMPARISONS))
@pytest.mark.parametrize("output", FORMATS)
def test_report_recomputes_stored_comparisons_that_lack_what_renderers_read(tmp_path, case, output):
    document = _document()
    comparisons = STORED_COMPARISONS[case]
    document["comparisons"] = comparisons(document["comparisons"][0]) if callable(comparisons) else comparisons
    path = _write(tmp_path, document)
    result = invoke("report", str(path), "-o", str(tmp_path / output))
    assert result.code == 0, result.err
    assert (tmp_path / output).exists()
    if output == "x.json":
        analysed = json.loads((tmp_path / output).read_text(encoding="utf-8"))
        assert analysed["recomputed"] == ["comparisons"]


def test_report_uses_well_formed_stored_comparisons_as_stored(tmp_path):
    result = invoke("report", str(FIXTURE), "-o", str(tmp_path / "x.json"))
    assert result.code == 0, result.err
    assert json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))["recomputed"] == []


def test_report_recomputes_stored_summaries_with_a_value_of_the_wrong_type(tmp_path):
    document = _document()
    document["summaries"][0]["median"] = "fast"
    path = _write(tmp_path, document)
    for output in FORMATS:
        result = invoke("report", str(path), "-o", str(tmp_path / output))
        assert result.code == 0, result.err
    analysed = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert analysed["recomputed"] == ["summaries"]


def test_every_summary_field_type_has_a_check_so_stored_summaries_are_not_always_recomputed():
    assert {f.type for f in dataclasses.fields(VariantSummary)} <= set(SUMMARY_FIELD_CHECKS)


@pytest.mark.parametrize("command", ["show", "report"])
def test_comparisons_that_are_not_objects_are_refused_naming_the_file(tmp_path, command):
    path = _write(tmp_path, _document(comparisons=[1, 2]))
    result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "comparisons[0] must be an object, got int" in _one_error_line(result, path)


@pytest.mark.parametrize("command", ["show", "report"])
def test_two_variants_of_one_name_are_refused_naming_the_file(tmp_path, command):
    document = _document()
    document["variants"][1]["name"] = document["variants"][0]["name"]
    path = _write(tmp_path, document)
    result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "is the name of an earlier variant" in _one_error_line(result, path)


def test_show_refuses_a_shell_overhead_that_is_not_a_number(tmp_path):
    path = _write(tmp_path, _document(shell_overhead={"median_ns": "x", "min_ns": 1, "n": 3}))
    result = invoke("show", str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "shell_overhead.median_ns must be a number" in _one_error_line(result, path)


@pytest.mark.parametrize("command", ["show", "report"])
def test_durations_near_2_to_the_62_are_refused_naming_the_file_without_numpy_warnings(tmp_path, command):
    document = _document(summaries=[], comparisons=[])
    document["variants"][0]["samples"]["wall_ns"][:2] = [2**62, 1]
    path = _write(tmp_path, document)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "wall_ns[0] is 4611686018427387904, beyond the limit of 2**53" in _one_error_line(result, path)


def _failing_analysis(*args, **kwargs):
    import numpy as np

    np.log(np.zeros(1))  # a numpy RuntimeWarning, as hostile values give
    raise NotEnoughData("`sd` must be a finite positive number, got nan")


@pytest.mark.parametrize("command", ["show", "report"])
def test_an_analysis_failure_on_a_stored_document_is_a_result_file_error_naming_it(
        tmp_path, monkeypatch, command):
    monkeypatch.setattr("pairbench.analysis.summarize_run", _failing_analysis)
    path = _write(tmp_path, _document(summaries=[]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking out of the analysis would raise here
        result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    line = _one_error_line(result, path)
    assert line == f"error: {path}: cannot be analysed: `sd` must be a finite positive number, got nan\n"


@pytest.mark.parametrize("command", ["show", "report"])
def test_comparison_options_that_cannot_be_used_are_refused_naming_the_file(tmp_path, command):
    path = _write(tmp_path, _document(summaries=[], comparisons=[], options={"alpha": 5}))
    result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "do not describe a comparison" in _one_error_line(result, path)
