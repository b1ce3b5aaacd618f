"""The Markdown report: golden files, GitHub-flavoured tables that parse, escaping of every cell."""

from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt
from report_helpers import DATA, HOSTILE, assert_golden, self_check_run, two_benchmark_run

from pairbench.analysis import analyse
from pairbench.report.markdown import escape, render_markdown
from pairbench.report.safe import visible
from pairbench.report.wording import INLINE, with_subject, word
from pairbench.store.resultfile import run_from_document


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


def test_compare_markdown_matches_the_golden_file(compare_run, compare_analysis):
    assert_golden("compare.md", render_markdown(compare_run, compare_analysis))


def test_run_markdown_matches_the_golden_file(single_run, single_analysis):
    assert_golden("run.md", render_markdown(single_run, single_analysis))


def test_markdown_starts_with_the_verdict_table_and_folds_the_details(compare_run, compare_analysis):
    text = render_markdown(compare_run, compare_analysis)
    blocks = text.split("\n\n")
    assert blocks[0].startswith("### ")
    assert blocks[1].startswith("| Comparison | old build wall median |")
    assert text.count("<details>") == text.count("</details>") >= 4
    assert text.index("<details>") > text.index("| Comparison")


def test_markdown_renders_as_tables_with_the_hostile_name_as_text(compare_run, compare_analysis):
    html = gfm().render(render_markdown(compare_run, compare_analysis))
    tables = tables_of(html)
    verdict = tables[0]
    shortened = (f"{HOSTILE[:7]}…{HOSTILE[-8:]}".replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                 .replace('"', "&quot;"))  # the candidate's name, shortened, as text
    assert verdict[0] == ["Comparison", "old build wall median", f"{shortened} wall median",
                          "Change in wall time (99.36% interval)", "Verdict", "p-value", "Rounds"]
    assert len(verdict) == 2 and len(verdict[1]) == 7  # the pipe in the name did not split the row
    assert verdict[1][4] == "slower" and verdict[1][3] == "+3.6% [+2.5%, +5.3%]"
    one_line = visible(HOSTILE)  # the newline shown as \n
    expected = (one_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace('"', "&quot;"))
    assert verdict[1][0] == f"{expected} vs old build"
    assert all(len(row) == len(t[0]) for t in tables for row in t)
    assert "<script" not in html and "<img" not in html and "<em>" not in html and "<code>" not in html


def test_details_summaries_show_the_name_as_text_on_github(compare_run, compare_analysis):
    html = gfm().render(render_markdown(compare_run, compare_analysis))
    summaries = re.findall(r"<summary>(.*?)</summary>", html)
    assert summaries[0].startswith("Details: &lt;script&gt;window.__pwned=1&lt;/script&gt; | *new*")
    assert [s.split(" (")[0] for s in summaries[1:]] == ["Variants", "Environment", "Settings", "Notes"]


@pytest.mark.parametrize(("raw", "escaped"), [
    ("a|b", r"a\|b"),
    ("`code`", r"\`code\`"),
    ("<b>x</b> & y", "&lt;b&gt;x&lt;/b&gt; &amp; y"),
    ("two\nlines\r\nhere", r"two\\nlines\\r\\nhere"),  # line breaks shown, escaped for Markdown
    ("title\x1b]0;x\x07", r"title\\x1b\]0;x\\x07"),
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
    expected = visible(raw).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
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


def test_a_pull_request_comment_neither_mentions_nor_links_issues():
    from pairbench.report.markdown import escape_html

    name = "npx @biomejs/biome check | #123"
    text = (DATA / "compare.json").read_text(encoding="utf-8").replace("old build", name)
    run = run_from_document(json.loads(text))
    markdown = render_markdown(run, analyse(run))
    assert markdown.count("@\u2060biomejs") >= 4  # title, table, details summary, variants table
    html = gfm().render(markdown)
    visible = re.sub(r"<[^>]+>", " ", html)
    assert not GITHUB_LINKS.search(visible.replace("&amp;", "&"))
    assert all(len(row) == len(t[0]) for t in tables_of(html) for row in t)  # the '|' did not split
    assert "@\u2060biomejs" in escape_html(name) and "#\u2060123" in escape_html(name)


def _notes_section(markdown: str) -> str:
    return markdown.split("<summary>Notes", 1)[1].split("</details>", 1)[0]


def test_markdown_shows_that_the_self_check_found_a_change():
    run = self_check_run()
    analysis = analyse(run)
    assert [n.code for n in analysis.all_notes()].count("self-check-found-change") == 1
    notes = _notes_section(render_markdown(run, analysis))
    assert ("old (copy) vs old: the A/A self-check (the baseline against a copy of itself) found a "
            "difference") in notes


@pytest.mark.parametrize("which", ["compare", "self-check"])
def test_every_note_of_the_analysis_appears_once_in_markdown(which, compare_run, compare_analysis):
    run, analysis = (compare_run, compare_analysis) if which == "compare" else (self_check_run(), None)
    analysis = analysis or analyse(run)
    text = render_markdown(run, analysis)
    notes = _notes_section(text)
    comparisons = {(c.candidate, c.baseline): c for c in analysis.comparisons}
    for note in analysis.all_notes():
        if note.code == "tukey-fence":  # the variant table's "Beyond fence" column
            summary = analysis.summary_of(analysis.summaries[0].benchmark, note.subject.side)
            assert f"{summary.beyond_upper_fence} above, {summary.beyond_lower_fence} below" in text
        elif note.code in INLINE:  # beside the number it qualifies, in the comparison's details
            c = comparisons[(note.subject.side, note.subject.baseline)]
            words = escape(word(note, c.benchmark.unit))[1:]  # a line may capitalise the first letter
            assert text.count(words) == 1, note
        else:
            line = escape(with_subject(note))
            assert notes.count(line) == 1 and text.count(line) == 1, note
    items = [line.split(". ", 1)[1] for line in notes.splitlines() if re.match(r"\d+\. ", line)]
    assert len(items) == len(set(items)) == int(re.match(r" \((\d+)\)", notes).group(1))


def test_a_two_benchmark_run_names_each_benchmark_beside_its_sides():
    run = two_benchmark_run()
    text = render_markdown(run, analyse(run))
    verdicts = tables_of(gfm().render(text))[0]
    assert [row[0] for row in verdicts[1:]] == ["sort[n=1000] · new vs old", "alloc · new vs old"]
    assert [row[4] for row in verdicts[1:]] == ["slower on wall time", "equivalent"]  # a time, and a count
    assert "| alloc · old | 30 | 4.00 KiB" in text  # bytes per operation, in the benchmark's unit
    assert r"| sort\[n=1000\] · new | 30 | 1.573 µs" in text  # wall time / 1024 iterations
    assert "<summary>Details: sort[n=1000] · new vs old</summary>" in text


def test_a_one_benchmark_run_does_not_name_its_benchmark(compare_run, compare_analysis):
    assert "command ·" not in render_markdown(compare_run, compare_analysis)
