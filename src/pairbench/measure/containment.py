"""Containment: what a measured command, a worker or a build starts is ended with it, and none can
outrun the ending.

Where the machine gives pairbench a cgroup v2 directory it may create cgroups in (its own cgroup,
or ``$PAIRBENCH_CGROUP``), each program runs in a cgroup of its own, a **cell**, and is ended with
``cgroup.kill`` (Linux 5.14; before it, ``cgroup.freeze``, then SIGKILL to every member, then a
thaw): the kernel kills every process of the cell at once, and a process forking as it is killed
cannot start one outside it. A process leaves a cell only by writing itself into another cgroup,
which needs the rights of the cgroup tree's owner (root, as a rule). Where there is no such
directory (no cgroup v2, or not writable by this user), the keepers and spawners fall back to their
scan of their descendants (``measure.leftovers.end_descendants``: stop, rescan until nothing new,
kill), which a process that keeps changing its session can outrun; ``pairbench doctor`` says which
one this machine gives.

Who uses cells: a keeper (``measure.keeper``, ``spawner.c --keep``) starts its program in a new cell
(below the directory it is given) and ends the cell when the program ends or is stopped; a spawner
(``measure.python_spawner``, ``spawner.c``) lives in a cell with the command it runs, counts what is
left there besides itself after each command, and when something is, moves itself to a new cell and
ends the old one. So a command is spawned as before (the timed window does not change), and a
command that left nothing costs what it costs without a cell: one system call says the spawner (a
subreaper) has no child. Before it exits, a spawner moves back to the directory and removes its
cell (``Cell.leave``): its parent would, but not a parent killed with ``kill -9``. A cell is named
``pairbench-PID-N`` (PID: the keeper's or spawner's); one left behind by a process killed with
``kill -9`` is removed by the next pairbench that finds it empty.

Standard library only: the keepers and the spawners import this.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time

from pairbench.frozen import frozen
from pairbench.measure.leftovers import reap_exited_children

CGROUP_VARIABLE = "PAIRBENCH_CGROUP"
"""Names the cgroup v2 directory pairbench uses (``none``: use none, contain by the scan)."""
CELL_PREFIX = "pairbench-"
END_BOUND_S = 5.0
"""How long a cell's processes may take to be gone after they were killed, at most."""
_CELL = re.compile(r"pairbench-(\d+)-\d+")
_POLL_S = (0.0005, 0.001, 0.002, 0.005, 0.01)


@frozen
class Containment:
    """How this machine contains what pairbench starts: ``"cgroup"`` (cells below ``directory``) or
    ``"scan"`` (the descendants' scan; ``reason`` says why not a cgroup)."""

    method: str
    directory: str | None = None
    reason: str = ""

    def option(self) -> list[str]:
        """The keepers' and the native spawner's command-line option for it."""
        return ["--contain", self.directory] if self.directory else []


_found: Containment | None = None


def containment(environ=None) -> Containment:
    """This machine's containment for this process (found once: a probe cell is made and removed)."""
    global _found
    if _found is None or environ is not None:
        found = discover(os.environ if environ is None else environ)
        if environ is not None:
            return found
        _found = found
    return _found


def discover(environ) -> Containment:
    """Find the cgroup directory (``$PAIRBENCH_CGROUP``, else our own cgroup v2) and check that a
    cell can be made there and ended; sweep cells left behind."""
    named = (environ.get(CGROUP_VARIABLE) or "").strip()
    if named.lower() == "none":
        return Containment("scan", reason=f"turned off ({CGROUP_VARIABLE}=none)")
    directory, why = (named, "") if named else own_cgroup()
    if directory is None:
        return Containment("scan", reason=why)
    problem = _probe(directory)
    if problem:
        return Containment("scan", reason=problem)
    sweep(directory)
    return Containment("cgroup", directory)


def own_cgroup(proc: str = "/proc") -> tuple[str | None, str]:
    """Our cgroup v2 directory (the ``0::`` line of /proc/self/cgroup, under the ``cgroup2`` mount),
    or None and why not."""
    mount = None
    with contextlib.suppress(OSError):
        for line in _read(f"{proc}/self/mountinfo").splitlines():
            fields, _, tail = line.partition(" - ")
            words = fields.split()
            if tail.split()[:1] == ["cgroup2"] and len(words) >= 5:
                mount = (_unescape(words[4]), _unescape(words[3]))
                break
    if mount is None:
        return None, "no cgroup v2 hierarchy is mounted"
    try:
        lines = _read(f"{proc}/self/cgroup").splitlines()
    except OSError as exc:
        return None, f"cannot read {proc}/self/cgroup: {exc.strerror or exc}"
    own = next((line[3:].rstrip("/") for line in lines if line.startswith("0::")), None)
    if own is None:
        return None, "this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)"
    base = mount[1].rstrip("/")
    if base and (own == base or own.startswith(base + "/")):
        own = own[len(base):]
    return mount[0].rstrip("/") + own, ""


def _probe(directory: str) -> str:
    """Why cells cannot be used below ``directory`` ("" when they can)."""
    if not os.path.isfile(os.path.join(directory, "cgroup.procs")):
        return f"{directory} is not a cgroup v2 directory"
    if not os.access(directory, os.W_OK) or not os.access(os.path.join(directory, "cgroup.procs"), os.W_OK):
        return f"this user may not create cgroups in {directory} or move processes there"
    try:
        cell = Cell.create(directory)
    except OSError as exc:
        return f"cannot create a cgroup in {directory}: {exc.strerror or exc}"
    try:
        if not cell.can_end():
            return f"{cell.path} has neither cgroup.kill nor cgroup.freeze (Linux 5.2 or later has them)"
    finally:
        cell.remove()
    return ""


class Cell:
    """One cgroup of pairbench's (``path``): what runs in it is ended together."""

    _serial = 0

    def __init__(self, path: str):
        self.path = path

    @classmethod
    def create(cls, base: str) -> Cell:
        """A new, empty cell below ``base`` named for this process; ``OSError`` if it cannot be made."""
        while True:
            cls._serial += 1
            path = os.path.join(base, f"{CELL_PREFIX}{os.getpid()}-{cls._serial}")
            try:
                os.mkdir(path, 0o755)
            except FileExistsError:
                continue
            # No pressure-stall accounting of its own (Linux 6.1): the kernel would account each sleep
            # and wake of the processes in it at one more level than the spawner's own cgroup.
            _try_write(os.path.join(path, "cgroup.pressure"), "0")
            return cls(path)

    def can_end(self) -> bool:
        return any(os.path.exists(os.path.join(self.path, name)) for name in ("cgroup.kill", "cgroup.freeze"))

    def enter(self, pid: int = 0) -> None:
        """Move process ``pid`` (0: this one) into the cell; ``OSError`` if that is refused."""
        _write(os.path.join(self.path, "cgroup.procs"), str(pid))

    def leave(self, base: str) -> bool:
        """This process (in the cell) moves back to ``base``, the directory cells are made in; then
        what is still in the cell is ended and the cell removed. Whoever started this process removes
        its cell once it has exited, but one killed with SIGKILL cannot, and the cell would outlive
        it. False, with nothing done, if the move is refused (``base`` may hold no processes)."""
        try:
            _write(os.path.join(base, "cgroup.procs"), "0")
        except OSError:
            return False
        self.end()
        self.remove()
        return True

    def members(self) -> list[int]:
        """The processes in the cell and the cells below it (empty if it is gone): one read of its
        ``cgroup.procs`` and one of ``cgroup.stat``, as a rule (the cells below are walked only when
        there are any: a pairbench a command ran made them)."""
        found = _procs(self.path)
        if _descendant_cgroups(self.path):
            for directory, _, _ in os.walk(self.path):
                if directory != self.path:
                    found += _procs(directory)
        return found

    def others(self) -> int:
        """How many processes are in the cell besides this one."""
        me = os.getpid()
        return sum(1 for pid in self.members() if pid != me)

    def end(self) -> int:
        """Kill every process in the cell (not this one: call it from outside) and wait until none is
        left, at most ``END_BOUND_S``; how many were still there then (0: the cell is empty)."""
        if not self.populated():
            return 0
        if not _try_write(os.path.join(self.path, "cgroup.kill"), "1"):
            self._frozen_kill()
        deadline = time.monotonic() + END_BOUND_S
        for step in _backoff():
            reap_exited_children()
            if not self.populated():
                return 0
            if time.monotonic() >= deadline:
                return len(self.members()) or 1
            time.sleep(step)
        return 0  # not reached

    def _frozen_kill(self) -> None:
        """Without ``cgroup.kill``: freeze the cell, SIGKILL every member (a frozen process dies of it),
        thaw."""
        freeze = os.path.join(self.path, "cgroup.freeze")
        frozen = _try_write(freeze, "1")
        if frozen:
            deadline = time.monotonic() + END_BOUND_S
            while "frozen 1" not in self._events() and time.monotonic() < deadline:
                time.sleep(0.001)
        for _ in range(3):
            for pid in self.members():
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
        if frozen:
            _try_write(freeze, "0")

    def populated(self) -> bool:
        events = self._events()
        if events:
            return "populated 1" in events
        return bool(self.members())

    def _events(self) -> str:
        try:
            return _read(os.path.join(self.path, "cgroup.events"))
        except OSError:
            return ""

    def remove(self) -> bool:
        """Remove the cell and the cells below it (each must be empty); True if it is gone."""
        for directory, _, _ in os.walk(self.path, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        return not os.path.isdir(self.path)


def _procs(directory: str) -> list[int]:
    try:
        return [int(word) for word in _read(os.path.join(directory, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def _descendant_cgroups(directory: str) -> bool:
    """Whether cgroups lie below ``directory`` (``nr_descendants`` of its ``cgroup.stat``; True when
    that cannot be read: then they are looked for)."""
    try:
        for line in _read(os.path.join(directory, "cgroup.stat")).splitlines():
            if line.startswith("nr_descendants "):
                return line.split()[1] != "0"
    except (OSError, IndexError):
        pass
    return True


def sweep(base: str) -> None:
    """Remove the empty cells below ``base`` whose process has died (``kill -9`` of a keeper or a
    spawner leaves its cell behind)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        match = _CELL.fullmatch(name)
        if match and not _alive(int(match[1])):
            Cell(os.path.join(base, name)).remove()


def end_cells_of(base: str, pid: int) -> None:
    """End and remove every cell below ``base`` of process ``pid`` (a keeper or a spawner that was
    killed before it could end its own)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        match = _CELL.fullmatch(name)
        if match and int(match[1]) == pid:
            cell = Cell(os.path.join(base, name))
            cell.end()
            cell.remove()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _backoff():
    yield from _POLL_S
    while True:
        yield _POLL_S[-1]


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as file:
        return file.read()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _try_write(path: str, text: str) -> bool:
    try:
        _write(path, text)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EINVAL, errno.EBUSY, errno.ENOTSUP):
            raise
        return False
    return True


def _unescape(text: str) -> str:
    """A mountinfo field with its octal escapes (``\\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
