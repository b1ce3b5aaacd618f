"""The top-level command: what a bare `pairbench` and `--help` print, and their exit codes."""

from __future__ import annotations

from cli_runner import invoke


def test_bare_pairbench_prints_the_help_to_stderr_without_calling_it_an_error():
    code, out, err = invoke()
    assert code == 2  # an incomplete command line, as documented under "Exit codes"
    assert out == ""
    assert err.startswith("Usage: pairbench [OPTIONS] COMMAND [ARGS]...")
    assert "error:" not in err
    assert "pairbench compare './old input.txt' './new input.txt'" in err


def test_help_goes_to_stdout_with_exit_code_zero():
    code, out, err = invoke("--help")
    assert code == 0 and err == ""
    assert out.startswith("Usage: pairbench") and "130  interrupted" in out
