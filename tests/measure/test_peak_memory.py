"""Peak memory through cgroup v2 ``memory.peak``: finding a delegated cgroup, and every way the
native spawner falls back to ``wait4``'s max RSS.

A machine that delegates the memory controller runs each command in a fresh
child cgroup and reports its ``memory.peak``. Where the memory controller is
not on the cgroup v2 hierarchy (as on the machine these tests were written on,
which binds it to cgroup v1), the cgroup path is exercised with a variant of
the spawner built for the tests (``-DPAIRBENCH_TESTING_WITHOUT_PEAK=1``): it
runs commands in per-sample cgroups of a v2 hierarchy without the memory
controller, reporting ``ru_maxrss`` where ``memory.peak`` is missing.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest
from processes import is_gone, read_pid_when_written, sh
from spawners import require_native

from pairbench.environment.cgroup import delegated_memory_cgroup
from pairbench.errors import CommandNotFound
from pairbench.measure import native
from pairbench.measure.commandline import parse_command
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.spawner import SpawnerExecutor
from pairbench.model import STATUS_TIMEOUT, Command

MOUNTINFO = ("24 1 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
             "rw,nsdelegate\n")


def _tree(root: Path, *, mountinfo: str = MOUNTINFO, own: str = "0::/pairbench.scope\n",
          where: str = "sys/fs/cgroup/pairbench.scope", controllers: str = "cpu io memory pids",
          subtree: str = "memory pids") -> Path:
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(mountinfo)
    (root / "proc/self/cgroup").write_text(own)
    base = root / where
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text(controllers + "\n")
    (base / "cgroup.subtree_control").write_text(subtree + "\n")
    return base


# -- finding a delegated cgroup -------------------------------------------------------------


def test_a_cgroup_that_enables_memory_for_its_children_is_used(tmp_path):
    base = _tree(tmp_path)
    assert delegated_memory_cgroup(tmp_path) == (str(base), "")


def test_without_a_cgroup_v2_hierarchy_there_is_no_delegated_cgroup(tmp_path):
    _tree(tmp_path, mountinfo="30 1 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n")
    assert delegated_memory_cgroup(tmp_path) == (None, "no cgroup v2 hierarchy is mounted")


def test_a_memory_controller_bound_to_cgroup_v1_is_named_as_missing(tmp_path):
    # the layout of this project's VM: v1 holds memory, the v2 hierarchy only hugetlb
    _tree(tmp_path, mountinfo=MOUNTINFO.replace("/sys/fs/cgroup ", "/sys/fs/cgroup/unified "), own="0::/\n",
          where="sys/fs/cgroup/unified", controllers="hugetlb", subtree="")
    directory, why = delegated_memory_cgroup(tmp_path)
    assert directory is None
    assert why == ("the cgroup v2 memory controller is not available in /sys/fs/cgroup/unified "
                   "(cgroup.controllers: hugetlb)")


def test_a_cgroup_that_holds_pairbench_itself_is_not_delegated_and_the_reason_says_what_to_do(tmp_path):
    _tree(tmp_path, subtree="")  # the usual case: memory is available, but not enabled for children
    directory, why = delegated_memory_cgroup(tmp_path)
    assert directory is None
    assert "/sys/fs/cgroup/pairbench.scope does not enable the memory controller" in why
    assert "PAIRBENCH_CGROUP" in why


def test_our_path_is_taken_relative_to_the_mounts_own_cgroup_and_escapes_are_decoded(tmp_path):
    mountinfo = "24 1 0:22 /outer /sys/fs/my\\040cgroups rw - cgroup2 cgroup2 rw\n"
    base = _tree(tmp_path, mountinfo=mountinfo, own="0::/outer/job\n", where="sys/fs/my cgroups/job")
    assert delegated_memory_cgroup(tmp_path) == (str(base), "")


def test_without_our_cgroup_v2_path_there_is_no_delegated_cgroup(tmp_path):
    _tree(tmp_path, own="4:memory:/x\n")
    assert delegated_memory_cgroup(tmp_path)[1].startswith("pairbench's cgroup v2 is unknown")


def test_pairbench_cgroup_names_the_directory_or_turns_it_off(tmp_path):
    named = _tree(tmp_path / "machine", where="delegated")
    _tree(tmp_path / "other", subtree="")
    assert delegated_memory_cgroup(tmp_path / "other", str(named)) == (str(named), "")
    assert delegated_memory_cgroup(tmp_path / "machine", "none") == (None, "turned off (PAIRBENCH_CGROUP=none)")
    directory, why = delegated_memory_cgroup(tmp_path, str(tmp_path / "nothing-here"))
    assert directory is None and "not available in" in why


# -- the spawner's fallbacks ----------------------------------------------------------------


TRUE = parse_command("true")


@pytest.mark.e2e
def test_with_cgroups_turned_off_max_rss_comes_from_wait4_and_the_record_says_why(monkeypatch):
    require_native()
    monkeypatch.setenv("PAIRBENCH_CGROUP", "none")
    with SpawnerExecutor(spawner="native") as ex:
        assert ex.run(TRUE).max_rss_kib > 0
        record = ex.info().to_dict()
    assert record["peak_memory"] == "rusage" and record["rss_floor_kib"] > 0
    assert record["peak_memory_reason"] == "turned off (PAIRBENCH_CGROUP=none)"


@pytest.mark.e2e
def test_a_delegated_looking_directory_that_is_no_cgroup_falls_back_to_wait4(monkeypatch, tmp_path):
    require_native()
    fake = _tree(tmp_path, where="fake")  # has the files, but is a plain directory
    monkeypatch.setenv("PAIRBENCH_CGROUP", str(fake))
    with SpawnerExecutor(spawner="native") as ex:
        run = ex.run(TRUE)
        info = ex.info()
    assert run.status == 0 and run.max_rss_kib > 0
    assert info.peak_memory == "rusage" and info.rss_floor_kib
    assert "cannot start a process in the cgroup" in info.peak_memory_reason
    assert sorted(os.listdir(fake)) == ["cgroup.controllers", "cgroup.subtree_control"]  # no trace left


def _writable_cgroup2() -> Path:
    """A fresh child of a cgroup v2 hierarchy we may write (root); skip where there is none."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        if tail.split()[:1] == ["cgroup2"]:
            base = Path(fields.split()[4]) / f"pairbench-test-{os.getpid()}"
            try:
                base.mkdir()
            except OSError as exc:
                pytest.skip(f"cannot create a cgroup v2 directory: {exc}")
            return base
    pytest.skip("no cgroup v2 hierarchy is mounted")


@pytest.fixture
def cgroup2():
    base = _writable_cgroup2()
    yield base
    for child in sorted(base.iterdir()):
        if child.is_dir():
            with contextlib.suppress(OSError):
                child.rmdir()
    base.rmdir()


@pytest.fixture
def without_peak(tmp_path_factory):
    """The test variant of the native spawner: cgroups without ``memory.peak`` are used anyway."""
    require_native()
    program = tmp_path_factory.mktemp("variant") / native.PROGRAM
    source = str(Path(native.__file__).with_name(native.SOURCE))
    problem = native.build(source, str(program), defines=("PAIRBENCH_TESTING_WITHOUT_PEAK=1",))
    assert problem == ""
    return str(program)


def _has_memory(cgroup: Path) -> bool:
    return "memory" in (cgroup / "cgroup.controllers").read_text().split()


@pytest.mark.e2e
def test_a_cgroup_without_memory_peak_is_probed_with_a_process_and_refused(monkeypatch, cgroup2):
    require_native()
    if _has_memory(cgroup2):
        pytest.skip("this cgroup v2 hierarchy has the memory controller")
    monkeypatch.setattr(SpawnerExecutor, "_delegated_cgroup", lambda self: str(cgroup2))
    with SpawnerExecutor(spawner="native") as ex:
        assert ex.run(TRUE).status == 0
        info = ex.info()
    assert info.peak_memory == "rusage"
    # the probe's process started in the cgroup (clone3 into it worked): only memory.peak was missing
    assert "has no memory.peak" in info.peak_memory_reason
    assert [child for child in cgroup2.iterdir() if child.is_dir()] == []


@pytest.mark.e2e
def test_each_command_runs_in_a_fresh_cgroup_that_is_removed_after_it(monkeypatch, cgroup2, without_peak, tmp_path):
    monkeypatch.setattr(native, "program_path", lambda: without_peak)
    monkeypatch.setattr(SpawnerExecutor, "_delegated_cgroup", lambda self: str(cgroup2))
    out = tmp_path / "out"
    with SpawnerExecutor(OutputPolicy.parse(str(out)), spawner="native", kill_grace_s=0.2) as ex:
        assert ex.peak_memory == "cgroup" and ex.info().rss_floor_kib is None  # no floor in a cgroup
        for _ in range(2):
            assert ex.run(Command("cat", ("/bin/cat", "/proc/self/cgroup"))).status == 0
        assert ex.run(sh("exit 3")).status == 3
    lines = [line for line in out.read_text().splitlines() if line.startswith("0::")]
    assert len(lines) == 2 and lines[0] != lines[1]
    for line in lines:
        assert line.startswith(f"0::/{cgroup2.name}/pairbench-") or f"/{cgroup2.name}/pairbench-" in line
    assert [child for child in cgroup2.iterdir() if child.is_dir()] == []


@pytest.mark.e2e
def test_in_a_cgroup_leftovers_timeouts_and_missing_programs_are_handled_as_without(
        monkeypatch, cgroup2, without_peak, tmp_path):
    monkeypatch.setattr(native, "program_path", lambda: without_peak)
    monkeypatch.setattr(SpawnerExecutor, "_delegated_cgroup", lambda self: str(cgroup2))
    pidfile = tmp_path / "pid"
    with SpawnerExecutor(spawner="native", kill_grace_s=0.2) as ex:
        run = ex.run(sh(f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 30' & "
                        f"while [ ! -s {pidfile} ]; do sleep 0.01; done"))
        daemon = read_pid_when_written(pidfile)
        try:
            assert run.status == 0 and run.leftover_processes == 1 and is_gone(daemon)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGKILL)
        timed_out = ex.run(parse_command("sleep 5"), timeout_ns=200_000_000)
        assert timed_out.status == STATUS_TIMEOUT and 0.2e9 <= timed_out.wall_ns < 4e9  # not the 5 s
        with pytest.raises(CommandNotFound, match="no such file"):
            ex.run(Command("gone", (str(tmp_path / "gone"),)))
        assert ex.run(TRUE).status == 0
    assert [child for child in cgroup2.iterdir() if child.is_dir()] == []
