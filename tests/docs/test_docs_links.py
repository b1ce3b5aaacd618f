"""Every link of the documentation leads somewhere: a page or file of the repository, and the
anchor it names in a Markdown page (as GitHub and MkDocs both name it); an external link is a
well-formed URL (its form only: no network here). Every page under ``docs/`` is in the site's
navigation, and the navigation names no page that is missing."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from doc_pages import DOCS, REPO, anchors, github_slug, links, mkdocs_slug, name, pages

PAGES = pages()
LINKS = [(page, line, url) for page in PAGES for line, url in links(page)]
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def _nav_pages(entry) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [page for item in entry for page in _nav_pages(item)]
    if isinstance(entry, dict):
        return [page for value in entry.values() for page in _nav_pages(value)]
    return []


def _nav() -> list[str]:
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    return [page for page in _nav_pages(config["nav"]) if not EXTERNAL.match(page)]


def test_the_documentation_has_links_to_check():
    assert len(LINKS) > 150 and sum(not EXTERNAL.match(url) and "#" in url for _, _, url in LINKS) > 10


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_relative_link_of_a_page_leads_to_a_file_and_anchor_that_exist(page):
    broken = []
    for line, url in links(page):
        if EXTERNAL.match(url):
            continue
        path, _, anchor = url.partition("#")
        if path.startswith("/"):
            broken.append(f"line {line}: {url}: an absolute path works neither in the repository nor in the site")
            continue
        target = (page.parent / unquote(path)).resolve() if path else page
        if REPO not in target.parents and target != REPO:
            broken.append(f"line {line}: {url}: outside the repository")
        elif not target.exists():
            broken.append(f"line {line}: {url}: no such file")
        elif anchor and target.suffix == ".md":
            github, mkdocs = anchors(target)
            if anchor not in github or anchor not in mkdocs:
                broken.append(f"line {line}: {url}: no heading or <a id> gives #{anchor} "
                              f"({'GitHub' if anchor not in github else 'MkDocs'} has no such anchor)")
    assert not broken, f"{name(page)}:\n  " + "\n  ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_external_link_is_a_well_formed_url(page):
    bad = []
    for line, url in links(page):
        if not EXTERNAL.match(url):
            continue
        parts = urlsplit(url)
        if parts.scheme == "mailto":
            ok = re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", parts.path) is not None
        else:
            ok = parts.scheme == "https" or parts.scheme == "http"
            ok = ok and re.fullmatch(r"[a-z0-9.-]+\.[a-z]{2,}(:[0-9]+)?", parts.netloc, re.IGNORECASE) is not None
        if not ok:
            bad.append(f"line {line}: {url}")
    assert not bad, f"{name(page)}: not a well-formed https, http or mailto URL:\n  " + "\n  ".join(bad)


def test_every_page_under_docs_is_in_the_navigation_and_every_page_of_it_exists():
    nav = _nav()
    written = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(written) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - set(written)) == [], "mkdocs.yml's nav names pages that do not exist"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_anchor_rules_match_github_and_mkdocs_on_known_headings():
    # GitHub keeps a hyphen per space and the hyphens of "--jobs"; Python-Markdown folds them, and
    # drops what is not ASCII
    github, mkdocs = anchors(DOCS / "suites.md")
    assert "multiple-testing-holms-procedure" in github and "multiple-testing-holms-procedure" in mkdocs
    assert github_slug("Jobs: `--jobs N`") == "jobs---jobs-n" and mkdocs_slug("Jobs: `--jobs N`") == "jobs-jobs-n"
    assert github_slug("A — b") == "a--b" and mkdocs_slug("A — b") == "a-b"
    assert github_slug("`pairbench confirm REV_BEFORE REV_AFTER`") == "pairbench-confirm-rev_before-rev_after"
    assert github_slug("Σ µs") == "σ-µs" and mkdocs_slug("Σ µs") == "s"


def test_a_broken_link_is_found(tmp_path, monkeypatch):
    """The checker can fail: a page with a missing file and a missing anchor is reported."""
    page = DOCS / "zz-planted.md"
    monkeypatch.setattr(Path, "read_text", _with_planted(page, "# P\n\n[a](nowhere.md) [b](index.md#no-such)\n"))
    with pytest.raises(AssertionError, match=r"nowhere\.md: no such file[\s\S]*#no-such"):
        test_every_relative_link_of_a_page_leads_to_a_file_and_anchor_that_exist(page)


def test_a_malformed_external_link_is_found(monkeypatch):
    page = DOCS / "zz-planted.md"
    monkeypatch.setattr(Path, "read_text", _with_planted(page, "[a](htps://example.org) [b](https:///x) [c](https://example.org/x)\n"))
    with pytest.raises(AssertionError, match=r"htps://example\.org[\s\S]*https:///x"):
        test_every_external_link_is_a_well_formed_url(page)


def _with_planted(page: Path, text: str):
    original = Path.read_text

    def read_text(self, *args, **kwargs):
        return text if self == page else original(self, *args, **kwargs)

    return read_text
