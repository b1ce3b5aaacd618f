"""Containment (``measure.containment``, ``measure.leftovers``): a process that forks and exits in a
loop, changing its session in every generation, is ended by a cell (cgroup) and by the descendants'
scan alike, from both spawners and both keepers.

The cgroup cases need a machine that lets pairbench make cgroups (its own cgroup v2, writable: as
root, as a rule); where it does not, they say so and are skipped, and the scan cases still run.
Whether a hopper lives is told by a FIFO each of its processes holds open (``tests/support/hoppers.py``);
the tests wait for it with generous deadlines and never assert how long anything took.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hoppers import Hopper
from processes import sh, wait_until

from pairbench.measure import children, containment, native
from pairbench.measure.spawner import SpawnerExecutor
from pairbench.report.doctor import containment_line

pytestmark = pytest.mark.e2e

MACHINE = containment.containment()
needs_cgroup = pytest.mark.skipif(MACHINE.method != "cgroup",
                                  reason=f"this machine gives pairbench no cgroup: {MACHINE.reason}")


@pytest.fixture
def hopper(tmp_path):
    """A hopper that changes its session in every generation, told to stop when the test ends."""
    hopper = Hopper(tmp_path / "hop", new_sessions=True)
    yield hopper
    hopper.stop()


@pytest.fixture(params=["cgroup", "scan"])
def contained(request, monkeypatch):
    """Each way of containing: the machine's cgroup, and the scan that stands in for it."""
    if request.param == "cgroup":
        if MACHINE.method != "cgroup":
            pytest.skip(f"this machine gives pairbench no cgroup: {MACHINE.reason}")
        found = MACHINE
    else:
        found = containment.Containment("scan", reason="turned off for this test")
    monkeypatch.setattr(containment, "_found", found)
    return found


ENDING_SCRIPT = """import os, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from pairbench.measure import leftovers
from pairbench.measure.containment import Cell
how, base, hop = sys.argv[2], sys.argv[3], sys.argv[4:]
assert leftovers.become_subreaper()
cell = Cell.create(base) if how == "cell" else None
pid = os.fork()
if pid == 0:
    if cell:
        cell.enter()
    os.execv(hop[0], hop)
os.waitpid(pid, 0)
while not os.path.exists(os.path.join(hop[2], "go")):  # the test saw the hopper hop
    time.sleep(0.01)
print(leftovers.end_descendants() if cell is None else cell.end(), cell is None or cell.remove())
"""


@pytest.mark.parametrize("how", ["scan", pytest.param("cell", marks=needs_cgroup)])
def test_a_hopper_that_changes_its_session_in_every_generation_is_ended(hopper, how):
    ending = subprocess.Popen([sys.executable, "-c", ENDING_SCRIPT, native.package_root(), how,
                               MACHINE.directory or "", *hopper.argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        assert wait_until(hopper.started, 60)
        assert not hopper.gone(timeout_s=0.3)  # it hops
        (hopper.folder / "go").touch()
        out, err = ending.communicate(timeout=120)
    finally:
        ending.kill()
    assert ending.returncode == 0, err
    assert out.split() == ["0", "True"]  # none was left, and the cell is gone
    assert hopper.gone()


@pytest.mark.parametrize("spawner", ["native", "python"])
def test_both_spawners_end_a_commands_hopper_and_count_it(hopper, contained, spawner):
    if spawner == "native" and not os.access(native.program_path(), os.X_OK):
        pytest.fail(f"the native spawner was not built ({native.program_path()}): run make setup")
    with SpawnerExecutor(spawner=spawner) as executor:
        run = executor.run(sh(f"{hopper.command} && while [ ! -e {hopper.folder}/started ]; do sleep 0.01; done"))
        assert (executor.containment, executor.spawner) == (contained.method, spawner)
        assert run.status == 0 and run.leftover_processes >= 1 and run.escaped_processes == 0
        assert hopper.gone()
        assert executor.run(sh("true")).leftover_processes == 0
    if contained.directory:  # the spawner's cell went with it
        assert wait_until(lambda: not _cells_of(contained.directory, executor.spawner_pid), 10)


def _cells_of(directory: str, pid: int) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(f"{containment.CELL_PREFIX}{pid}-")]


@pytest.mark.parametrize("keeper", ["native", "python"])
def test_both_keepers_end_a_programs_hopper(hopper, contained, keeper, monkeypatch, tmp_path):
    if keeper == "python":
        monkeypatch.setattr(native, "program_path", lambda: str(tmp_path / "not-built"))
    elif not os.access(native.program_path(), os.X_OK):
        pytest.fail(f"the native spawner was not built ({native.program_path()}): run make setup")
    script = f"{hopper.command} && while [ ! -e {hopper.folder}/started ]; do sleep 0.01; done"
    assert children.run(["sh", "-c", script], timeout_s=60) == 0
    assert hopper.gone()


@needs_cgroup
def test_a_keeper_killed_before_it_ended_its_cell_has_the_cell_ended_by_pairbench(hopper):
    process = children.start(["sh", "-c", f"{hopper.command}; sleep 600"])
    try:
        assert wait_until(hopper.started, 60)
        os.kill(process.pid, 9)  # the keeper dies with no clean-up; the program dies of its parent-death signal
        process.wait()
        assert not hopper.gone(timeout_s=0.5)  # the hopper lives on in the keeper's cell...
    finally:
        children.stop(process)  # ...which pairbench ends when it stops the keeper it lost
    assert hopper.gone()
    assert not _cells_of(MACHINE.directory, process.pid)


def test_the_machine_says_how_it_contains_and_why_not_a_cgroup(monkeypatch):
    assert containment.discover({"PAIRBENCH_CGROUP": "none"}) == containment.Containment(
        "scan", reason="turned off (PAIRBENCH_CGROUP=none)")
    found = containment.discover({"PAIRBENCH_CGROUP": "/nonexistent/cgroup"})
    assert found.method == "scan" and "/nonexistent/cgroup is not a cgroup v2 directory" in found.reason
    assert MACHINE.method in ("cgroup", "scan") and (MACHINE.directory is None) == (MACHINE.method == "scan")


def test_our_cgroup_is_read_from_mountinfo_and_proc_self_cgroup(tmp_path):
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(textwrap.dedent("""\
        22 1 0:21 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu
        35 22 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
    """))
    (proc / "self" / "cgroup").write_text("1:cpu:/\n0::/user.slice/session-3.scope\n")
    assert containment.own_cgroup(str(proc)) == ("/sys/fs/cgroup/unified/user.slice/session-3.scope", "")
    (proc / "self" / "cgroup").write_text("1:cpu:/\n")
    assert containment.own_cgroup(str(proc))[0] is None
    (proc / "self" / "mountinfo").write_text("22 1 0:21 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n")
    assert containment.own_cgroup(str(proc)) == (None, "no cgroup v2 hierarchy is mounted")


@needs_cgroup
def test_cells_left_by_dead_processes_are_swept_and_live_ones_kept():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    stale = Path(MACHINE.directory) / f"{containment.CELL_PREFIX}{dead}-1"
    mine = containment.Cell.create(MACHINE.directory)
    stale.mkdir()
    try:
        containment.sweep(MACHINE.directory)
        assert not stale.exists() and os.path.isdir(mine.path)
    finally:
        mine.remove()
        stale.exists() and stale.rmdir()


def test_doctor_says_how_this_machine_contains_what_pairbench_starts():
    from pairbench import cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["doctor"], stdout=out, stderr=err, color=False)  # this machine, read by pairbench
    out, err = out.getvalue(), err.getvalue()
    assert code in (0, 1), err
    said = [line for line in out.splitlines() if line.startswith("Containment: ")]
    assert len(said) == 1
    assert said[0].startswith("Containment: cgroup v2 below " if MACHINE.method == "cgroup" else
                              "Containment: partial, a scan")
    scanned = containment_line({"method": "scan", "directory": None, "reason": "no cgroup v2 hierarchy is mounted"})
    assert "(no cgroup v2 hierarchy is mounted)" in scanned and "PAIRBENCH_CGROUP=DIR" in scanned


LEAVING_SCRIPT = """import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from pairbench.measure.containment import Cell
base = sys.argv[2]
cell = Cell.create(base)
cell.enter()
sleeper = subprocess.Popen(["sleep", "600"])  # in the cell, as a command's leftover is
assert not Cell(os.path.join(base, "no-such-cgroup")).leave(os.path.join(base, "no-such-cgroup"))  # refused
print(cell.leave(base), os.path.isdir(cell.path), os.path.exists(f"/proc/{sleeper.pid}"))  # reaped by leave
"""


@needs_cgroup
def test_a_process_leaving_its_cell_ends_what_is_in_it_and_removes_it():
    done = subprocess.run([sys.executable, "-c", LEAVING_SCRIPT, native.package_root(), MACHINE.directory],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]  # it moved out, the cell is gone, the sleeper too


def test_a_signal_while_the_python_spawner_ends_an_interrupted_run_is_noted_not_raised(monkeypatch):
    from pairbench.measure import python_spawner

    state = python_spawner._State
    for name, value in {"running": True, "exiting": False, "interrupted": False, "cancelled": False}.items():
        monkeypatch.setattr(state, name, value)
    with pytest.raises(KeyboardInterrupt):  # the first interrupts the run...
        python_spawner._on_signal(signal.SIGTERM, None)
    python_spawner._on_signal(signal.SIGTERM, None)  # ...a second, while that is handled, does not
    python_spawner._on_signal(signal.SIGINT, None)
    assert state.exiting and state.interrupted
