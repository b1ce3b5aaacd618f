"""No file of the project tells anyone to install ``pairbench`` from a package index: no package
of that name is published yet, and an unclaimed name in an install line invites dependency
confusion (whoever registers it first runs code wherever the line is copied)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEXTS = ["README.md", "action.yml", "docs", "examples", "scripts", "src"]
SUFFIXES = (".md", ".yml", ".yaml", ".py", ".sh", ".txt", "")
# pip install (options)... pairbench, 'pairbench[extra]', pairbench==1.0, -U pairbench: a requirement by name
BY_NAME = re.compile(r"pip3? install\b[^\n`]*?\s['\"]?pairbench(?:\[[\w,]+\])?(?:[=<>!~]=?[\w.]+)?['\"]?(?=\s|$|`)",
                     re.MULTILINE)


def _files():
    for name in TEXTS:
        path = REPO / name
        for file in ([path] if path.is_file() else sorted(path.rglob("*"))):
            if file.is_file() and file.suffix in SUFFIXES and ".egg-info" not in str(file):
                yield file


def test_the_pattern_finds_an_install_of_the_package_by_name():
    for line in ("pip install pairbench", "pip install 'pairbench[postgresql]'", "pip install -U pairbench",
                 "pip3 install --force-reinstall pairbench==0.2.0"):
        assert BY_NAME.search(line), line
    for line in ("pip install .", "pip install '.[postgresql]'", "pip install dist/pairbench-0.2.0-py3-none-any.whl",
                 "pip install \"$GITHUB_ACTION_PATH\"", "pip install ./pairbench"):
        assert not BY_NAME.search(line), line


def test_no_install_line_takes_pairbench_from_a_package_index():
    found = [f"{file.relative_to(REPO)}: {m.group(0)}" for file in _files()
             for m in BY_NAME.finditer(file.read_text(errors="replace"))]
    assert not found, "\n".join(found)
