"""The README is a short tour a newcomer reads to the end: at most 400 lines, Install then a quick
start to a first verdict, each way of measuring in a screen, and a link to every page of the
reference. What it held before the reference moved to ``docs/`` has a home there (the sections
of the 2,031-line README, 2026-11-29, each mapped to its page). Its command examples are run by
``tests/docs/test_docs_examples.py`` and its links checked by ``tests/docs/test_docs_links.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_pages import DOCS, REPO, anchors

README = (REPO / "README.md").read_text(encoding="utf-8")
MAX_LINES = 400
SCREEN_LINES = 50
# a figure and what it was before it changed: changelog prose, the CHANGELOG's
HISTORY = re.compile(r"\(was [0-9]|as it was before|Re-measured on|\bnow\*\*")
# Every section of the README before the reference moved out, and the page (and heading) that
# holds its text now, from the top of the repository.
MOVED = {
    "Install": "docs/install.md",
    "Quick start": "README.md#quick-start-your-first-verdict",
    "Compare two commands": "docs/compare.md",
    "Measured error rates": "docs/statistics.md#measured-error-rates",
    "Measure commands: `pairbench run`": "docs/run.md",
    "Microbenchmarks: `pairbench bench`": "docs/bench.md",
    "Suites from the harnesses you use: `pairbench bench`": "docs/suites.md",
    "Parallel jobs: `--jobs N`": "docs/suites.md#parallel-jobs",
    "Sharding a suite across machines: `--shard K/N` and `pairbench merge`": "docs/merge.md",
    "Saved results: `pairbench import` and `pairbench diff`": "docs/import.md",
    "Measured (suites)": "docs/suites.md#measured",
    "History: every result kept, steps found, and confirmed": "docs/history.md",
    "The store": "docs/store.md",
    "`pairbench history`": "docs/history.md#single-results-over-commits-pairbench-history",
    "Change points": "docs/change-points.md",
    "`pairbench confirm REV_BEFORE REV_AFTER`": "docs/confirm.md",
    "From a step to its commit: `history`, `confirm`, `bisect`": "docs/bisect.md",
    "In CI, with PostgreSQL": "docs/ci.md#in-ci-with-postgresql",
    "The GitHub Action: where it lives and how to reference it":
        "docs/ci.md#the-github-action-where-it-lives-and-how-to-reference-it",
    "What pairbench trusts, and what it runs": "docs/security.md",
    "Results are never lost": "docs/result-files.md",
    "Peak memory and the spawner": "docs/spawner.md",
    "Reports": "docs/report.md",
    "Getting reliable numbers": "docs/doctor.md",
    "Check the machine: `pairbench doctor`": "docs/doctor.md#check-the-machine-pairbench-doctor",
    "Check the benchmark: `pairbench doctor COMMAND`": "docs/doctor.md#check-the-benchmark-pairbench-doctor-command",
    "Notes in `run` and `compare`": "docs/doctor.md#notes-in-run-and-compare",
    "Exit codes": "docs/exit-codes.md",
    "The statistics, as a library": "docs/statistics.md#the-statistics-as-a-library",
    "Development": "docs/contributing.md",
    "The two commands": "docs/contributing.md#the-two-commands",
}


def section(title_start: str) -> str:
    return re.split(rf"\n## {re.escape(title_start)}[^\n]*\n", README, maxsplit=1)[1].split("\n## ", 1)[0]


def headings() -> list[str]:
    return re.findall(r"^## (.+)$", README, re.MULTILINE)


def test_the_readme_is_at_most_400_lines():
    assert len(README.splitlines()) <= MAX_LINES


def test_the_readme_starts_with_install_then_a_quick_start_to_a_first_verdict():
    assert headings()[:2] == ["Install", "Quick start: your first verdict"]
    assert "pairbench compare" in section("Quick start") and "make demo" in section("Quick start")


@pytest.mark.parametrize("title", ["Commands", "Functions", "Harness suites", "History", "CI"])
def test_each_way_of_measuring_has_a_section_that_fits_on_a_screen(title):
    assert any(h.startswith(title) for h in headings()), title
    assert len(section(title).strip().splitlines()) <= SCREEN_LINES


def test_the_quick_start_fits_on_a_screen():
    assert len(section("Quick start").strip().splitlines()) <= SCREEN_LINES


def test_the_history_screen_starts_from_record_then_history_confirm_and_bisect():
    commands = re.findall(r"^pairbench (\w+)", section("History"), re.MULTILINE)
    assert commands[:4] == ["record", "history", "confirm", "bisect"]


def test_every_measured_claim_of_the_readme_names_its_load_or_conditions():
    """A figure of found or false changes ("10 of 10", "0 of 600") stands in a paragraph that says
    under what load or conditions it was measured."""
    for paragraph in re.split(r"\n\s*\n", README):
        if re.search(r"\b\d+ of \d+\b", paragraph) and not paragraph.lstrip().startswith(("|", "```")):
            assert re.search(r"\bload\b|quiet|busy", paragraph), paragraph[:200]


def test_every_page_of_the_reference_is_linked_from_the_readme():
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", README))
    written = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert sorted(written - linked) == []


@pytest.mark.parametrize("title", MOVED)
def test_every_section_of_the_former_readme_has_a_home_in_the_docs(title):
    page, _, anchor = MOVED[title].partition("#")
    path = REPO / page
    assert path.is_file(), f"{title}: {page} is missing"
    if anchor:
        github, mkdocs = anchors(path)
        assert anchor in github | mkdocs, f"{title}: {page} has no heading #{anchor}"


def test_what_changed_is_in_the_changelog_not_the_readme():
    assert not HISTORY.findall(README)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "(CHANGELOG.md)" in section("Quick start")
    for target in re.findall(r"\]\(([^)#]+)", changelog):
        assert (REPO / target).exists(), target


def test_make_demo_and_make_test_are_the_first_run_commands_and_exist():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    development = section("Development")
    for target in ("demo", "test", "docs"):
        assert f"make {target}" in development
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    assert Path(REPO / ".ci" / "run").read_text().strip().endswith("make test")
