"""The pytest plugin.

Its own logic (which tests are measured, skipped, kept in one document, refused) runs in this
process through pytest's ``pytester`` with the fixture's calls timed by a script
(``fakes.ScriptedCalls``: a time per call on a virtual clock). A real pytest in a real git
repository, as a user runs it, measures for real in the ``e2e`` tests: the summary of one measured
test, and ``--pairbench-against`` (workers of another revision; ``slow``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fakes import ScriptedCalls
from tools import without_hypothesis

from pairbench.sessions import functions

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


# the real pytest runs without hypothesis's plugin: --pairbench-against starts two pytest workers a block,
# about 22 in all
LEAN = {"PYTEST_ADDOPTS": without_hypothesis(os.environ.get("PYTEST_ADDOPTS"))}
# and, for the ~22 workers of --pairbench-against, without pytest-benchmark's and xdist's plugins, which they
# do not use (a sixth of a pytest start's CPU); the other real pytests here, and pytester's, load them beside ours
LEANER = {"PYTEST_ADDOPTS": f"{LEAN['PYTEST_ADDOPTS']} -p no:benchmark -p no:xdist -p no:xdist.looponfail"}


def _pytest(repository, *args, timeout=240, lean=LEAN):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_perf.py", *args],
                          cwd=repository, capture_output=True, text=True, timeout=timeout, env={**os.environ, **lean})


@pytest.fixture
def project(pytester, monkeypatch):
    """``mylib.py`` and ``test_perf.py`` in pytester's directory, run in this process: a call of
    ``work(n)`` (the fixture's ``functools.partial``) takes n x 10 ns by the script, on a virtual clock."""
    pytester.makepyfile(mylib=LIBRARY, test_perf=TEST)
    monkeypatch.setattr(functions, "CALLS", ScriptedCalls(lambda call, args: 1e-8 * call.args[0], seed=2))
    return pytester


def _inprocess(project, *args, files=("test_perf.py",)):
    """pytest with the plugin, in this process; the result's text and exit code."""
    done = project.runpytest_inprocess("-q", "-p", "no:cacheprovider", *files, *args)
    return "\n".join(done.outlines), "\n".join(done.errlines), int(done.ret)


@pytest.mark.e2e
def test_with_pairbench_the_fixture_measures_a_function_and_the_summary_shows_its_time(repository):
    done = _pytest(repository, "--pairbench", "--pairbench-max-time", "300ms")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pairbench test_perf.py::test_work: median" in done.stdout and "per call" in done.stdout


def test_every_measured_test_is_kept_in_the_json_document_not_only_the_last(project, tmp_path_factory):
    """Each test's result replaced the file, so it kept the last test's samples alone."""
    project.makepyfile(test_perf=TEST + "\ndef test_more(pairbench):\n    pairbench(mylib.work, 600)\n")
    result = tmp_path_factory.mktemp("out") / "r.json"
    out, err, code = _inprocess(project, "--pairbench", "--pairbench-max-time", "200ms", "--pairbench-json", str(result))
    assert code == 0, out + err
    document = json.loads(result.read_text())
    assert [b["name"] for b in document["benchmarks"]] == ["test_perf.py::test_work", "test_perf.py::test_more"]
    assert [s["benchmark"] for s in document["series"]] == [0, 1] and len(document["summaries"]) == 2
    seq = [n for s in document["series"] for n in s["samples"]["seq"]]
    assert len(seq) == len(set(seq))  # one run: its samples numbered once


def test_a_plain_pytest_run_calls_the_function_once_without_measuring(project):
    project.makepyfile(test_perf=TEST + "\nCALLS = []\n\ndef test_once(pairbench):\n"
                       "    pairbench(CALLS.append, 1)\n    assert CALLS == [1]\n")
    out, err, code = _inprocess(project)
    assert code == 0, out + err
    assert "2 passed" in out and "median" not in out


@pytest.mark.parametrize(("option", "ran"), [("--pairbench-skip", "plain"), ("--pairbench-only", "work")])
def test_the_fixtures_tests_can_be_skipped_or_run_alone(project, option, ran):
    project.makepyfile(test_perf=(
        "import mylib, pathlib\n\ndef test_work(pairbench):\n    pathlib.Path('ran').write_text('work')\n"
        "    pairbench(mylib.work, 300)\n\ndef test_plain():\n    pathlib.Path('ran').write_text('plain')\n"))
    out, err, code = _inprocess(project, option, "-rs")
    assert code == 0, out + err
    assert f"({option})" in out and "1 passed, 1 skipped" in out
    assert (project.path / "ran").read_text() == ran


@pytest.mark.e2e
def test_a_revision_that_does_not_exist_fails_the_session_and_says_so(repository):
    done = _pytest(repository, "--pairbench-against", "no-such-branch")
    assert done.returncode == 1
    assert "no-such-branch" in done.stdout and "no such revision" in done.stdout


@pytest.mark.e2e
@pytest.mark.slow
def test_against_a_revision_the_slower_working_tree_is_found_on_cpu_time_and_fails_the_gate(repository,
                                                                                             tmp_path_factory):
    """One real comparison for both: the gate, and verdicts on CPU time (three times the work is
    slower on CPU time whatever else runs beside; wall time is what load stretches)."""
    result = tmp_path_factory.mktemp("out") / "r.json"
    done = _pytest(repository, "--pairbench-against", "HEAD", "--pairbench-metric", "cpu", "--pairbench-fail-on",
                   "slower", "--pairbench-json", str(result), "--pairbench-pass-env", "PYTEST_ADDOPTS", lean=LEANER)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "working tree is" in done.stdout and "slower than HEAD" in done.stdout
    assert "on CPU time" in done.stdout
    last = done.stdout.strip().splitlines()[-2:]  # the reason in red, then the session's last line
    assert "pairbench: 1 benchmark slower than HEAD (--pairbench-fail-on slower): test_perf.py::test_work" in last[0]
    assert "1 passed, 1 slower (--pairbench-fail-on) in" in last[1]
    document = json.loads(result.read_text())
    assert [c["verdict"] for c in document["comparisons"]] == ["slower"]
    assert document["settings"]["decision"]["metric"] == "cpu"
    assert [c["metric"] for c in document["comparisons"]] == ["cpu"]


def test_the_plugins_fail_on_option_offers_the_gates_of_the_command_line(pytester):
    from pairbench.verdict import FAIL_ON_CHOICES

    out = "\n".join(pytester.runpytest_inprocess("-p", "no:cacheprovider", "--help").outlines)
    assert f"--pairbench-fail-on={'|'.join(FAIL_ON_CHOICES)}" in out
TWICE = "import mylib\n\ndef test_twice(pairbench):\n    pairbench(mylib.work, 300)\n    pairbench(mylib.work, 900)\n"
LONG_IDS = ("import mylib, pytest\n\n@pytest.mark.parametrize('n', [300, 301], ids=['x' * 250 + 'a', 'x' * 250 + 'b'])\n"
            "def test_long(pairbench, n):\n    pairbench(mylib.work, n)\n")


def test_a_test_calling_the_fixture_twice_fails_saying_so(project):
    """The audit's G21: compared, such a test counted its last call only, and nothing said so."""
    project.makepyfile(test_twice=TWICE)
    out, err, code = _inprocess(project, "--pairbench-max-time", "200ms", files=("test_twice.py",))
    assert code == 1, out + err
    assert "called 2 times in test_twice.py::test_twice" in out


def test_a_test_calling_the_fixture_twice_fails_saying_so_against_a_revision(project, monkeypatch):
    """The test fails in the session itself, whatever the comparison at its end finds (a stand-in
    here: the gate's test above runs a real one)."""
    from pairbench import pytest_plugin

    compared = []
    monkeypatch.setattr(pytest_plugin, "_compare_against",
                        lambda config, nodeids: compared.append(list(nodeids)) or ([], None))
    project.makepyfile(test_twice=TWICE)
    out, err, code = _inprocess(project, "--pairbench-against", "HEAD", files=("test_twice.py",))
    assert code == 1, out + err
    assert "called 2 times in test_twice.py::test_twice" in out
    assert compared == [["test_twice.py::test_twice"]]


def test_tests_whose_ids_share_their_first_200_bytes_are_compared_apart(project, monkeypatch):
    """The audit's G21: their benchmark names were the ids cut to 200 bytes, so two tests became one.
    Both are compared (the comparison at the session's end stood in for, as above), under the names
    the worker protocol gives them, which differ."""
    from pairbench import pytest_plugin
    from pairbench.worker.protocol import as_name

    compared = []
    monkeypatch.setattr(pytest_plugin, "_compare_against",
                        lambda config, nodeids: compared.append(list(nodeids)) or ([], None))
    project.makepyfile(test_long=LONG_IDS)
    out, err, code = _inprocess(project, "--pairbench-against", "HEAD", files=("test_long.py",))
    assert code == 0 and "2 passed" in out, out + err
    [nodeids] = compared
    assert len(nodeids) == 2 and nodeids[0][:200] == nodeids[1][:200]
    assert len({as_name(n) for n in nodeids}) == 2


def test_a_json_path_that_would_replace_a_live_runs_journal_is_refused_before_any_test(project, tmp_path_factory):
    from store_runs import stored_run

    from pairbench.store.journal import Journal

    journal = Journal(tmp_path_factory.mktemp("out") / "r.json", stored_run())
    before = journal.path.read_bytes()
    try:
        for path in (journal.path, journal.path.parent / "x.json.partial"):
            out, err, code = _inprocess(project, "--pairbench-max-time", "100ms", "--pairbench-json", str(path))
            assert code == 4 and "--pairbench-json" in err and ".partial" in err, out + err
            assert "passed" not in out
        assert journal.path.read_bytes() == before and not (journal.path.parent / "x.json.partial").exists()
    finally:
        journal.close(remove=True)
