"""No traceback ever exits 1 (a --fail-on match): a bug is one line and exit 70, and a closed
standard stream is an outcome with its own code, never a crash."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys

import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from fakes import FakeExecutor

from pairbench import cli
from pairbench.errors import EXIT_INTERNAL, EXIT_OK, EXIT_RESULT_FILE, PairbenchError


@pytest.fixture
def signal_handlers_restored():
    """``entry_point`` ignores SIGINT, SIGTERM and SIGHUP just before the process exits: put them
    back after a test that calls it."""
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = {signum: signal.getsignal(signum) for signum in handled}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def _broken(*args, **kwargs):
    raise ZeroDivisionError("division by zero")


def test_an_unexpected_exception_is_one_line_and_exit_70_and_the_samples_are_still_written(
        use_executor, tmp_path, monkeypatch):
    import pairbench.sessions.result

    use_executor(FakeExecutor(default=0.01))
    monkeypatch.setattr(pairbench.sessions.result, "analyse", _broken)
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "4", "--json", str(out), "sleep 0.1")
    assert result.code == EXIT_INTERNAL == 70
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert result.err.startswith("internal error: ZeroDivisionError at ")
    assert "division by zero" in result.err and "please report it" in result.err
    assert len(json.loads(out.read_text())["series"][0]["samples"]["wall_ns"]) == 4


def test_an_unexpected_exception_reading_a_file_is_not_exit_1(tmp_path, monkeypatch):
    import pairbench.cli.show

    monkeypatch.setattr(pairbench.cli.show, "read_result", _broken, raising=False)
    monkeypatch.setattr("pairbench.store.resultfile.read_result", _broken)
    result = invoke("show", str(tmp_path / "r.json"))
    assert result.code == EXIT_INTERNAL and result.err.startswith("internal error: ZeroDivisionError")


def test_a_bare_pairbench_error_is_an_internal_error_not_a_fail_on_match():
    assert PairbenchError("x").exit_code == EXIT_INTERNAL != 1


def test_the_traceback_of_an_internal_error_is_printed_when_asked_for(use_executor, monkeypatch):
    import pairbench.sessions.result

    use_executor(FakeExecutor(default=0.01))
    monkeypatch.setattr(pairbench.sessions.result, "analyse", _broken)
    monkeypatch.setenv("PAIRBENCH_TRACEBACK", "1")
    result = invoke("run", "--runs", "4", "sleep 0.1")
    assert result.code == EXIT_INTERNAL
    assert "Traceback (most recent call last)" in result.err and "internal error:" in result.err


def test_every_exit_code_is_in_the_help_and_the_readme():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    help_text = invoke("run", "--help").out
    for code, words in [(70, "internal error"), (129, "SIGHUP"), (143, "SIGTERM")]:
        assert f"| {code} |" in readme and words in readme
        assert f"  {code} " in help_text and words in help_text


# -- closed standard streams -----------------------------------------------------------


def _main(*args, stdout=None, stderr=None):
    return cli.main(list(args), stdout=stdout, stderr=stderr, color=False,
                    executor_factory=lambda output: FakeExecutor(default=0.01),
                    environment=lambda *a, **k: dict(FIXED_ENVIRONMENT))


def test_a_closed_standard_output_is_exit_4_with_one_line_not_a_traceback(monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)  # what Python sets for `pairbench >&-`
    err = io.StringIO()
    assert _main("run", "--runs", "3", "sleep 0.1", stderr=err) == EXIT_RESULT_FILE
    assert err.getvalue() == ("error: cannot write to standard output "
                              "(it was closed before pairbench started)\n")


def test_a_closed_standard_error_changes_no_exit_code(monkeypatch):
    monkeypatch.setattr(sys, "stderr", None)
    out = io.StringIO()
    assert _main("run", "--runs", "3", "sleep 0.1", stdout=out) == EXIT_OK
    assert "sleep 0.1" in out.getvalue()
    assert _main("run", "--runs", "0", "sleep 0.1", stdout=out) == 2  # a usage error is still one


@pytest.mark.e2e
@pytest.mark.parametrize(("redirect", "code"), [(">&-", 4), ("2>&-", 0), (">&- 2>&-", 4)],
                         ids=["stdout", "stderr", "both"])
def test_real_closed_standard_streams_give_their_exit_code_and_no_traceback(redirect, code):
    result = subprocess.run(["sh", "-c", f'"$0" -m pairbench run --runs 3 true {redirect}; echo "exit $?"',
                             sys.executable], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr
    assert result.stdout.splitlines()[-1] == f"exit {code}"


def test_an_exception_escaping_main_is_still_one_line_and_exit_70(monkeypatch, capfd,
                                                                  signal_handlers_restored):
    from pairbench.cli import app

    monkeypatch.setattr(app, "main", _broken)
    with pytest.raises(SystemExit) as exited:
        app.entry_point()
    assert exited.value.code == EXIT_INTERNAL
    assert capfd.readouterr().err.startswith("internal error: ZeroDivisionError")


def test_a_cli_that_cannot_even_be_loaded_is_one_line_and_exit_70(monkeypatch, capfd,
                                                                   signal_handlers_restored):
    from pairbench import __main__ as main_module

    def missing_dependency():
        raise ModuleNotFoundError("No module named 'numpy'")

    monkeypatch.setattr(main_module, "_load_cli", missing_dependency)
    with pytest.raises(SystemExit) as exited:
        main_module.entry_point()
    assert exited.value.code == EXIT_INTERNAL
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "ModuleNotFoundError: No module named 'numpy'" in err
    assert "reinstall" in err


def test_running_out_of_memory_on_an_input_is_one_line_and_exit_4(tmp_path, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError


    monkeypatch.setattr("pairbench.cli.report.read_and_analyse", exhausted)
    monkeypatch.setattr("pairbench.cli.show.read_and_analyse", exhausted)
    result = invoke("show", str(tmp_path / "r.json"))
    assert result.code == EXIT_RESULT_FILE
    assert result.err.count("\n") == 1 and result.err.startswith("error: out of memory")


def test_an_error_naming_a_hostile_file_shows_its_control_characters_escaped(tmp_path):
    hostile = tmp_path / "x\x1b]0;pwned\x07.json"
    result = invoke("show", str(hostile))
    assert result.code == EXIT_RESULT_FILE and "\x1b" not in result.err and "\x07" not in result.err
    assert "\\x1b]0;pwned\\x07" in result.err
