"""``pairbench show`` of a saved result prints exactly what the command that saved it printed.

Every note ``analyse`` needs is stored with the run, so the analysis ``show`` computes again from
the file is the one the command printed. Measuring is not the point here: commands run on
``FakeExecutor``'s script, suites on ``FakeWorkers``; ``compare_functions`` and ``import`` print no
report of their own, so what they hand back (or read) is rendered in memory and compared.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor, FakeWorkers

import pairbench.sessions.bisect as bisect
from pairbench.analysis import analyse
from pairbench.report import text
from pairbench.store.imports import read_import

DATA = Path(__file__).parents[1] / "adapters" / "data"
BASE, CAND = "sleep 0.1", "sleep 0.2"  # real programs, so the commands parse; durations are scripted


def scripted(ratio: float, *, seed: int = 0, sd: float = 0.01):
    """CAND takes ``ratio`` times BASE, each with its own noise."""
    rng = np.random.default_rng(seed)
    return lambda command, index, clock_ns: 0.05 * (ratio if command.text == CAND else 1.0) * float(
        np.exp(rng.normal(0.0, sd)))


def shown(path: Path) -> str:
    result = invoke("show", str(path))
    assert result.code == 0, result.err
    return result.out


def rendered(run, analysis) -> str:
    return text.renderer(run, analysis)(run, analysis, color=False)


@pytest.mark.parametrize("argv", [
    ("run", "--runs", "12", "--seed", "3", BASE),
    ("run", "--runs", "12", "--seed", "3", "--sort", "auto", BASE, CAND),
    ("compare", "--seed", "3", BASE, CAND),
    ("compare", "--seed", "3", "--self-check", "--runs", "20", BASE, CAND),
], ids=["run", "run-two", "compare", "compare-self-check"])
def test_show_prints_what_run_and_compare_printed(argv, tmp_path, use_executor):
    use_executor(FakeExecutor(scripted(1.3)))
    path = tmp_path / "r.json"
    printed = invoke(*argv, "-q", "--json", str(path))
    assert printed.code == 0, printed.err
    assert "Notes:" in printed.out or argv[0] == "run"
    assert shown(path) == printed.out


SUITE_OLD = {"parse": {"per_iteration_ns": 120.0}, "sort": {"per_iteration_ns": 800.0, "fixed_ns": 60_000.0},
             "alloc": {"per_iteration_ns": 2000.0, "kept_bytes": 4096}}
SUITE_NEW = {**SUITE_OLD, "parse": {"per_iteration_ns": 150.0}}


def suite_workers() -> FakeWorkers:
    return FakeWorkers({"./bench-old": SUITE_OLD, "./bench-new": SUITE_NEW}, seed=1)


def test_show_prints_what_bench_printed(worker_programs):
    printed = invoke("bench", "--harness", "pairbench", "--seed", "4", "-q", "--json", "r.json", "./bench-old",
                     "./bench-new", workers=suite_workers())
    assert printed.code == 0, printed.err
    assert "Validation" in printed.out  # a note judged again from the stored samples
    assert shown(worker_programs / "r.json") == printed.out


def test_show_prints_what_merge_printed(worker_programs):
    for k in (1, 2):
        measured = invoke("bench", "--harness", "pairbench", "--seed", "4", "-q", "--shard", f"{k}/2", "--json",
                          f"shard-{k}.json", "./bench-old", "./bench-new", workers=suite_workers())
        assert measured.code == 0, measured.err
    printed = invoke("merge", "--json", "suite.json", "shard-1.json", "shard-2.json")
    assert printed.code == 0, printed.err
    assert shown(worker_programs / "suite.json") == printed.out


def test_show_prints_what_compare_functions_returned(tmp_path):
    """``compare_functions`` prints nothing: its run and analysis, rendered, are what a caller shows;
    the ``sample-time-raised`` note of its returned comparison comes back from the file too."""
    from pairbench.sessions.functions import measure_functions
    from pairbench.sessions.result import save

    def quick():
        return sum(range(3))

    def slower():
        return sum(range(6))

    run, analysis = measure_functions(quick, slower, max_time="300ms", sample_time="1us", seed=1)
    assert "sample-time-raised" in {n.code for n in analysis.comparisons[0].notes}
    save(run, analysis, tmp_path / "f.json")
    assert shown(tmp_path / "f.json") == rendered(run, analysis)


@pytest.mark.parametrize("source", ["hyperfine-1.15.json", "gbench-1.7.1.json", "go-count2.txt",
                                    "pytest-benchmark-5.3.1.json"])
def test_show_prints_the_analysis_of_what_import_read(source, tmp_path):
    printed = invoke("import", "--json", str(tmp_path / "i.json"), str(DATA / source))
    assert printed.code == 0, printed.err
    run = read_import(str(DATA / source))
    assert shown(tmp_path / "i.json") == rendered(run, analyse(run))


# --------------------------------------------------------------------------- confirm: real git, fake timing


PROGRAM = "#!/bin/sh\n# change {k}: {speed}\nexit 0\n"


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def repository(tmp_path, monkeypatch) -> list[str]:
    """Four commits of a ``[confirm] command`` (``./prog``, built by ``true``), slow from the third on."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "true"\ncommand = "./prog"\nname = "prog"\n')
    (tmp_path / ".gitignore").write_text(".pairbench/\n")
    commits = []
    for k in range(4):
        (tmp_path / "prog").write_text(PROGRAM.format(k=k, speed="slow" if k >= 2 else "quick"))
        (tmp_path / "prog").chmod(0o755)
        _git(tmp_path, "add", ".")
        _git(tmp_path, "commit", "-q", "-m", f"change {k}")
        commits.append(_git(tmp_path, "rev-parse", "HEAD"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    return commits


def by_tree(seed: int = 0):
    """A command run in a build's tree (``env -C TREE ./prog``) takes 1.3 times as long where its
    ``prog`` says slow."""
    rng = np.random.default_rng(seed)

    def duration(command, index, clock_ns):
        tree = command.argv[command.argv.index("-C") + 1]
        slow = "slow" in (Path(tree) / "prog").read_text()
        return 0.05 * (1.3 if slow else 1.0) * float(np.exp(rng.normal(0.0, 0.01)))

    return duration


@pytest.mark.e2e
def test_show_prints_what_confirm_printed(repository, use_executor):
    use_executor(FakeExecutor(by_tree()))
    printed = invoke("confirm", repository[1], repository[2], "--seed", "5", "-q", "--json", "c.json")
    assert printed.code == 0, printed.err
    assert "slower" in printed.out
    assert shown(Path("c.json")) == printed.out


@pytest.mark.e2e
def test_show_prints_what_each_comparison_of_bisect_measured(repository, monkeypatch):
    """``bisect`` prints a line per comparison and its answer; each comparison's result file, which
    its JSON names, shows the comparison it measured."""
    measured, measure_builds = [], bisect.measure_builds

    def recorded(settings, seams, boundary=None):
        outcome = measure_builds(settings, seams, boundary)
        measured.append((settings.outputs.json_path, rendered(outcome.run, outcome.analysis)))
        return outcome

    monkeypatch.setattr(bisect, "measure_builds", recorded)
    printed = invoke("bisect", repository[0], repository[-1], "--seed", "5", "-q", "--json", "b.json",
                     executor_factory=lambda output: FakeExecutor(by_tree()))
    assert printed.code == 0, printed.out
    assert f"Found: commit {repository[2][:10]}" in printed.out
    written = [c["result"] for c in json.loads(Path("b.json").read_text())["comparisons"]]
    assert written == [path for path, _ in measured] and len(written) >= 2
    for path, printed_text in measured:
        assert shown(Path(path)) == printed_text
