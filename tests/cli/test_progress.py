"""The live progress line on a terminal: rounds, the bar, and compare's current effect (scripted executor)."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor

from pairbench.cli import progress

REDRAW = "\r\x1b[2K"
BASE, CAND = "sleep 0.1", "sleep 0.2"  # real programs, so the commands parse; durations are scripted


def noisy(ratio: float, *, sd: float, seed: int = 0):
    """A script: CAND takes ``ratio`` times BASE, both with independent log-normal noise."""
    rng = np.random.default_rng(seed)
    return lambda command, index, clock_ns: (
        0.05 * (ratio if command.text == CAND else 1.0) * float(np.exp(rng.normal(0.0, sd))))


class Terminal(io.StringIO):
    """A standard error that says it is a terminal, so the redrawn progress line is used."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def every_redraw(monkeypatch):
    """Redraw on every sample (a scripted run takes no real time), on a wide terminal."""
    monkeypatch.setattr(progress, "TTY_REDRAW_S", 0.0)
    monkeypatch.setenv("COLUMNS", "200")


def progress_lines(*args: str) -> list[str]:
    """The successive progress lines drawn while ``pairbench ARGS`` runs."""
    err = Terminal()
    code = invoke(*args, stderr=err).code
    assert code == 0, err.getvalue()
    drawn = err.getvalue().split("Result written")[0].split(REDRAW)
    return [line for line in drawn if line.strip()]


def test_fixed_runs_fill_the_bar_by_rounds(use_executor, every_redraw):
    use_executor(FakeExecutor(default=0.01))
    lines = progress_lines("run", "--runs", "10", "--warmup", "2", "--seed", "1", "sleep 0.01")
    assert lines[0].startswith(f"[{'·' * 20}] warming up")
    halfway = [line for line in lines if "5/10 rounds" in line]
    assert halfway and halfway[0].startswith(f"[{'█' * 10}{'·' * 10}] 5/10 rounds")
    assert lines[-1].startswith(f"[{'█' * 20}] 10/10 rounds")


def test_compare_with_fixed_runs_shows_the_current_effect_and_its_interval(use_executor, every_redraw):
    use_executor(FakeExecutor(noisy(1.05, sd=0.01)))
    lines = progress_lines("compare", "--runs", "30", "--seed", "1", BASE, CAND)
    assert "effect: collecting rounds" in lines[0]
    match = re.search(r"30/30 rounds, .* elapsed  effect \+(\d\.\d)% \[\+\d\.\d%, \+\d\.\d%\]$", lines[-1])
    assert match and 3.0 < float(match.group(1)) < 7.0, lines[-1]


def test_adaptive_compare_fills_the_bar_by_the_time_budget_and_shows_the_effect(use_executor, every_redraw):
    use_executor(FakeExecutor(noisy(1.0, sd=0.05)))
    lines = progress_lines("compare", "--max-time", "4s", "--seed", "2", BASE, CAND)
    assert re.match(r"\[█{20}\] \d+ rounds, .* elapsed  effect [+-]\d", lines[-1]), lines[-1]


HOSTILE_LISTING = r"""#!/bin/sh
for a; do case $a in --benchmark_list_tests*) printf 'BM_\033]0;PWNED\007\033[2J\n'; exit 0;; --benchmark_out=*) out=${a#*=};; esac; done
printf '{"context":{},"benchmarks":[{"name":"BM_\\u001b]0;PWNED\\u0007\\u001b[2J","run_type":"iteration","iterations":1000,"real_time":1000,"cpu_time":1000,"time_unit":"ns"}]}' > "$out"
"""


@pytest.mark.parametrize("kind", [progress.PlainProgress, progress.TtyProgress])
def test_progress_label_shows_control_characters_of_a_name_made_visible(kind):
    from pairbench.parsers import parse_settings

    err = Terminal()
    sampling = parse_settings("bench", ("x",), {"runs": "4"}).sampling
    display = kind(type("Io", (), {"stderr": err, "err": lambda self, line: err.write(line + "\n")})(),
                   sampling, 1, clock=lambda: 1e9, label="[1/3] BM_\x1b]0;PWNED\x07\x1b[2J \x9b31m")
    display.draw(display.status_line(), None)
    drawn = err.getvalue().replace(REDRAW, "")
    assert "\x1b]" not in drawn and "\x07" not in drawn and "\x9b" not in drawn
    assert "BM_\\x1b]0;PWNED\\x07\\x1b[2J \\x9b31m" in drawn


@pytest.mark.e2e
def test_bench_progress_line_on_a_terminal_never_carries_a_listed_names_escapes(tmp_path, every_redraw):
    """The red-team audit's G1: a Google Benchmark listing whose name holds a window-title OSC and a
    screen erase reached the terminal raw on the progress line."""
    program = tmp_path / "gb.sh"
    program.write_text(HOSTILE_LISTING)
    program.chmod(0o755)
    err = Terminal()
    code = invoke("bench", "--harness", "gbench", str(program), "--runs", "8", "--max-time", "1s",
                  "--no-store", stderr=err).code
    assert code == 0, err.getvalue()
    assert "PWNED" in err.getvalue()
    assert "\x1b]0;" not in err.getvalue() and "\x07" not in err.getvalue()
