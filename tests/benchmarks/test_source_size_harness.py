"""benchmarks/source_size.py: what counts as a code line, and the accounting of a small git history."""

from __future__ import annotations

import subprocess

import pytest
from scripts import benchmark_script


@pytest.fixture(scope="module")
def source_size():
    return benchmark_script("source_size")


def test_blank_lines_comments_and_docstrings_are_not_code_lines(source_size):
    text = '''"""A module docstring
over two lines."""

# a comment
def f(x):  # a comment after code
    """A function's docstring."""
    s = """a string that is
data, not a docstring"""
    return (x +
            1)
'''
    assert source_size.code_lines(text) == 5  # def, s = (two lines), return (two lines)


def _commit(repo, name: str, text: str, message: str) -> str:
    (repo / "src" / name).write_text(text)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
                   check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.e2e
def test_each_first_parent_commit_is_counted_as_own_or_another_issues(source_size, tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    base = _commit(repo, "a.py", "x = 1\n", "base")
    other = _commit(repo, "b.py", '"""doc"""\ny = 2\nz = 3\n', "another issue's feature")
    own = _commit(repo, "a.py", "", "this issue's cut")
    rows = source_size.account(source_size.Tree(str(repo)), base, own, [other[:7]])
    assert [(rev, total, code, is_other) for rev, total, code, is_other, _ in rows] == [
        (other[:7], 3, 2, True), (own[:7], -1, -1, False)]
    assert source_size.Tree(str(repo)).size(own) == (3, 2)
