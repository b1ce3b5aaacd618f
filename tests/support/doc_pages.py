"""The documentation as the docs tests read it: its pages, their fenced blocks, links and anchors.

A page is the README, a page under ``docs/``, the results index or a study under
``benchmarks/results/``, or the examples' README. A *block* is a fenced code block with the
``<!-- example: ... -->`` comment that stands on the line just before it, if any. A *command
example* is a line of a ``sh``/``console`` block, or the ``$`` line of a transcript, that starts
with ``pairbench`` (backslash continuations joined, a trailing ``# comment`` dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
FENCE = re.compile(r"^(```|~~~)([^\n]*)\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
EXAMPLE = re.compile(r"<!-- example: (replay|golden|unrun) (.+?) -->\s*$")
# [text](target) and ![alt](target); a target has no spaces ("<...>" targets are not used here)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def pages() -> list[Path]:
    found = [REPO / "README.md", REPO / "benchmarks" / "RESULTS.md", REPO / "examples" / "README.md"]
    found += sorted(DOCS.rglob("*.md")) + sorted((REPO / "benchmarks" / "results").glob("*.md"))
    return found


def name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@dataclass(frozen=True)
class Block:
    """A fenced block of ``page``: its info string, its text, the line it starts on, and the
    example comment before it (kind and argument), if any."""

    page: Path
    line: int
    info: str
    text: str
    kind: str | None = None
    argument: str = ""

    @property
    def where(self) -> str:
        return f"{name(self.page)}:{self.line}"

    @property
    def is_transcript(self) -> bool:
        return self.text.startswith("$ pairbench")


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        comment = EXAMPLE.search(before)
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(2).strip(), match.group(3),
                           comment.group(1) if comment else None, comment.group(2) if comment else ""))
    return found


def transcript(block: Block) -> tuple[str, str]:
    """A transcript's command (continuations joined, without the ``$``) and the output after it."""
    lines = block.text.splitlines(keepends=True)
    command, rest = lines[0][2:].rstrip("\n"), lines[1:]
    while command.endswith("\\") and rest:
        command = command[:-1] + " " + rest.pop(0).strip()
    return command, "".join(rest)


def commands(block: Block) -> list[str]:
    """The command examples of a block: shell blocks' ``pairbench`` lines, a transcript's command."""
    if block.is_transcript:
        return [transcript(block)[0]]
    if block.info not in ("sh", "console", "bash", "shell"):
        return []
    found, lines, heredoc = [], block.text.splitlines(), None
    while lines:
        line = lines.pop(0)
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        if match := re.search(r"<<-?'?(\w+)'?", line):
            heredoc = match.group(1)
        while line.endswith("\\") and lines:
            line = line[:-1] + " " + lines.pop(0).strip()
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        if line.startswith("pairbench "):
            found.append(strip_comment(line))
    return found


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` inside quotes, or inside a word, is kept)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip()
    return line


def prose(page: Path) -> str:
    """The page without its fenced blocks and inline code (where a link is not a link)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text(encoding="utf-8"))
    return re.sub(r"`[^`\n]*`", "", text)


def links(page: Path) -> list[tuple[int, str]]:
    text = prose(page)
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]


def github_slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"<[^>]+>", "", _plain(title)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def mkdocs_slug(title: str) -> str:
    """Python-Markdown's ``toc`` anchor (MkDocs' default), from its own ``slugify``: ASCII only, and
    runs of spaces and hyphens become one hyphen."""
    from markdown.extensions.toc import slugify

    return slugify(re.sub(r"<[^>]+>", "", _plain(title)), "-")


def _plain(title: str) -> str:
    """A heading's text as it is rendered: links as their text, code and emphasis marks dropped."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    return title.replace("`", "").replace("**", "").replace("*", "")


def anchors(page: Path) -> tuple[set[str], set[str]]:
    """The anchors a link may name in ``page``: (GitHub's, MkDocs'), explicit ``<a id>`` in both.
    A heading repeated gets ``-1``, ``-2``... on GitHub and ``_1``, ``_2``... in MkDocs."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    explicit = set(EXPLICIT_ID.findall(text))
    github, mkdocs = set(explicit), set(explicit)
    for slugs, slug, sep in ((github, github_slug, "-"), (mkdocs, mkdocs_slug, "_")):
        seen: dict[str, int] = {}
        for _, title in HEADING.findall(text):
            base = slug(title)
            count = seen.get(base, 0)
            slugs.add(base if count == 0 else f"{base}{sep}{count}")
            seen[base] = count + 1
    return github, mkdocs
