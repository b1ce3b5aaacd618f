"""The Python keeper: what ``pairbench-spawner --keep`` does, where the native spawner was not built.

``measure.children`` runs it as ``python -S -I -c BOOTSTRAP PACKAGE_ROOT PARENT_PID GRACE_S
[--contain DIR] -- PROGRAM ARG...``. It runs PROGRAM as its child and keeps it, and everything it
starts, tied to pairbench's life: with ``--contain`` the program starts in a cgroup of its own below
DIR (``measure.containment``), and the keeper is a child subreaper (a daemon that leaves the
program's process group with ``setsid`` stays its descendant); it dies with pairbench
(``PR_SET_PDEATHSIG``, after checking that pairbench is still its parent), and the program gets a
parent-death signal of its own. When the program exits, whatever it left running is ended (the
cgroup killed, then any other descendant stopped and killed) and the keeper exits as the program
did; on SIGTERM, SIGHUP or SIGINT the program's process group gets SIGTERM and the grace period
first.

Like ``measure.leftovers``, which does the finding and killing, this imports nothing beyond the
standard library: it starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from pairbench.measure import leftovers
from pairbench.measure.containment import Cell
from pairbench.measure.prctl import PR_SET_PDEATHSIG, prctl

_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_RESET = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ)


class _Stop(Exception):
    """pairbench asked the keeper to end the program (or died)."""


def _stop(signum, frame):
    raise _Stop


def keep(parent: int, grace_s: float, argv: list[str], cells: str | None = None) -> None:
    """Run and keep ``argv`` (see the module docstring); never returns."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    for signum in _HELD:
        signal.signal(signum, _stop)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    leftovers.become_subreaper()
    if os.getppid() != parent:
        os._exit(1)  # pairbench died before we were watching it: run nothing
    cell = _new_cell(cells)
    keeper = os.getpid()
    pid = os.fork()
    if pid == 0:
        _child(argv, keeper, cell)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # as the child does: no kill may miss its group
    _let_go_of_descriptors()
    status = _wait(pid)
    if status is None:
        status = leftovers.kill_group(pid, pid, grace_s)[0]
    if cell is not None:
        cell.end()
        cell.remove()
    if leftovers.has_children():  # the usual case: none (orphans become ours), and no /proc scan
        leftovers.end_descendants(known_groups=(pid,))
    _end_like(status)


def _new_cell(base: str | None) -> Cell | None:
    """The program's cell below ``base``, or None (no cgroup: the descendants' scan contains it)."""
    if not base:
        return None
    try:
        return Cell.create(base)
    except OSError:
        return None


def _wait(pid: int) -> int | None:
    """The program's exit code once it ends (``-N``: signal N), or None if the keeper is told to stop
    first."""
    status = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
        try:
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        finally:
            signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    except _Stop:
        pass
    return status


def _child(argv: list[str], keeper: int, cell: Cell | None) -> None:
    """In the forked child: the parent-death signal, the cell, its own process group, default
    signals, the program (looked up on the PATH); never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != keeper:
            os._exit(127)
        if cell is not None:
            with contextlib.suppress(OSError):  # refused: the keeper's scan contains it instead
                cell.enter()
        os.setpgid(0, 0)
        for signum in _RESET:
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"pairbench: cannot run {argv[0]}: {exc.strerror or exc}\n".encode("utf-8", "replace"))
    finally:
        os._exit(127)


def _let_go_of_descriptors() -> None:
    """Standard streams to /dev/null, every other descriptor closed: the program's pipes and files are
    its own."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 65536)


def _end_like(status: int) -> None:
    """Exit as the program did: its code, or its signal (without a core dump of ours)."""
    if status < 0:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's cannot be set, and need not be
            signal.signal(-status, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-status})
        os.kill(os.getpid(), -status)
    os._exit(status if 0 <= status < 256 else 1)


def main(argv: list[str]) -> None:
    """``PARENT_PID GRACE_S [--contain DIR] -- PROGRAM ARG...``"""
    cells = None
    if len(argv) > 3 and argv[2] == "--contain":
        cells, argv = argv[3], argv[:2] + argv[4:]
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: keeper PARENT_PID GRACE_S [--contain DIR] -- PROGRAM [ARG...] (started by "
                         "pairbench)\n")
        os._exit(2)
    keep(int(argv[0]), float(argv[1]), argv[3:], cells)
