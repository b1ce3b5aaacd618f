"""Habits hyperfine users bring: shell syntax, -S/-N, hyperfine's short options, parameter scans,
exports to standard output. Each works as it does in hyperfine or is refused saying how to fix it;
none is silently misread (scripted executor, no real timing)."""

from __future__ import annotations

import json
import re
import shlex
import shutil

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor
from stored import comparisons, side_samples

from pairbench.errors import EXIT_MEASUREMENT, EXIT_OK, EXIT_USAGE
from pairbench.store.resultfile import read_result

BASE, CAND = "sleep 0.1", "sleep 0.2"


class Reusable(FakeExecutor):
    """A scripted executor that outlives ``close``: the shell's start-up probe and the run share it."""

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- shell syntax (item 21)


@pytest.mark.parametrize(("command", "shown"), [
    ("echo hi | tr a-z A-Z", "'|'"),
    ("make && make test", "'&&'"),
    ("echo A >> f", "'>>'"),
    ("sort < data.txt", "'<'"),
    ("sleep 1; echo done", "';'"),
    ("echo $HOME", "'$HOME'"),
    ('echo "$(date)"', "'$('"),
    ("echo `date`", "'`'"),
    ("cd build&&make", "'&&'"),
    ("LC_ALL=C sort f", "'LC_ALL=C'"),
])
def test_a_command_with_shell_syntax_is_refused_without_a_shell_saying_how_to_fix_it(use_executor, command, shown):
    fake = use_executor(FakeExecutor(default=0.01))
    result = invoke("run", "--runs", "3", command)
    assert result.code == EXIT_USAGE, result.out + result.err
    assert f"command {command!r} uses shell syntax ({shown}" in result.err
    assert "add --shell sh (or -S bash)" in result.err and "quote" in result.err
    assert fake.calls == []  # refused before anything ran


@pytest.mark.parametrize("command", ["echo '|' '&&' '$HOME'", 'echo "a;b" "x > y"', r"echo \| \$HOME",
                                     "grep -c 'a$' f", "echo a=b", "python3 -c 'print(1)'"])
def test_quoted_shell_characters_reach_the_program_as_they_are(use_executor, command):
    use_executor(FakeExecutor(default=0.01))
    assert invoke("run", "--runs", "3", command).code == EXIT_OK


def test_the_same_pipeline_runs_through_the_shell_when_asked(use_executor, tmp_path):
    use_executor(Reusable(default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--shell", "sh", "--runs", "3", "--json", str(out), "echo hi | tr a-z A-Z")
    assert result.code == EXIT_OK, result.err
    assert read_result(out).sides[0].command.argv == ("/bin/sh", "-c", "echo hi | tr a-z A-Z")


def test_helper_commands_go_through_sh_like_hyperfines(use_executor):
    fake = use_executor(FakeExecutor({"echo A >> f": 0.0, "make && make install": 0.0, "rm -f f": 0.0,
                                      "kill %1; true": 0.0}, default=0.01))
    result = invoke("run", "--runs", "2", "--warmup", "0", "--seed", "1", "--prepare", "echo A >> f",
                    "--setup", "make && make install", "--cleanup", "rm -f f", "--conclude", "kill %1; true",
                    "sleep 0.01")
    assert result.code == EXIT_OK, result.err
    helpers = {call.text: call.command.argv for call in fake.calls if call.text != "sleep 0.01"}
    assert helpers == {text: ("/bin/sh", "-c", text) for text in
                       ("echo A >> f", "make && make install", "rm -f f", "kill %1; true")}
    assert fake.texts == ["make && make install", "echo A >> f", "sleep 0.01", "kill %1; true",
                          "echo A >> f", "sleep 0.01", "kill %1; true", "rm -f f"]


def test_helper_commands_use_the_shell_given_with_dash_s(use_executor, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: f"/usr/bin/{name}")
    fake = use_executor(Reusable(default=0.01))
    assert invoke("run", "-S", "bash", "--runs", "1", "--warmup", "0", "-p", "echo p", "true").code == 0
    assert [c.command.argv for c in fake.calls if c.text == "echo p"] == [("/usr/bin/bash", "-c", "echo p")]


def test_one_prepare_per_command_when_given_once_per_command(use_executor):
    fake = use_executor(FakeExecutor({"echo pa": 0.0, "echo pb": 0.0}, default=0.01))
    result = invoke("run", "--runs", "6", "--warmup", "0", "--seed", "2", "--prepare", "echo pa",
                    "--prepare", "echo pb", "sleep 0.01", "sleep 0.02")
    assert result.code == EXIT_OK, result.err
    before = {fake.texts[i + 1]: set() for i in range(0, len(fake.texts), 2)}
    for i in range(0, len(fake.texts), 2):
        before[fake.texts[i + 1]].add(fake.texts[i])
    assert before == {"sleep 0.01": {"echo pa"}, "sleep 0.02": {"echo pb"}}


def test_a_prepare_count_that_is_neither_one_nor_one_per_command_is_refused(use_executor):
    result = invoke("run", "--prepare", "a", "--prepare", "b", "sleep 0.01", "sleep 0.02", "sleep 0.03")
    assert result.code == EXIT_USAGE
    assert "--prepare was given 2 times for 3 commands: give it once (for every command) or once per command" \
        in result.err


def test_a_failing_conclude_is_reported_like_a_failing_prepare(use_executor):
    use_executor(FakeExecutor({"echo c": {"duration": 0, "status": 5}}, default=0.01))
    result = invoke("run", "--runs", "3", "--conclude", "echo c", "sleep 0.01")
    assert result.code == EXIT_MEASUREMENT
    assert "--conclude command 'echo c' failed: exit code 5" in result.err


# --------------------------------------------------------------------------- -S/--shell and -N (item 22)


def test_shell_takes_the_shell_as_hyperfine_does_so_bash_is_not_benchmarked(use_executor, monkeypatch, tmp_path):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: f"/usr/bin/{name}")
    fake = use_executor(Reusable(default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--shell", "bash", "--runs", "2", "--warmup", "0", "--json", str(out),
                    "echo hi | cat")
    assert result.code == EXIT_OK, result.err
    run = read_result(out)
    assert [side.name for side in run.sides] == ["echo hi | cat"]
    assert run.sides[0].command.argv == ("/usr/bin/bash", "-c", "echo hi | cat")
    assert {c.command.argv for c in fake.calls} >= {("/usr/bin/bash", "-c", "")}  # its start-up, measured
    assert "Commands ran through bash -c" in result.out


@pytest.mark.parametrize("flags", [["-N"], ["--shell", "none"], ["-S", "none"]])
def test_no_shell_runs_commands_directly(use_executor, flags, tmp_path):
    use_executor(FakeExecutor(default=0.01))
    out = tmp_path / "r.json"
    assert invoke("run", *flags, "--runs", "2", "--json", str(out), "sleep 0.01").code == EXIT_OK
    assert read_result(out).sides[0].command.shell is False


def test_dash_n_and_a_shell_contradict(use_executor):
    result = invoke("run", "-N", "-S", "bash", "sleep 0.01")
    assert result.code == EXIT_USAGE and "-N (no shell) and --shell bash contradict" in result.err


def test_shell_given_a_command_instead_of_a_shell_is_refused(use_executor):
    """The old flag: `--shell 'sleep 0.1' 'sleep 0.2'` must not make `sleep 0.1` the shell."""
    fake = use_executor(FakeExecutor(default=0.01))
    result = invoke("compare", "--shell", BASE, CAND, "sleep 0.3")
    assert result.code == EXIT_USAGE
    assert "--shell takes the shell that runs the commands" in result.err
    assert "got 'sleep 0.1'" in result.err and fake.calls == []


def test_a_shell_given_by_its_path_is_taken_as_it_is(use_executor, tmp_path):
    use_executor(Reusable(default=0.01))
    out = tmp_path / "r.json"
    assert invoke("run", "-S", "/bin/sh -e", "--runs", "1", "--json", str(out), "true").code == EXIT_OK
    assert read_result(out).sides[0].command.argv == ("/bin/sh", "-e", "-c", "true")


# --------------------------------------------------------------------------- option parity (item 23)


def test_hyperfines_short_options_mean_what_they_mean_there(use_executor, tmp_path):
    fake = use_executor(FakeExecutor({"echo p": 0.0, "echo s": 0.0, "echo c": 0.0}, default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "2", "-m", "3", "-M", "4", "-p", "echo p", "-s", "echo s", "-c", "echo c",
                    "-N", "--max-time", "1h", "--json", str(out), "sleep 0.01")
    assert result.code == EXIT_OK, result.err
    sampling = read_result(out).settings.sampling
    assert (sampling.warmup, sampling.min_runs, sampling.max_runs) == (2, 3, 4)
    assert (sampling.prepare, sampling.setup, sampling.cleanup) == (("echo p",), "echo s", "echo c")
    assert fake.texts.count("sleep 0.01") == 6 and fake.texts[0] == "echo s" and fake.texts[-1] == "echo c"


@pytest.mark.parametrize("argv", [["-V"], ["--version"], ["run", "-V"], ["compare", "-V"]])
def test_dash_capital_v_prints_the_version(argv):
    from pairbench import __version__

    result = invoke(*argv)
    assert result.code == 0 and result.out == f"pairbench, version {__version__}\n"


def test_export_json_writes_hyperfines_schema_so_a_hyperfine_script_reads_it(use_executor, tmp_path):
    use_executor(FakeExecutor({"gzip -1": [0.10, 0.12, 0.11, 0.10], "gzip -2": [0.20, 0.22, 0.21, 0.20]}))
    out = tmp_path / "hf.json"
    assert invoke("run", "--runs", "4", "--warmup", "0", "--export-json", str(out), "gzip -1", "gzip -2").code == EXIT_OK
    results = json.loads(out.read_text())["results"]
    assert [r["command"] for r in results] == ["gzip -1", "gzip -2"]
    first = results[0]
    assert set(first) == {"command", "mean", "stddev", "median", "user", "system", "min", "max", "times",
                          "exit_codes"}
    assert sorted(first["times"]) == pytest.approx([0.10, 0.10, 0.11, 0.12])
    assert first["mean"] == pytest.approx(0.1075) and first["median"] == pytest.approx(0.105)
    assert first["stddev"] == pytest.approx(float(np.std([0.10, 0.12, 0.11, 0.10], ddof=1)))
    assert (first["min"], first["max"]) == pytest.approx((0.10, 0.12)) and first["exit_codes"] == [0] * 4


def test_export_json_names_parameter_values_as_hyperfine_does(use_executor, tmp_path):
    use_executor(FakeExecutor({"sleep 0.1": 0.1, "sleep 0.2": 0.2}))
    out = tmp_path / "hf.json"
    assert invoke("run", "-L", "t", "0.1,0.2", "--runs", "3", "--export-json", str(out), "sleep {t}").code == EXIT_OK
    results = json.loads(out.read_text())["results"]
    assert [(r["command"], r["parameters"]) for r in results] == [("sleep 0.1", {"t": "0.1"}),
                                                                  ("sleep 0.2", {"t": "0.2"})]


def test_json_and_export_json_write_pairbenchs_document_and_hyperfines_side_by_side(use_executor, tmp_path):
    use_executor(FakeExecutor(default=0.01))
    ours, theirs = tmp_path / "r.json", tmp_path / "hf.json"
    result = invoke("run", "--runs", "3", "--json", str(ours), "--export-json", str(theirs), "sleep 0.01")
    assert result.code == EXIT_OK, result.err
    assert json.loads(ours.read_text())["format"] == "pairbench.result/2" and len(side_samples(ours)) == 3
    assert "format" not in json.loads(theirs.read_text())


@pytest.mark.parametrize(("option", "starts"), [
    ("--export-markdown", "### pairbench run"), ("--export-csv", "benchmark,side"), ("--export-json", '{\n  "results"'),
    ("--export-html", "<!DOCTYPE html>")])
def test_a_dash_as_an_export_file_prints_that_export_instead_of_the_terminal_report(use_executor, tmp_path,
                                                                                   option, starts):
    use_executor(FakeExecutor(default=0.01))
    result = invoke("run", "--runs", "3", "--seed", "1", option, "-", "sleep 0.01")
    assert result.code == EXIT_OK, result.err
    assert result.out.lstrip().startswith(starts), result.out[:200]
    assert "median    10" not in result.out and not list(tmp_path.iterdir())


def test_two_outputs_to_standard_output_are_refused(use_executor):
    result = invoke("run", "--json", "-", "--export-markdown", "-", "true")
    assert result.code == EXIT_USAGE
    assert "--json and --export-markdown both write to standard output (-)" in result.err


def test_output_pipe_is_hyperfines_pipe_not_a_file_named_pipe(tmp_path, monkeypatch):
    """The executor gets a pipe to write to (a FIFO it opens by path) that pairbench drains: more
    than a pipe holds goes through, and nothing named pipe is left behind."""
    import io
    import os
    import stat

    from pairbench import cli

    monkeypatch.chdir(tmp_path)
    outputs = []

    def executor_factory(output):
        outputs.append(output)
        fd = os.open(output.path, os.O_WRONLY)  # as the executor opens an output file
        assert stat.S_ISFIFO(os.fstat(fd).st_mode)
        os.write(fd, b"x" * 200_000)  # a pipe holds 64 KiB: this returns only if it is drained
        os.close(fd)
        return FakeExecutor(default=0.01)

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["run", "--output", "pipe", "--runs", "2", "sleep 0.01"], stdout=out, stderr=err,
                    color=False, executor_factory=executor_factory, environment=lambda *a, **k: {})
    assert code == EXIT_OK, err.getvalue()
    assert [o.mode for o in outputs] == ["file"]
    assert not os.path.exists(outputs[0].path) and not (tmp_path / "pipe").exists()


def test_a_file_named_pipe_is_written_as_dot_slash_pipe(use_executor, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from pairbench.parsers import parse_settings

    assert parse_settings("run", ["true"], {"output": "./pipe"}).sampling.output == "./pipe"
    assert parse_settings("run", ["true"], {"output": "pipe"}).sampling.output == "pipe"


@pytest.mark.parametrize(("unit", "shown"), [("millisecond", "10.00 ms"), ("ms", "10.00 ms"),
                                             ("second", "0.01000 s"), ("microsecond", "10000 µs")])
def test_time_unit_shows_every_duration_in_that_unit(use_executor, unit, shown):
    use_executor(FakeExecutor(default=0.01))
    result = invoke("run", "-u", unit, "--runs", "3", "sleep 0.01")
    assert result.code == EXIT_OK, result.err
    assert f"median    {shown}" in result.out


def test_a_time_unit_hyperfine_does_not_know_is_refused():
    result = invoke("run", "--time-unit", "fortnight", "true")
    assert result.code == EXIT_USAGE and "--time-unit must be one of" in result.err


def test_sort_mean_time_orders_the_summaries_fastest_first(use_executor):
    use_executor(FakeExecutor({"sleep 0.3": 0.3, "sleep 0.1": 0.1, "sleep 0.2": 0.2}))
    result = invoke("run", "--sort", "mean-time", "--runs", "3", "sleep 0.3", "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_OK, result.err
    order = [result.out.index(f"\nsleep 0.{k}") for k in (1, 2, 3)]
    assert order == sorted(order)
    given = invoke("run", "--sort", "command", "--runs", "3", "sleep 0.3", "sleep 0.1", "sleep 0.2").out
    order = [given.index(f"\nsleep 0.{k}") for k in (3, 1, 2)]
    assert order == sorted(order)


def test_input_feeds_a_file_to_each_commands_standard_input(use_executor, tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("hello\n")
    use_executor(Reusable(default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--input", str(data), "--runs", "2", "--json", str(out), "wc -l")
    assert result.code == EXIT_OK, result.err
    (side,) = read_result(out).sides
    assert side.command.argv == ("/bin/sh", "-c", f'exec "$@" < {shlex.quote(str(data))}', "sh",
                                 shutil.which("wc"), "-l")
    assert "Commands ran through sh -c" in result.out  # its start-up is in every sample, and said


def test_input_that_cannot_be_read_is_refused_before_anything_runs(use_executor, tmp_path):
    fake = use_executor(FakeExecutor(default=0.01))
    result = invoke("run", "--input", str(tmp_path / "missing.txt"), "true")
    assert result.code == EXIT_USAGE and "--input" in result.err and fake.calls == []


# --------------------------------------------------------------------------- parameters (item 23)


def test_parameter_list_values_become_benchmark_parameters_of_one_side(use_executor, tmp_path):
    fake = use_executor(FakeExecutor({"sleep 0.1": 0.1, "sleep 0.2": 0.2}))
    out = tmp_path / "r.json"
    result = invoke("run", "-L", "t", "0.1,0.2", "--runs", "4", "--warmup", "0", "--seed", "3", "--json", str(out),
                    "sleep {t}")
    assert result.code == EXIT_OK, result.err
    run = read_result(out)
    assert [side.name for side in run.sides] == ["sleep {t}"]
    assert [key.label for key in run.benchmarks] == ["command[t=0.1]", "command[t=0.2]"]
    assert [list(run.series(b, 0).values()) for b in range(2)] == [[1e8] * 4, [2e8] * 4]
    assert sorted(fake.texts) == ["sleep 0.1"] * 4 + ["sleep 0.2"] * 4
    headings = [line for line in result.out.splitlines() if line.startswith("sleep")]
    assert [h.split(" (")[0] for h in headings] == ["sleep 0.1", "sleep 0.2"]
    assert "{t}" not in result.out


def test_a_run_of_several_values_ends_with_how_many_times_faster_the_fastest_ran(use_executor):
    use_executor(FakeExecutor({"zstd -T1": [0.30, 0.31, 0.30, 0.32, 0.30, 0.33, 0.31, 0.30],
                               "zstd -T2": [0.20, 0.21, 0.20, 0.22, 0.20, 0.21, 0.20, 0.20],
                               "zstd -T4": [0.10, 0.11, 0.10, 0.10, 0.12, 0.10, 0.11, 0.10]}))
    result = invoke("run", "-L", "threads", "1,2,4", "--runs", "8", "--warmup", "0", "--seed", "3",
                    "zstd -T{threads}")
    assert result.code == EXIT_OK, result.err
    summary = result.out[result.out.index("Summary:"):].splitlines()
    assert summary[0] == "Summary: zstd -T4 ran"
    assert re.fullmatch(r"  3\.\d\d \[\d\.\d\d, \d\.\d\d\] times faster than zstd -T1", summary[1])
    assert re.fullmatch(r"  2\.\d\d \[\d\.\d\d, \d\.\d\d\] times faster than zstd -T2", summary[2])
    assert summary[3] == "  (median of the per-round ratios over 8 paired rounds; 95% interval each, sign test)"


def test_a_parameter_scan_compares_each_candidate_with_the_baseline_per_value(use_executor, tmp_path):
    script = {f"sleep {n}": 0.01 * n for n in (1, 2, 3)} | {f"sleep {n}.5": 0.01 * n * 1.5 for n in (1, 2, 3)}
    use_executor(FakeExecutor(script))
    out = tmp_path / "r.json"
    result = invoke("compare", "-P", "n", "1", "3", "--runs", "12", "--warmup", "0", "--json", str(out),
                    "sleep {n}", "sleep {n}.5")
    assert result.code == EXIT_OK, result.err
    found = comparisons(out)
    assert [(c["benchmark"]["params"], c["verdict"]) for c in found] == [
        ({"n": "1"}, "slower"), ({"n": "2"}, "slower"), ({"n": "3"}, "slower")]
    assert [c["baseline"] for c in found] == ["sleep {n}"] * 3
    assert "command[n=2] · sleep {n}.5 is 50.0% slower than sleep {n}" in result.out


def test_every_round_runs_every_side_and_parameter_value_once_in_a_fresh_random_order(use_executor):
    fake = use_executor(FakeExecutor(default=0.01))
    invoke("compare", "-L", "x", "a,b,c", "--runs", "30", "--warmup", "0", "--seed", "5",
           "sleep 0.01 {x}", "sleep 0.02 {x}")
    rounds = [tuple(fake.texts[i:i + 6]) for i in range(0, 180, 6)]
    everything = sorted(f"sleep 0.0{k} {x}" for k in (1, 2) for x in "abc")
    assert all(sorted(r) == everything for r in rounds)
    assert len(set(rounds)) == 30  # orders vary: sides and parameter values interleaved, not in blocks
    firsts = {r[0] for r in rounds}
    assert len(firsts) == 6


def test_parameter_step_size_scans_decimals_exactly(use_executor, tmp_path):
    fake = use_executor(FakeExecutor(default=0.01))
    out = tmp_path / "r.json"
    invoke("run", "-P", "d", "0.3", "0.7", "-D", "0.2", "--runs", "1", "--warmup", "0", "--json", str(out),
           "sleep {d}")
    assert [dict(key.params)["d"] for key in read_result(out).benchmarks] == ["0.3", "0.5", "0.7"]
    assert sorted(fake.texts) == ["sleep 0.3", "sleep 0.5", "sleep 0.7"]


def test_several_parameters_give_every_combination(use_executor, tmp_path):
    use_executor(FakeExecutor(default=0.01))
    out = tmp_path / "r.json"
    invoke("run", "-L", "a", "1,2", "-L", "b", "x,y", "--runs", "1", "--json", str(out), "echo {a} {b}")
    assert [key.label for key in read_result(out).benchmarks] == [
        "command[a=1,b=x]", "command[a=1,b=y]", "command[a=2,b=x]", "command[a=2,b=y]"]


def test_parameters_are_substituted_in_helper_commands(use_executor):
    fake = use_executor(FakeExecutor(default=0.0))
    invoke("run", "-L", "n", "1,2", "--runs", "1", "--warmup", "0", "--seed", "1", "--setup", "make N={n}",
           "--prepare", "touch {n}", "sleep {n}")
    assert fake.texts[0] == "make N=1 && make N=2"
    pairs = {fake.texts[i + 1]: fake.texts[i] for i in range(1, len(fake.texts) - 1, 2)}
    assert pairs == {"sleep 1": "touch 1", "sleep 2": "touch 2"}


@pytest.mark.parametrize(("args", "message"), [
    (["-P", "n", "1", "x"], "-P/--parameter-scan n: MAX must be a number, got 'x'"),
    (["-P", "n", "1.5", "3"], "-P/--parameter-scan n: without -D, MIN and MAX must be whole numbers"),
    (["-P", "n", "5", "1"], "-P/--parameter-scan n: MIN (5) must not be above MAX (1)"),
    (["-P", "n", "1", "3", "-D", "0"], "-D/--parameter-step-size must be a positive number"),
    (["-D", "2"], "-D/--parameter-step-size needs -P/--parameter-scan"),
    (["-L", "n", "1,1"], "-L/--parameter-list n: the value '1' is given twice"),
    (["-L", "n", "1", "-L", "n", "2"], "the parameter 'n' is given twice"),
    (["-L", "m", "1,2"], "the parameter 'm' appears in no command (write {m} where its value goes)"),
    (["-P", "n", "1", "100000"], "100000 parameter combinations are more than 1000"),
])
def test_bad_parameters_are_refused_naming_the_option(use_executor, args, message):
    fake = use_executor(FakeExecutor(default=0.01))
    result = invoke("run", *args, "sleep {n}")
    assert result.code == EXIT_USAGE, result.out
    assert message in result.err and fake.calls == []


def test_stored_parameters_read_back_and_show_prints_each_benchmark(use_executor, tmp_path):
    use_executor(FakeExecutor(default=0.01))
    out = tmp_path / "r.json"
    first = invoke("run", "-L", "t", "a,b", "--runs", "5", "--seed", "1", "--json", str(out), "sleep 0.01 {t}")
    run = read_result(out)
    assert run.settings.sampling.parameters == (("t", ("a", "b")),)
    shown = invoke("show", str(out))
    assert shown.code == 0 and "sleep 0.01 b" in shown.out and "{t}" not in shown.out
    assert shown.out.split("Stopped")[0].split("\n", 2)[2] == first.out.split("Stopped")[0].split("\n", 2)[2]


# --------------------------------------------------------------------------- reasons in the help (item 24)


@pytest.mark.parametrize("command", ["run", "compare"])
def test_the_help_says_why_outliers_are_never_dropped(command):
    result = invoke(command, "--help")
    text = " ".join(result.out.split())
    assert "Outliers are reported, never dropped" in text
    assert "doubled the false changes" in text and "hyperfine #837" in text


def test_the_docs_say_why_outliers_are_never_dropped():
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
    readme = " ".join(page.read_text(encoding="utf-8").split())
    assert "Outliers are reported, never dropped" in readme and "hyperfine #837" in readme
    assert "from 5% to about 10%" in readme
