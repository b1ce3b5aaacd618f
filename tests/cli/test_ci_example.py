"""The GitHub Actions example runs pairbench with options that exist, and reads the store's URL from
the environment, never from a command line a log would show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runner import invoke

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-actions.yml"


def _invocations() -> list[list[str]]:
    """Every ``pairbench SUBCOMMAND ...`` the workflow's steps run (comments left out), its
    continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", WORKFLOW.read_text())
    lines = [line.split("#")[0] for line in text.splitlines() if not line.lstrip().startswith("#")]
    return [m.group(1).split() for line in lines for m in re.finditer(r"pairbench ((?:[a-z-]+)(?: [^|>&;]*)?)",
                                                                         line) if "'pairbench[" not in line]


@pytest.mark.parametrize("words", _invocations(), ids=lambda w: " ".join(w[:2]))
def test_the_example_workflow_uses_options_pairbench_has(words):
    code, help_text, err = invoke(words[0], "--help")
    assert code == 0, err
    for option in (w for w in words[1:] if w.startswith("--")):
        assert option in help_text, f"pairbench {words[0]} has no {option}"


def test_the_example_workflow_keeps_the_store_password_in_a_secret():
    text = WORKFLOW.read_text()
    assert "PAIRBENCH_STORE: ${{ secrets.PAIRBENCH_STORE }}" in text
    assert not re.search(r"postgresql://[^ ]*:[^@ ]*@(?!localhost)", text.split("# Trying it")[0].replace(
        "postgresql://bench:PASSWORD@db.example.com", ""))
    assert {w[0] for w in _invocations()} >= {"bench", "history", "include-dir"}
