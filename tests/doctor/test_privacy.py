"""What is kept of other processes: a result keeps a busy process's name and CPU share only; only the
doctor's live view of this machine shows PIDs and command lines, and only it says which PIDs to pause."""

from __future__ import annotations

import io
import json

import pytest
from cli_runner import invoke
from machines import WINDOW_S, machine_environment
from runs import make_run, series, side

from pairbench import cli
from pairbench.store.resultfile import read_result, write_result

SECRET = "cc1plus -quiet big.cpp"  # a command line of an unrelated process on the noisy laptop


@pytest.fixture
def laptop(tmp_path):
    """``laptop(**options)``: the noisy laptop's metadata as ``collect_environment(**options)`` reads it."""

    def collect(activity_window_s=WINDOW_S, **options):  # the fixture's window, whatever is asked
        return {**machine_environment("noisy-laptop", tmp_path, **options), "host": "laptop"}

    return collect


def test_metadata_for_a_result_keeps_only_each_busy_process_name_and_cpu_share(laptop):
    environment = laptop()
    assert environment["activity"]["busiest_processes"] == [
        {"name": "firefox", "cpu_percent": 90.0}, {"name": "cc1plus", "cpu_percent": 80.0},
        {"name": "gnome-shell", "cpu_percent": 10.0}]
    assert SECRET not in json.dumps(environment)


def test_the_doctors_live_view_keeps_pids_and_command_lines(laptop):
    busiest = laptop(live=True)["activity"]["busiest_processes"]
    assert [(p["pid"], p["name"]) for p in busiest] == [(2001, "firefox"), (2002, "cc1plus"), (2003, "gnome-shell")]
    assert busiest[1]["command"].endswith(SECRET)


def test_a_measurement_stores_no_command_line_of_another_process(tmp_path, laptop, use_executor):
    executor = use_executor()
    seen = []

    def environment(root="/", **options):
        seen.append(options)
        return laptop(**options)

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["run", "--runs", "3", "--json", str(tmp_path / "r.json"), "sleep 0.1"], stdout=out,
                    stderr=err, color=False, environment=environment, executor_factory=lambda output: executor)
    assert code == 0, err.getvalue()
    assert seen and not any(options.get("live") for options in seen)
    assert SECRET not in (tmp_path / "r.json").read_text() and SECRET not in out.getvalue()


def test_command_lines_an_earlier_pairbench_stored_are_dropped_when_read(tmp_path, laptop):
    path = tmp_path / "old.json"
    write_result(make_run("run", [side("a")], {(0, 0): series([1_000, 1_100, 1_050])}, runs=3,
                          environment=laptop(live=True)), path)
    assert SECRET in path.read_text()  # as pairbench 0.2.0 wrote it
    assert read_result(path).environment["activity"]["busiest_processes"][0] == {"name": "firefox",
                                                                                  "cpu_percent": 90.0}
    for args in (["show"], ["report", "--format", "markdown"], ["report", "--format", "json"],
                 ["report", "--format", "html"], ["doctor", "--environment"], ["doctor", "--json", "--environment"]):
        result = invoke(*args, str(path))
        assert result.code == 0, (args, result.err)
        assert SECRET not in result.out and "ppid" not in result.out and "pid 2002" not in result.out, args


def test_the_doctor_on_a_stored_file_names_no_pid_to_pause(tmp_path, laptop):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "pairbench.result/1", "environment": laptop(live=True)}))
    result = invoke("doctor", "--environment", str(path))
    assert result.code == 0
    assert "kill -STOP" not in result.out and "pid" not in result.out
    assert "busiest: firefox (90%), cc1plus (80%), gnome-shell (10%)" in result.out
    assert "run `pairbench doctor` on that machine" in result.out


def test_only_the_doctor_on_the_live_machine_names_pids_to_pause(laptop):
    seen = {}

    def environment(root, **options):
        seen.update(options)
        return laptop(**options)

    out = io.StringIO()
    code = cli.main(["doctor"], stdout=out, stderr=io.StringIO(), color=False, environment=environment)
    assert code == 0 and seen["live"] is True
    assert "kill -STOP 2001 2002 (then kill -CONT 2001 2002)" in out.getvalue()
    assert SECRET in out.getvalue()  # what runs now, on the user's own screen
