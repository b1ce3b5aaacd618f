"""``pairbench doctor``: golden text per fixture machine, the files it reads, validation through the CLI,
options and exit codes.

Golden files live in ``golden/`` (``assert_golden``: on a mismatch the actual
output is written beside the expected one as ``<name>.txt.actual``;
``PAIRBENCH_UPDATE_GOLDEN=1`` rewrites them after an intended change).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from fakes import FakeExecutor
from golden import assert_golden
from machines import MACHINES, machine_environment
from runs import make_run, series, side
from test_validation import STARTUP_S, linear

from pairbench import cli
from pairbench.environment.checks import DOCTOR_WINDOW_S
from pairbench.measure.sampler import Measured
from pairbench.model import Sample
from pairbench.store.journal import Journal
from pairbench.store.resultfile import write_result

GOLDEN = Path(__file__).parent / "golden"
LEGACY = Path(__file__).parents[1] / "store" / "legacy"  # documents and a journal of pairbench 0.1


def environment_of(name: str, tmp_path: Path) -> dict:
    environment = machine_environment(name, tmp_path)
    environment["host"] = name  # the collector asks the real machine for its name
    return environment


@pytest.fixture
def stored(tmp_path):
    """``stored("vm")`` -> path of a /1 result document holding that fixture's environment."""

    def write(name: str) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"format": "pairbench.result/1", "environment": environment_of(name, tmp_path)}))
        return str(path)

    return write


def a_run(environment: dict, state: str = "complete"):
    samples = {(0, 0): series([1_000_000, 1_100_000, 1_050_000])}
    return make_run("run", [side("a")], samples, runs=3, environment=environment).replace(state=state)


# --------------------------------------------------------------------------- the machine


@pytest.mark.parametrize("name", MACHINES)
def test_doctor_text_for_each_fixture_machine_matches_its_golden_file(stored, name):
    code, out, err = invoke("doctor", "--environment", stored(name))
    assert code == 0 and err == ""
    assert_golden(GOLDEN / f"machine-{name}.txt", out)


def test_doctor_text_of_the_machine_now_names_command_lines_and_the_pids_to_pause(machine):
    environment = {**machine("noisy-laptop", live=True), "host": "noisy-laptop"}
    out = io.StringIO()
    code = cli.main(["doctor"], stdout=out, stderr=io.StringIO(), color=False,
                    environment=lambda root, **options: environment)
    assert code == 0
    assert_golden(GOLDEN / "machine-noisy-laptop-live.txt", out.getvalue())


def test_without_a_file_the_doctor_judges_the_machine_now_through_the_environment_seam():
    seen = {}

    def environment(root, **options):
        seen.update(root=root, **options)
        return {**FIXED_ENVIRONMENT, "host": "fixed"}

    out = io.StringIO()
    code = cli.main(["doctor", "--root", "/srv/tree"], stdout=out, stderr=io.StringIO(), color=False,
                    environment=environment)
    assert code == 0 and seen == {"root": "/srv/tree", "activity_window_s": DOCTOR_WINDOW_S, "live": True}
    assert out.getvalue().startswith("pairbench doctor · fixed · Debian GNU/Linux 12 (bookworm)")


def test_doctor_json_has_every_check_with_status_reading_why_fix_and_its_note(stored):
    code, out, _ = invoke("doctor", "--json", "--environment", stored("noisy-laptop"))
    document = json.loads(out)
    assert code == 0
    assert document["kind"] == "environment" and document["status"] == "fail"
    assert [f["check"] for f in document["findings"]] == [
        "load", "governor", "turbo", "smt", "aslr", "isolation", "clock", "perf", "virtualization",
        "memory", "power", "thermal"]
    assert all(set(f) == {"check", "title", "status", "reading", "why", "fix", "code", "data"}
               for f in document["findings"])
    assert all(f["code"] == "doctor-" + f["check"] for f in document["findings"])
    load = document["findings"][0]
    assert load["data"]["load_average"] == [3.41, 2.87, 2.1] and load["data"]["cpus"] == 4
    assert document["environment"]["activity"]["busiest_processes"][0]["name"] == "firefox"


@pytest.mark.parametrize(("fail_on", "machine", "code"), [
    ("never", "noisy-laptop", 0), ("fail", "noisy-laptop", 1), ("warn", "vm", 1),
    ("warn", "tuned-server", 0),
])
def test_fail_on_turns_findings_into_exit_code_1(stored, fail_on, machine, code):
    assert invoke("doctor", "--fail-on", fail_on, "--environment", stored(machine))[0] == code


# --------------------------------------------------------------------------- files it reads


def test_a_result_document_of_format_2_is_judged_like_its_format_1_twin(tmp_path, stored):
    path = tmp_path / "result.json"
    write_result(a_run(environment_of("vm", tmp_path)), path)
    assert json.loads(path.read_text())["format"] == "pairbench.result/2"
    assert invoke("doctor", "--environment", str(path)) == invoke("doctor", "--environment", stored("vm"))


def test_a_journal_of_an_unfinished_run_of_format_2_can_be_judged(tmp_path):
    environment = {"load_average": [0.1, 0.1, 0.1], "logical_cpus": 2}
    journal = Journal(tmp_path / "r.json", a_run(environment, "running").replace(samples={}))
    journal.on_sample(Measured(0, 0, Sample(wall_ns=1_000_000)))
    journal.close(remove=False)
    code, out, err = invoke("doctor", "--environment", str(tmp_path / "r.json.partial"))
    assert (code, err) == (0, "") and "OK      load: load average 0.10" in out


@pytest.mark.parametrize("name", ["run-two.json", "journal.json.partial"])
def test_a_document_or_journal_of_pairbench_0_1_can_be_judged(name):
    code, out, err = invoke("doctor", "--environment", str(LEGACY / name))
    assert (code, err) == (0, "")
    assert "FAIL    load: load average 1.60 (1 min), 0.90 (5 min) on 2 CPUs" in out


def test_doctor_json_output_can_be_judged_again(tmp_path, stored):
    first = invoke("doctor", "--json", "--environment", stored("container"))
    path = tmp_path / "doctor.json"
    path.write_text(first.out)
    assert invoke("doctor", "--json", "--environment", str(path)).out == first.out


def test_the_machine_of_a_benchmark_validation_can_be_judged_again(tmp_path, stored, use_executor):
    use_executor(script=linear(0.0, 0.01))
    first = invoke("doctor", "--json", "--environment", stored("vm"), "--runs", "3", "echo {iterations}")
    path = tmp_path / "doctor.json"
    path.write_text(first.out)
    assert invoke("doctor", "--environment", str(path)).out == invoke("doctor", "--environment",
                                                                      stored("vm")).out


def test_a_file_without_machine_metadata_is_a_usage_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "something else"}')
    code, _, err = invoke("doctor", "--environment", str(path))
    assert code == 2 and "holds no machine metadata" in err


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
    ('{"format": "pairbench.result/2", "environment": "x"}', "environment must be an object"),
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


# --------------------------------------------------------------------------- a benchmark


def test_doctor_command_validates_a_benchmark_and_shows_the_machine_briefly(stored, use_executor):
    use_executor(script=linear(0.050, 0.002))
    code, out, _ = invoke("doctor", "--environment", stored("noisy-laptop"), "--runs", "3",
                          "--seed", "1", "echo {iterations}")
    assert code == 0
    assert_golden(GOLDEN / "benchmark-setup-overhead.txt", out)


def test_a_benchmark_whose_memory_grows_with_its_iteration_count_is_told_why_and_how_to_fix_it(
        stored, use_executor):
    # 10 MiB per iteration, plus page-sized wobble that keeps the fit's p-value clear of rounding
    use_executor(script=linear(0.0, 0.01, rss=lambda k: 9000 + 10240 * k + 4 * (37 * k % 13)))
    code, out, _ = invoke("doctor", "--environment", stored("tuned-server"), "--runs", "3", "--seed", "4",
                          "--name", "alloc", "echo {iterations}")
    assert code == 0
    assert_golden(GOLDEN / "benchmark-memory-growth.txt", out)


def test_doctor_command_json_carries_the_fit_the_samples_and_the_machine(stored, use_executor):
    use_executor(script=linear(0.0, 0.01, rss=lambda k: 9000 + 10240 * k))
    code, out, _ = invoke("doctor", "--json", "--environment", stored("vm"), "--runs", "3",
                          "--iterations", "1,3,9", "--seed", "2", "echo {iterations}")
    document = json.loads(out)
    assert code == 0 and document["kind"] == "benchmark" and document["seed"] == 2
    assert document["iteration_counts"] == [1, 3, 9]
    assert document["rss_fit"]["slope"] == pytest.approx(10240)
    assert [s["iterations"] for s in document["samples"]["9"]] == [9, 9, 9]
    assert document["timer_resolution_ns"] == 30  # the machine metadata's, not this host's
    assert document["machine"]["status"] == "fail"


def test_the_same_seed_runs_the_same_order_and_prints_the_same_report(stored, use_executor):
    args = ("doctor", "--environment", stored("vm"), "--runs", "3", "--seed", "9", "echo {iterations}")
    first, second = use_executor(script=linear(0.0, 0.01)), None
    out = invoke(*args).out
    second = use_executor(script=linear(0.0, 0.01))
    assert invoke(*args).out == out and "(seed 9)" in out
    assert second.texts == first.texts and len(first.texts) == 5 * 4  # a warmup round and 3 timed


def test_a_failing_command_exits_3(stored, use_executor):
    use_executor(FakeExecutor({"echo x": {"duration": 0.01, "status": 1}, "true": STARTUP_S}))
    code, out, _ = invoke("doctor", "--environment", stored("tuned-server"), "echo x")
    assert code == 3 and "FAIL    runs: 'echo x' ended with exit code 1" in out


def test_a_command_that_is_not_installed_is_a_usage_error(use_executor):
    use_executor(FakeExecutor(default=0.01))
    code, out, err = invoke("doctor", "no-such-program-pairbench-test")
    assert code == 2 and out == "" and "command not found" in err


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(("args", "message"), [
    (("--iterations", "4", "echo {iterations}"), "needs at least 2 distinct counts"),
    (("--runs", "1", "echo x"), "--runs must be at least 2, got 1"),
    (("--seed", "-3", "echo x"), "--seed must be at least 0, got -3"),
    (("--timeout", "0s", "echo x"), "--timeout: must be a positive duration"),
    (("--fail-on", "slower"), "--fail-on must be one of never, warn, fail; got 'slower'"),
    (("--runs", "5"), "--runs applies only to a COMMAND to validate"),
    (("--shell", "sh", "--name", "x"), "--shell, --name apply only to a COMMAND to validate"),
    (("-N",), "-N applies only to a COMMAND to validate"),
    (("-N", "-S", "bash", "echo x"), "-N (no shell) and --shell bash contradict"),
    (("--shell", "echo x"), "--shell takes the shell that runs the commands"),
])
def test_a_bad_option_is_a_usage_error_naming_it(args, message):
    code, out, err = invoke("doctor", *args)
    assert (code, out) == (2, "") and message in err, err


@pytest.mark.parametrize(("flags", "program"), [(("-S", "bash"), "bash"), (("--shell", "sh"), "/bin/sh")])
def test_doctor_runs_the_command_and_the_start_up_probe_through_the_named_shell(stored, use_executor, flags,
                                                                               program):
    fake = use_executor(FakeExecutor({"echo hi | cat": 0.01, "true": STARTUP_S}))
    code, out, err = invoke("doctor", "--environment", stored("vm"), "--runs", "3", *flags, "echo hi | cat")
    assert code == 0, err
    argvs = {call.command.text: call.command.argv for call in fake.calls}
    assert argvs["echo hi | cat"][0].endswith(program) and argvs["echo hi | cat"][1:] == ("-c", "echo hi | cat")
    assert argvs["true"][0].endswith(program)


def test_doctor_without_a_shell_refuses_shell_syntax_and_says_how_to_run_it(use_executor):
    use_executor(FakeExecutor())
    code, out, err = invoke("doctor", "-N", "echo hi | cat")
    assert (code, out) == (2, "") and "shell syntax" in err and "--shell sh" in err
