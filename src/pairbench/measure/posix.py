"""The real executor: runs a command with ``posix_spawn`` and times it with ``wait4``.

A :class:`PosixExecutor` starts each command in its own process group, with
stdin from ``/dev/null`` and stdout/stderr sent where the
:class:`~pairbench.measure.executor.OutputPolicy` says (``/dev/null`` by
default, so output is never read, decoded or buffered by us). One sample is:

* the wall time on the monotonic clock, from just before the spawn to just
  after ``wait4`` returns for the command itself;
* the command's *own* rusage, as ``wait4`` reports it for that one child (user
  and system CPU, max RSS, context switches). ``getrusage(RUSAGE_CHILDREN)`` is
  never used: its max RSS is the largest of *all* children so far, so a small
  command measured after a big one would inherit the big one's figure.
  One floor remains: Linux charges *our* resident set to a child when it
  calls ``exec``, so a command smaller than this process is reported at about
  its size (:meth:`PosixExecutor.rss_floor_kib` says how much). pairbench
  therefore runs this executor in a small spawner process
  (``measure.spawner``), which is why this module and what it imports must
  stay free of numpy and the CLI's libraries.

No descriptor beyond 0-2 reaches a command: those this process inherited
without close-on-exec (from a shell, a CI runner, the spawner's parent) are
closed in the child by ``posix_spawn``; Python opens everything else
close-on-exec.

After the command exits, surviving members of its process group (a daemon it
backgrounded, say) are counted, ended so they cannot disturb the next sample,
and reported in ``Execution.leftover_processes``. A daemon that called
``setsid`` has left that group; an executor made with ``adopts_orphans`` (in
the spawner, a child subreaper: see ``measure.leftovers``, which finds and
ends what a command left) finds those too, as live descendants of its process,
and treats them alike. An executor given a cgroup directory (``cells``, in the
spawner: see ``measure.containment``) lives in a cell with the commands it
runs; what a command leaves there is counted and ended by the cell, which no
forking can outrun. Those still running when the ending gave up (the scan's
bound, without a cell) are ``Execution.escaped_processes``. With a timeout the whole group is killed the same way and the sample's status is
``model.STATUS_TIMEOUT``. On ``KeyboardInterrupt`` (the terminal's SIGINT does
not reach the command: it is in another process group) the group is killed and
reaped before the interrupt propagates; SIGINT, SIGTERM and SIGHUP are held off
while a group is being killed, so a second one cannot cut the clean-up short.

The path without a timeout is one ``posix_spawn`` and one blocking ``wait4``:
no thread, no polling. Linux-specific parts (pidfd, ``/proc`` scan, max RSS in
KiB) degrade gracefully elsewhere: a timer thread replaces the pidfd, and a
surviving group counts as at least one leftover process.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import threading
import time

from pairbench.command import STATUS_TIMEOUT, Command
from pairbench.errors import CommandNotFound, MeasurementError, UsageError
from pairbench.measure import child_environment, leftovers
from pairbench.measure.containment import Cell
from pairbench.measure.executor import Execution, ExecutorInfo, OutputPolicy
from pairbench.outputs import open_stream

# Python ignores SIGPIPE (and SIGXFSZ) for itself; a child must get the default
# disposition back, as subprocess's ``restore_signals=True`` does, or ``yes | head``
# style commands behave differently under pairbench than in a shell.
_RESTORED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name)
)
_NULL_OUTPUT = OutputPolicy()
_HELD_OFF = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # while a group is being killed


def _pidfd_open(pid: int) -> int:
    """``os.pidfd_open``; a seam so tests can force the timer-thread fallback."""
    return os.pidfd_open(pid)


class PosixExecutor:
    """Runs commands on this machine, one at a time, and measures what each one cost.

    ``output`` says where the commands' stdout and stderr go; a file is
    truncated once, here, then every sample appends to it. ``kill_grace_s`` is
    how long a process group gets between SIGTERM and SIGKILL (on timeout,
    Ctrl-C, or for leftover processes). The environment is captured here:
    every sample sees the same one: ``environ`` (bytes), else this process's as
    ``measure.child_environment`` says (pairbench's credentials removed). Use as a
    context manager or call :meth:`close`.

    ``adopts_orphans`` says that this process is a child subreaper that starts
    no process but the commands (the spawner): then every descendant alive
    after a command exits is that command's, wherever its process group.
    ``cells`` (a cgroup v2 directory; only in the spawner, which starts nothing
    else) puts this process in a cell of its own there, with its commands.

    >>> from pairbench.measure.commandline import parse_command
    >>> with PosixExecutor() as ex:
    ...     ex.run(parse_command("true")).status
    0
    """

    def __init__(self, output: OutputPolicy = _NULL_OUTPUT, kill_grace_s: float = 0.5, *,
                 adopts_orphans: bool = False, environ: dict[bytes, bytes] | None = None,
                 cells: str | None = None):
        if not kill_grace_s >= 0:
            raise UsageError(f"`kill_grace_s` must be >= 0 seconds, got {kill_grace_s!r}")
        self.output = output
        self.kill_grace_s = float(kill_grace_s)
        self.adopts_orphans = adopts_orphans
        self.cells = cells
        self.cell: Cell | None = _entered_cell(cells) if cells else None
        self.containment_reason = "" if self.cell or not cells else f"cannot move into a cgroup below {cells}"
        self._fds: list[int] = []
        self._closed = False
        try:
            stdin = self._open(os.devnull, os.O_RDONLY)
            out = self._open_output(output)
        except BaseException:
            self.close()
            raise
        actions = [(os.POSIX_SPAWN_DUP2, stdin, 0)]
        if out is not None:
            actions += [(os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, out, 2)]
        # after the dup2s, which may read one of them (closing a closed one is not an error)
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_descriptors()]
        self._clear_refs = self._open_clear_refs()
        # Captured once, as bytes: converting os.environ on every spawn costs ~45 us. Without pairbench's
        # credentials (measure.child_environment), or exactly ``environ``, which the spawner's parent chose.
        self._environ = child_environment.for_children_bytes() if environ is None else dict(environ)
        self._spawn_kwargs = {
            "file_actions": actions,
            "setpgroup": 0,
            "setsigdef": _RESTORED_SIGNALS,
            "setsigmask": (),  # the child starts with no signal blocked
        }

    # -- protocol -----------------------------------------------------------------

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Run ``command`` once and return its :class:`Execution`; see the module docstring.

        Raises ``CommandNotFound`` if the program cannot be started; a non-zero
        exit, a signal or a timeout is reported in ``Execution.status``.
        """
        if self._closed:
            raise MeasurementError("this executor is closed; create a new PosixExecutor")
        if timeout_ns is not None and timeout_ns <= 0:
            raise UsageError(f"`timeout_ns` must be > 0, got {timeout_ns!r}")
        argv = command.argv
        kwargs = self._spawn_kwargs
        environ = self._environ
        if self._clear_refs is not None:
            self._reset_peak_rss()
        start = time.monotonic_ns()
        try:
            pid = os.posix_spawn(argv[0], argv, environ, **kwargs)
        except OSError as exc:
            raise not_startable(command, exc) from None
        except BaseException:
            # Ctrl-C raised as posix_spawn returned, before its pid was stored. (Holding
            # SIGINT off around the spawn instead costs ~10 us inside the timed window.)
            self._kill_unrecorded_children()
            raise
        try:
            if timeout_ns is None:
                _, wstatus, usage = os.wait4(pid, 0)
                end = time.monotonic_ns()
                status = os.waitstatus_to_exitcode(wstatus)
            else:
                status, usage, end = self._wait_with_timeout(pid, start + timeout_ns)
        except BaseException:
            # KeyboardInterrupt (or any error) while the command runs: leave no orphan.
            self._kill_after_interrupt(pid)
            raise
        escaped = 0
        try:
            survivors = self._survivors(pid)
        except BaseException:
            self._kill_survivors(pid)
            raise
        if survivors:
            escaped = self._kill_survivors(pid)
        return _execution(start, end, status, usage, survivors, escaped)

    def rss_floor_kib(self) -> int:
        """Our own resident set size now, KiB: the smallest max RSS a command can be reported with.

        Linux charges the spawning process's resident set to a child at its
        ``exec`` (the child starts out sharing our memory), so a command whose
        true peak is below this figure is reported with about this figure. 0 if
        unknown (no ``/proc``). Before each spawn our *peak* is reset to our
        current size, so a transient peak of ours is never charged to a command.
        """
        try:
            with open("/proc/self/statm", "rb") as f:
                resident_pages = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            return 0
        return resident_pages * os.sysconf("SC_PAGE_SIZE") // 1024

    def info(self) -> ExecutorInfo:
        """Commands start from this process: its resident set is the RSS floor (None if unknown)."""
        return ExecutorInfo(type(self).__name__, self.rss_floor_kib() or None, peak_memory="rusage",
                            containment=self.containment, containment_reason=self.containment_reason)

    @property
    def containment(self) -> str:
        """How what a command leaves running is ended: its ``"cgroup"``, the ``"scan"`` of this
        process's descendants (a subreaper), or its process ``"group"`` only."""
        return "cgroup" if self.cell is not None else "scan" if self.adopts_orphans else "group"

    def now_ns(self) -> int:
        """The monotonic clock the samples are timed with, in nanoseconds."""
        return time.monotonic_ns()

    def close(self) -> None:
        """Close /dev/null and the output file, and end what the cell holds besides this process;
        safe to call more than once."""
        if self.cell is not None and not self._closed:
            self._leave_cell()
        self._closed = True
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)

    def __enter__(self) -> PosixExecutor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- set-up -------------------------------------------------------------------

    def _open(self, path: str, flags: int) -> int:
        fd = os.open(path, flags | os.O_CLOEXEC, 0o644)
        self._fds.append(fd)
        return fd

    def _open_clear_refs(self) -> int | None:
        """Open ``/proc/self/clear_refs`` to reset our peak RSS before each spawn, if we may."""
        try:
            return self._open("/proc/self/clear_refs", os.O_WRONLY)
        except OSError:
            return None

    def _reset_peak_rss(self) -> None:
        """Lower our peak RSS to our current RSS ("5": reset the peak resident set size)."""
        try:
            os.write(self._clear_refs, b"5")
        except OSError:
            self._clear_refs = None

    def _open_output(self, output: OutputPolicy) -> int | None:
        fd = open_output(output)
        if fd is not None:
            self._fds.append(fd)
        return fd

    # -- waiting and killing ------------------------------------------------------

    def _survivors(self, pgid: int) -> int:
        """How many processes the command ``pgid`` (reaped) left alive."""
        if self.cell is not None:
            if self.adopts_orphans and not leftovers.has_children():  # the usual case: no read at all
                return 0
            leftovers.reap_exited_children()
            return self.cell.others()  # every process the command started, whatever became of its parents
        if not self.adopts_orphans:
            return leftovers.count_live_members(pgid) if leftovers.group_exists(pgid) else 0
        if not leftovers.has_children():  # the usual case: one system call, no /proc scan
            return 0
        leftovers.reap_exited_children()
        # a walk can miss a process handed to us as it reads; a live child of ours cannot be missed
        return len(leftovers.descendants(os.getpid())) or int(leftovers.has_children())

    def _kill_survivors(self, pgid: int) -> int:
        """End what the command ``pgid`` left: the cell, else its group and (adopting orphans) every
        descendant, stopped before they are killed. How many were still running at the end."""
        if self.cell is not None:
            still = self._renew_cell()
            if still is not None:
                return still + (_held_off(self._end_descendants, pgid) if leftovers.has_children() else 0)
        _held_off(leftovers.kill_group, pgid, None, self.kill_grace_s)
        if self.adopts_orphans:
            return _held_off(self._end_descendants, pgid)
        return leftovers.count_live_members(pgid) if leftovers.group_exists(pgid) else 0

    @staticmethod
    def _end_descendants(pgid: int) -> int:
        return leftovers.end_descendants(known_groups=(pgid,))

    def _leave_cell(self) -> None:
        """Leave the cell, ending what it still holds and removing it (so it does not outlive this
        process when the parent that would remove it was killed); where that move is refused, end
        what it holds with a new cell, which the parent removes."""
        if not _held_off(self.cell.leave, self.cells) and self.cell.others():
            self._renew_cell()

    def _renew_cell(self) -> int | None:
        """Move to a new cell and end the old one with everything in it: how many were still running
        then (0: all ended), or None (staying in the old one) if no new cell can be had."""
        fresh = _entered_cell(self.cells)
        if fresh is None:
            return None
        old, self.cell = self.cell, fresh
        still = _held_off(old.end)
        old.remove()
        return still

    def _wait_with_timeout(self, pid: int, deadline_ns: int):
        """Wait for ``pid`` until ``deadline_ns``; kill its group if it is still running then.

        Returns ``(status, rusage, end_ns)``. A timed-out sample's ``end_ns`` is
        the moment the deadline was acted on (wall time = how long it was let run).
        """
        try:
            pidfd = _pidfd_open(pid)
        except (AttributeError, OSError):
            return self._wait_with_timer(pid, deadline_ns)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while True:
                left_ns = deadline_ns - time.monotonic_ns()
                if left_ns <= 0 or poller.poll(-(-left_ns // 1_000_000)):
                    break
        finally:
            os.close(pidfd)
        reaped_pid, wstatus, usage = os.wait4(pid, os.WNOHANG)
        end = time.monotonic_ns()
        if reaped_pid == pid:
            return os.waitstatus_to_exitcode(wstatus), usage, end
        _, usage = leftovers.kill_group(pid, pid, self.kill_grace_s)
        return STATUS_TIMEOUT, usage, end

    def _wait_with_timer(self, pid: int, deadline_ns: int):
        """The timeout path without pidfd: a timer thread kills the group at the deadline."""
        lock = threading.Lock()
        state = {"done": False, "fired_ns": 0}

        def expire():
            with lock:
                if state["done"]:
                    return
                state["fired_ns"] = time.monotonic_ns()
                leftovers.signal_group(pid, signal.SIGTERM)
            if not leftovers.wait_for_exit(pid, self.kill_grace_s, reap=False):
                with lock:
                    if not state["done"]:
                        leftovers.signal_group(pid, signal.SIGKILL)

        timer = threading.Timer(max(0, deadline_ns - time.monotonic_ns()) / 1e9, expire)
        timer.daemon = True
        timer.start()
        try:
            _, wstatus, usage = os.wait4(pid, 0)
            end = time.monotonic_ns()
        finally:
            with lock:
                state["done"] = True
            timer.cancel()
        if state["fired_ns"]:
            return STATUS_TIMEOUT, usage, state["fired_ns"]
        return os.waitstatus_to_exitcode(wstatus), usage, end

    def _kill_unrecorded_children(self) -> None:
        """Kill and reap each child of ours that leads its own process group (see ``run``)."""
        for pid in leftovers.own_group_leading_children():
            self._kill_after_interrupt(pid)

    def _kill_after_interrupt(self, pid: int) -> None:
        """Kill and reap the command's group with SIGINT held off, so a second Ctrl-C cannot orphan it;
        then end everything else it started."""
        _held_off(leftovers.kill_group, pid, pid, self.kill_grace_s)
        if self.cell is not None and self.cell.others() and self._renew_cell() is not None:
            if self.adopts_orphans and leftovers.has_children():
                _held_off(self._end_descendants, pid)
            return
        if leftovers.group_exists(pid):
            _held_off(leftovers.kill_group, pid, None, self.kill_grace_s)
        if self.adopts_orphans:
            _held_off(self._end_descendants, pid)


# -- helpers (module level: no state of their own) ------------------------------


def _held_off(function, *args):
    """Call ``function(*args)`` with SIGINT, SIGTERM and SIGHUP blocked; one arriving meanwhile acts
    after."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_OFF)
    try:
        return function(*args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _entered_cell(base: str) -> Cell | None:
    """A new cell below ``base`` with this process in it; None if one cannot be made or entered."""
    try:
        cell = Cell.create(base)
    except OSError:
        return None
    try:
        cell.enter()
    except OSError:
        cell.remove()
        return None
    return cell


def _execution(start: int, end: int, status: int, usage, leftovers: int, escaped: int = 0) -> Execution:
    """Build the sample record; rusage times are whole microseconds, kept exact."""
    return Execution(
        wall_ns=end - start,
        start_ns=start,
        status=status,
        user_ns=round(usage.ru_utime * 1_000_000) * 1000 if usage else 0,
        sys_ns=round(usage.ru_stime * 1_000_000) * 1000 if usage else 0,
        max_rss_kib=usage.ru_maxrss if usage else 0,
        voluntary_cs=usage.ru_nvcsw if usage else 0,
        involuntary_cs=usage.ru_nivcsw if usage else 0,
        leftover_processes=leftovers,
        escaped_processes=escaped,
    )


def open_output(output: OutputPolicy) -> int | None:
    """A close-on-exec descriptor for the commands' stdout and stderr, as ``output`` says (None:
    inherit ours); a file is truncated here, once, and appended to by every sample. A file passes
    the output guard (``outputs.open_stream``: no journal, no link another user planted)."""
    if output.mode == "inherit":
        return None
    if output.mode == "null":
        return os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    if output.mode != "file" or not output.path:
        raise UsageError(
            f"`output` must be 'null', 'inherit' or a file path, got {output.mode!r} {output.path!r}"
        )
    try:
        return open_stream(output.path, truncate=True)
    except OSError as exc:
        raise UsageError(
            f"cannot open output file {output.path!r}: {exc.strerror}; "
            "choose a writable path or use --output null"
        ) from None


def not_startable(command: Command, exc: OSError) -> CommandNotFound:
    """Say why the program could not be started, and what to do about it."""
    program = command.argv[0]
    if exc.errno == errno.ENOENT and os.path.exists(program):
        # parse_command found the program, and it is still there: what is missing is
        # what the kernel needs to start it.
        why = "its #! interpreter (first line) or dynamic loader was not found" + _shebang_hint(program)
    elif exc.errno == errno.ENOENT:
        why = "no such file (was it deleted?)"
    elif exc.errno == errno.EACCES:
        why = "permission denied: not executable (chmod +x it?)"
    elif exc.errno == errno.ENOEXEC:
        why = "not a binary and no #! line; add one or use --shell"
    else:
        why = exc.strerror or str(exc)
    return CommandNotFound(f"cannot run {program!r} for command {command.text!r}: {why}")


def _shebang_hint(program: str) -> str:
    """``"; the first line names '/bin/interp'"`` for a ``#!`` script, else ``""`` (a binary, unreadable)."""
    try:
        with open(program, "rb") as f:
            first = f.readline(256)
    except OSError:
        return ""
    if not first.startswith(b"#!"):
        return ""
    words = first[2:].split()
    if not words:
        return ""
    return f"; the first line names {os.fsdecode(words[0])!r}"


def _inheritable_descriptors() -> list[int]:
    """Our descriptors beyond 0-2 that a child would inherit (not close-on-exec), from
    ``/proc/self/fd`` or ``/dev/fd``; empty where neither lists them."""
    for directory in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        found = []
        for name in names:
            fd = int(name)
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
                if fd > 2 and os.get_inheritable(fd):
                    found.append(fd)
        return sorted(found)
    return []
