"""`pairbench show` and `pairbench report` on stored documents: every output is analysed from the
samples, so an edited verdict cannot disagree with them; hostile values are refused in one line
naming the file (exit 4)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor

from pairbench.errors import EXIT_RESULT_FILE, NotEnoughData

FORMATS = ("x.md", "x.html", "x.csv", "x.json")


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A real comparison in which the candidate is about 5% slower."""
    rng = np.random.default_rng(4)
    executor = FakeExecutor(lambda c, i, t: 0.05 * (1.05 if "0.2" in c.text else 1.0) * float(np.exp(rng.normal(0, 0.005))))
    path = tmp_path_factory.mktemp("stored") / "r.json"
    result = invoke("compare", "--runs", "30", "--seed", "1", "--json", str(path), "sleep 0.1", "sleep 0.2",
                    executor=executor)
    assert result.code == 0, result.err
    return path


def _document(stored: Path) -> dict:
    return json.loads(stored.read_text(encoding="utf-8"))


def _write(tmp_path, document) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _one_error_line(result, path) -> str:
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"error: {path}: "), result.err
    return result.err


def _edited_verdict(document: dict) -> dict:
    """The stored comparison says the candidate is 50% faster; its samples say about 5% slower."""
    (comparison,) = document["comparisons"]
    edited = {**comparison, "verdict": "faster", "effect": {**comparison["effect"], "estimate": -50.0,
                                                            "low": -60.0, "high": -40.0}}
    return {**document, "comparisons": [edited]}


def test_show_analyses_the_samples_whatever_verdict_the_file_stores(tmp_path, stored):
    path = _write(tmp_path, _edited_verdict(_document(stored)))
    result = invoke("show", str(path))
    assert result.code == 0, result.err
    assert re.search(r"sleep 0\.2 is \d\.\d% slower than sleep 0\.1", result.out), result.out
    assert "-50.0%" not in result.out and " faster than " not in result.out


VERDICT_IN = {  # where each format states the verdict, and the edited effect it must not show
    "x.md": ("x.md", "| slower |"), "x.html": ("x.html", ">slower<"),
    "x.csv": ("x.summary.csv", ",slower,"), "x.json": ("x.json", '"verdict": "slower"'),
}


@pytest.mark.parametrize("output", FORMATS)
def test_every_report_format_shows_the_verdict_of_the_samples_not_an_edited_one(tmp_path, stored, output):
    path = _write(tmp_path, _edited_verdict(_document(stored)))
    result = invoke("report", str(path), "-o", str(tmp_path / output))
    assert result.code == 0, result.err
    written, verdict = VERDICT_IN[output]
    text = (tmp_path / written).read_text(encoding="utf-8")
    assert verdict in text and "-50.0" not in text and "50.0% faster" not in text


def test_the_json_report_of_an_edited_file_equals_that_of_the_original(tmp_path, stored):
    path = _write(tmp_path, _edited_verdict(_document(stored)))
    invoke("report", str(path), "-o", str(tmp_path / "edited.json"))
    invoke("report", str(stored), "-o", str(tmp_path / "original.json"))
    edited, original = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("edited", "original"))
    assert edited["comparisons"] == original["comparisons"] and edited["summaries"] == original["summaries"]


@pytest.mark.parametrize("derived", [{"comparisons": [1, 2]}, {"summaries": "x"}, {"analysis_notes": {}}])
def test_derived_records_are_never_read_so_even_malformed_ones_do_not_matter(tmp_path, stored, derived):
    path = _write(tmp_path, {**_document(stored), **derived})
    assert invoke("show", str(path)).code == 0


@pytest.mark.parametrize("command", ["show", "report"])
def test_two_sides_of_one_name_are_refused_naming_the_file(tmp_path, stored, command):
    document = _document(stored)
    document["sides"][1]["name"] = document["sides"][0]["name"]
    path = _write(tmp_path, document)
    result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "is the name of an earlier one" in _one_error_line(result, path)


def test_show_refuses_a_shell_overhead_that_is_not_a_number(tmp_path, stored):
    path = _write(tmp_path, {**_document(stored), "shell_overhead": {"median_ns": "x", "min_ns": 1, "n": 3}})
    result = invoke("show", str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "shell_overhead.median_ns must be a number" in _one_error_line(result, path)


@pytest.mark.parametrize("command", ["show", "report"])
def test_durations_near_2_to_the_62_are_refused_naming_the_file_without_numpy_warnings(tmp_path, stored, command):
    document = _document(stored)
    document["series"][0]["samples"]["wall_ns"][:2] = [2**62, 1]
    path = _write(tmp_path, document)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "wall_ns[0] is 4611686018427387904, beyond the limit of 2**53" in _one_error_line(result, path)


def _failing_analysis(*args, **kwargs):
    np.log(np.zeros(1))  # a numpy RuntimeWarning, as hostile values give
    raise NotEnoughData("`sd` must be a finite positive number, got nan")


@pytest.mark.parametrize("command", ["show", "report"])
def test_an_analysis_failure_on_a_stored_document_is_a_result_file_error_naming_it(
        tmp_path, monkeypatch, stored, command):
    monkeypatch.setattr("pairbench.analysis.summarize", _failing_analysis)
    path = _write(tmp_path, _document(stored))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking out of the analysis would raise here
        result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    line = _one_error_line(result, path)
    assert line == f"error: {path}: cannot be analysed: `sd` must be a finite positive number, got nan\n"


@pytest.mark.parametrize("command", ["show", "report"])
def test_settings_that_cannot_be_used_are_refused_naming_the_file(tmp_path, stored, command):
    document = _document(stored)
    document["settings"]["decision"]["alpha"] = 5
    path = _write(tmp_path, document)
    result = invoke(command, str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "the stored settings are not valid: --alpha must lie between 1e-06 and 0.5" in _one_error_line(result, path)


def test_a_stored_alpha_beyond_the_documented_range_is_refused_at_once(tmp_path, stored):
    """An older pairbench stored alpha = 1e-30 and `show` spun for ever on it."""
    document = _document(stored)
    document["settings"]["decision"]["alpha"] = 1e-30
    path = _write(tmp_path, document)
    result = invoke("show", str(path))
    assert result.code == EXIT_RESULT_FILE
    assert "--alpha must lie between 1e-06 and 0.5" in _one_error_line(result, path)
