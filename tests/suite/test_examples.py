"""The CI examples (``examples/ci``) call pairbench as it is: every option they give a command is one
that command has, and their shards cover the suite once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runner import invoke

CI = Path(__file__).resolve().parents[2] / "examples" / "ci"
EXAMPLES = sorted(CI.glob("*.y*ml"))


def _commands(text: str) -> list[list[str]]:
    """Each ``pairbench COMMAND ...`` in the file, its lines joined, as words."""
    joined = re.sub(r"\\\n\s*", " ", text)
    joined = re.sub(r"\n\s{10,}(?=[-/a-z\"])", " ", joined)  # folded YAML scalars (>-)
    return [found.split() for found in re.findall(r"pairbench ((?:bench|merge|report)\b[^;\n|]*)", joined)]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_option_an_example_gives_is_an_option_of_its_command(example):
    commands = _commands(example.read_text())
    assert {words[0] for words in commands} >= {"bench", "merge", "report"}
    for words in commands:
        _, help_text, _ = invoke(words[0], "--help")
        for option in (w for w in words if w.startswith("--")):
            assert option.split("=")[0] in help_text, f"{example.name}: {words[0]} has no {option}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_shards_of_an_example_cover_the_suite(example):
    text = example.read_text()
    count = int(re.search(r"(?:SHARDS: |completions: )(\d+)", text).group(1))
    if "matrix" in text:
        assert re.search(r"shard: \[([\d, ]+)\]", text).group(1).replace(" ", "").split(",") == \
            [str(k) for k in range(1, count + 1)]
    else:
        assert "JOB_COMPLETION_INDEX + 1" in text and f'--shard "$shard/{count}"' in text
