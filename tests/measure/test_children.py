"""The keeper of a program pairbench starts itself (``measure.children``): the program's status is
its own, and no process it starts outlives it, whether it exits, times out, is stopped, or pairbench
is killed; with the native keeper and with the Python one.

Every process here carries a token in its command line, and the tests poll ``/proc`` for it with
generous deadlines: no test asserts how long anything took."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import pytest
from processes import GONE_WITHIN_S, all_gone, default_dispositions, running, token, wait_until

from pairbench.measure import children, native

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["native", "python"])
def keeper(request, monkeypatch):
    """Each test with either keeper: the native one (``pairbench-spawner --keep``) or, as where no C
    compiler built it, the Python one."""
    if request.param == "native":
        if not os.access(native.program_path(), os.X_OK):
            pytest.fail("the native spawner is not built: run make setup (it needs a C compiler)")
    else:
        monkeypatch.setattr(native, "program_path", lambda: "/nonexistent/pairbench-spawner")
    return request.param


def test_the_programs_exit_code_and_signal_are_the_keepers(keeper):
    assert children.run(["sh", "-c", "exit 3"], timeout_s=60) == 3
    assert children.run(["sh", "-c", "kill -USR1 $$"], timeout_s=60) == -signal.SIGUSR1


def test_a_daemon_the_program_leaves_is_ended_when_it_exits(keeper):
    mark = token()
    status = children.run(["sh", "-c", f"setsid sleep {mark} & sleep 0.1; exit 0"], timeout_s=60)
    assert status == 0
    assert all_gone(mark)


def test_a_timeout_ends_the_program_and_everything_it_started(keeper):
    mark = token()
    status = children.run(["sh", "-c", f"setsid sleep {mark} & sleep {mark}"], timeout_s=1.0)
    assert status is None
    assert all_gone(mark)


def test_stop_ends_a_program_that_ignores_sigterm(keeper):
    mark = token()
    process = children.start(["sh", "-c", f"trap '' TERM; setsid sleep {mark} & sleep {mark}; sleep {mark}"],
                             grace_s=0.2)
    try:
        assert wait_until(lambda: len(running(mark, exactly=True)) == 2, GONE_WITHIN_S)  # the trap is set
        assert children.stop(process, grace_s=0.2) == -signal.SIGKILL
    finally:
        process.kill()
    assert all_gone(mark)


def test_an_exception_while_waiting_ends_the_tree_before_it_propagates(keeper, monkeypatch):
    mark = token()
    real_wait = children.wait

    def interrupted(process, timeout_s):
        if interrupted.raised:  # stop() waits for the tree it ends: that wait is the real one
            return real_wait(process, timeout_s)
        assert wait_until(lambda: len(running(mark, exactly=True)) == 2, GONE_WITHIN_S)
        interrupted.raised = True
        raise KeyboardInterrupt  # as pairbench's own SIGTERM or Ctrl-C handler raises

    interrupted.raised = False

    monkeypatch.setattr(children, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        children.run(["sh", "-c", f"setsid sleep {mark} & sleep {mark}"], timeout_s=600)
    monkeypatch.setattr(children, "wait", real_wait)
    assert all_gone(mark)


PARENT = """import sys
from pairbench.measure import children, native
if sys.argv[2] == "python":
    native.program_path = lambda: "/nonexistent/pairbench-spawner"
children.start(["sh", "-c", "setsid sleep %s & sleep %s" % (sys.argv[1], sys.argv[1])])
print("started", flush=True)
sys.stdin.read()
"""


def test_kill_9_of_pairbench_ends_the_program_and_its_daemons(keeper):
    """The audit's G18: a worker in its own session survived ``kill -9`` of pairbench."""
    mark = token()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, mark, keeper], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, preexec_fn=default_dispositions)
    try:
        assert parent.stdout.readline() == "started\n"
        assert wait_until(lambda: len(running(mark, exactly=True)) == 2, GONE_WITHIN_S)
        parent.kill()
        parent.wait()
    finally:
        parent.kill()
        parent.stdin.close()
        parent.stdout.close()
    assert all_gone(mark)


def test_a_keeper_whose_pairbench_died_before_it_watched_runs_nothing(tmp_path, keeper):
    """The parent-death signal is set in the keeper, then the parent checked: had pairbench died in
    between, nothing would ever stop the program. A keeper told of a parent it does not have runs none."""
    made = tmp_path / "ran"
    argv = children._keeper(0.5)
    argv[argv.index(str(os.getpid()))] = "1"  # not our parent: as if pairbench had died already
    done = subprocess.run([*argv, "--", "touch", str(made)], timeout=60, check=False,
                          preexec_fn=default_dispositions)
    assert done.returncode == 1 and not made.exists()


def test_a_program_that_does_not_exist_is_an_oserror_at_start(keeper):
    with pytest.raises(FileNotFoundError):
        children.start(["no-such-program-of-pairbench"])


def test_the_keeper_holds_none_of_the_programs_pipes(keeper):
    """The program's end of a pipe is its own: when it exits, the reader sees end of file."""
    read_end, write_end = os.pipe()
    try:
        process = children.start([sys.executable, "-c", f"import os; os.write({write_end}, b'x')"],
                                 pass_fds=(write_end,))
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            assert reader.read() == b"x"
        assert children.wait(process, 60) == 0
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)
