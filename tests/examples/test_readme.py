"""The README opens as a new user needs it: Install, then a quick start that fits on one screen and
whose commands and options exist; what changed, and when, is in CHANGELOG.md, not in the README."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from cli_runner import invoke

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SCREEN_LINES = 40
# a figure and what it was before it changed: changelog prose, the CHANGELOG's
HISTORY = re.compile(r"\(was [0-9]|as it was before|Re-measured on|\bnow\*\*")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_starts_with_install_then_a_quick_start():
    assert re.findall(r"^## (.+)$", README, re.MULTILINE)[:2] == ["Install", "Quick start"]


def test_the_quick_start_fits_on_one_screen():
    assert len(section("Quick start").strip().splitlines()) <= SCREEN_LINES


def test_every_option_of_the_quick_start_s_commands_is_one_the_command_has():
    commands = [shlex.split(line.split("#", 1)[0]) for block in re.findall(r"```sh\n(.*?)```", section("Quick start"),
                                                                            re.DOTALL)
                for line in block.splitlines() if line.startswith("pairbench ")]
    assert {words[1] for words in commands} >= {"compare", "bench"}
    for words in commands:
        help_text = invoke(words[1], "--help").out
        for option in (w for w in words[2:] if w.startswith("-")):
            assert re.search(rf"(^|[\s,]){re.escape(option)}\b", help_text, re.MULTILINE), (words, option)


def test_what_changed_is_in_the_changelog_not_the_readme():
    assert not HISTORY.findall(README)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "(CHANGELOG.md)" in section("Quick start")
    for target in re.findall(r"\]\(([^)#]+)", changelog):
        assert (REPO / target).exists(), target
