"""No process outlives pairbench: a worker's daemons, a listing's, a build's, whether the program ends,
times out, pairbench gets SIGTERM, or pairbench is killed with ``kill -9`` (the red-team audit's G18:
a forking Python benchmark left 118 orphans, ``confirm``'s build survived its timeout and SIGTERM,
and a hung worker survived ``kill -9`` of pairbench).

Every process a test makes carries a token in its command line; the tests poll ``/proc`` for it with
generous deadlines and never assert how long anything took. pairbench runs as a child process where
it is signalled, with SIGTERM, SIGINT and SIGHUP at their defaults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import invoke
from processes import all_gone, default_dispositions, running, token, wait_until

pytestmark = pytest.mark.e2e

FORKING_BENCHMARK = """import os, pairbench

@pairbench.benchmark
def forks():
    if os.fork() == 0:
        os.setsid()
        os.execvp("sleep", ["sleep", "{mark}"])
"""

KEEPS_THE_PIPE = r"""import os, sys, time
r, w = map(int, os.environ.pop("PAIRBENCH_WORKER_FDS").split(","))
f, o = os.fdopen(r), os.fdopen(w, "w", buffering=1)
o.write("pairbench-worker 1\n")
for line in f:
    if line.startswith("list"):
        o.write("benchmarks 1\nbenchmark b\n")
    elif line.startswith("run"):
        if sys.argv[2] == "daemon" and os.fork() == 0:
            os.setsid()
            time.sleep(600)  # keeps both pipes
        if sys.argv[2] == "hang":
            open(sys.argv[3], "w").close()  # hung from now on
            time.sleep(600)
        sys.exit(3)
"""


def pairbench(*args: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pairbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, preexec_fn=default_dispositions)


def finish(process: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    return process.returncode, err


def test_a_benchmark_forking_a_daemon_in_every_sample_leaves_none_running(tmp_path):
    mark = token()
    bench = tmp_path / "bench_fork.py"
    bench.write_text(FORKING_BENCHMARK.replace("{mark}", mark))
    code, _, err = invoke("bench", str(bench), "--runs", "8", "--sample-time", "100us", "-q", "--no-store")
    assert code == 0, err
    assert all_gone(mark)


def test_a_worker_whose_daemon_keeps_its_pipes_fails_and_leaves_nothing_running(tmp_path):
    mark = token()
    worker = tmp_path / "w.py"
    worker.write_text(KEEPS_THE_PIPE)
    code, _, err = invoke("bench", f"{sys.executable} {worker} {mark} daemon", "--runs", "8", "-q", "--no-store",
                          "--timeout", "60s")
    assert code == 3, err
    assert "exit code 3" in err
    assert all_gone(mark)


def test_kill_9_of_bench_ends_a_hung_worker(tmp_path):
    mark = token()
    worker = tmp_path / "w.py"
    worker.write_text(KEEPS_THE_PIPE)
    hung = tmp_path / "hung"
    process = pairbench("bench", f"{sys.executable} {worker} {mark} hang {hung}", "--runs", "8", "-q", "--no-store")
    try:
        assert wait_until(lambda: hung.exists() or process.poll() is not None, 60)
        assert process.poll() is None, process.communicate()
    finally:
        process.kill()  # SIGKILL: pairbench runs no clean-up
        finish(process)
    assert all_gone(mark)


HANGING_LISTING = """#!/bin/sh
case "$*" in *list_tests*) setsid sleep {mark} & sleep {mark} ;; esac
"""


def test_kill_9_of_bench_ends_a_listing_and_its_daemon(tmp_path):
    mark = token()
    program = tmp_path / "gb"
    program.write_text(HANGING_LISTING.replace("{mark}", mark))
    program.chmod(0o755)
    process = pairbench("bench", "--harness", "gbench", str(program), "-q", "--no-store")
    try:
        assert wait_until(lambda: len(running(mark, exactly=True)) == 2 or process.poll() is not None, 60)
        assert process.poll() is None, process.communicate()
    finally:
        process.kill()
        finish(process)
    assert all_gone(mark)


def confirm_project(root: Path, build: str, build_timeout: str) -> tuple[str, str]:
    """A repository of two commits whose [confirm] build is ``build``; their hashes."""
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    (root / "pairbench.toml").write_text(f'[store]\nurl = "sqlite:///history.db"\n\n[confirm]\nbuild = "{build}"\n'
                                         f'bench = "bench_x.py"\nbuild_timeout = "{build_timeout}"\n')
    (root / ".gitignore").write_text("history.db*\n.pairbench/\n")
    commits = []
    for k in range(2):
        (root / "bench_x.py").write_text(f"import pairbench\n\n@pairbench.benchmark\ndef x():\n    return {k}\n")
        subprocess.run([*git, "add", "."], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", f"v{k}"], cwd=root, check=True)
        commits.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                                      text=True).stdout.strip())
    return commits[0], commits[1]


def test_a_build_past_its_timeout_is_ended_with_everything_it_started(tmp_path, monkeypatch):
    mark = token()
    before, after = confirm_project(tmp_path, f"setsid sleep {mark} & sleep {mark}; true", "2s")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    code, _, err = invoke("confirm", before, after, "-q")
    assert code == 3 and "did not finish within 2 s" in err, err
    assert all_gone(mark)


def test_sigterm_to_confirm_during_a_build_ends_the_build(tmp_path):
    mark = token()
    before, after = confirm_project(tmp_path, f"setsid sleep {mark} & sleep {mark}; true", "10m")
    process = pairbench("confirm", before, after, "-q", cwd=tmp_path)
    try:
        assert wait_until(lambda: len(running(mark, exactly=True)) == 2 or process.poll() is not None, 60)
        assert process.poll() is None, process.communicate()
        process.terminate()
        code, err = finish(process)
    finally:
        process.kill()
    assert code == 143, err
    assert all_gone(mark)
