"""A process that forks and exits every few milliseconds (a PID hopper: it has a new pid each time it is
looked for) is ended with whatever started it, from every entry point: a ``run`` command, a ``bench``
worker and a ``bisect`` build; pairbench ending normally, by SIGTERM, by SIGINT and by ``kill -9``
(the red-team audit's H2: the keeper scanned ``/proc`` five times and gave up, and the hopper outlived
pairbench). Each case runs with the containment this machine gives (a cgroup per program where
pairbench may make one) and with the scan of descendants that stands in for it elsewhere
(``PAIRBENCH_CGROUP=none``). With a cgroup, the test gives pairbench a directory of its own
to make its cells in (``PAIRBENCH_CGROUP``), and once pairbench has ended none may be left there.

Whether a hopper lives is told by a FIFO each of its processes holds open (``tests/support/hoppers.py``:
a scan of ``/proc`` misses a process that forked and exited while it ran); the tests wait for it with
generous deadlines and never assert how long anything took. A hopper ends itself after 120 s, or when
the test is over. pairbench runs as a child process, with SIGTERM and SIGINT at their defaults.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hoppers import Hopper
from processes import default_dispositions, wait_until

from pairbench.measure import containment, native
from pairbench.measure.spawner import SPAWNER_VARIABLE

pytestmark = pytest.mark.e2e

ENDINGS = {"normal": None, "sigterm": signal.SIGTERM, "sigint": signal.SIGINT, "kill-9": signal.SIGKILL}
EXIT_AFTER = {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGKILL: -9}
MODES = {"machine": None, "scan": "none"}


@pytest.fixture
def hopper(tmp_path):
    """A hopper, told to stop when the test ends, whatever happened."""
    hopper = Hopper(tmp_path / "hop")
    yield hopper
    hopper.stop()


@pytest.fixture
def cells():
    """A cgroup directory of this test's own below the machine's, named to pairbench in
    ``$PAIRBENCH_CGROUP``: every cell in it was made by the pairbench this test started, so a cell
    another test or another pairbench on the machine leaves is never counted here. None where the
    machine gives no cgroup."""
    base = containment.containment().directory
    if base is None:
        yield None
        return
    directory = Path(base) / f"hopper-tests-{os.getpid()}-{next(_SERIAL)}"  # not a cell's name: no sweep touches it
    directory.mkdir()
    try:
        yield directory
    finally:
        whole = containment.Cell(str(directory))
        whole.end()  # what a failed test left there (a process moving back out of its cell, at most)
        assert whole.remove(), f"{directory} could not be removed"


_SERIAL = itertools.count(1)


def _cells_in(directory: Path) -> list[str]:
    return sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())


def _pairbench(args: list[str], mode: str | None, cwd: Path, cells: Path | None, spawner: str = "auto"
               ) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIRBENCH_")}
    env[SPAWNER_VARIABLE] = spawner
    if mode is not None:
        env[containment.CGROUP_VARIABLE] = mode
    elif cells is not None:
        env[containment.CGROUP_VARIABLE] = str(cells)
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


def _nothing_left(hopper: Hopper, mode: str | None, cells: Path | None) -> None:
    assert hopper.started(), "the hopper never ran"
    assert hopper.gone(), "the hopper outlived pairbench"
    if mode is None and cells is not None:  # no cell outlives the processes of pairbench's that made it
        assert wait_until(lambda: not _cells_in(cells), 10), _cells_in(cells)


CASES = [pytest.param(ending, mode, id=f"{ending}-{mode}") for mode in MODES for ending in ENDINGS]
"""Every ending, with the machine's containment and with the scan."""


@pytest.mark.parametrize(("ending", "mode"), CASES)
def test_a_hopper_a_run_command_starts_is_ended_with_it(hopper, cells, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    text = command if how is None else f"{command} && sleep 600"
    shell = [] if how is None else ["-S", "sh"]
    process = _pairbench(["run", "--no-store", "-q", "--runs", "2", "--warmup", "0", *shell, text], MODES[mode],
                         tmp_path, cells)
    code, err = _end(process, how, hopper)
    assert code == EXIT_AFTER.get(how, 0), err
    _nothing_left(hopper, MODES[mode], cells)


@pytest.mark.parametrize("spawner", ["native", "python"])
def test_a_spawner_whose_pairbench_was_killed_removes_its_own_cell(hopper, cells, tmp_path, spawner):
    """pairbench removes the cell of a spawner that has exited; killed with SIGKILL it cannot, so the
    spawner, which lives in that cell, moves out of it and removes it before it exits."""
    if cells is None:
        pytest.skip(f"this machine gives pairbench no cgroup: {containment.containment().reason}")
    if spawner == "native" and not os.access(native.program_path(), os.X_OK):
        pytest.fail(f"the native spawner was not built ({native.program_path()}): run make setup")
    process = _pairbench(["run", "--no-store", "-q", "--runs", "2", "--warmup", "0", "-S", "sh",
                          f"{hopper.command} && sleep 600"], None, tmp_path, cells, spawner)
    code, err = _end(process, signal.SIGKILL, hopper)
    assert code == -9, err
    _nothing_left(hopper, None, cells)


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


@pytest.mark.parametrize(("ending", "mode"), CASES)
def test_a_hopper_a_bench_worker_starts_is_ended_with_it(hopper, cells, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    (tmp_path / "bench_hop.py").write_text(BENCHMARK.format(command=command, hang=how is not None))
    process = _pairbench(["bench", "bench_hop.py", "--no-store", "-q", "--runs", "6", "--warmup", "0"],
                         MODES[mode], tmp_path, cells)
    code, err = _end(process, how, hopper)
    assert code == EXIT_AFTER.get(how, 0), err
    _nothing_left(hopper, MODES[mode], cells)


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


@pytest.mark.parametrize(("ending", "mode"), CASES)
def test_a_hopper_a_bisect_build_starts_is_ended_with_it(hopper, cells, tmp_path, ending, mode):
    command = hopper.command
    how = ENDINGS[ending]
    good, bad = _project(tmp_path, f"{command}; true" if how is None else f"{command} && sleep 600")
    process = _pairbench(["bisect", good, bad, "--no-store", "-q", "--runs", "6", "--warmup", "0"], MODES[mode],
                         tmp_path, cells)
    code, err = _end(process, how, hopper)
    if how is None:
        assert code in (0, 5, 6, 7), err  # whatever the search found, it ended
    else:
        assert code == EXIT_AFTER[how], err
    _nothing_left(hopper, MODES[mode], cells)
