"""The harness registry is the one home of a harness's traits: every place that needs one reads it."""

from __future__ import annotations

import pytest

from pairbench.harness_registry import (
    HARNESS_CHOICES,
    IMPORT_FORMATS,
    PAIRBENCH,
    REGISTRY,
    WORKER_HARNESSES,
    harness,
    words,
)
from pairbench.measure.harnesses.detect import detect_program
from pairbench.notes import Note
from pairbench.parsers import parse_settings
from pairbench.report.wording import word
from pairbench.store.imports import READERS

ADAPTED = [h for h in REGISTRY.values() if h.adapter]


@pytest.mark.parametrize("entry", ADAPTED, ids=lambda h: h.name)
def test_each_adapter_named_in_the_registry_exists_and_answers_to_its_harness(entry):
    name = entry.make_adapter().name  # pytest-benchmark-processes' adapter reads pytest-benchmark's output
    assert name in REGISTRY and words(name) == entry.words


def test_bench_takes_every_harness_it_can_drive_and_import_every_format_it_can_read():
    assert HARNESS_CHOICES == ("gbench", "go", "criterion", "pytest-benchmark", "pytest-benchmark-processes",
                               PAIRBENCH)
    assert set(IMPORT_FORMATS) == {*READERS, "go", "criterion"}  # go's text and criterion's directory apart
    for name in HARNESS_CHOICES:
        assert parse_settings("bench", ("a",), {"harness": name}).workers.harness == name


@pytest.mark.parametrize("name", HARNESS_CHOICES)
def test_every_harness_has_its_own_advice_in_the_notes_about_its_benchmarks(name):
    setup = word(Note("benchmark-setup-overhead", {"setup_ns": 1000.0, "setup_share": 0.1,
                                                   "share_at_iterations": 8, "harness": name}))
    elided = word(Note("benchmark-elided-body", {"per_iteration_ns": 0.1, "growing": True, "harness": name}))
    assert setup.endswith(REGISTRY[name].setup_advice) and elided.endswith(REGISTRY[name].keep_advice)


def test_a_harness_a_stored_file_names_that_this_pairbench_does_not_know_is_worded_by_its_name():
    assert words("catch2") == "catch2" and harness("catch2").markers == ()
    assert word(Note("benchmark-elided-body", {"per_iteration_ns": 0.1, "growing": True, "harness": "catch2"})
                ).endswith(REGISTRY[PAIRBENCH].keep_advice)


@pytest.mark.parametrize("entry", [h for h in REGISTRY.values() if h.markers], ids=lambda h: h.name)
def test_a_program_holding_a_harness_s_marks_is_detected_as_that_harness(entry, tmp_path):
    program = tmp_path / "bench"
    program.write_bytes(b"\x7fELF..." + entry.markers[0] + b"...")
    assert detect_program(str(program)) == entry.name


def test_the_harnesses_served_by_workers_are_pairbench_s_own_and_pytest_benchmark_s_tests():
    assert WORKER_HARNESSES == ("pytest-benchmark", PAIRBENCH)
    assert not REGISTRY["pytest-benchmark"].adapter and REGISTRY["pytest-benchmark-processes"].adapter


def test_a_worker_that_also_links_a_harness_is_a_worker(tmp_path):
    program = tmp_path / "bench"
    program.write_bytes(REGISTRY["gbench"].markers[0] + b" " + REGISTRY[PAIRBENCH].markers[0])
    assert detect_program(str(program)) == PAIRBENCH


@pytest.mark.parametrize("entry", [h for h in REGISTRY.values() if h.worker and h.python], ids=lambda h: h.name)
def test_bench_starts_the_worker_a_python_harness_names_in_the_registry(entry, tmp_path):
    from pairbench.sessions.bench import python_worker

    module, words_ = entry.python_worker
    command = python_worker(str(tmp_path / "bench_x.py"), str(tmp_path), entry.name)
    assert command.argv[1:3] == ("-m", module) and command.text == f"{words_} {tmp_path / 'bench_x.py'}"
    __import__(module)  # a module that exists


def test_the_bench_session_names_no_harness_to_choose_how_to_run_it():
    from pathlib import Path

    import pairbench.sessions.bench as bench

    source = Path(bench.__file__).read_text(encoding="utf-8")
    assert not [name for name in REGISTRY if name != PAIRBENCH and f'"{name}"' in source]
