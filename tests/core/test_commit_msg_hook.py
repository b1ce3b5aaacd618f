"""The commit-msg hook (scripts/hooks/commit-msg) refuses a subject over 72 characters and passes
the rest; loaded by path, as git would run it."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

HOOK = Path(__file__).resolve().parents[2] / "scripts" / "hooks" / "commit-msg"


def _hook():
    loader = importlib.machinery.SourceFileLoader("commit_msg_hook", str(HOOK))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def _check(tmp_path, message: str) -> int:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return _hook().main(str(path))


def test_a_subject_of_72_characters_passes_and_one_of_73_is_refused_with_where_it_overflows(tmp_path, capsys):
    assert _check(tmp_path, "x" * 72 + "\n\nA body line may be as long as it likes. " * 5) == 0
    assert _check(tmp_path, "é" * 72 + "\n") == 0  # characters, not bytes
    assert _check(tmp_path, "y" * 72 + "z\n") == 1
    assert "73 characters, over 72" in capsys.readouterr().err


def test_the_subject_is_the_first_line_git_keeps(tmp_path):
    comments = "# Please enter the commit message\n" + "#" * 100 + "\n"
    assert _check(tmp_path, "\n" + comments + "Short subject\n\n" + "body " * 40) == 0
    assert _check(tmp_path, comments + "\n" + "w" * 80 + "\n") == 1


def test_the_hook_is_executable_and_run_by_python():
    assert HOOK.stat().st_mode & 0o111 and HOOK.read_text().startswith("#!/usr/bin/env python3\n")
