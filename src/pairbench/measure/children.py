"""Programs pairbench starts and talks to itself (workers, listings, builds): kept, so none outlives it.

Commands, harness invocations and ``--prepare``-style helpers run in the
spawner (``measure.spawner``), which is a child subreaper tied to pairbench's
life. A worker (a long-lived process on two pipes), a harness's listing run and
``confirm``'s build are started here instead, each under a small **keeper**:
``pairbench-spawner --keep`` (``spawner.c``), or where that was not built the
Python keeper (``measure.keeper``). The keeper

* runs the program as its child, in a process group of its own, with a
  parent-death signal (so ``kill -9`` of the keeper kills the program), and in
  a cgroup of its own where the machine gives one (``measure.containment``);
* is a child subreaper, so what the program starts stays its descendant even
  after a ``setsid`` and its parent's exit;
* dies with pairbench: ``PR_SET_PDEATHSIG`` gives it SIGTERM when the thread
  that started it ends (pairbench killed, even by ``kill -9``), after it
  checked that pairbench had not died already;
* on SIGTERM (:func:`stop`: a timeout, a worker's retirement, pairbench's own
  Ctrl-C or SIGTERM) ends the program's group (SIGTERM, the grace period,
  SIGKILL) and then everything else the program started (its cgroup killed,
  then any other descendant stopped and killed); when the program exits by
  itself, it ends what the program left running the same way;
* exits as the program did (its code, or its signal), so ``Popen.wait`` reads
  the program's status.

The program is looked up on the environment's ``PATH`` here, so a missing one
is an ``OSError`` at :func:`start`, as with ``subprocess``. Its environment is
:func:`measure.child_environment.for_children` unless given. Linux only (where
``/proc`` and ``prctl`` are); elsewhere the program is started directly, in a
session of its own, as before. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys

from pairbench.measure import child_environment, containment, native
from pairbench.measure.native import package_root

KEEPER_MARGIN_S = 2.0
"""How long past its own grace period and SIGKILL wait a keeper may take to end a tree before it is
killed itself (a machine under load)."""

_BOOTSTRAP = """\
import sys
sys.path.insert(0, sys.argv[1])
from pairbench.measure.keeper import main
main(sys.argv[2:])
"""
_KEEPING = sys.platform.startswith("linux")


def start(argv, *, cwd: str | None = None, env: dict[str, str] | None = None, stdin=subprocess.DEVNULL,
          stdout=None, stderr=None, pass_fds=(), grace_s: float = 0.5) -> subprocess.Popen:
    """Start ``argv`` under a keeper (see the module docstring); the ``Popen`` is the keeper's, and
    its exit status the program's. ``FileNotFoundError``/``PermissionError`` if the program cannot be
    found or run."""
    environ = child_environment.for_children() if env is None else env
    program = _resolved(argv[0], environ, cwd)
    command = [program, *argv[1:]]
    if _KEEPING:
        command = [*_keeper(grace_s), "--", *command]
    return subprocess.Popen(command, cwd=cwd, env=environ, stdin=stdin, stdout=stdout, stderr=stderr,
                            pass_fds=pass_fds, start_new_session=True)


def program_pid(process: subprocess.Popen) -> int:
    """The pid of the program a keeper runs (the keeper's own where there is no keeper, or where
    ``/proc`` does not say); valid while the program runs."""
    if not _KEEPING or process.poll() is not None:
        return process.pid
    try:
        with open(f"/proc/{process.pid}/task/{process.pid}/children", "rb") as handle:
            children = handle.read(200).split()
        return int(children[0]) if children else process.pid
    except (OSError, ValueError):
        return process.pid


def stop(process: subprocess.Popen, grace_s: float = 0.5) -> int:
    """End the program and everything it started; its exit status. SIGTERM to the program's group and
    to the keeper, which ends the tree (the program's group: SIGTERM, ``grace_s``, SIGKILL; then the
    other descendants); if the keeper has not ended after its own waits and ``KEEPER_MARGIN_S``,
    SIGKILL to its group."""
    if process.poll() is not None:
        _end_cells_of(process.pid)  # a keeper killed from outside leaves its cell (and what is in it)
        return process.returncode
    if _KEEPING:
        program = program_pid(process)  # read now: the keeper's child, not yet reaped, so its own group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if program != process.pid:
                os.killpg(program, signal.SIGTERM)  # at once, as the keeper will: one wake-up fewer
            os.kill(process.pid, signal.SIGTERM)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
    try:
        return wait(process, 2 * grace_s + containment.END_BOUND_S + KEEPER_MARGIN_S if _KEEPING else grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        status = process.wait()
        _end_cells_of(process.pid)  # the keeper did not: what it kept is ended here
        return status


def _end_cells_of(keeper: int) -> None:
    """End and remove the cell a keeper leaves behind when it is killed before its own end (a keeper
    that ended as it should removed it: then this is one listing of a small directory)."""
    base = containment.containment().directory if _KEEPING else None
    if base:
        containment.end_cells_of(base, keeper)


def wait(process: subprocess.Popen, timeout_s: float | None) -> int:
    """``process.wait(timeout_s)``, woken by the exit itself (a pidfd) where ``Popen.wait`` would poll
    with sleeps growing to 50 ms; ``subprocess.TimeoutExpired`` past the timeout."""
    if timeout_s is None or process.poll() is not None:
        return process.wait(timeout_s)
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        return process.wait(timeout_s)
    try:
        if not select.select([pidfd], [], [], max(timeout_s, 0.0))[0]:
            raise subprocess.TimeoutExpired(process.args, timeout_s)
    finally:
        os.close(pidfd)
    return process.wait()


def run(argv, *, timeout_s: float | None, cwd: str | None = None, env: dict[str, str] | None = None,
        stdout=None, stderr=None, grace_s: float = 0.5) -> int | None:
    """Run ``argv`` to its end under a keeper; its exit status, or None past ``timeout_s``. Past the
    timeout, or on any exception while waiting (Ctrl-C, pairbench's SIGTERM), the whole tree is ended
    before this returns or raises."""
    process = start(argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr, grace_s=grace_s)
    try:
        return wait(process, timeout_s)
    except subprocess.TimeoutExpired:
        return None
    finally:
        stop(process, grace_s)


def _keeper(grace_s: float) -> list[str]:
    """The keeper's command line before ``--``: the native one where it was built, else Python's."""
    parent = str(os.getpid())
    program = native.program_path()
    contain = containment.containment().option()
    if os.access(program, os.X_OK):
        return [program, "--keep", parent, "--grace-ns", str(round(grace_s * 1e9)), *contain]
    return [sys.executable, "-S", "-I", "-c", _BOOTSTRAP, package_root(), parent, repr(float(grace_s)), *contain]


def _resolved(program: str, environ: dict[str, str], cwd: str | None) -> str:
    """``program`` as a path: as given when it holds a ``/``, else found on ``environ``'s PATH."""
    if "/" in program:
        path = program if cwd is None or os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", program)
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise PermissionError(13, "Permission denied", program)
        return program
    found = shutil.which(program, path=environ.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", program)
    return found
