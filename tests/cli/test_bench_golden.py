"""What `bench` prints, and `show` and `report` of its result, against golden files.

The workers are scripted (``tests/support/fakes.FakeWorkers``: a time per iteration,
a fixed cost, memory kept, on a virtual clock) and the machine is
``cli_runner.FIXED_ENVIRONMENT``, so the output depends on nothing of the host.
The suite has a regression, an improvement, three equivalent benchmarks, and
three that validation flags (a fixed cost per sample, a body too cheap to be
there, memory kept per iteration): the notes ``show`` recomputes from the
stored validation samples.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeWorkers
from golden import assert_golden

GOLDEN = Path(__file__).parent / "golden"
OLD = {"parse[n=10]": {"per_iteration_ns": 120.0}, "parse[n=1000]": {"per_iteration_ns": 9000.0},
       "sort": {"per_iteration_ns": 800.0, "fixed_ns": 60_000.0}, "spin": {"per_iteration_ns": 0.3, "fixed_ns": 40.0},
       "alloc": {"per_iteration_ns": 2000.0, "kept_bytes": 4096}}
NEW = {**OLD, "parse[n=1000]": {"per_iteration_ns": 9900.0},
       "sort": {"per_iteration_ns": 700.0, "fixed_ns": 60_000.0}}
ARGV = ("bench", "--harness", "pairbench", "--seed", "4", "-q", "./bench-old", "./bench-new")
FIXED_TIMES = {"started_at": "2026-11-26T10:00:00+00:00", "finished_at": "2026-11-26T10:00:40+00:00"}


def workers() -> FakeWorkers:
    return FakeWorkers({"./bench-old": OLD, "./bench-new": NEW}, seed=1)


@pytest.fixture
def stored(worker_programs) -> Path:
    """The suite's result file, its times and the programs' resolved paths fixed (the rest is already)."""
    result = invoke(*ARGV, "--json", "r.json", workers=workers())
    assert result.code == 0, result.err
    path = worker_programs / "r.json"
    document = {**json.loads(path.read_text()), **FIXED_TIMES}
    for side in document["sides"]:
        side["command"]["argv"] = [side["command"]["text"]]
    path.write_text(json.dumps(document))
    return path


def test_terminal_output_of_a_suite_matches_its_golden_file(worker_programs):
    result = invoke(*ARGV, workers=workers())
    assert result.code == 0, result.err
    assert_golden(GOLDEN / "bench.txt", result.out)


def test_show_prints_what_the_suite_printed(stored):
    assert_golden(GOLDEN / "bench.txt", invoke("show", str(stored)).out)


def test_a_result_that_lost_its_notes_shows_the_same_validation_findings(stored):
    document = json.loads(stored.read_text())
    assert not [n for n in document["notes"] if n["code"].startswith("benchmark-")]  # derived: never stored
    stored.write_text(json.dumps({**document, "notes": []}))
    shown = invoke("show", str(stored)).out
    assert "Validation (6 findings)" in shown
    assert_golden(GOLDEN / "bench.txt", shown)


def test_markdown_of_a_suite_matches_its_golden_file(stored):
    result = invoke("report", str(stored), "--format", "markdown")
    assert result.code == 0, result.err
    assert_golden(GOLDEN / "bench.md", result.out)


def test_json_of_a_suite_matches_its_golden_file_to_the_last_few_digits(stored, tmp_path):
    """Numbers compared to a relative 1e-9 (the last digits of a float depend on the CPU's and
    numpy's arithmetic), everything else exactly."""
    result = invoke("report", str(stored), "--format", "json")
    assert result.code == 0, result.err
    golden = GOLDEN / "bench.report.json"
    try:
        assert_close(json.loads(golden.read_text()), json.loads(result.out))
    except (AssertionError, FileNotFoundError):
        assert_golden(golden, result.out)  # writes .actual (or the file, when updating) and fails


def assert_close(expected, actual, where: str = "") -> None:
    if isinstance(expected, float) or isinstance(actual, float):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), where
        assert math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {expected} != {actual}"
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and expected.keys() == actual.keys(), where
        for key in expected:
            assert_close(expected[key], actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(expected) == len(actual), where
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_close(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: {expected!r} != {actual!r}"
