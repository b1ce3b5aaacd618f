"""The documentation site builds, strictly: a broken link or anchor between pages, a page missing
from the navigation or a file the hook cannot place fails the build (``mkdocs build --strict``, as
``make docs`` runs it, into a temporary directory)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from doc_pages import REPO

pytestmark = pytest.mark.e2e  # runs mkdocs, a real program, for seconds


def build(project, site):
    # not --quiet: it hides the warnings from the counter that --strict aborts on (MkDocs 1.6)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.mark.slow
def test_the_documentation_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    result = build(REPO, site)
    assert result.returncode == 0, f"mkdocs build --strict failed (make setup installs it):\n{result.stderr[-4000:]}"
    assert (site / "index.html").is_file() and (site / "compare" / "index.html").is_file()
    # the repository files pages link to are in the site too: a study and an example workflow
    assert (site / "repository" / "benchmarks" / "results" / "calibration" / "index.html").is_file()
    assert (site / "repository" / "examples" / "github-actions.yml").is_file()


def test_a_link_to_a_missing_anchor_or_repository_file_fails_the_build(tmp_path):
    """The strict build can fail: with the same config and hook, a page that names a heading that is
    not there, or a repository file that is not there, stops it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "a.yml").write_text("a: 1\n")
    (tmp_path / "scripts" / "docs_site.py").write_text((REPO / "scripts" / "docs_site.py").read_text())
    config = (REPO / "mkdocs.yml").read_text()
    (tmp_path / "mkdocs.yml").write_text(config[:config.index("nav:")] + "nav:\n  - index.md\n  - other.md\n")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Here\n")
    (tmp_path / "docs" / "index.md").write_text(
        "# Home\n\n[fine](other.md#here) [ex](../examples/a.yml) [gone](other.md#not-here) [gone](../examples/b.yml)\n")
    result = build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 2 and "#not-here" in warnings[0] + warnings[1] and "b.yml" in warnings[0] + warnings[1]
