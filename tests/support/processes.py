"""Helpers for tests that run real processes: build commands, watch pids."""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from pathlib import Path

from pairbench.command import Command
from pairbench.measure.commandline import parse_command


def sh(text: str) -> Command:
    """``text`` run through ``sh -c``."""
    return parse_command(text, shell=True)


def py(code: str) -> Command:
    """A Python one-liner run by this interpreter."""
    return Command(f"python -c {code!r}", (sys.executable, "-c", code))


HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_dispositions() -> None:
    """A ``preexec_fn``: in the child, before exec, the signals pairbench handles at their defaults,
    as from an interactive shell, even when these tests were started with them ignored (``nohup``,
    a CI runner, ``trap "" INT``): an ignored disposition is inherited through fork and exec, and
    pairbench keeps an ignored signal ignored."""
    for signum in HANDLED_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def is_gone(pid: int) -> bool:
    """True if ``pid`` no longer runs: no such process, or a zombie awaiting its reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between it and the read
        return True
    return state in ("Z", "X")


def wait_until(predicate, timeout_s: float) -> bool:
    """Poll ``predicate`` every 10 ms until it holds (True) or ``timeout_s`` passes (False)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def read_pid_when_written(path: Path, timeout_s: float = 5.0) -> int:
    """The pid a child writes (with a trailing newline) to ``path``, once it is there."""
    assert wait_until(lambda: path.exists() and path.read_text().endswith("\n"), timeout_s)
    return int(path.read_text())


SCHEDSTAT = Path("/proc/self/schedstat")


def thread_cpu_ns(pid: int, tid: int | None = None) -> int:
    """The CPU time the kernel has charged thread ``tid`` (default: the main thread) of process
    ``pid``, ns (``/proc/PID/task/TID/schedstat``): up to date for a thread that is waiting, and at
    least what the thread's own CPU clock last read."""
    with open(f"/proc/{pid}/task/{tid or pid}/schedstat") as f:
        return int(f.read().split()[0])


def samples_cpu_share(worker_pid: int, take_samples) -> float:
    """The CPU time (user + sys) that ``take_samples()``'s replies report, over the CPU time the
    kernel charged the worker's thread while it answered them. A comparison of CPU time with CPU
    time, so load cannot move it (as it moves wall time); the protocol's own handling is the
    difference."""
    before = thread_cpu_ns(worker_pid)
    replies = take_samples()
    spent = thread_cpu_ns(worker_pid) - before
    return sum(r.user_ns + r.sys_ns for r in replies) / spent


GONE_WITHIN_S = 30.0
"""How long a test waits for processes to end: generous, for a loaded machine (never asserted as a time)."""


def token() -> str:
    """A sleep duration no other process on the machine uses: it marks a test's processes."""
    return f"{1000 + uuid.uuid4().int % 9000}.{uuid.uuid4().int % 10**6:06d}"


def running(mark: str, *, exactly: bool = False) -> list[int]:
    """The live processes whose command line holds ``mark`` (with ``exactly``: is ``sleep MARK``)."""
    wanted = b"sleep\0" + mark.encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if (cmdline == wanted if exactly else mark.encode() in cmdline) and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def all_gone(mark: str) -> bool:
    """Whether every process marked ``mark`` ends within ``GONE_WITHIN_S``."""
    return wait_until(lambda: not running(mark), GONE_WITHIN_S)
