"""Check that what a former README said has a home: every paragraph, list item, table row and code
line of ``README.md`` at a git revision is found, word for word (whitespace aside), in today's
README or a page under ``docs/``; the rest is listed, by section, for a reader to check by hand.

    python scripts/readme_moved.py ae80590        # the README before the reference moved out

Links are compared by their text (a link's target changes when the text moves to another page),
and a paragraph found only in parts counts as found when each of its sentences is.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def normal(text: str) -> str:
    text = re.sub(r"\]\([^)]*\)", "]", text)  # links by their text
    # a citation of the results, by file or by section: the one file became one per study
    text = re.sub(r"\[?`?(?:benchmarks/)?(?:RESULTS\.md|results/[\w-]+\.md)`?\]?(?:,\s*\"[^\"]*\")?", "RESULTS", text)
    text = re.sub(r"\[the results index\]", "RESULTS", text)
    return " ".join(text.split())


def units(readme: str) -> list[tuple[str, str]]:
    """(section, unit) for every paragraph, list item, table row and code line."""
    found, section, fence = [], "", False
    for chunk in re.split(r"\n\s*\n", readme):
        for line in chunk.splitlines():
            if line.startswith("```"):
                fence = not fence
        heading = re.match(r"^#{1,6} (.+)", chunk)
        if heading and not fence:
            section = heading.group(1)
            continue
        if chunk.lstrip().startswith(("|", "```", "    ", "$ ")) or "\n```" in chunk or "\n|" in chunk:
            found += [(section, line) for line in chunk.splitlines() if line.strip() and not line.startswith("```")]
        else:
            items = re.split(r"\n(?=\s*[-*] |\s*\d+\. )", chunk)
            found += [(section, item) for item in items if item.strip()]
    return found


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;:])\s+(?=[A-Z(`*])", normal(text)) if len(s) > 20]


def main(revision: str) -> int:
    old = subprocess.run(["git", "show", f"{revision}:README.md"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    new = normal("\n".join(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]))
    missing: dict[str, list[str]] = {}
    total = 0
    for section, unit in units(old):
        total += 1
        text = normal(re.sub(r"^\s*[-*] |^\s*\d+\. ", "", unit))
        if text in new or all(s in new for s in sentences(unit)) and sentences(unit):
            continue
        missing.setdefault(section, []).append(text)
    for section, texts in missing.items():
        print(f"## {section}")
        for text in texts:
            print(f"  - {text[:160]}")
    print(f"{total - sum(map(len, missing.values()))} of {total} units found word for word; "
          f"{sum(map(len, missing.values()))} to check by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "HEAD"))
