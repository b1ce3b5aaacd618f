"""Turning command strings into Commands, and measuring the shell's start-up."""

from __future__ import annotations

import os
import shutil

import pytest
from fakes import FakeExecutor

from pairbench.errors import MeasurementError, ProgramNotFound, UsageError
from pairbench.measure.commandline import (
    ShellStartup,
    measure_shell_startup,
    parse_command,
    resolve_program,
    shell_syntax,
)
from pairbench.measure.posix import PosixExecutor
from pairbench.model import Command


def test_words_are_split_like_a_shell_and_program_resolved_on_path():
    cmd = parse_command("""grep -c 'two words' "a \\"b\\"" c\\ d""")
    assert cmd.argv == (shutil.which("grep"), "-c", "two words", 'a "b"', "c d")
    assert os.path.isabs(cmd.argv[0])
    assert cmd.text == """grep -c 'two words' "a \\"b\\"" c\\ d"""
    assert cmd.shell is False


def test_shell_variables_and_operators_without_a_shell_are_refused_not_passed_on():
    with pytest.raises(UsageError, match=r"uses shell syntax \('\$HOME', '\|'\).*--shell sh"):
        parse_command("echo $HOME | wc")
    assert parse_command("echo '$HOME' '|' wc").argv[1:] == ("$HOME", "|", "wc")


def test_shell_mode_passes_the_text_to_sh_unchanged():
    text = "echo $HOME | wc -c > /dev/null; exit 0"
    assert parse_command(text, shell=True) == Command(text, ("/bin/sh", "-c", text), shell=True)


def test_unbalanced_quotes_are_a_usage_error_naming_the_command():
    with pytest.raises(UsageError, match=r"cannot split command \"echo 'oops\".*--shell"):
        parse_command("echo 'oops")


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
@pytest.mark.parametrize("shell", [False, True])
def test_empty_command_is_a_usage_error(text, shell):
    with pytest.raises(UsageError, match="empty command"):
        parse_command(text, shell=shell)


def test_quoted_empty_program_name_is_a_usage_error():
    with pytest.raises(UsageError, match="empty program name"):
        parse_command("'' arg")


@pytest.mark.parametrize("shell", [False, True])
def test_nul_byte_is_refused(shell):
    with pytest.raises(UsageError, match="NUL"):
        parse_command("echo a\0b", shell=shell)


def test_non_string_command_is_refused():
    with pytest.raises(UsageError, match="must be a string"):
        parse_command(["echo", "hi"])


def test_program_found_nowhere_is_a_usage_error_saying_where_it_looked():
    with pytest.raises(ProgramNotFound) as info:
        parse_command("pairbench-no-such-program --flag")
    assert info.value.exit_code == 2
    assert str(info.value) == (
        "command not found: 'pairbench-no-such-program' is neither on PATH nor a file in the current "
        "directory; give the program's path (./DIR/PROGRAM) or add its directory to PATH"
    )


def test_shell_builtin_without_shell_is_a_usage_error_pointing_to_shell():
    with pytest.raises(ProgramNotFound, match=r"'cd' is a shell builtin, not a program: .*--shell sh"):
        parse_command("cd /tmp")


def test_executable_file_in_the_current_directory_runs_as_dot_slash(tmp_path, monkeypatch):
    program = tmp_path / "old.test"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    command = parse_command("old.test -test.bench .")
    assert command.argv == (str(program), "-test.bench", ".")
    assert command.text == "old.test -test.bench ."


def test_a_name_on_path_keeps_its_meaning_over_a_file_of_that_name_here(tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    shadow = tmp_path / "here" / "pbtool"
    shadow.write_text("#!/bin/sh\n")
    shadow.chmod(0o755)
    (tmp_path / "bin").mkdir()
    on_path = tmp_path / "bin" / "pbtool"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.chdir(tmp_path / "here")
    assert resolve_program("pbtool") == str(on_path)
    assert resolve_program("./pbtool") == str(shadow)


def test_unexecutable_file_in_the_current_directory_says_chmod(tmp_path, monkeypatch):
    (tmp_path / "old.test").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProgramNotFound, match=r"cannot execute './old.test': not executable \(chmod \+x it\?\)"):
        parse_command("old.test")


def test_missing_path_with_a_slash_is_command_not_found(tmp_path):
    with pytest.raises(ProgramNotFound, match="no such file"):
        parse_command(f"{tmp_path}/nothing-here")


def test_file_without_execute_bit_is_reported_as_not_executable(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    with pytest.raises(ProgramNotFound, match="not executable"):
        parse_command(str(script))


def test_unexecutable_file_on_path_is_named_in_the_error(tmp_path, monkeypatch):
    (tmp_path / "pbtool").write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProgramNotFound, match=r"found '.*pbtool' on PATH but it is not executable"):
        resolve_program("pbtool")


def test_directory_is_not_executable(tmp_path):
    with pytest.raises(ProgramNotFound, match="directory"):
        parse_command(str(tmp_path))


def test_relative_path_is_made_absolute(tmp_path, monkeypatch):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert parse_command("./tool x").argv == (str(script), "x")


@pytest.mark.parametrize(("text", "found"), [
    ("echo a | wc -l && true", ["|", "&&"]), ("a>b", [">"]), ("a 2>&1", [">&"]), ("(cd x)", ["(", ")"]),
    ("echo ${X}", ["${"]), ('echo "`id`"', ["`"]), ("a\nb", ["\n"]), ("a # note", ["#"]), ("X=1 a", ["X=1"]),
    ("echo 'a|b' \"c;d\" e\\&f", []), ("echo a#b x=1 {n}", []), ("echo '$HOME' \"\\$HOME\"", []),
])
def test_shell_syntax_is_what_a_shell_would_act_on_outside_quotes(text, found):
    assert shell_syntax(text) == found


def test_shell_startup_is_timed_with_sh_and_an_empty_command():
    fake = FakeExecutor({"": [0.001] * 3 + [0.003, 0.001, 0.002, 0.004]})
    startup = measure_shell_startup(fake, runs=4, warmup=3)
    assert startup == ShellStartup(
        shell="/bin/sh",
        n=4,
        median_ns=2_500_000.0,
        min_ns=1_000_000,
        values_ns=(3_000_000, 1_000_000, 2_000_000, 4_000_000),
    )
    assert fake.calls[0].command.argv == ("/bin/sh", "-c", "")
    assert startup.to_dict()["values_ns"] == [3_000_000, 1_000_000, 2_000_000, 4_000_000]


def test_failing_shell_startup_is_a_measurement_error():
    with pytest.raises(MeasurementError, match="shell /bin/sh failed"):
        measure_shell_startup(FakeExecutor({"": {"duration": 0.001, "status": 127}}), runs=3)


@pytest.mark.parametrize("runs", [0, -1, 1.5, True])
def test_shell_startup_needs_a_positive_run_count(runs):
    with pytest.raises(UsageError, match="runs"):
        measure_shell_startup(FakeExecutor(), runs=runs)


@pytest.mark.e2e
def test_real_shell_startup_takes_a_plausible_time():
    with PosixExecutor() as ex:
        startup = measure_shell_startup(ex, runs=10)
    assert startup.n == len(startup.values_ns) == 10
    assert 0 < startup.min_ns <= startup.median_ns < 1_000_000_000  # a few ms; never a second
