"""``pairbench doctor``: golden text per fixture machine, JSON, validation through the CLI, exit codes.

Golden files live in ``golden/``; on a mismatch the actual output is written
beside the expected one as ``<name>.actual`` so the diff is one command away.
Regenerate after an intended change with ``PAIRBENCH_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import invoke
from machines import MACHINES, machine_environment
from test_validation import STARTUP_S, linear

from pairbench.cli import app
from pairbench.measure.fake import FakeExecutor

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def stored(tmp_path):
    """``stored("vm")`` -> path of a JSON file holding that fixture's environment, as run stores it."""

    def write(name: str) -> str:
        environment = machine_environment(name, tmp_path)
        environment["host"] = name  # the collector asks the real machine for its name
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"format": "pairbench.result/1", "environment": environment}))
        return str(path)

    return write


@pytest.fixture
def executor(monkeypatch):
    def install(fake):
        monkeypatch.setattr(app, "EXECUTOR_FACTORY", lambda output: fake)
        return fake

    return install


def check_golden(name: str, actual: str) -> None:
    expected_path = GOLDEN / f"{name}.txt"
    actual_path = GOLDEN / f"{name}.actual"
    if os.environ.get("PAIRBENCH_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    expected = expected_path.read_text() if expected_path.exists() else None
    if actual != expected:
        actual_path.write_text(actual)
        pytest.fail(f"output differs from {expected_path}; see diff {expected_path} {actual_path}")
    actual_path.unlink(missing_ok=True)


@pytest.mark.parametrize("name", MACHINES)
def test_doctor_text_for_each_fixture_machine_matches_its_golden_file(stored, name):
    code, out, err = invoke("doctor", "--environment", stored(name))
    assert code == 0 and err == ""
    check_golden(f"machine-{name}", out)


def test_doctor_json_has_every_check_with_status_reading_why_and_fix(stored):
    code, out, _ = invoke("doctor", "--json", "--environment", stored("noisy-laptop"))
    document = json.loads(out)
    assert code == 0
    assert document["kind"] == "environment" and document["status"] == "fail"
    assert [f["check"] for f in document["findings"]] == [
        "load", "governor", "turbo", "smt", "aslr", "isolation", "clock", "perf", "virtualization",
        "memory", "power", "thermal"]
    assert all(set(f) == {"check", "title", "status", "reading", "why", "fix", "data"}
               for f in document["findings"])
    assert document["environment"]["activity"]["busiest_processes"][0]["name"] == "firefox"


@pytest.mark.parametrize(("fail_on", "machine", "code"), [
    ("never", "noisy-laptop", 0), ("fail", "noisy-laptop", 1), ("warn", "vm", 1),
    ("warn", "tuned-server", 0),
])
def test_fail_on_turns_findings_into_exit_code_1(stored, fail_on, machine, code):
    assert invoke("doctor", "--fail-on", fail_on, "--environment", stored(machine))[0] == code


def test_a_file_without_machine_metadata_is_a_usage_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "something else"}')
    code, _, err = invoke("doctor", "--environment", str(path))
    assert code == 2 and "holds no machine metadata" in err


def test_doctor_command_validates_a_benchmark_and_shows_the_machine_briefly(stored, executor):
    executor(FakeExecutor(linear(0.050, 0.002)))
    code, out, _ = invoke("doctor", "--environment", stored("noisy-laptop"), "--runs", "3",
                          "--seed", "1", "echo {iterations}")
    assert code == 0
    check_golden("benchmark-setup-overhead", out)


def test_doctor_command_json_carries_the_fit_the_samples_and_the_machine(stored, executor):
    executor(FakeExecutor(linear(0.0, 0.01, rss=lambda k: 9000 + 10240 * k)))
    code, out, _ = invoke("doctor", "--json", "--environment", stored("vm"), "--runs", "3",
                          "--iterations", "1,3,9", "--seed", "2", "echo {iterations}")
    document = json.loads(out)
    assert code == 0 and document["kind"] == "benchmark" and document["seed"] == 2
    assert document["iteration_counts"] == [1, 3, 9]
    assert document["rss_fit"]["slope"] == pytest.approx(10240)
    assert len(document["samples"]["9"]) == 3
    assert document["machine"]["status"] == "fail"


def test_a_failing_command_exits_3(stored, executor):
    executor(FakeExecutor({"echo x": {"duration": 0.01, "status": 1}, "true": STARTUP_S}))
    code, out, _ = invoke("doctor", "--environment", stored("tuned-server"), "echo x")
    assert code == 3 and "FAIL    runs: 'echo x' ended with exit code 1" in out


def test_bad_iteration_counts_are_a_usage_error():
    code, _, err = invoke("doctor", "--iterations", "4", "echo {iterations}")
    assert code == 2 and "need at least 2 distinct counts" in err


@pytest.mark.parametrize("environment", [
    {"power": {}}, {"turbo": {"file": "/x"}}, {"thermal_throttle": {"cpus": 1}},
    {"kernel_settings": {"perf_event_paranoid": "2"}}, {"load_average": [0.1]},
    {"load_average": "abc"}, {"online_cpus": 5, "logical_cpus": "x"},
    {"timer": [], "activity": 3, "virtualization": "x", "memory": [], "pressure": 1},
])
def test_partial_or_odd_stored_metadata_gives_unknown_findings_not_a_traceback(tmp_path, environment):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"format": "pairbench.result/1",
                                "environment": {"load_average": None, **environment}}))
    code, out, err = invoke("doctor", "--environment", str(path))
    assert (code, err) == (0, "")
    assert "stored value malformed: " in out and "Overall: UNKNOWN" in out
    code, out, err = invoke("doctor", "--json", "--environment", str(path))
    assert code == 0 and json.loads(out)["status"] == "unknown"


def _nested(depth: int) -> str:
    return '{"environment": {"load_average": ' + "[" * depth + "]" * depth + "}}"


@pytest.mark.parametrize(("content", "problem"), [
    (None, "no such file"),
    (_nested(100_000), "nested too deeply"),
    (_nested(200), "nested more than 64 levels deep"),
    ('{"environment": {"load_average": [NaN, 1, 1]}}', "NaN is not allowed"),
    ('{"environment": ', "malformed JSON"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    ('{"format": "pairbench.result/1", "environment": []}', "environment must be an object"),
])
def test_an_unreadable_environment_file_exits_4_with_one_line_naming_it(tmp_path, content, problem):
    path = tmp_path / "env.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = invoke("doctor", "--environment", str(path))
    assert code == 4 and out == ""
    assert err.count("\n") == 1 and str(path) in err and problem in err, err


def test_a_journal_of_an_unfinished_run_can_be_judged(tmp_path):
    from pairbench.model import Command, Run, Sample, Variant
    from pairbench.resultfile import Journal

    environment = {"load_average": [0.1, 0.1, 0.1], "logical_cpus": 2}
    run = Run("run", (Variant("a", Command("a", ("a",))),), "0", "2026-01-01T00:00:00+00:00",
              state="running", environment=environment)
    journal = Journal(tmp_path / "r.json", run)
    journal.append(0, Sample(wall_ns=1_000_000))
    journal.close(remove=False)
    code, out, err = invoke("doctor", "--environment", str(tmp_path / "r.json.partial"))
    assert (code, err) == (0, "") and "OK      load: load average 0.10" in out
