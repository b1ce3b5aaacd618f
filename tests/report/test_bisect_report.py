"""What ``pairbench bisect`` prints, from scripted searches (no git, no measuring): golden terminal,
Markdown and JSON, and the sentence of every kind of answer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from golden import assert_golden

from pairbench.analysis.bisection import Search
from pairbench.analysis.records import Effect
from pairbench.report.bisect import (
    BISECT_FORMAT,
    render_bisect_json,
    render_bisect_markdown,
    render_bisect_text,
    trial_line,
)
from pairbench.sessions.bisect import Bisected, Done
from pairbench.sessions.builds import Revision

GOLDEN = Path(__file__).parent / "golden"
COMMITS = [f"{k:02x}" * 20 for k in range(17)]


class _Session:
    """What the renderers read of a session: the commits, their names, the cache's counts."""

    def __init__(self, commits):
        self.commits = tuple(commits)
        self.cache = SimpleNamespace(built_now=["a", "b", "c"], reused=["d"])

    def revision(self, index: int) -> Revision:
        name = {0: "v1.0", len(self.commits) - 1: "v1.1"}.get(index, self.commits[index][:10])
        return Revision(name, self.commits[index])


def _effect(estimate: float, half: float, confidence: float = 0.998) -> Effect:
    return Effect(estimate, estimate - half, estimate + half, confidence, "sequence", 0.001, "sequence", 40)


def _bisected(truth, *, undecided=(), names=("parse",), stop_after=None, skipped=(), subject=None,
              half: float = 0.4) -> Bisected:
    search = Search(COMMITS[: len(truth)], alpha=0.01, threshold=1.0)
    bisected = Bisected(_Session(COMMITS[: len(truth)]), search, subject=subject)
    for index in skipped:
        search.skip(index)
        bisected.skipped[index] = f"revision {index} does not build: 'make' exited 2\nmore"
    while (pair := search.next()) is not None:
        if stop_after is not None and len(search.trials) == stop_after:
            search.stop("budget")
            break
        width = 40.0 if (pair.base, pair.cand) in undecided else half
        trial = search.record(pair, {n: _effect(truth[pair.cand] - truth[pair.base], width) for n in names})
        bisected.done.append(Done(trial, f"/r/{trial.number:02d}.json", 2.5))
    return bisected


FOUND = [0.0] * 11 + [3.0] * 6  # 16 commits after GOOD, the step at 11


def test_a_found_commit_golden_text_markdown_and_json():
    bisected = _bisected(FOUND, subject="parse: read ahead")
    assert_golden(GOLDEN / "bisect.txt", render_bisect_text(bisected))
    assert_golden(GOLDEN / "bisect.md", render_bisect_markdown(bisected))
    assert_golden(GOLDEN / "bisect.json", render_bisect_json(bisected))


def test_the_json_document_carries_every_comparison_and_the_answer():
    doc = json.loads(render_bisect_json(_bisected(FOUND)))
    assert doc["format"] == BISECT_FORMAT and doc["most_comparisons"] == 6 and doc["commits"] == 16
    assert doc["answer"] == {"kind": "found", "commit": COMMITS[11], "subject": None, "first": COMMITS[11],
                             "last": COMMITS[11], "range_commits": 1, "benchmarks": ["parse"], "why": None,
                             "undecided_comparison": None}
    assert [c["purpose"] for c in doc["comparisons"]] == ["step", "middle", "middle", "middle", "middle", "ends"]
    assert doc["comparisons"][0]["benchmarks"][0]["boundary_share"] == 0.5
    assert doc["comparisons"][1]["benchmarks"][0]["boundary_pct"] == pytest.approx(100 * (1.03 ** 0.25 - 1))


@pytest.mark.parametrize(("bisected", "says"), [
    (lambda: _bisected([3.0 * (c / 16) ** 4 for c in range(17)], half=0.05),
     "No single commit explains the slowdown: it is spread over commits 0101010101..1010101010 (16 commits)."),
    (lambda: _bisected([0.0] * 17), "No slowdown: BAD is not slower than GOOD by the threshold (parse 0.0%)"),
    (lambda: _bisected(FOUND, stop_after=2),
     "Inconclusive: the commit that made it slower is one of 0909090909..1010101010 (8 commits); the budget"),
    (lambda: _bisected(FOUND, undecided={(0, 12)}),
     "Inconclusive: the commit that made it slower is one of 0909090909..1010101010 (8 commits); comparison 3 "
     "could not decide within its --max-time"),
])
def test_every_kind_of_answer_is_said(bisected, says):
    text = render_bisect_text(bisected())
    assert says in text
    assert "Found:" not in text


def test_a_skipped_commit_is_listed_with_the_first_line_of_why():
    text = render_bisect_text(_bisected(FOUND, skipped=(8,)))
    assert "skipped 0808080808: revision 8 does not build: 'make' exited 2\n" in text
    assert "1 skipped (they do not build or measure)" in text


def test_names_and_subjects_from_outside_are_shown_with_control_characters_visible():
    bisected = _bisected(FOUND, names=("evil\x1b[31m",), subject="fix\x07 it")
    text = render_bisect_text(bisected)
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b[31m" in text and "fix\\x07 it" in text
    assert "\x1b" not in render_bisect_markdown(bisected)


def test_the_progress_line_of_a_comparison():
    bisected = _bisected(FOUND)
    assert trial_line(bisected.session.commits, bisected.done[1]) == (
        "[2] 0808080808 vs 0000000000 (GOOD): parse 0.0%: like GOOD")
