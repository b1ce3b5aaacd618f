"""``pairbench bisect``: real git repositories built in the test, bisected in paired rounds.

The search itself (which commits, the build cache, skips, budgets, the answer) is tested with the
builds real and the measuring scripted: the workers (``BuiltWorkers``) and commands
(``built_executor``) of each built commit take a fixed time per iteration on a virtual clock, so
nothing load could flip is left to chance. A few tests (``slow``) measure a real C worker and a command
end to end, with a step (three times the work) no load can hide; what
load could flip there (the effects' sizes, how many rounds) is never asserted exactly."""

from __future__ import annotations

import functools
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeExecutor, ProgramWorkers
from processes import wait_until
from tools import commit_series, git

from pairbench.store.history import Store

pytestmark = pytest.mark.e2e

WORKER = """/* revision {k} */
#include "pairbench.h"
PAIRBENCH(work) {{ unsigned s = 0; for (unsigned i = 0; i < {loops}u; i++) s += i * i; pairbench_keep(s); }}
PAIRBENCH(same) {{ unsigned s = 0; for (unsigned i = 0; i < 2000u; i++) s ^= i; pairbench_keep(s); }}
PAIRBENCH_MAIN()
"""
# about 1.4 ms of CPU, then 3.2 ms (three times the loop; the process's start-up the same): decided in a
# few rounds at any load, where 20 and 60 million iterations spent a second of CPU a search on the loop
PROGRAM = """/* revision {k} */
int main(void) {{ volatile unsigned s = 0; for (unsigned i = 0; i < {loops}000u; i++) s += i * i; return 0; }}
"""
PYTHON = """# revision {k}
import pairbench


@pairbench.benchmark
def work():
    s = 0
    for i in range({loops}):
        s += i * i
    return s
"""
# 20 s per comparison at most (most decide in 1-3 s): on a loaded machine fewer worker processes are
# rotated in a second, and an interval at alpha 0.002 needs 13 blocks of them (8 s once gave 12). A block
# is about 64 ms of samples whatever their length: 1 ms samples make it 32 rounds (200 us made it 160,
# each journaled and analysed: 4 of the real worker search's 11 s of CPU)
FAST = ("--max-time", "20s", "--sample-time", "1ms", "--seed", "11", "-q")
# for the scripted workers: a comparison decides after as many blocks of fresh workers as a real one, and
# a block is about 64 ms of samples, so 200 us samples made it 160 rounds (2,080 a comparison, each
# sample journaled: most of these tests' CPU time) where 4 ms samples make it 8
SCRIPTED = ("--max-time", "20s", "--sample-time", "4ms", "--seed", "11", "-q")


def _repository(root: Path, config: str, path: str, text: str, commits: int, step: int, *,
                broken: int | None = None, without: tuple[int, str] | None = None) -> list[str]:
    """A repository of ``commits`` commits of ``path``; from ``step`` on the work is three times as
    much; commit ``broken`` does not build; in commit ``without[0]`` the lines that hold
    ``without[1]`` are gone (a benchmark removed there, and back after it)."""
    (root / "pairbench.toml").write_text(config)
    (root / ".gitignore").write_text("bench\nprog\n.pairbench/\n__pycache__/\nhistory.db*\n")
    (root / path).parent.mkdir(parents=True, exist_ok=True)

    def source(k: int) -> str:
        if k == broken:
            return "this is not C\n"
        written = text.format(k=k, loops=6000 if k >= step else 2000)
        if without is not None and k == without[0]:
            written = "".join(line for line in written.splitlines(keepends=True) if without[1] not in line)
        return written

    return commit_series(root, commits, path, source)


def _command_repository(root: Path, monkeypatch, commits: int, step: int) -> list[str]:
    """A repository of ``PROGRAM`` measured as the ``[confirm] command`` ./prog, the current directory."""
    config = '[confirm]\nbuild = "cc -O1 prog.c -o prog"\ncommand = "./prog"\nname = "prog"\n'
    found = _repository(root, config, "prog.c", PROGRAM, commits, step)
    monkeypatch.chdir(root)
    return found


def _worker_config(store: bool = False) -> str:
    """Builds at -O0: half the compiler's time of -O1, and the real worker's step is in its loop
    counts (three times the iterations), not in what the optimiser makes of them."""
    from pairbench import __file__ as package

    header = Path(package).parent / "worker" / "include"
    stored = '[store]\nurl = "sqlite:///history.db"\n\n' if store else ""
    return f'{stored}[confirm]\nbuild = "cc -O0 -I{header} bench.c -o bench"\nbench = "bench"\n'


@pytest.fixture(scope="module")
def worker_template(tmp_path_factory) -> tuple[Path, list[str]]:
    """The repository ``worker_repo`` copies, committed once for the module (never built in)."""
    root = tmp_path_factory.mktemp("worker-template")
    return root, _repository(root, _worker_config(store=True), "bench.c", WORKER, 9, 6)


@pytest.fixture
def worker_repo(worker_template, tmp_path, monkeypatch):
    """Nine commits of a C worker, ``work`` three times slower from commit 6, a history store: a
    copy of the module's template, whose build cache and history are this test's own."""
    template, commits = worker_template
    shutil.copytree(template, tmp_path, dirs_exist_ok=True, symlinks=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    return tmp_path, commits


def _document(path: Path) -> dict:
    return json.loads(path.read_text())


def _commit_of(text: str, commits: list[str]) -> int:
    """Which of ``commits`` (of the repository in the working directory) a built program's path
    names: the build cache keeps a build under its commit's tree."""
    return next(k for k, tree in enumerate(_trees(tuple(commits))) if tree in text)


@functools.lru_cache(maxsize=16)
def _trees(commits: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(git(Path.cwd(), "rev-parse", f"{commit}^{{tree}}") for commit in commits)


def BuiltWorkers(commits: list[str], step: int, *, more: bool = False,  # noqa: N802 - stands for a class
                 without: tuple[int, str] | None = None) -> ProgramWorkers:
    """Scripted workers of built revisions: each lists and times the benchmarks of the commit its
    program was built from, ``work`` three times slower from commit ``step`` on (as ``WORKER``),
    ``more`` too when asked, and not the one ``without`` names in its commit."""

    def script_of(text: str) -> dict:
        k = _commit_of(text, commits)
        slow = 3.0 if k >= step else 1.0
        script = {"work": {"per_iteration_ns": 2000.0 * slow}}
        if more:
            script["more"] = {"per_iteration_ns": 1500.0 * slow}
        script["same"] = {"per_iteration_ns": 500.0}
        if without is not None and without[0] == k:
            script.pop(without[1])
        return script

    return ProgramWorkers(script_of, seed=1)


class BuiltExecutor(FakeExecutor):
    """A scripted executor for a ``[confirm] command`` (``PROGRAM``), for every comparison of a search
    (each session closes its executor; this one stays open): a commit's ``./prog`` takes 2 ms, 6 ms
    from commit ``step`` on, all of it CPU time, with a seeded 1% noise."""

    def __init__(self, commits: list[str], step: int):
        rng = __import__("numpy").random.default_rng(3)

        def duration(command, index, clock_ns):
            seconds = (0.006 if _commit_of(command.text, commits) >= step else 0.002) * (1 + rng.normal(0, 0.01))
            return {"duration": seconds, "user_ns": int(seconds * 1e9)}

        super().__init__(duration)

    def close(self) -> None:
        pass


@pytest.mark.slow
def test_bisect_names_the_commit_that_made_the_worker_slower_and_stores_every_comparison(tmp_path, monkeypatch):
    """Five commits (four to search: a comparison and a build fewer than the scripted tests' nine),
    ``work`` three times slower from commit 3, measured for real."""
    root, commits = tmp_path, _repository(tmp_path, _worker_config(store=True), "bench.c", WORKER, 5, 3)
    monkeypatch.chdir(root)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--json", "bisect.json", *FAST)
    assert code == 0, err
    doc = _document(root / "bisect.json")
    assert doc["answer"]["kind"] == "found" and doc["answer"]["commit"] == commits[3]
    assert doc["answer"]["subject"] == "change 3"
    assert len(doc["comparisons"]) <= doc["most_comparisons"] == 4  # ceil(log2 4) + 2
    assert doc["level"] == pytest.approx(0.01 / 4)
    ends = doc["comparisons"][-1]
    assert (ends["base"], ends["candidate"]) == (commits[2], commits[3])
    assert ends["benchmarks"][0]["side"] == "above" and ends["benchmarks"][0]["confidence"] == pytest.approx(0.9975)
    assert f"Found: commit {commits[3][:10]} (change 3)." in out and "at least a quarter of the" in out
    with Store.open(str(root / "history.db")) as store:
        machine = store.machines()[0]
        confirmed = store.confirmations(machine.id, [b.id for b in store.benchmarks(machine.id)])
    pairs = {(c.before, c.after) for c in confirmed}
    assert len(confirmed) == len(doc["comparisons"])
    assert (commits[2], commits[3]) in pairs and (commits[0], commits[4]) in pairs


def test_a_second_search_finds_every_build_in_the_cache(worker_repo):
    root, commits = worker_repo
    workers = BuiltWorkers(commits, 6)
    assert invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--no-store", *SCRIPTED, workers=workers).code == 0
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--no-store", "--json", "-", *SCRIPTED,
                            workers=workers)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["builds"]["built"] == 0 and doc["builds"]["reused"] >= 3
    cache = root / ".git" / "pairbench" / "builds"
    assert sorted(p.name for p in cache.iterdir() if p.is_dir()) and all(
        (entry / "built").exists() for entry in cache.iterdir() if entry.is_dir())


def test_a_budget_too_small_to_finish_names_no_commit_and_returns_the_range(worker_repo):
    _, commits = worker_repo
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--no-store", "--budget", "1s",
                            "--json", "-", *SCRIPTED, workers=BuiltWorkers(commits, 6))
    assert code == 5, err
    doc = json.loads(out)
    assert doc["answer"]["kind"] == "inconclusive" and doc["answer"]["commit"] is None
    assert doc["answer"]["why"] == "budget" and doc["comparisons"] == []
    assert (doc["answer"]["first"], doc["answer"]["last"]) == (commits[1], commits[8])


def test_two_commits_with_nothing_between_them_that_matters_are_no_slowdown(worker_repo):
    _, commits = worker_repo
    code, out, err = invoke("bisect", commits[0], commits[3], "-k", "^same$", "--no-store", *SCRIPTED,
                            workers=BuiltWorkers(commits, 6))
    assert code == 7, err
    assert "No slowdown: BAD is not slower than GOOD by the threshold" in out


def test_a_middle_commit_that_does_not_build_is_skipped(tmp_path, monkeypatch):
    commits = _repository(tmp_path, _worker_config(), "bench.c", WORKER, 9, 6, broken=4)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--json", "-", *SCRIPTED,
                            workers=BuiltWorkers(commits, 6))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["answer"]["commit"] == commits[6]
    assert [s["commit"] for s in doc["skipped"]] == [commits[4]] and "does not build" in doc["skipped"][0]["why"]


def test_a_middle_commit_without_the_benchmark_is_skipped_like_one_that_does_not_build(tmp_path, monkeypatch):
    """Commit 4, the first middle one, lists only ``same``: it cannot say where ``work`` got slower
    (``git bisect skip``), so the search goes on around it."""
    commits = _repository(tmp_path, _worker_config(), "bench.c", WORKER, 9, 6, without=(4, "PAIRBENCH(work)"))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--json", "-", *SCRIPTED,
                            workers=BuiltWorkers(commits, 6, without=(4, "work")))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["answer"]["commit"] == commits[6]
    skipped = doc["skipped"]
    assert [s["commit"] for s in skipped] == [commits[4]] and "matches none of the 1 benchmarks" in skipped[0]["why"]


def test_an_alpha_too_small_to_split_over_the_search_is_a_usage_error_before_any_build(worker_repo):
    root, commits = worker_repo
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^work$", "--no-store", "--alpha", "2e-6", *FAST)
    assert code == 2 and "4e-07 per comparison" in err and "--alpha 5e-06 or more" in err, err
    assert not (root / ".git" / "pairbench").exists() and "Found" not in out


def test_a_middle_commit_without_one_of_two_stepped_benchmarks_is_skipped(tmp_path, monkeypatch):
    """``work`` and ``more`` both get slower at commit 6; commit 4 has no ``more``, and its ``work`` is
    like GOOD's: it cannot tell where ``more`` got slower, so it is skipped rather than ending the
    search undecided."""
    two = WORKER.replace("PAIRBENCH(same)", "PAIRBENCH(more) {{ unsigned s = 1; for (unsigned i = 0; i < "
                         "{loops}u; i++) s += i ^ s; pairbench_keep(s); }}\nPAIRBENCH(same)")
    commits = _repository(tmp_path, _worker_config(), "bench.c", two, 9, 6, without=(4, "PAIRBENCH(more)"))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^(work|more)$", "--json", "-", *SCRIPTED,
                            workers=BuiltWorkers(commits, 6, more=True, without=(4, "more")))
    assert code == 0, out + err
    doc = json.loads(out)
    assert doc["answer"]["commit"] == commits[6] and "work" in doc["answer"]["benchmarks"], out
    assert {b["benchmark"]: b["side"] for b in doc["comparisons"][0]["benchmarks"]}["more"] == "above"
    assert [s["commit"] for s in doc["skipped"]] == [commits[4]] and "no benchmark 'more'" in doc["skipped"][0]["why"]


def test_bad_that_does_not_build_fails_with_its_build_log(tmp_path, monkeypatch):
    commits = _repository(tmp_path, _worker_config(), "bench.c", WORKER, 4, 2, broken=3)
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("bisect", commits[0], commits[-1], *FAST)
    assert code == 3 and f"({commits[3][:10]}) does not build" in err and "build.log" in err


def test_good_that_does_not_build_fails_before_anything_is_measured(tmp_path, monkeypatch):
    commits = _repository(tmp_path, _worker_config(), "bench.c", WORKER, 4, 2, broken=0)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("bisect", commits[0], commits[-1], *FAST)
    assert code == 3 and f"({commits[0][:10]}) does not build" in err and "build.log" in err
    assert not (tmp_path / ".pairbench" / "bisect").exists() and "Found" not in out


def test_a_filter_that_matches_no_benchmark_is_a_usage_error(worker_repo):
    _, commits = worker_repo
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^nothing$", "--no-store", *SCRIPTED,
                            workers=BuiltWorkers(commits, 6))
    assert code == 2 and "-k '^nothing$' matches none of the 2 benchmarks" in err
    assert "Traceback" not in err and "Found" not in out


def _default_dispositions() -> None:
    """In the child, before exec: SIGINT at its default, as from a shell."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_during_a_build_ends_the_search_with_what_it_found_and_exit_130(tmp_path):
    """The third build (the first middle commit's) waits until killed: Ctrl-C arrives while it runs."""
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    build = (f"cc -O1 prog.c -o prog && touch {marks}/$$ && [ $(ls {marks} | wc -l) -le 2 ] || exec sleep 120")
    config = f'[confirm]\nbuild = "{build}"\ncommand = "./prog"\nname = "prog"\n'
    commits = _repository(repo, config, "prog.c", PROGRAM, 9, 6)
    process = subprocess.Popen([sys.executable, "-m", "pairbench", "bisect", commits[0], commits[-1], "--json",
                                "-", "--max-time", "8s", "--seed", "11", "-q"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_default_dispositions)
    try:
        wait_until(lambda: len(list(marks.iterdir())) >= 3 or process.poll() is not None, 120)
        assert process.poll() is None, process.communicate()[1]
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert doc["answer"]["kind"] == "inconclusive" and doc["answer"]["why"] == "interrupted"
    assert doc["answer"]["commit"] is None and len(doc["comparisons"]) == 1  # GOOD against BAD: the step
    cache = repo / ".git" / "pairbench" / "builds"
    assert sum((entry / "built").exists() for entry in cache.iterdir() if entry.is_dir()) == 2


@pytest.mark.slow
def test_bisect_finds_the_commit_of_a_command(tmp_path, monkeypatch):
    commits = _command_repository(tmp_path, monkeypatch, 5, 3)
    code, out, err = invoke("bisect", commits[0], commits[-1], "-k", "^prog$", "--max-time", "20s", "--seed", "3",
                            "-q", "--export-markdown", "bisect.md")
    assert code == 0, err
    assert f"Found: commit {commits[3][:10]} (change 3)." in out
    markdown = (tmp_path / "bisect.md").read_text()
    assert markdown.startswith("### Bisecting 4 commits") and "| \\# | compared |" in markdown


def test_every_comparison_decides_on_the_metric_given_and_on_compares_default_without_one(tmp_path, monkeypatch):
    commits = _command_repository(tmp_path, monkeypatch, 3, 2)
    code, out, err = invoke("bisect", commits[0], commits[-1], "--metric", "cpu", "--max-time", "20s", "--seed", "3",
                            "-q", "--json", "-", executor=BuiltExecutor(commits, 2))
    assert code == 0, err
    results = [_document(Path(c["result"])) for c in json.loads(out)["comparisons"]]
    assert results and all(r["settings"]["decision"]["metric"] == "cpu" for r in results)
    assert all(c["metric"] == "cpu" for r in results for c in r["comparisons"])
    code, help_text, _ = invoke("bisect", "--help")
    assert code == 0 and "docs/instructions.md. [default: auto]" in " ".join(help_text.split())  # compare's


def test_a_filter_that_does_not_name_the_command_is_refused(tmp_path, monkeypatch):
    commits = _command_repository(tmp_path, monkeypatch, 3, 2)
    code, _, err = invoke("bisect", commits[0], commits[-1], "-k", "^other$")
    assert code == 2 and "does not match 'prog'" in err
    code, _, err = invoke("bisect", commits[0], commits[-1], "--harness", "gbench")
    assert code == 2 and "--harness is for a [confirm] bench target" in err


def test_bisect_finds_the_commit_of_python_benchmark_files(tmp_path, monkeypatch):
    """Each commit's Python files are served by a worker of that commit's tree (scripted here, by the
    tree its command names: the real C worker's and command's searches above measure for real)."""
    config = '[confirm]\nbuild = "true"\nbench = "benchmarks"\n'
    commits = _repository(tmp_path, config, "benchmarks/bench_work.py", PYTHON, 5, 3)
    monkeypatch.chdir(tmp_path)
    workers = ProgramWorkers(lambda text: {"work": {"per_iteration_ns": 2000.0 * (3.0 if _commit_of(text, commits) >= 3
                                                                                   else 1.0)}}, seed=1)
    code, out, err = invoke("bisect", commits[0], commits[-1], "--max-time", "20s", "--seed", "5", "-q",
                            "--json", "-", workers=workers)
    assert code == 0, err
    assert json.loads(out)["answer"]["commit"] == commits[3]
    assert any("benchmarks" in text for text in workers.programs)  # the Python files' workers were asked


@pytest.mark.parametrize(("good", "bad", "says"), [
    ("HEAD", "HEAD~1", "is not an ancestor of BAD"),
    ("HEAD", "HEAD", "both name commit"),
    ("no-such-revision", "HEAD", "no such revision"),
])
def test_revisions_that_cannot_be_bisected_are_usage_errors(worker_repo, good, bad, says):
    code, _, err = invoke("bisect", good, bad)
    assert code == 2 and says in err


def _side_branch(root: Path, at: str) -> str:
    """A branch ``side`` of one commit on ``at``, main checked out again; the side's commit."""
    git(root, "checkout", "-q", "-b", "side", at)
    (root / "side.txt").write_text("side\n")
    git(root, "add", "side.txt")
    git(root, "commit", "-q", "-m", "side")
    git(root, "checkout", "-q", "main")
    return git(root, "rev-parse", "side")


def test_good_brought_in_by_a_merge_is_not_on_bads_first_parent_line(worker_repo):
    root, commits = worker_repo
    side = _side_branch(root, commits[2])
    git(root, "merge", "-q", "--no-edit", "side")
    code, _, err = invoke("bisect", side, "HEAD")
    assert code == 2 and "is not on the first-parent line" in err


def test_good_on_a_branch_that_parted_from_bad_is_not_its_ancestor(worker_repo):
    root, commits = worker_repo
    side = _side_branch(root, commits[2])
    code, _, err = invoke("bisect", side, "main")
    assert code == 2 and f"GOOD {side[:10]} is not an ancestor of BAD" in err


def test_bisect_without_its_config_says_what_to_write(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a")
    git(tmp_path, "add", "a")
    git(tmp_path, "commit", "-q", "-m", "a")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "b")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("bisect", "HEAD~1", "HEAD")
    assert code == 2 and "bisect needs build and one of bench and command" in err and 'bench = "build/bench"' in err


def test_help_shows_examples_and_the_exit_codes():
    code, out, _ = invoke("bisect", "--help")
    assert code == 0 and "pairbench bisect v1.3.0 v1.4.0" in out
    assert "5    inconclusive" in out and "6    spread" in out and "7    no slowdown" in out
