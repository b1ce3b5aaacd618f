"""The documentation site builds, strictly: a broken link or anchor between pages, a page missing
from the navigation or a file the hook cannot place fails the build (``mkdocs build --strict``, as
``make docs`` runs it, into a temporary directory)."""

from __future__ import annotations

import os
import subprocess
import sys

from doc_pages import REPO


def test_the_documentation_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, f"mkdocs build --strict failed (make setup installs it):\n{result.stderr[-4000:]}"
    assert (site / "index.html").is_file() and (site / "compare" / "index.html").is_file()
    # the repository files pages link to are in the site too: a study and an example workflow
    assert (site / "repository" / "benchmarks" / "results" / "calibration" / "index.html").is_file()
    assert (site / "repository" / "examples" / "github-actions.yml").is_file()
