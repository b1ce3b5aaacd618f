"""The Markdown report: golden files, GitHub-flavoured tables that parse, escaping of every cell."""

from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt
from report_helpers import DATA, HOSTILE, assert_golden

from pairbench.report.analysed import analyse
from pairbench.report.markdown import escape, render_markdown


def gfm() -> MarkdownIt:
    """A CommonMark parser with GitHub's table extension and raw HTML allowed, as on GitHub."""
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def tables_of(html: str) -> list[list[list[str]]]:
    """The tables of rendered HTML as rows of cell texts (header row first)."""
    out = []
    for table in re.findall(r"<table>(.*?)</table>", html, flags=re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
        out.append([re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S) for row in rows])
    return out


def test_compare_markdown_matches_the_golden_file(compare_run):
    assert_golden("compare.md", render_markdown(analyse(compare_run)))


def test_run_markdown_matches_the_golden_file(single_run):
    assert_golden("run.md", render_markdown(analyse(single_run)))


def test_markdown_starts_with_the_verdict_table_and_folds_the_details(compare_run):
    text = render_markdown(analyse(compare_run))
    blocks = text.split("\n\n")
    assert blocks[0].startswith("### ")
    assert blocks[1].startswith("| Comparison | Baseline median |")
    assert text.count("<details>") == text.count("</details>") >= 4
    assert text.index("<details>") > text.index("| Comparison")


def test_markdown_renders_as_tables_with_the_hostile_name_as_text(compare_run):
    html = gfm().render(render_markdown(analyse(compare_run)))
    tables = tables_of(html)
    verdict = tables[0]
    assert verdict[0] == ["Comparison", "Baseline median", "Candidate median",
                          "Change (99.36% interval)", "Verdict", "p-value", "Rounds"]
    assert len(verdict) == 2 and len(verdict[1]) == 7  # the pipe in the name did not split the row
    assert verdict[1][4] == "slower" and verdict[1][3] == "+3.6% [+2.5%, +5.3%]"
    one_line = " ".join(HOSTILE.split())
    expected = (one_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace('"', "&quot;"))
    assert verdict[1][0] == f"{expected} vs old build"
    assert all(len(row) == len(t[0]) for t in tables for row in t)
    assert "<script" not in html and "<img" not in html and "<em>" not in html and "<code>" not in html


def test_details_summaries_show_the_name_as_text_on_github(compare_run):
    html = gfm().render(render_markdown(analyse(compare_run)))
    summaries = re.findall(r"<summary>(.*?)</summary>", html)
    assert summaries[0].startswith("Details: &lt;script&gt;window.__pwned=1&lt;/script&gt; | *new*")
    assert [s.split(" (")[0] for s in summaries[1:]] == ["Variants", "Environment", "Options", "Notes"]


@pytest.mark.parametrize(("raw", "escaped"), [
    ("a|b", r"a\|b"),
    ("`code`", r"\`code\`"),
    ("<b>x</b> & y", "&lt;b&gt;x&lt;/b&gt; &amp; y"),
    ("two\nlines\r\nhere", "two lines here"),
    ("*em* _em_ [link](x) ![img](y) ~~s~~ # h", r"\*em\* \_em\_ \[link\](x) \!\[img\](y) \~\~s\~\~ \# h"),
    ("back\\slash", "back\\\\slash"),
    ("", " "),
])
def test_escape_neutralises_markdown_and_html(raw, escaped):
    assert escape(raw) == escaped


@pytest.mark.parametrize("raw", ["a|b`c`*d*<e>&f\ng", "| --- |", "<details>", "\\|", "[x]: http://e"])
def test_an_escaped_cell_renders_back_to_its_text(raw):
    html = gfm().render(f"| h |\n|---|\n| {escape(raw)} |\n")
    cell = tables_of(html)[0][1][0]
    expected = " ".join(raw.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert cell == expected.replace('"', "&quot;")


GITHUB_LINKS = re.compile(r"(?<![\w`])@[A-Za-z0-9]|#\d")  # a mention or an issue reference


@pytest.mark.parametrize(("raw", "escaped"), [
    ("npx @biomejs/biome", "npx @\u2060biomejs/biome"),
    ("fixes #123", "fixes \\#\u2060123"),
    ("a@b.example", "a@\u2060b.example"),
    ("# h and @ alone", "\\# h and @ alone"),
])
def test_escape_keeps_mentions_and_issue_numbers_from_linking_on_github(raw, escaped):
    assert escape(raw) == escaped


def test_a_pull_request_comment_neither_mentions_nor_links_issues(compare_run):
    from pairbench.report.markdown import escape_html
    from pairbench.resultfile import run_from_document

    name = "npx @biomejs/biome check | #123"
    text = (DATA / "compare.json").read_text(encoding="utf-8").replace("old build", name)
    run = run_from_document(json.loads(text))
    markdown = render_markdown(analyse(run))
    assert markdown.count("@\u2060biomejs") >= 4  # title, table, details summary, variants table
    html = gfm().render(markdown)
    visible = re.sub(r"<[^>]+>", " ", html)
    assert not GITHUB_LINKS.search(visible.replace("&amp;", "&"))
    assert all(len(row) == len(t[0]) for t in tables_of(html) for row in t)  # the '|' did not split
    assert "@\u2060biomejs" in escape_html(name) and "#\u2060123" in escape_html(name)
