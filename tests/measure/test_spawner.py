"""The spawner executor: what running commands from a small helper process changes, and keeps.

The behaviours every executor shares (timeouts, leftovers, signals, output
policies, Ctrl-C) are checked for all in ``test_posix.py``; here are the
spawner's own, for both spawners (``kind``: the native one and the Python one)
unless a test is about one of them: the max RSS floor, the pipe between the
processes, what happens when either process dies or is interrupted, and which
spawner is chosen. ``test_native_spawner.py`` has the native one's own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from processes import default_dispositions, is_gone, read_pid_when_written, sh, wait_until
from spawners import SPAWNERS, spawner_executor

from pairbench.errors import CommandNotFound, MeasurementError, UsageError
from pairbench.measure import spawner, wire
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.posix import PosixExecutor
from pairbench.measure.spawner import SpawnerExecutor
from pairbench.model import Command

SRC = Path(__file__).resolve().parents[2] / "src"
KIB_PER_MB = 1_000_000 / 1024
TRUE = Command("/bin/true", ("/bin/true",))


@pytest.fixture(params=SPAWNERS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def make(kind):
    """``SpawnerExecutor`` with the spawner of this test's ``kind``."""
    return spawner_executor(kind)

# -- the max RSS floor -----------------------------------------------------------------


@pytest.mark.e2e
def test_true_through_the_spawner_reports_a_small_max_rss_unlike_from_a_process_with_scipy(make):
    import numpy  # noqa: F401  (what pairbench's CLI process holds)
    import scipy.stats  # noqa: F401

    with make() as ex:
        small = ex.run(TRUE).max_rss_kib
        floor = ex.rss_floor_kib()
    with PosixExecutor() as ex:
        big = ex.run(TRUE).max_rss_kib
    print(
        f"/bin/true max RSS: spawner {small} KiB (floor {floor}), in-process with scipy {big} KiB"
    )
    assert 0 < small < 30 * KIB_PER_MB
    assert small <= floor + 4096
    assert big > 2 * small and big > 50 * KIB_PER_MB


@pytest.mark.e2e
def test_command_allocating_100_mb_through_the_spawner_is_reported_at_about_100_mb(make):
    with make() as ex:
        run = ex.run(Command("alloc", (sys.executable, "-c", "b = b'x' * 100_000_000")))
    assert run.status == 0
    assert 100 * KIB_PER_MB <= run.max_rss_kib <= 130 * KIB_PER_MB


@pytest.mark.e2e
def test_executor_modules_load_none_of_the_big_libraries_in_a_bare_interpreter():
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); "
        "import pairbench.measure.spawner, pairbench.measure.python_spawner, pairbench.measure.posix; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "pairbench" in loaded
    assert not loaded & {"numpy", "scipy", "rich", "click", "jinja2", "subprocess", "ctypes"}


@pytest.mark.e2e
def test_spawner_process_maps_no_numpy_library(make, kind):
    with make() as ex, open(f"/proc/{ex.spawner_pid}/maps") as f:
        maps = f.read()
    assert ("python" in maps) == (kind == "python")  # the native one runs no interpreter at all
    assert "numpy" not in maps and "scipy" not in maps


# -- errors and data cross the pipe faithfully -----------------------------------------


@pytest.mark.e2e
def test_command_not_found_crosses_the_pipe_with_the_in_process_message(tmp_path, make):
    missing = Command("vanished", (str(tmp_path / "vanished"),))
    messages = []
    for cls in (PosixExecutor, make):
        with cls() as ex, pytest.raises(CommandNotFound) as raised:
            ex.run(missing)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "no such file" in messages[0]


@pytest.mark.e2e
def test_usage_errors_raised_in_the_spawner_keep_their_class_and_message(tmp_path, make):
    with make() as ex:
        with pytest.raises(UsageError, match=r"^`timeout_ns` must be > 0, got 0$"):
            ex.run(TRUE, timeout_ns=0)
        assert ex.run(TRUE).status == 0  # and the spawner carries on
    unwritable = OutputPolicy.parse(str(tmp_path / "no-such-dir" / "out"))
    with pytest.raises(UsageError) as in_process:
        PosixExecutor(unwritable)
    with pytest.raises(UsageError) as through_spawner:
        make(unwritable)
    assert str(through_spawner.value) == str(in_process.value)


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (MeasurementError("the disk is on fire"), MeasurementError("the disk is on fire")),
        (CommandNotFound("no such file"), CommandNotFound("no such file")),
        (UsageError("`x` must be > 0"), UsageError("`x` must be > 0")),
        (
            KeyError("argv"),
            MeasurementError("pairbench's spawner process failed: KeyError: 'argv'"),
        ),
    ],
    ids=["measurement-error", "command-not-found", "usage-error", "unexpected"],
)
def test_error_reply_is_raised_again_as_the_same_class_and_message(raised, expected):
    import json

    again = wire.reply_error(json.loads(wire.error_reply(raised)))
    assert type(again) is type(expected) and str(again) == str(expected)


@pytest.mark.e2e
def test_non_utf8_arguments_and_environment_reach_the_command_byte_exact(tmp_path, monkeypatch, make):
    out = tmp_path / "out"
    monkeypatch.setitem(os.environb, b"PAIRBENCH_PROBE", b"\xff\xfe")
    argument = os.fsdecode(b"caf\xe9")
    command = Command(
        "printf", ("/bin/sh", "-c", 'printf "%s|%s" "$1" "$PAIRBENCH_PROBE"', "sh", argument)
    )
    with make(OutputPolicy.parse(str(out))) as ex:
        assert ex.run(command).status == 0
    assert out.read_bytes() == b"caf\xe9|\xff\xfe"


@pytest.mark.e2e
def test_command_sees_our_environment_not_the_locale_coercion_of_the_spawners_python(
    tmp_path, monkeypatch, make
):
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "out"
    with make(OutputPolicy.parse(str(out))) as ex:
        ex.run(sh('printf %s "${LC_CTYPE-unset}"'))
    assert out.read_text() == "unset"


# -- the control pipes ------------------------------------------------------------------

_SAMPLE_FIELDS = "1000, 0, 0, 0, 0, 0, 0, 0, 0"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "forged",
    [
        f'["ok", {_SAMPLE_FIELDS}]',  # a reply with no request id
        f'[12345, "ok", {_SAMPLE_FIELDS}]',  # the reply to another request
        "not json",
        '{"ok": 1}',
        '[1, "ok", "fast"]',
        '[1, "floor", 5]',  # a reply of the wrong kind
    ],
    ids=["no-id", "other-id", "not-json", "not-a-list", "bad-fields", "wrong-kind"],
)
def test_a_reply_not_bound_to_its_request_is_an_error_not_a_sample(forged, make):
    ex = make()
    pid = ex.spawner_pid
    real_replies = ex._replies.fd
    read_end, write_end = os.pipe()
    ex._replies = wire.LineReader(read_end)  # replies as a forger holding the pipe would send them
    try:
        os.write(write_end, forged.encode() + b"\n")
        with _fails_after(20), pytest.raises(MeasurementError, match=r"spawner process \(pid \d+\) sent"):
            ex.run(TRUE)
        with pytest.raises(MeasurementError, match="closed"):
            ex.run(TRUE)  # a channel that carried one forged reply is not trusted again
        assert wait_until(lambda: is_gone(pid), 5.0)
    finally:
        ex.close()
        os.close(write_end)
        with contextlib.suppress(OSError):
            os.close(real_replies)


# -- processes that leave the command's process group -------------------------------------

_DAEMONS = {
    # a daemon that calls setsid() while the command waits for it, then the command exits
    "setsid": "setsid sh -c 'echo $$ > {pid}; exec sleep 30' & while [ ! -s {pid} ]; do sleep 0.01; done",
    # the classic double fork: the daemon's parent exits at once, so it has no parent left
    "double-fork": "(setsid sh -c 'echo $$ > {pid}; exec sleep 30' &); while [ ! -s {pid} ]; do sleep 0.01; done",
}


@pytest.mark.e2e
@pytest.mark.parametrize("how", _DAEMONS)
def test_a_daemon_that_left_the_commands_process_group_is_reported_and_killed(tmp_path, how, make):
    pidfile = tmp_path / "pid"
    with make(kill_grace_s=0.2) as ex:
        run = ex.run(sh(_DAEMONS[how].format(pid=pidfile)))
        daemon = read_pid_when_written(pidfile)
        try:
            assert run.status == 0 and run.leftover_processes == 1
            assert is_gone(daemon)
            assert ex.run(TRUE).leftover_processes == 0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGKILL)


def _hold_pipes(spawner_pid: int) -> tuple[int, int]:
    """Open the spawner's ends of both pipes, as a command that inherited them would hold them."""
    with open(f"/proc/{spawner_pid}/cmdline", "rb") as f:
        request_fd, reply_fd = f.read().split(b"\0")[-4:-2]  # ... request_fd reply_fd parent_pid
    return (os.open(f"/proc/{spawner_pid}/fd/{request_fd.decode()}", os.O_RDONLY),
            os.open(f"/proc/{spawner_pid}/fd/{reply_fd.decode()}", os.O_WRONLY))


@pytest.mark.e2e
@pytest.mark.parametrize("when", ["idle", "mid-command"])
def test_a_dead_spawner_is_noticed_at_once_even_while_another_process_holds_its_pipe(tmp_path, when, make):
    pidfile = tmp_path / "pid"
    ex = make(kill_grace_s=0.1)
    held = _hold_pipes(ex.spawner_pid)
    command = TRUE
    if when == "idle":
        os.kill(ex.spawner_pid, signal.SIGKILL)
        assert wait_until(lambda: is_gone(ex.spawner_pid), 5.0)
    else:
        command = sh(f"echo $$ > {pidfile}; exec sleep 30")
        kill = threading.Thread(target=lambda: (read_pid_when_written(pidfile),
                                                os.kill(ex.spawner_pid, signal.SIGKILL)))
        kill.start()
    try:
        with _fails_after(10), pytest.raises(MeasurementError, match="exited unexpectedly"):
            ex.run(command)
    finally:
        for fd in held:
            os.close(fd)
        ex.close()
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


# -- processes dying and Ctrl-C ---------------------------------------------------------

_RUN_SLEEP = """
import sys
from pairbench.measure.commandline import parse_command
from pairbench.measure.spawner import SpawnerExecutor
ex = SpawnerExecutor(spawner=sys.argv[4], _lifeline=sys.argv[3] == "lifeline")
with open(sys.argv[1], "w") as f:
    f.write(f"{ex.spawner_pid}\\n")
ex.run(parse_command(f"echo $$ > {sys.argv[2]}; exec sleep 30", shell=True))
"""


@pytest.mark.e2e
@pytest.mark.parametrize("watch", ["pdeathsig", "lifeline"])
def test_pairbench_killed_mid_command_leaves_no_orphan(tmp_path, watch, make, kind):
    spawner_file, command_file = tmp_path / "spawner.pid", tmp_path / "command.pid"
    parent = subprocess.Popen(
        [sys.executable, "-c", _RUN_SLEEP, str(spawner_file), str(command_file), watch, kind]
    )
    try:
        command_pid = read_pid_when_written(command_file)
        spawner_pid = read_pid_when_written(spawner_file)
    finally:
        parent.kill()
        parent.wait()
    assert wait_until(lambda: is_gone(command_pid) and is_gone(spawner_pid), 2.0)


_CTRL_C = """
import sys
from pairbench.measure.commandline import parse_command
from pairbench.measure.spawner import SpawnerExecutor
with SpawnerExecutor(spawner=sys.argv[2]) as ex:
    try:
        ex.run(parse_command(f"echo $$ > {sys.argv[1]}; exec sleep 30", shell=True))
    except KeyboardInterrupt:
        print("interrupted")
    print(ex.run(parse_command("true")).status)
"""


@pytest.mark.e2e
def test_ctrl_c_from_the_terminal_kills_the_command_and_leaves_the_spawner_usable(tmp_path, make, kind):
    command_file = tmp_path / "command.pid"
    # pairbench as a shell job: its own process group, which the terminal signals on Ctrl-C
    parent = subprocess.Popen(
        [sys.executable, "-c", _CTRL_C, str(command_file), kind],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_dispositions,
    )
    try:
        command_pid = read_pid_when_written(command_file)
        t0 = time.monotonic()
        os.killpg(parent.pid, signal.SIGINT)
        out, _ = parent.communicate(timeout=5)
        elapsed = time.monotonic() - t0
    finally:
        parent.kill()
    assert out.split() == ["interrupted", "0"] and parent.returncode == 0
    assert elapsed < 15  # not the 30 s sleep
    assert is_gone(command_pid)


@pytest.mark.e2e
def test_spawner_killed_while_idle_makes_the_next_run_a_measurement_error(make):
    ex = make()
    os.kill(ex.spawner_pid, signal.SIGKILL)
    with pytest.raises(MeasurementError, match="spawner process .* exited unexpectedly"):
        ex.run(TRUE)
    with pytest.raises(MeasurementError, match="closed"):
        ex.run(TRUE)
    ex.close()


@pytest.mark.e2e
def test_sigint_sent_to_the_spawner_by_someone_else_interrupts_one_run_only(make):
    with make() as ex:
        os.kill(ex.spawner_pid, signal.SIGINT)
        assert wait_until(lambda: _signal_caught(ex.spawner_pid), 1.0)
        with pytest.raises(KeyboardInterrupt):
            ex.run(TRUE)
        assert ex.run(TRUE).status == 0


class _Hung(Exception):
    """The test's own deadline passed: the code under test waited forever."""


@contextlib.contextmanager
def _fails_after(seconds: float):
    """Raise ``_Hung`` in the main thread if the block takes longer than ``seconds``."""

    def expire(signum, frame):
        raise _Hung(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _ctrl_c_mid_request(monkeypatch, then=lambda: None):
    """Make the next request's write stop halfway with Ctrl-C, as if it landed while a request
    larger than the pipe buffer was being written; ``then`` runs just before the interruption."""
    real = wire.write_all
    interrupted = []

    def write_half(fd, data, **kwargs):
        if interrupted or b',"run",' not in data[:24]:
            return real(fd, data, **kwargs)
        interrupted.append(data)
        real(fd, data[: len(data) // 2])
        then()
        raise KeyboardInterrupt

    monkeypatch.setattr(wire, "write_all", write_half)


BIG = Command("x" * 200_000, ("/bin/true",))  # a request line beyond the 64 KiB pipe buffer


@pytest.mark.e2e
def test_ctrl_c_in_the_middle_of_writing_a_request_leaves_the_spawner_usable(monkeypatch, make):
    _ctrl_c_mid_request(monkeypatch)
    with make(kill_grace_s=0.1) as ex, _fails_after(20):
        with pytest.raises(KeyboardInterrupt):
            ex.run(BIG)
        assert ex.run(TRUE).status == 0
        assert ex.run(BIG).status == 0


@pytest.mark.e2e
def test_a_spawner_that_never_answers_a_cancel_is_killed_not_waited_for(monkeypatch, make):
    monkeypatch.setattr(spawner, "CANCEL_TIMEOUT_S", 0.5)
    ex = make(kill_grace_s=0.1)
    pid = ex.spawner_pid
    _ctrl_c_mid_request(monkeypatch, then=lambda: os.kill(pid, signal.SIGSTOP))
    try:
        with _fails_after(20):
            started = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                ex.run(BIG)
            assert time.monotonic() - started < 15  # stopped, it would never answer
        assert is_gone(pid)
        with pytest.raises(MeasurementError, match="closed"):
            ex.run(TRUE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        ex.close()


def _signal_caught(pid: int) -> bool:
    """True once no signal is pending for ``pid`` (its handler has run)."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["ShdPnd"], 16) == 0 and int(fields["SigPnd"], 16) == 0


@pytest.mark.e2e
def test_close_stops_the_spawner_and_is_idempotent(make):
    ex = make()
    pid = ex.spawner_pid
    ex.close()
    ex.close()
    assert is_gone(pid)
    assert ex.rss_floor_kib() > 0  # the last known figure


# -- falling back to the in-process executor --------------------------------------------


@pytest.mark.e2e
def test_without_a_python_to_start_it_falls_back_to_in_process_and_says_so(monkeypatch):
    monkeypatch.setattr(sys, "executable", "")
    with SpawnerExecutor(spawner="python") as ex:
        assert ex.spawner_pid is None
        assert ex.run(TRUE).status == 0
        assert ex.rss_floor_kib() > 0
    (note,) = ex.info().notes
    assert note.code == "executor-fallback" and "sys.executable is ''" in note.data["reason"]
    assert note.data["floor_kib"] > 0  # pairbench's own size, read when the fallback began


@pytest.mark.e2e
def test_spawner_that_cannot_import_pairbench_falls_back_with_the_reason(
    monkeypatch, tmp_path, capfd
):
    monkeypatch.setattr(spawner, "package_root", lambda: str(tmp_path))
    with SpawnerExecutor(spawner="python") as ex:
        assert ex.spawner_pid is None
        assert ex.run(TRUE).status == 0
    assert "No module named 'pairbench'" in ex.info().notes[0].data["reason"]
    assert capfd.readouterr().err == ""  # the failure went to the parent, not to the terminal


_FDS_TO = """import os, sys
found = [fd for fd in range(3, 256) if os.path.exists(f"/proc/self/fd/{fd}")]
with open(sys.argv[1], "a") as f:
    f.write(f"{sys.argv[2]}: {found}\\n")
"""


@pytest.mark.e2e
def test_no_command_of_a_run_setup_prepare_cleanup_or_benchmark_sees_the_spawners_pipes(
        tmp_path, monkeypatch, make, kind):
    from cli_runner import invoke

    monkeypatch.setenv("PAIRBENCH_SPAWNER", kind)
    log = tmp_path / "fds"

    def command(role: str) -> str:
        return f"{sys.executable} -S -I -c '{_FDS_TO}' {log} {role}"

    result = invoke("run", "--runs", "2", "--setup", command("setup"), "--prepare", command("prepare"),
                    "--cleanup", command("cleanup"), command("benchmark"))
    assert result.code == 0, result.err
    seen = log.read_text().splitlines()
    assert sorted(seen) == sorted(["setup: []", "prepare: []", "prepare: []", "benchmark: []",
                                   "benchmark: []", "cleanup: []"])


@pytest.mark.e2e
def test_the_wait_for_the_spawners_exit_reads_its_pidfd_and_never_reaps_a_live_process():
    # _stop_spawner waits on the pidfd (readable at the exit), then lets Popen.wait reap at once
    exited = subprocess.Popen(["true"], preexec_fn=default_dispositions)
    lingering = subprocess.Popen(["sleep", "30"], preexec_fn=default_dispositions)
    fds = [os.pidfd_open(exited.pid), os.pidfd_open(lingering.pid)]
    try:
        assert wire.exit_wait_s(fds[0], 30.0) == 0.0
        assert exited.wait(timeout=0) == 0
        assert wire.exit_wait_s(fds[1], 0.05) == 0.0  # gave up: Popen.wait(0) then times out
        with pytest.raises(subprocess.TimeoutExpired):
            lingering.wait(timeout=0)
        assert wire.exit_wait_s(None, 2.5) == 2.5  # no pidfd: Popen.wait waits itself
    finally:
        lingering.kill()
        lingering.wait()
        for fd in fds:
            os.close(fd)
