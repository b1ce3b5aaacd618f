"""The size of pairbench's source (``src/``, every ``.py`` file) along main's first-parent line.

For issue 25's closing note: how many lines the tree held when the issue was filed, and how much
of the growth since came from the issue's own commits and how much from other issues' merges. A
merge's first-parent change is what it added to main; every first-parent commit that is not one
of ``--other`` counts as the issue's own. Two counts per tree: all lines, and code lines (a line
holding a token that is not a comment, a newline or part of a docstring; a docstring is a bare
string statement, by :mod:`ast`). Times nothing, so it needs no lock.

    python benchmarks/source_size.py --base f930de8 --head 1da6587 --other 8eb8aaf,6734e2b,... [--also shrink3]
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from collections.abc import Sequence

_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENDMARKER, tokenize.ENCODING}


def code_lines(text: str) -> int:
    """The lines of Python ``text`` that hold code: not blank, not only a comment, not a docstring's."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NOT_CODE:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docstrings)
    return len(lines)


class Tree:
    """Sizes of ``src/`` at revisions of the git repository ``repo`` (each file version read once)."""

    def __init__(self, repo: str):
        self.repo = repo
        self._blobs: dict[str, tuple[int, int]] = {}

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.repo, *args], capture_output=True, text=True, check=True).stdout

    def size(self, rev: str) -> tuple[int, int]:
        """(all lines, code lines) of the ``.py`` files below ``src/`` at ``rev``."""
        total = code = 0
        for line in self.git("ls-tree", "-r", rev, "src").splitlines():
            meta, path = line.split("\t", 1)
            if path.endswith(".py"):
                blob = meta.split()[2]
                if blob not in self._blobs:
                    text = self.git("cat-file", "-p", blob)
                    self._blobs[blob] = (len(text.splitlines()), code_lines(text))
                total, code = total + self._blobs[blob][0], code + self._blobs[blob][1]
        return total, code


def account(tree: Tree, base: str, head: str, other: Sequence[str]) -> list[tuple[str, int, int, bool, str]]:
    """Each first-parent commit after ``base`` up to ``head``: its short hash, the change in all and
    in code lines, whether it is one of ``other`` (prefixes of hashes), and its subject."""
    rows, before = [], tree.size(base)
    for rev in tree.git("rev-list", "--first-parent", "--reverse", f"{base}..{head}").split():
        after = tree.size(rev)
        rows.append((rev[:7], after[0] - before[0], after[1] - before[1], any(rev.startswith(o) for o in other),
                     tree.git("log", "-1", "--format=%s", rev).strip()))
        before = after
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default=".")
    parser.add_argument("--base", required=True, help="the tree the issue was filed on")
    parser.add_argument("--head", required=True, help="main at the time of the count")
    parser.add_argument("--other", default="", help="comma-separated first-parent merges of other issues")
    parser.add_argument("--also", default="", help="comma-separated further revisions to size")
    args = parser.parse_args(argv)
    tree = Tree(args.repo)
    rows = account(tree, args.base, args.head, [o for o in args.other.split(",") if o])
    for rev, total, code, is_other, subject in rows:
        print(f"{rev}  {total:+6d} {code:+6d}  {'other' if is_other else 'own  '}  {subject[:80]}")
    for label, chosen in (("own", False), ("other", True)):
        print(f"{label}: {sum(r[1] for r in rows if r[3] == chosen):+d} lines, "
              f"{sum(r[2] for r in rows if r[3] == chosen):+d} code lines")
    for rev in (args.base, args.head, *[a for a in args.also.split(",") if a]):
        total, code = tree.size(rev)
        print(f"{rev}: {total} lines, {code} code lines")


if __name__ == "__main__":
    main()
