"""The top-level command: what a bare `pairbench` and `--help` print, and their exit codes."""

from __future__ import annotations

import click
import pytest
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


def _sections(text: str) -> dict[str, list[str]]:
    """The lines of each "Heading:" section of a --help text, by heading."""
    sections, current = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and line.strip():
            current.append(line)
    return sections


def _options(lines: list[str]) -> list[str]:
    """The option names listed in help lines (``-w, --warmup N`` gives -w and --warmup)."""
    return [word.rstrip(",") for line in lines if line.startswith("  -")
            for word in line.split("  ")[1].split() if word.startswith("-")]


HEADINGS = ["Options", "Sampling", "Around each sample", "Verdicts", "Results", "As hyperfine takes them"]


@pytest.mark.parametrize("command", ["run", "compare", "bench", "confirm", "bisect"])
def test_a_measuring_commands_help_groups_its_options_and_lists_each_once(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    sections = _sections(invoke(command, "--help").out)
    assert [title for title in HEADINGS if title in sections] == list(sections)  # in this order
    assert "--max-time" in _options(sections["Sampling"])
    listed = [name for title in sections for name in _options(sections[title])]
    assert len(listed) == len(set(listed))  # each option once
    declared = {name for param in _command(command).get_params(click.Context(_command(command)))
                if isinstance(param, click.Option)
                for name in param.opts + param.secondary_opts}
    assert set(listed) == declared  # nothing left out, nothing added: only the help changed


def test_the_options_kept_for_hyperfines_users_are_listed_together(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    together = _options(_sections(invoke("compare", "--help").out)["As hyperfine takes them"])
    assert {"-N", "--conclude", "-P", "-D", "-L", "--export-json", "--time-unit", "--sort", "-V"} <= set(together)


def test_the_sampling_options_read_the_same_in_run_and_compare(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    sampling = [_sections(invoke(command, "--help").out)["Sampling"] for command in ("run", "compare")]
    assert _options(sampling[0]) == _options(sampling[1])  # the defaults differ (warm-up)


def _command(name: str) -> click.Command:
    from pairbench.cli.app import cli

    return cli.get_command(click.Context(cli), name)
