"""The pytest plugin, run by a real pytest in a real git repository (as a user runs it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

LIBRARY = "def work(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
TEST = "import mylib\n\ndef test_work(pairbench):\n    pairbench(mylib.work, 300)\n"


@pytest.fixture
def repository(tmp_path):
    """A git repository with a library and a test using the fixture, committed; the working tree's
    library then made three times slower."""
    (tmp_path / "mylib.py").write_text(LIBRARY)
    (tmp_path / "test_perf.py").write_text(TEST)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    (tmp_path / "mylib.py").write_text(LIBRARY.replace("range(n)", "range(3 * n)"))
    return tmp_path


def _pytest(repository, *args, timeout=240):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_perf.py", *args],
                          cwd=repository, capture_output=True, text=True, timeout=timeout)


def test_the_fixture_measures_a_function_and_the_summary_shows_its_time(repository):
    done = _pytest(repository, "--pairbench-max-time", "300ms")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pairbench test_perf.py::test_work: median" in done.stdout and "per call" in done.stdout


def test_a_revision_that_does_not_exist_fails_the_session_and_says_so(repository):
    done = _pytest(repository, "--pairbench-against", "no-such-branch")
    assert done.returncode == 1
    assert "no-such-branch" in done.stdout and "no such revision" in done.stdout


def test_against_a_revision_the_slower_working_tree_is_found_and_fails_the_gate(repository, tmp_path_factory):
    result = tmp_path_factory.mktemp("out") / "r.json"
    done = _pytest(repository, "--pairbench-against", "HEAD", "--pairbench-fail-on", "slower",
                   "--pairbench-json", str(result))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "working tree is" in done.stdout and "slower than HEAD" in done.stdout
    document = json.loads(result.read_text())
    assert [c["verdict"] for c in document["comparisons"]] == ["slower"]


def test_against_a_revision_the_verdicts_can_be_on_cpu_time(repository, tmp_path_factory):
    result = tmp_path_factory.mktemp("out") / "r.json"
    done = _pytest(repository, "--pairbench-against", "HEAD", "--pairbench-metric", "cpu",
                   "--pairbench-max-time", "10s", "--pairbench-json", str(result))
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads(result.read_text())
    assert document["settings"]["decision"]["metric"] == "cpu"
    assert [c["metric"] for c in document["comparisons"]] == ["cpu"]
    assert "on CPU time" in done.stdout
