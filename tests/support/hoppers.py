"""A PID hopper for the containment tests: a daemon that forks and exits in a loop, so it has a new pid
every few milliseconds (and, with ``new_sessions``, a new session and process group too), and a
way to know for sure when every one of its processes is gone.

A scan of ``/proc`` cannot tell: it lists the pids first and reads each after, so it misses a
hopper that forked and exited in between and reports it gone. Instead each hopper process holds
the write end of a FIFO (it opens it once; every fork inherits it), and the test holds the read
end: when the last hopper process dies, the read end reports a hang-up (POLLHUP), which nothing
else can cause. The command returns once the hopper runs (its first process waits for that), so
whatever ends what the command left finds it running. The hopper ends itself after two minutes, or
when its folder holds ``stop``.
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path

from processes import GONE_WITHIN_S

SOURCE = """import os, sys, time
folder, new_sessions = sys.argv[1], sys.argv[2] == "sessions"
t0 = time.time()
if os.fork():  # as a daemon's starter does, exit once the daemon runs (what ends then finds it running)
    while not os.path.exists(os.path.join(folder, "started")) and time.time() - t0 < 120:
        time.sleep(0.001)
    sys.exit(0)
os.setsid()
for fd in (0, 1, 2):
    os.dup2(os.open(os.devnull, os.O_RDWR), fd)
alive = os.open(os.path.join(folder, "alive"), os.O_WRONLY)  # held by every generation
open(os.path.join(folder, "started"), "w").close()
while not os.path.exists(os.path.join(folder, "stop")) and time.time() - t0 < 120:
    if os.fork():
        os._exit(0)
    if new_sessions:
        os.setsid()
    else:
        time.sleep(0.002)
"""


class Hopper:
    """One hopper's folder, its command line (``argv``) and the read end of its FIFO."""

    def __init__(self, folder: Path, *, new_sessions: bool = False):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "hop.py").write_text(SOURCE)
        os.mkfifo(folder / "alive")
        self._reader = os.open(folder / "alive", os.O_RDONLY | os.O_NONBLOCK)
        self.argv = [sys.executable, str(folder / "hop.py"), str(folder), "sessions" if new_sessions else "sleeps"]

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def started(self) -> bool:
        return (self.folder / "started").exists()

    def running(self) -> bool:
        """Whether a process of the hopper lives now (it started, and its FIFO has a writer)."""
        poller = select.poll()
        poller.register(self._reader, select.POLLIN)
        for _, events in poller.poll(0):
            if events & select.POLLHUP:
                return False
        return self.started()

    def gone(self, timeout_s: float = GONE_WITHIN_S) -> bool:
        """Whether every process of the hopper ends within ``timeout_s`` (it must have started)."""
        if not self.started():
            return False
        poller = select.poll()
        poller.register(self._reader, select.POLLIN)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for _, events in poller.poll(100):
                if events & select.POLLHUP:
                    return True
                os.read(self._reader, 4096)  # nothing is written; drain just in case
        return False

    def stop(self) -> None:
        (self.folder / "stop").touch()
        os.close(self._reader)
