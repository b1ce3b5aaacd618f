"""`pairbench run` and `pairbench show`, driven by a scripted executor (no real timing)."""

from __future__ import annotations

import io
import json
import signal

import numpy as np
import pytest
from cli_runner import CliResult, invoke
from fakes import FakeExecutor
from stored import side_samples

from pairbench.errors import EXIT_INTERRUPTED, EXIT_MEASUREMENT, EXIT_RESULT_FILE, EXIT_USAGE
from pairbench.store.journal import journal_path
from pairbench.store.resultfile import read_result


def jitter(base_s: float, seed: int = 0, spread: float = 0.01):
    rng = np.random.default_rng(seed)
    return lambda command, index, clock: base_s * (1 + spread * rng.random())


def test_run_prints_median_with_interval_mean_error_and_rusage(use_executor):
    use_executor(FakeExecutor({"sleep 0.1": jitter(0.1)}))
    result = invoke("run", "--runs", "20", "--seed", "1", "sleep 0.1")
    assert result.code == 0, result.err
    assert "sleep 0.1" in result.out
    assert "median    10" in result.out and "95% CI" in result.out
    assert "standard error, autoregressive" in result.out
    assert "n 20" in result.out and "max RSS" in result.out and "context switches" in result.out
    assert "completed the requested 20 rounds" in result.out


def test_run_takes_exactly_the_requested_runs_plus_warmups(use_executor):
    fake = use_executor(FakeExecutor())
    assert invoke("run", "--runs", "7", "--warmup", "3", "--seed", "1", "sleep 0.01").code == 0
    assert len(fake.calls) == 10


def test_run_interleaves_several_commands_in_random_order_and_says_so(use_executor, tmp_path):
    fake = use_executor(FakeExecutor())
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "30", "--seed", "4", "--json", str(out), "sleep 0.01", "sleep 0.02")
    assert result.code == 0
    assert "interleaved" in result.out and "random order (seed 4)" in result.out
    texts = fake.texts
    rounds = [texts[i:i + 2] for i in range(0, 60, 2)]
    assert all(sorted(r) == ["sleep 0.01", "sleep 0.02"] for r in rounds)  # one of each per round
    firsts = {r[0] for r in rounds}
    assert firsts == {"sleep 0.01", "sleep 0.02"}  # the order varies between rounds
    run = read_result(out)
    a = run.series(0, 0)
    assert list(a["pair"]) == list(range(30))
    assert set(a["slot"]) == {0, 1}


def test_same_seed_gives_the_same_order(use_executor):
    orders = []
    for _ in range(2):
        fake = use_executor(FakeExecutor())
        invoke("run", "--runs", "10", "--seed", "99", "sleep 0.01", "sleep 0.02", "sleep 0.03")
        orders.append(fake.texts)
    assert orders[0] == orders[1]


def test_adaptive_run_stops_at_the_time_budget_after_min_runs(use_executor):
    fake = use_executor(FakeExecutor())
    result = invoke("run", "--max-time", "3s", "--min-runs", "2", "--seed", "1", "sleep 0.5")
    assert result.code == 0
    assert len(fake.calls) == 6
    assert "time budget" in result.out


def test_min_runs_are_honoured_even_beyond_the_time_budget(use_executor):
    fake = use_executor(FakeExecutor())
    invoke("run", "--max-time", "1s", "--min-runs", "5", "--seed", "1", "sleep 2")
    assert len(fake.calls) == 5


def test_max_runs_caps_an_adaptive_run(use_executor):
    fake = use_executor(FakeExecutor())
    result = invoke("run", "--max-runs", "12", "--max-time", "1h", "--seed", "1", "sleep 0.01")
    assert len(fake.calls) == 12 and "--max-runs 12" in result.out


def test_failing_command_stops_the_run_naming_command_sample_and_status(use_executor, tmp_path):
    use_executor(FakeExecutor({"sleep 0.1": [0.1, 0.1, {"duration": 0.1, "status": 2}]}))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "10", "--seed", "1", "--json", str(out), "sleep 0.1")
    assert result.code == EXIT_MEASUREMENT
    assert "'sleep 0.1' failed on sample 3: exit code 2" in result.err
    assert "--ignore-failure" in result.err
    run = read_result(out)  # nothing lost: the two good samples and the failing one are stored
    assert run.state == "failed"
    assert list(run.series(0, 0)["status"]) == [0, 0, 2]


def test_a_run_that_fails_before_any_round_says_no_round_was_completed(use_executor):
    use_executor(FakeExecutor({"sleep 0.1": [{"duration": 0.1, "status": 1}], "sleep 0.2": 0.2}))
    result = invoke("run", "--runs", "5", "--seed", "1", "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_MEASUREMENT
    assert "No round was completed (order seed 1)." in result.out
    assert "each of 0 rounds" not in result.out


def test_failure_numbers_measured_samples_apart_from_warmups(use_executor):
    use_executor(FakeExecutor({"sleep 0.1": [0.1, {"duration": 0.1, "status": 2}]}))
    result = invoke("run", "--runs", "5", "--warmup", "1", "sleep 0.1")
    assert "'sleep 0.1' failed on sample 1: exit code 2" in result.err
    use_executor(FakeExecutor({"sleep 0.1": [0.1, {"duration": 0.1, "status": 2}]}))
    result = invoke("run", "--runs", "5", "--warmup", "3", "sleep 0.1")
    assert "'sleep 0.1' failed on warmup sample 2: exit code 2" in result.err


def test_signal_and_timeout_are_named_in_the_failure(use_executor):
    use_executor(FakeExecutor({"sleep 0.1": [{"duration": 0.1, "status": -9}]}))
    assert "killed by signal 9 (SIGKILL)" in invoke("run", "--runs", "3", "sleep 0.1").err
    use_executor(FakeExecutor({"sleep 0.1": [5.0]}))
    assert "timed out after 1.00 s" in invoke("run", "--runs", "3", "--timeout", "1s", "sleep 0.1").err


def test_ignore_failure_keeps_failed_samples_out_of_the_statistics_and_says_so(use_executor, tmp_path):
    script = [0.1] * 4 + [{"duration": 9.0, "status": 1}] + [0.1] * 5
    use_executor(FakeExecutor({"sleep 0.1": script}))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "10", "-i", "--seed", "1", "--json", str(out), "sleep 0.1")
    assert result.code == 0
    assert "n 9, 1 failed" in result.out
    assert "1 failed sample(s) are stored but left out of these statistics" in result.out
    assert "9.000 s" not in result.out  # the failed 9 s sample is not the max
    assert list(side_samples(out, 0)["status"]).count(1) == 1


def test_ctrl_c_saves_and_summarises_finished_samples_and_exits_130(use_executor, tmp_path):
    use_executor(FakeExecutor({"sleep 0.1": [0.1] * 8 + [KeyboardInterrupt]}))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "50", "--seed", "1", "--json", str(out), "sleep 0.1")
    assert result.code == EXIT_INTERRUPTED
    assert "interrupted" in result.out and "n 8" in result.out
    run = read_result(out)
    assert run.state == "interrupted" and len(run.series(0, 0)) == 8
    assert not journal_path(out).exists()


def test_prepare_runs_untimed_before_every_sample_and_setup_cleanup_once(use_executor, tmp_path):
    fake = use_executor(FakeExecutor({"echo prep": 0.001, "echo setup": 0.0, "echo clean": 0.0},
                                     default=0.01))
    out = tmp_path / "r.json"
    code = invoke("run", "--runs", "3", "--seed", "1", "--prepare", "echo prep", "--setup", "echo setup",
                  "--cleanup", "echo clean", "--json", str(out), "sleep 0.01").code
    assert code == 0
    assert fake.texts == ["echo setup", "echo prep", "sleep 0.01", "echo prep", "sleep 0.01",
                          "echo prep", "sleep 0.01", "echo clean"]
    assert len(side_samples(out, 0)) == 3


def test_cleanup_runs_even_when_a_sample_fails(use_executor):
    fake = use_executor(FakeExecutor({"sleep 0.1": {"duration": 0.1, "status": 1}, "echo clean": 0.0}))
    invoke("run", "--runs", "3", "--cleanup", "echo clean", "sleep 0.1")
    assert fake.texts[-1] == "echo clean"


def test_ctrl_c_during_cleanup_is_noted_and_the_result_still_written(use_executor, tmp_path):
    use_executor(FakeExecutor({"echo clean": KeyboardInterrupt}, default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "3", "--cleanup", "echo clean", "--json", str(out), "sleep 0.01")
    assert result.code == EXIT_INTERRUPTED
    run = read_result(out)
    assert len(run.series(0, 0)) == 3
    assert [(n.code, n.data) for n in run.notes] == [("cleanup-interrupted", {"command": "echo clean"})]
    assert "cleanup interrupted" in result.out


def test_setup_and_cleanup_run_with_ctrl_c_enabled(use_executor, ctrl_c_enabled):
    handlers = []

    def helper(command, index, clock_ns):
        handlers.append(signal.getsignal(signal.SIGINT))
        return 0.0

    use_executor(FakeExecutor({"echo setup": helper, "echo clean": helper}, default=0.01))
    invoke("run", "--runs", "3", "--setup", "echo setup", "--cleanup", "echo clean", "sleep 0.01")
    assert len(handlers) == 2 and signal.SIG_IGN not in handlers


@pytest.fixture
def ctrl_c_enabled():
    """Ctrl-C as from an interactive shell, even when the tests were started with SIGINT ignored
    (pairbench keeps an ignored SIGINT ignored); restored after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_timeout_applies_to_setup_and_cleanup(use_executor):
    fake = use_executor(FakeExecutor({"echo setup": 0.0, "echo clean": 5.0}, default=0.01))
    result = invoke("run", "--runs", "3", "--timeout", "1s", "--setup", "echo setup",
                    "--cleanup", "echo clean", "sleep 0.01")
    assert [c.timeout_ns for c in fake.calls if c.text.startswith("echo")] == [10**9, 10**9]
    assert result.code == EXIT_MEASUREMENT
    assert "--cleanup command 'echo clean' failed: timed out after 1.00 s" in result.err


def test_a_prepare_command_that_times_out_is_reported_as_timed_out(use_executor):
    use_executor(FakeExecutor({"echo prep": 5.0}, default=0.01))
    result = invoke("run", "--runs", "3", "--timeout", "1s", "--prepare", "echo prep", "sleep 0.01")
    assert result.code == EXIT_MEASUREMENT
    assert "--prepare command 'echo prep' failed: timed out after 1.00 s (--timeout)" in result.err


def test_failing_prepare_command_is_reported(use_executor):
    use_executor(FakeExecutor({"echo prep": {"duration": 0, "status": 4}}, default=0.01))
    result = invoke("run", "--runs", "3", "--prepare", "echo prep", "sleep 0.01")
    assert result.code == EXIT_MEASUREMENT and "--prepare command 'echo prep' failed: exit code 4" in result.err


def test_json_document_holds_columns_environment_options_and_argv(use_executor, tmp_path):
    use_executor(FakeExecutor())
    out = tmp_path / "r.json"
    invoke("run", "--runs", "5", "--seed", "3", "--json", str(out), "sleep 0.01")
    document = json.loads(out.read_text())
    assert document["format"] == "pairbench.result/2" and document["state"] == "complete"
    (side,) = document["sides"]
    assert side["command"]["argv"][1:] == ["0.01"] and side["command"]["argv"][0].endswith("sleep")
    (series,) = document["series"]
    assert set(series["samples"]) >= {"wall_ns", "user_ns", "sys_ns", "max_rss_kib", "voluntary_cs",
                                      "involuntary_cs", "status", "seq", "pair", "slot", "iterations", "warmup"}
    assert series["samples"]["wall_ns"] == [10_000_000] * 5
    sampling = document["settings"]["sampling"]
    assert sampling["seed"] == 3 and sampling["runs"] == 5
    assert {"host", "kernel", "cpu_model", "logical_cpus", "timer", "python"} <= set(document["environment"])
    assert document["summaries"][0]["n"] == 5


def test_json_dash_prints_the_document_to_stdout(use_executor):
    use_executor(FakeExecutor())
    result = invoke("run", "--runs", "3", "--json", "-", "sleep 0.01")
    assert json.loads(result.out)["series"][0]["samples"]["wall_ns"] == [10_000_000] * 3


def test_show_reanalyses_a_saved_result(use_executor, tmp_path):
    use_executor(FakeExecutor({"sleep 0.1": jitter(0.1, seed=5)}))
    out = tmp_path / "r.json"
    first = invoke("run", "--runs", "15", "--seed", "2", "--json", str(out), "sleep 0.1")
    shown = invoke("show", str(out))
    assert shown.code == 0
    block = lambda text: text[text.index("sleep 0.1 "):text.index("Stopped")]  # noqa: E731
    assert block(shown.out) == block(first.out)


def test_show_reads_the_journal_of_a_run_that_crashed(use_executor, tmp_path):
    from runs import make_run, side

    from pairbench.measure.sampler import Measured
    from pairbench.model import Sample
    from pairbench.store.journal import Journal

    run = make_run("run", [side("x")], {}).replace(state="running")
    journal = Journal(tmp_path / "r.json", run)
    for i in range(12):
        journal.on_sample(Measured(0, 0, Sample(wall_ns=1_000_000 + i * 1000, seq=i)))
    result = invoke("show", str(tmp_path / "r.json"))
    assert result.code == 0 and "n 12" in result.out and "interrupted" in result.out


def test_show_of_a_malformed_file_fails_with_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "pairbench.result/1", "variants": [')
    result = invoke("show", str(bad))
    assert result.code == EXIT_RESULT_FILE
    assert result.err.count("\n") == 1 and str(bad) in result.err


def test_unknown_program_is_a_usage_error_with_advice():
    result = invoke("run", "--runs", "3", "no-such-program-xyz")
    assert result.code == EXIT_USAGE
    assert "command not found: 'no-such-program-xyz'" in result.err and "./DIR/PROGRAM" in result.err
    assert "--shell" not in result.err


def test_a_shell_builtin_is_a_usage_error_pointing_to_shell():
    result = invoke("run", "--runs", "3", "cd /tmp")
    assert result.code == EXIT_USAGE
    assert "'cd' is a shell builtin" in result.err and "--shell sh" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--runs", "0", "true"], "--runs"),
        (["run", "--max-time", "soon", "true"], "--max-time"),
        (["run", "--name", "a", "--name", "b", "true"], "--name was given 2 time(s) for 1 command(s)"),
        (["run", "--min-runs", "5", "--max-runs", "3", "true"], "--max-runs (3) must not be below"),
        (["run"], "Missing argument"),
        (["run", "--bogus", "true"], "No such option"),
    ],
)
def test_usage_errors_exit_2_with_a_message(args, message, use_executor):
    use_executor(FakeExecutor(default=0.01))
    result = invoke(*args)
    assert result.code == EXIT_USAGE
    assert message in result.err


def test_help_shows_examples_and_exit_codes():
    result = invoke("run", "--help")
    assert result.code == 0
    assert "Examples:" in result.out and "Exit codes:" in result.out and "130" in result.out


def test_shell_mode_measures_and_reports_the_shell_start_up(monkeypatch, tmp_path):
    from pairbench.cli import main

    # one executor for the start-up probe (`sh -c ''`), a fresh one for the run
    out, printed, err = tmp_path / "r.json", io.StringIO(), io.StringIO()
    code = main(["run", "--shell", "sh", "--runs", "3", "--json", str(out), "echo hi | cat"], stdout=printed,
                stderr=err, executor_factory=lambda output: FakeExecutor({"": 0.0008}, default=0.01),
                environment=lambda *a, **k: {})
    result = CliResult(code, printed.getvalue(), err.getvalue())
    assert result.code == 0, result.err
    assert "Commands ran through sh -c; the shell's own start-up costs 800.0 µs (median)" in result.out
    run = read_result(out)
    assert run.sides[0].command.argv == ("/bin/sh", "-c", "echo hi | cat")
    assert run.shell_overhead.median_ns == 800_000


def test_shell_operators_without_a_shell_are_refused_before_anything_runs(use_executor):
    fake = use_executor(FakeExecutor(default=0.01))
    result = invoke("run", "--runs", "3", "echo a | cat")
    assert result.code == EXIT_USAGE and fake.calls == []
    assert "command 'echo a | cat' uses shell syntax ('|')" in result.err and "--shell sh" in result.err
