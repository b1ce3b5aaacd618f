"""The CI page (docs/ci.md) says how to reference the Action as the examples do (a local path to a
copy of this repository, whose root holds action.yml), how once it is published, and neither it nor
the README names a repository that does not exist."""

from __future__ import annotations

import re

import yaml
from installs import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
CI_PAGE = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
SECTION = CI_PAGE.split("## The GitHub Action: where it lives and how to reference it\n", 1)[1].split("\n## ", 1)[0]


def _pairbench_uses() -> set[str]:
    found = set()
    for path in sorted((REPO / "examples").glob("*.yml")):
        for job in (yaml.safe_load(path.read_text()) or {}).get("jobs", {}).values():
            found |= {step["uses"] for step in job.get("steps", []) if "pairbench" in step.get("uses", "")}
    return found


def test_the_readme_references_the_action_as_the_examples_do_and_its_root_holds_action_yml():
    assert _pairbench_uses() == {"./.github/actions/pairbench"}
    assert "`uses: ./.github/actions/pairbench`" in SECTION and (REPO / "action.yml").is_file()


def test_the_readme_names_no_published_repository_only_placeholders():
    assert "`uses: OWNER/REPO@REF`" in SECTION and "40-character commit SHA" in SECTION
    assert not re.search(r"uses:\s*(?!OWNER/)[\w.-]+/pairbench@", README + CI_PAGE)
    assert "github.com/" not in SECTION


def test_the_readme_says_how_to_run_the_action_s_steps_from_a_checkout():
    for path in ("scripts/action/install.sh", "scripts/action/pairbench_action.py", "tests/examples/test_action.py"):
        assert f"`{path}" in SECTION and (REPO / path).is_file()
