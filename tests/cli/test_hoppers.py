"""A process that forks and exits every few milliseconds (a PID hopper: it has a new pid each time it is
looked for) is ended with whatever started it, from every entry point: a ``run`` command, a ``bench``
worker and a ``bisect`` build; pairbench ending normally, by SIGTERM, by SIGINT and by ``kill -9``
(the red-team audit's H2: the keeper scanned ``/proc`` five times and gave up, and the hopper outlived
pairbench). Each case runs with the containment this machine gives (a cgroup per program where
pairbench may make one) and, for each entry point, with the scan of descendants that stands in for it
elsewhere (``PAIRBENCH_CGROUP=none``).

Whether a hopper lives is told by a FIFO each of its processes holds open (``tests/support/hoppers.py``:
a scan of ``/proc`` misses a process that forked and exited while it ran); the tests wait for it with
generous deadlines and never assert how long anything took. A hopper ends itself after 120 s, or when
the test is over. pairbench runs as a child process, with SIGTERM and SIGINT at their defaults.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hoppers import Hopper
from processes import default_dispositions, wait_until

from pairbench.measure import containment

pytestmark = pytest.mark.e2e

ENDINGS = {"normal": None, "sigterm": signal.SIGTERM, "sigint": signal.SIGINT, "kill-9": signal.SIGKILL}
EXIT_AFTER = {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGKILL: -9}
MODES = {"machine": None, "scan": "none"}


@pytest.fixture
def hopper(tmp_path):
    """A hopper, told to stop when the test ends, whatever happened."""
    hopper = Hopper(tmp_path / "hop")
    directory = containment.containment().directory
    hopper.stale_before = set(_stale_cells(directory)) if directory else set()
    yield hopper
    hopper.stop()


def _pairbench(args: list[str], mode: str | None, cwd: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIRBENCH_")}
    if mode is not None:
        env[containment.CGROUP_VARIABLE] = mode
    return subprocess.Popen([sys.executable, "-m", "pairbench", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_dispositions)


def _end(process: subprocess.Popen, how: int | None, hopper: Hopper) -> tuple[int, str]:
    """Let pairbench finish (``how`` None), or send it ``how`` once the hopper runs; its status and
    standard error."""
    try:
        if how is not None:
            assert wait_until(lambda: hopper.started() or process.poll() is not None, 60)
            assert process.poll() is None, process.communicate()
            process.send_signal(how)
        _, err = process.communicate(timeout=180)
    finally:
        process.kill()
    return process.returncode, err


def _nothing_left(hopper: Hopper, mode: str | None) -> None:
    assert hopper.started(), "the hopper never ran"
    assert hopper.gone(), "the hopper outlived pairbench"
    found = containment.containment()
    if mode is None and found.directory:  # no cell of a process that has ended is left behind
        left = lambda: set(_stale_cells(found.directory)) - hopper.stale_before  # noqa: E731
        assert wait_until(lambda: not left(), 10), left()


def _stale_cells(directory: str) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(containment.CELL_PREFIX)
            and not Path(f"/proc/{name.split('-')[1]}").exists()]


def _cases(scanned: str):
    """Every ending with the machine's containment, and ``scanned`` with the scan."""
    return [*(pytest.param(ending, "machine", id=f"{ending}-machine") for ending in ENDINGS),
            pytest.param(scanned, "scan", id=f"{scanned}-scan")]


@pytest.mark.parametrize(("ending", "mode"), _cases("normal"))
def test_a_hopper_a_run_command_starts_is_ended_with_it(hopper, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    text = command if how is None else f"{command} && sleep 600"
    shell = [] if how is None else ["-S", "sh"]
    process = _pairbench(["run", "--no-store", "-q", "--runs", "2", "--warmup", "0", *shell, text], MODES[mode],
                         tmp_path)
    code, err = _end(process, how, hopper)
    assert code == EXIT_AFTER.get(how, 0), err
    _nothing_left(hopper, MODES[mode])


BENCHMARK = """import subprocess, sys, time, pairbench
started = False

@pairbench.benchmark
def hops():
    global started
    if not started:
        started = True
        subprocess.run({command!r}.split())
        if {hang}:
            time.sleep(600)
"""


@pytest.mark.parametrize(("ending", "mode"), _cases("kill-9"))
def test_a_hopper_a_bench_worker_starts_is_ended_with_it(hopper, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    (tmp_path / "bench_hop.py").write_text(BENCHMARK.format(command=command, hang=how is not None))
    process = _pairbench(["bench", "bench_hop.py", "--no-store", "-q", "--runs", "6", "--warmup", "0"],
                         MODES[mode], tmp_path)
    code, err = _end(process, how, hopper)
    assert code == EXIT_AFTER.get(how, 0), err
    _nothing_left(hopper, MODES[mode])


def _project(root: Path, build: str) -> tuple[str, str]:
    """A repository of two commits whose [confirm] build is ``build``; their hashes."""
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    (root / "pairbench.toml").write_text(f'[confirm]\nbuild = "{build}"\nbench = "bench_x.py"\n')
    (root / ".gitignore").write_text(".pairbench/\nhop/\n")
    commits = []
    for k in range(2):
        (root / "bench_x.py").write_text(f"import pairbench\n\n@pairbench.benchmark\ndef x():\n    return {k}\n")
        subprocess.run([*git, "add", "."], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", f"v{k}"], cwd=root, check=True)
        commits.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                                      text=True).stdout.strip())
    return commits[0], commits[1]


@pytest.mark.parametrize(("ending", "mode"), _cases("sigterm"))
def test_a_hopper_a_bisect_build_starts_is_ended_with_it(hopper, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    good, bad = _project(tmp_path, f"{command}; true" if how is None else f"{command} && sleep 600")
    process = _pairbench(["bisect", good, bad, "--no-store", "-q", "--max-time", "2s"], MODES[mode], tmp_path)
    code, err = _end(process, how, hopper)
    if how is None:
        assert code in (0, 5, 6, 7), err  # whatever the search found, it ended
    else:
        assert code == EXIT_AFTER[how], err
    _nothing_left(hopper, MODES[mode])
