"""What a command leaves running, found and killed: its process group, and every descendant.

A command runs in its own process group, so what it backgrounded is found by
that group (:func:`count_live_members`) and killed with it (:func:`kill_group`:
SIGTERM, a grace period, SIGKILL). A daemon that calls ``setsid`` leaves the
group; in a process that is a child subreaper (:func:`become_subreaper`) and
starts nothing but commands, it is found anyway, as a live descendant
(:func:`descendants`), once its parent has exited it is ours, and
:func:`end_descendants` ends it: every descendant is stopped (SIGSTOP) and the
scan repeated until it finds no new one, then all are killed (SIGKILL, then
SIGCONT), so a process that forks and exits every few milliseconds cannot stay
ahead of the killing. Where the machine gives a cgroup, ``measure.containment``
ends what a cell holds first, and this scan finds nothing. Everything here reads
``/proc`` (Linux) and degrades without it: a surviving group then counts as one
process.

Module level, no state: the executor (``measure.posix``) calls these. Like it,
this module must import nothing beyond the standard library.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from pairbench.measure.prctl import PR_SET_CHILD_SUBREAPER, prctl

_POLL_STEP_S = (0.001, 0.002, 0.005, 0.01, 0.02)  # back-off while waiting on a dying group
FREEZE_BOUND_S = 2.0
"""How long :func:`end_descendants` keeps stopping descendants that are new since its last scan before
it kills what it stopped: far longer than a scan (about a millisecond), so only a process that keeps
leaving its session faster than the scan, for that long, can stay ahead."""
END_BOUND_S = 5.0
"""How long :func:`end_descendants` goes on stopping and killing before it says that some still run."""
END_WAIT_S = 5.0
"""How long killed descendants may take to be gone, at most, in one cycle."""


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the process group; False if the group no longer exists."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its credentials (setuid); it exists but is not ours
    return True


def group_exists(pgid: int) -> bool:
    return signal_group(pgid, 0)


def wait_for_exit(pid: int, timeout_s: float, *, reap: bool):
    """Poll until child ``pid`` exits, at most ``timeout_s``.

    With ``reap`` the child is reaped and ``(status, rusage)`` returned, else
    ``True``; ``None``/``False`` if it is still running at the end.
    """
    deadline = time.monotonic() + timeout_s
    for step in _backoff():
        if reap:
            try:
                reaped, wstatus, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:  # already reaped elsewhere
                return 0, None
            if reaped == pid:
                return os.waitstatus_to_exitcode(wstatus), usage
        elif _exited(pid):
            return True
        if time.monotonic() >= deadline:
            return None if reap else False
        time.sleep(step)
    return None  # not reached: _backoff is endless


def _exited(pid: int) -> bool:
    """True if our child ``pid`` has exited (zombie or reaped), without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _backoff():
    yield from _POLL_STEP_S
    while True:
        yield _POLL_STEP_S[-1]


def kill_group(pgid: int, leader: int | None, grace_s: float):
    """Terminate process group ``pgid``: SIGTERM, up to ``grace_s``, then SIGKILL.

    If ``leader`` (our child) is given it is reaped and ``(status, rusage)`` is
    returned; otherwise the group's remaining members (orphans, not our
    children) are waited for until none is alive, and ``None`` is returned.
    """
    signal_group(pgid, signal.SIGTERM)
    if leader is not None:
        result = wait_for_exit(leader, grace_s, reap=True)
        if result is None:
            signal_group(pgid, signal.SIGKILL)
            result = wait_for_exit(leader, float("inf"), reap=True)
        return result
    if not _wait_for_group(pgid, grace_s):
        signal_group(pgid, signal.SIGKILL)
        _wait_for_group(pgid, max(grace_s, 1.0))
    return None


def _wait_for_group(pgid: int, timeout_s: float) -> bool:
    """Wait until no live member of ``pgid`` is left; reap any that are our own children."""
    deadline = time.monotonic() + timeout_s
    for step in _backoff():
        _reap_group_children(pgid)
        if not group_exists(pgid) or count_live_members(pgid) == 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return False  # not reached


def _reap_group_children(pgid: int) -> None:
    """Reap exited children of ours in group ``pgid`` (orphans re-parented to us, if we are a subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def own_group_leading_children() -> list[int]:
    """Our children that lead their own process group, from ``/proc`` (empty without it).

    Every command this executor starts is such a child until it is reaped, so
    these are the commands started but not yet waited for.
    """
    me = os.getpid()
    found = []
    for pid, stat in _proc_stats():
        ppid, pgrp = int(stat[1]), int(stat[2])
        if ppid == me and pgrp == pid:
            found.append(pid)
    return found


def _proc_stats():
    """Yield ``(pid, fields)`` for every process, fields of /proc/PID/stat after the comm."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited meanwhile
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        yield int(name), stat[stat.rfind(b")") + 2 :].split()


def count_live_members(pgid: int) -> int:
    """Processes of group ``pgid`` that are alive (not zombies), from ``/proc``.

    Without ``/proc`` the group is known to exist, so it counts as one.
    """
    if not os.path.isdir("/proc/self"):
        return 1
    return sum(
        1 for _, fields in _proc_stats() if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X")
    )


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``):
    a daemon that leaves its process group with ``setsid`` and loses its parent becomes our child
    instead of init's. True if it worked. Call it only in a process that starts nothing but the
    commands (the spawner): every such descendant is then taken for a command's leftover."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def has_children() -> bool:
    """True if this process has a child, alive or not yet reaped (without reaping it)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def reap_exited_children() -> None:
    """Reap every child of ours that has exited (only where all our children are commands')."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def live_descendants(ancestor: int) -> list[int]:
    """The live (not zombie) descendants of ``ancestor``, from ``/proc`` (empty without it)."""
    return [found.pid for found in descendants(ancestor)]


class Descendant:
    """A live descendant as the scan read it: its pid, process group and session."""

    __slots__ = ("pid", "pgid", "sid")

    def __init__(self, pid: int, pgid: int, sid: int):
        self.pid, self.pgid, self.sid = pid, pgid, sid


def descendants(ancestor: int) -> list[Descendant]:
    """The live descendants of ``ancestor``, walked down the kernel's lists of each process's children
    (``/proc/PID/task/TID/children``: a small tree costs a few reads, not a scan of every process),
    else from a scan of ``/proc``; empty without ``/proc``."""
    if not os.path.exists(f"/proc/{ancestor}/task/{ancestor}/children"):
        return _scanned_descendants(ancestor)
    found, frontier, seen = [], [ancestor], {ancestor}
    while frontier:
        pid = frontier.pop()
        for child in _children_of(pid):
            if child in seen:
                continue
            seen.add(child)
            frontier.append(child)
            fields = _stat_fields(child)
            if fields is not None and fields[0] not in (b"Z", b"X"):
                found.append(Descendant(child, int(fields[2]), int(fields[3])))
    return found


def _children_of(pid: int) -> list[int]:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children = []
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                children += [int(word) for word in f.read().split()]
        except (OSError, ValueError):
            continue
    return children


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the comm (state, ppid, pgrp, session...), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields if len(fields) >= 4 else None


def _scanned_descendants(ancestor: int) -> list[Descendant]:
    children: dict[int, list[int]] = {}
    live = {}
    for pid, fields in _proc_stats():
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] not in (b"Z", b"X") and len(fields) >= 4:
            live[pid] = Descendant(pid, int(fields[2]), int(fields[3]))
    found, stack = [], list(children.get(ancestor, ()))
    while stack:
        pid = stack.pop()
        if pid in live:
            found.append(live[pid])
        stack.extend(children.get(pid, ()))
    return found


def end_descendants(known_groups: tuple[int, ...] = ()) -> int:
    """End every descendant of this process (a child subreaper), hopper-proof: stop each (SIGSTOP)
    and, where that is safe, its whole process group, then walk again, until a walk finds no new one
    (or ``FREEZE_BOUND_S`` passed); then SIGKILL and SIGCONT all that were stopped and reap them; and
    again while this process has a live child, for ``END_BOUND_S`` at most. Returns how many
    descendants were still alive at the end (0: all ended).

    A stopped process cannot fork, and a signal to a process group reaches every member at once,
    forks in progress included, so a process that forks and exits in a loop is caught by its group.
    A group is signalled when it is one of ``known_groups`` (the program's own) or lies in a session a
    descendant made (not ours, not our parent's): every member of such a group descends from us.
    A walk can miss a process that its parent's exit hands to us while the walk reads; whether we
    have a live child cannot miss one (every live descendant of a subreaper has a live ancestor
    among its children), so that is what ends the loop."""
    me = os.getpid()
    sessions = {_session(0), _session(os.getppid())}
    deadline = time.monotonic() + END_BOUND_S
    while True:
        reap_exited_children()
        if not has_children():
            return 0
        stopped, groups = _stop_all(me, set(known_groups), sessions)
        for signum in (signal.SIGKILL, signal.SIGCONT):
            for group in groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signum)
            for pid in stopped:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)
        _wait_gone(stopped, END_WAIT_S)
        if time.monotonic() >= deadline:
            reap_exited_children()
            return max(len(descendants(me)), int(has_children()))


def _stop_all(me: int, known: set[int], sessions: set[int]) -> tuple[list[int], set[int]]:
    """Stop every live descendant (and each safe group), rescanning until nothing new appears; the
    pids and groups stopped."""
    stopped: dict[int, None] = {}
    groups: set[int] = set()
    deadline = time.monotonic() + FREEZE_BOUND_S
    while True:
        reap_exited_children()
        new = [d for d in descendants(me) if d.pid not in stopped]
        if not new:
            return list(stopped), groups
        for found in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(found.pid, signal.SIGSTOP)
            stopped[found.pid] = None
            if found.pgid > 1 and found.pgid not in groups and (found.pgid in known or found.sid not in sessions):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(found.pgid, signal.SIGSTOP)
                groups.add(found.pgid)
        if time.monotonic() >= deadline:
            return list(stopped), groups


def _session(pid: int) -> int:
    try:
        return os.getsid(pid)
    except OSError:
        return -1


def _wait_gone(pids: list[int], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for step in _backoff():
        reap_exited_children()
        pids = [pid for pid in pids if not _gone(pid)]
        if not pids or time.monotonic() >= deadline:
            return
        time.sleep(step)


def _gone(pid: int) -> bool:
    """True if ``pid`` no longer runs (no such process, or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :][:1] in (b"Z", b"X")
