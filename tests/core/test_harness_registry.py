"""The harness registry is the one home of a harness's traits: every place that needs one reads it."""

from __future__ import annotations

from pathlib import Path

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
from pairbench.measure.harnesses.adapters import ADAPTERS, adapter_for
from pairbench.measure.harnesses.detect import detect_program, detect_python
from pairbench.notes import Note
from pairbench.parsers import parse_settings
from pairbench.report.wording import word
from pairbench.settings import default, harness_defaults
from pairbench.store.imports import READERS

SRC = Path(__file__).resolve().parents[2] / "src" / "pairbench"


@pytest.mark.parametrize("name", ADAPTERS, ids=str)
def test_each_adapter_drives_a_harness_of_the_registry_that_bench_takes(name):
    assert name in HARNESS_CHOICES and adapter_for(name).name == name
    assert not REGISTRY[name].worker  # a harness served by workers has no adapter


def test_every_harness_bench_takes_runs_through_an_adapter_or_the_workers():
    assert {name for name in HARNESS_CHOICES if not REGISTRY[name].worker} == set(ADAPTERS)


def test_a_harness_s_budget_and_its_runtime_s_collector_are_its_registry_entry_s():
    for entry in REGISTRY.values():
        budget = default("max_time", "bench", entry.name)
        assert budget == (entry.max_time or default("max_time", "bench"))
    assert harness_defaults("max_time") == {"go": "20s", "criterion": "16s", "pytest-benchmark": "60s"}
    assert {h.name: h.collector for h in REGISTRY.values() if h.collector} == {
        "go": "Go", "pytest-benchmark": "Python", "pytest-benchmark-processes": "Python"}


@pytest.mark.parametrize(("source", "found"), [
    ("def test_parse(benchmark):\n    benchmark(parse)\n", "pytest-benchmark"),
    ("import pairbench\n\n@pairbench.benchmark\ndef parse():\n    pass\n", PAIRBENCH),
    ("def test_parse(benchmark):\n    pass\n\nfrom pairbench import benchmark\n", PAIRBENCH),
    ("def parse():\n    pass\n", PAIRBENCH),
])
def test_a_python_file_is_the_harness_whose_marker_it_holds(source, found, tmp_path):
    (tmp_path / "bench_x.py").write_text(source)
    assert detect_python(str(tmp_path / "bench_x.py")) == found


@pytest.mark.parametrize("name", [n for n in REGISTRY if n != PAIRBENCH])  # pairbench is the tool's name too
def test_a_harness_is_named_in_code_only_by_its_registry_entry_and_its_own_adapter_or_parser(name):
    """Every other place reads the registry, or the adapter's ``NAME``: adding a harness is its
    adapter and its entry, not a hunt for the places that know a harness by name."""
    naming = {str(path.relative_to(SRC)) for path in SRC.rglob("*.py") if f'"{name}"' in path.read_text("utf-8")}
    own = {f"measure/harnesses/{module}.py" for module in ("gbench", "gotest", "criterion", "pytest_benchmark",
                                                          "hyperfine")}
    assert naming <= {"harness_registry.py", *own} and len(naming) <= 2, naming


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
    assert "pytest-benchmark" not in ADAPTERS and "pytest-benchmark-processes" in ADAPTERS


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
