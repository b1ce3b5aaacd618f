"""The real executors, end to end: real commands, real clocks, real process groups.

Each behaviour is checked for the in-process ``PosixExecutor`` and for the
``SpawnerExecutor`` with each of its spawners, the native one (``spawner.c``)
and the Python one that runs ``PosixExecutor`` in a small helper process
(``make`` and ``make_waiting``); what only the in-process one can show (the
timer-thread fallback, a Ctrl-C landing inside ``posix_spawn``) is checked for
it alone.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time

import pytest
from processes import is_gone, py, sh
from spawners import SPAWNERS, spawner_executor

from pairbench.errors import CommandNotFound, MeasurementError, UsageError
from pairbench.measure import posix
from pairbench.measure.commandline import parse_command
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.posix import PosixExecutor
from pairbench.model import STATUS_TIMEOUT, Command

pytestmark = pytest.mark.e2e

MB = 1_000_000
KIB_PER_MB = MB / 1024


EXECUTORS = {"in-process": lambda: PosixExecutor, "native-spawner": lambda: spawner_executor("native"),
             "python-spawner": lambda: spawner_executor("python")}


def _factory(kind):
    cls = EXECUTORS[kind]()
    made = []

    def make(*args, **kwargs):
        made.append(cls(*args, **kwargs))
        return made[-1]

    return make, made


@pytest.fixture(params=EXECUTORS)
def make(request):
    """Make executors of one kind (in-process or a spawner); all are closed after the test."""
    factory, made = _factory(request.param)
    yield factory
    for executor in made:
        executor.close()


@pytest.fixture(
    params=[("in-process", False), ("in-process", True), ("native-spawner", False), ("python-spawner", False)],
    ids=["in-process-pidfd", "in-process-timer-thread", "native-spawner", "python-spawner-pidfd"],
)
def make_waiting(request, monkeypatch):
    """Like ``make``, over the ways of waiting with a deadline (pidfd, or the timer-thread fallback)."""
    kind, no_pidfd = request.param
    if no_pidfd:  # as on kernels without pidfd_open

        def unavailable(pid):
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(posix, "_pidfd_open", unavailable)
    factory, made = _factory(kind)
    yield factory
    for executor in made:
        executor.close()


@pytest.fixture
def ex(make):
    return make(kill_grace_s=0.2)








def read_pid(path) -> int:
    return int(path.read_text().strip())


# -- timing and rusage --------------------------------------------------------------


def test_true_exits_zero_fast_with_sane_rusage(ex):
    before = ex.now_ns()
    run = ex.run(parse_command("true"))
    after = ex.now_ns()
    assert run.status == 0
    assert run.wall_ns > 0
    assert before <= run.start_ns and run.start_ns + run.wall_ns <= after
    assert 0 <= run.user_ns + run.sys_ns <= run.wall_ns
    assert run.max_rss_kib > 0
    assert run.voluntary_cs >= 0 and run.involuntary_cs >= 0
    assert run.leftover_processes == 0


def test_sleep_wall_time_matches_its_duration(ex):
    run = ex.run(parse_command("sleep 0.2"))
    assert run.status == 0
    assert 0.2e9 <= run.wall_ns < 5.2e9  # at least the sleep; not seconds more, even on a loaded machine
    assert run.user_ns + run.sys_ns < 0.05e9  # sleeping costs no CPU
    assert run.voluntary_cs >= 1


# Spins 50 ms of CPU, then writes its own CPU clock (every thread's, since it started) and ends at once.
SPIN_AND_TELL = ("import os, time\nwhile time.process_time() < 0.05: pass\n"
                 "os.write(1, b'%d' % time.process_time_ns())\nos._exit(0)")


def test_a_commands_cpu_time_is_what_the_kernel_charged_it(make, tmp_path):
    # wait4's user + sys must hold all the CPU time the command read of itself just before it ended,
    # and little more (its exit). CPU time against CPU time: load cannot move it, as it moves wall time.
    output = tmp_path / "told"
    ex = make(OutputPolicy("file", str(output)))
    run = ex.run(py(SPIN_AND_TELL))
    told = int(output.read_text())
    assert run.status == 0
    assert told - 2_000 <= run.user_ns + run.sys_ns <= told + 10_000_000  # wait4 counts microseconds


def test_max_rss_of_big_command_is_reported_and_not_carried_to_the_next_command(ex):
    # Linux charges the spawning process's resident set to a child (see rss_floor_kib):
    # ~13 MB through the spawner, but 100-160 MB in-process once the test worker has
    # loaded scipy. So the big command allocates 200 MB *beyond* that floor, and
    # "small" means: nothing beyond the floor, and nothing of the big one.
    floor_kib = ex.rss_floor_kib()
    size_bytes = 200 * MB + floor_kib * 1024
    big = ex.run(py(f"b = b'x' * {size_bytes}"))
    small = ex.run(parse_command("true"))
    assert big.status == small.status == 0
    assert size_bytes / 1024 <= big.max_rss_kib <= size_bytes / 1024 + 60 * KIB_PER_MB
    assert small.max_rss_kib <= ex.rss_floor_kib() + 4096
    assert small.max_rss_kib < big.max_rss_kib - 150 * KIB_PER_MB


def test_in_process_our_freed_memory_peak_is_not_charged_to_the_next_command():
    # Only the in-process executor spawns from this process, whose peak the ballast raises;
    # the spawner's own peak is not this process's (the next test is the spawner's case).
    # The bound is relative to our size before the ballast: a test worker that has run many
    # tests can itself hold 250 MB or more.
    with PosixExecutor(kill_grace_s=0.2) as ex:
        before_kib = ex.rss_floor_kib()
        ballast = b"x" * 300_000_000
        del ballast
        small = ex.run(parse_command("true"))
        assert small.max_rss_kib <= ex.rss_floor_kib() + 4096
        assert small.max_rss_kib < before_kib + 100 * KIB_PER_MB


@pytest.mark.parametrize("kind", SPAWNERS)
def test_spawner_does_not_charge_our_resident_memory_to_the_command(kind):
    # In process, a command is charged what this process holds at the spawn (300 MB here);
    # through a spawner it is charged only the spawner's ~13 MB (Python) or ~1 MB (native).
    with spawner_executor(kind)(kill_grace_s=0.2) as ex:
        ballast = b"x" * 300_000_000
        small = ex.run(parse_command("true"))
        assert len(ballast) == 300_000_000  # still held while the command ran
        assert ex.notes == ()  # not the in-process fallback
        assert small.max_rss_kib <= ex.rss_floor_kib() + 4096
        assert small.max_rss_kib < 250 * KIB_PER_MB


# -- statuses -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "status"),
    [(parse_command("false"), 1), (sh("exit 3"), 3), (sh("exit 255"), 255)],
)
def test_failing_command_status_is_returned_not_raised(ex, command, status):
    assert ex.run(command).status == status


def test_command_killed_by_a_signal_reports_minus_the_signal(ex):
    assert ex.run(sh("kill -9 $$")).status == -signal.SIGKILL
    assert ex.run(sh("kill -TERM $$")).status == -signal.SIGTERM


def test_missing_program_raises_command_not_found(ex, tmp_path):
    with pytest.raises(CommandNotFound, match="no such file"):
        ex.run(Command("vanished", (str(tmp_path / "vanished"),)))


def test_script_with_a_missing_interpreter_names_its_first_line_not_a_deleted_file(ex, tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/nonexistent/interpreter\nexit 0\n")
    script.chmod(0o755)
    with pytest.raises(CommandNotFound) as raised:
        ex.run(Command(str(script), (str(script),)))
    message = str(raised.value)
    assert "its #! interpreter (first line) or dynamic loader was not found" in message
    assert "'/nonexistent/interpreter'" in message and "deleted" not in message


def test_unexecutable_file_raises_command_not_found(ex, tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    with pytest.raises(CommandNotFound, match="not executable"):
        ex.run(Command(str(script), (str(script),)))


# -- timeouts -----------------------------------------------------------------------


def test_timeout_kills_hanging_command_at_the_timeout(make_waiting, tmp_path):
    # Orders and wide bounds, no window a loaded machine could miss: the 30 s sleep is not waited for,
    # and the sample ends when the timeout acted (SIGTERM ends sleep: the 10 s grace is not waited).
    pidfile = tmp_path / "pid"
    with make_waiting(kill_grace_s=10) as ex:
        t0 = time.monotonic()
        run = ex.run(sh(f"echo $$ > {pidfile}; exec sleep 30"), timeout_ns=300_000_000)
        elapsed = time.monotonic() - t0
    assert run.status == STATUS_TIMEOUT
    assert 0.3e9 <= run.wall_ns <= elapsed * 1e9
    assert elapsed < 10
    assert is_gone(read_pid(pidfile))


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(make_waiting, tmp_path):
    pidfile = tmp_path / "pid"
    with make_waiting(kill_grace_s=0.2) as ex:
        t0 = time.monotonic()
        run = ex.run(
            sh(f"trap '' TERM; echo $$ > {pidfile}; exec sleep 30"), timeout_ns=200_000_000
        )
        elapsed = time.monotonic() - t0
    assert run.status == STATUS_TIMEOUT
    assert 0.4 <= elapsed < 20  # timeout + grace, then SIGKILL: not the 30 s sleep
    assert is_gone(read_pid(pidfile))


def test_command_finishing_before_its_timeout_reports_its_own_status(make_waiting):
    with make_waiting() as ex:
        ok = ex.run(parse_command("sleep 0.05"), timeout_ns=5_000_000_000)
        failed = ex.run(sh("exit 4"), timeout_ns=5_000_000_000)
    assert ok.status == 0 and 0.05e9 <= ok.wall_ns < 5e9
    assert failed.status == 4


# -- process groups -----------------------------------------------------------------


def test_background_child_outliving_the_command_is_counted_and_killed(make, tmp_path):
    pidfile = tmp_path / "pid"
    ex = make(kill_grace_s=20)
    t0 = time.monotonic()
    run = ex.run(sh(f"sleep 30 & echo $! > {pidfile}; exit 0"))
    elapsed = time.monotonic() - t0
    assert run.status == 0
    assert run.leftover_processes == 1
    assert elapsed < 15  # SIGTERM ended the sleeper: neither its 30 s nor the 20 s grace was waited for
    assert is_gone(read_pid(pidfile))
    assert ex.run(parse_command("true")).leftover_processes == 0


def test_leftover_ignoring_sigterm_is_killed_outside_the_sample(make, tmp_path):
    pidfile = tmp_path / "pid"
    ex = make(kill_grace_s=1.0)
    # the command ends only once its leftover ignores SIGTERM (its own trap, before it writes its pid)
    run = ex.run(sh(f"sh -c 'trap \"\" TERM; echo $$ > {pidfile}; exec sleep 30' & "
                    f"while [ ! -s {pidfile} ]; do sleep 0.01; done; exit 0"))
    assert run.leftover_processes == 1 and run.escaped_processes == 0
    assert is_gone(read_pid(pidfile))
    assert run.wall_ns < 25e9  # the sample ended when the command exited, not with its 30 s leftover


def test_command_runs_in_its_own_process_group_with_stdin_from_devnull(make, tmp_path):
    out = tmp_path / "out"
    code = "import os; print(os.getpgrp() == os.getpid(), os.getpgrp(), os.readlink('/proc/self/fd/0'))"
    with make(OutputPolicy.parse(str(out))) as ex:
        assert ex.run(py(code)).status == 0
    same, pgrp, stdin = out.read_text().split()
    assert same == "True" and int(pgrp) != os.getpgrp()
    assert stdin == "/dev/null"


def test_command_gets_default_signal_dispositions_and_an_empty_mask(make, tmp_path):
    out = tmp_path / "out"
    with make(OutputPolicy.parse(str(out))) as ex:
        ex.run(Command("grep", ("/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status")))
    masks = dict(line.split() for line in out.read_text().splitlines())
    assert not int(masks["SigIgn:"], 16) & (1 << (signal.SIGPIPE - 1))  # Python ignores it
    assert int(masks["SigBlk:"], 16) == 0


@contextlib.contextmanager
def _ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in the block, as in pairbench, and no garbage collection runs
    there: a KeyboardInterrupt raised inside a weakref callback that a collection runs (an earlier
    test's SQLAlchemy objects, once) is unraisable, and Python drops it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("timeout_ns", [None, 10_000_000_000], ids=["no-timeout", "timeout"])
def test_ctrl_c_during_a_run_kills_the_command_group_and_propagates(
    make_waiting, tmp_path, timeout_ns
):
    pidfile = tmp_path / "pid"
    main = threading.main_thread().ident
    interrupt = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
    with _ctrl_c_raises():
        try:
            with make_waiting(kill_grace_s=0.5) as ex:
                t0 = time.monotonic()
                interrupt.start()
                with pytest.raises(KeyboardInterrupt):
                    ex.run(sh(f"echo $$ > {pidfile}; exec sleep 30"), timeout_ns=timeout_ns)
                elapsed = time.monotonic() - t0
                assert is_gone(read_pid(pidfile))
                assert ex.run(parse_command("true")).status == 0  # still usable
        finally:  # before SIGINT is pytest's again
            interrupt.cancel()
    assert elapsed < 15  # not the 30 s sleep


def test_command_sees_the_environment_captured_when_the_executor_was_made(
    make, tmp_path, monkeypatch
):
    out = tmp_path / "out"
    monkeypatch.setenv("PAIRBENCH_PROBE", "before")
    with make(OutputPolicy.parse(str(out))) as ex:
        monkeypatch.setenv("PAIRBENCH_PROBE", "after")
        ex.run(sh('printf %s "$PAIRBENCH_PROBE"'))
    assert out.read_text() == "before"


def live_processes_with_argv(argv: tuple[str, ...]) -> list[int]:
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if f.read() == wanted and not is_gone(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


def test_ctrl_c_arriving_while_the_command_is_being_spawned_still_kills_it(monkeypatch):
    argv = ("/bin/sleep", f"29.{os.getpid()}")  # unique, so we can find it in /proc
    real_spawn = os.posix_spawn

    def spawn_then_ctrl_c(*args, **kwargs):
        pid = real_spawn(*args, **kwargs)
        signal.raise_signal(signal.SIGINT)  # lands before run() has stored the pid
        return pid

    monkeypatch.setattr(os, "posix_spawn", spawn_then_ctrl_c)
    with _ctrl_c_raises(), PosixExecutor(kill_grace_s=0.5) as ex, pytest.raises(KeyboardInterrupt):
        ex.run(Command("sleep", argv))
    time.sleep(0.3)  # a just-spawned process may not show its argv in /proc yet
    assert live_processes_with_argv(argv) == []


# -- output -------------------------------------------------------------------------


def test_huge_output_to_null_is_discarded_and_never_blocks_the_command(ex):
    run = ex.run(Command("head", ("/usr/bin/head", "-c", "50000000", "/dev/zero")), timeout_ns=60_000_000_000)
    assert run.status == 0  # a pipe nobody read would have blocked it until the timeout


def test_huge_output_to_a_file_lands_in_the_file(make, tmp_path):
    out = tmp_path / "out"
    with make(OutputPolicy.parse(str(out))) as ex:
        run = ex.run(Command("head", ("/usr/bin/head", "-c", "50000000", "/dev/zero")))
    assert run.status == 0
    assert out.stat().st_size == 50_000_000


def test_non_utf8_output_is_kept_byte_exact(make, tmp_path):
    out = tmp_path / "out"
    with make(OutputPolicy.parse(str(out))) as ex:
        run = ex.run(sh(r"printf '\377\376ok\200\n'; printf '\351rr' >&2; exit 2"))
    assert run.status == 2
    assert out.read_bytes() == b"\xff\xfeok\x80\n\xe9rr"


def test_output_file_is_truncated_once_then_appended_per_sample(make, tmp_path):
    out = tmp_path / "out"
    out.write_text("old contents\n")
    with make(OutputPolicy.parse(str(out))) as ex:
        ex.run(sh("echo one"))
        ex.run(sh("echo two >&2"))
    assert out.read_text() == "one\ntwo\n"


def test_inherited_output_reaches_our_stdout_and_stderr(make, capfd):
    with make(OutputPolicy("inherit")) as ex:
        ex.run(sh("echo to-out; echo to-err >&2"))
    captured = capfd.readouterr()
    assert captured.out == "to-out\n" and captured.err == "to-err\n"


def test_unwritable_output_file_is_a_usage_error(make, tmp_path):
    with pytest.raises(UsageError, match="cannot open output file"):
        make(OutputPolicy.parse(str(tmp_path / "no-such-dir" / "out")))


# -- lifecycle and validation -------------------------------------------------------


def test_close_is_idempotent_and_a_closed_executor_refuses_to_run(make):
    ex = make()
    ex.close()
    ex.close()
    with pytest.raises(MeasurementError, match="closed"):
        ex.run(parse_command("true"))


@pytest.mark.parametrize("timeout_ns", [0, -5])
def test_non_positive_timeout_is_refused(ex, timeout_ns):
    with pytest.raises(UsageError, match="timeout_ns"):
        ex.run(parse_command("true"), timeout_ns=timeout_ns)


def test_negative_grace_is_refused(make):
    with pytest.raises(UsageError, match="kill_grace_s"):
        make(kill_grace_s=-1)


# -- descriptors ----------------------------------------------------------------------

_OPEN_FDS = """
import os, sys
def is_open(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
found = [fd for fd in range(3, 1024) if is_open(fd)]
with open(sys.argv[1], "w") as f:
    f.write(" ".join(map(str, found)))
"""


def test_no_descriptor_beyond_stdio_reaches_a_command(make, tmp_path):
    out = tmp_path / "fds"
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)  # as a parent shell or CI runner may pass one to pairbench
    try:
        with make() as ex:
            assert ex.run(Command("python", (sys.executable, "-S", "-I", "-c", _OPEN_FDS, str(out)))).status == 0
    finally:
        os.close(read_end)
        os.close(write_end)
    assert out.read_text() == ""
