"""What the machine is doing right now: two /proc snapshots a short window apart.

Of the busiest other processes, metadata stored with a result keeps only each
one's name and CPU share (:func:`stored_processes`): a result is shared (in
pull-request comments, CI artifacts), while the PIDs and command lines of
unrelated processes say what else the user runs and are of use only to decide,
right now, what to pause. So they are read only for the doctor's live view of
this machine (``live=True``), which names what to pause by PID.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from pairbench.environment._read import glob_sorted, int_or_none, key_values, read_text
from pairbench.environment.cgroup import cpu_cgroup, throttle_counts

ACTIVITY_WINDOW_S = 0.1  # default window of the "right now" snapshots (10 ticks at USER_HZ 100)
TOP_PROCESSES = 5
STORED_PROCESS_KEYS = ("name", "cpu_percent")  # what a result keeps of a busy process
MAX_ANCESTORS = 64  # a parent chain longer than this is a malformed tree, not a real one


def _cpu_times(root: Path) -> tuple[list[int], int] | None:
    """The aggregate "cpu" line of /proc/stat (user ... steal) and the number of cpuN lines."""
    text = read_text(root, "proc/stat")
    if not text:
        return None
    lines = text.splitlines()
    first = lines[0].split()
    if not first or first[0] != "cpu":
        return None
    try:
        fields = [int(v) for v in first[1:9]]
    except ValueError:
        return None
    ncpu = sum(1 for line in lines if re.match(r"cpu\d+ ", line))
    return fields + [0] * (8 - len(fields)), max(ncpu, 1)


def _process_ticks(root: Path, exclude: set[int]) -> dict[int, tuple[str, int, int]]:
    """pid -> (command name, user + system clock ticks, parent pid) of every process in /proc."""
    ticks = {}
    for entry in glob_sorted(root / "proc", "[0-9]*"):
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        text = read_text(root, f"proc/{entry.name}/stat")
        if not text or ")" not in text:
            continue
        name = text[text.find("(") + 1:text.rfind(")")]
        fields = text[text.rfind(")") + 2:].split()
        try:
            ticks[int(entry.name)] = (name, int(fields[11]) + int(fields[12]), int(fields[1]))
        except (IndexError, ValueError):
            continue
    return ticks


def _swap_pages(root: Path) -> tuple[int, int] | None:
    values = key_values(read_text(root, "proc/vmstat"), sep=" ")
    swap_in, swap_out = int_or_none(values.get("pswpin")), int_or_none(values.get("pswpout"))
    return (swap_in, swap_out) if swap_in is not None and swap_out is not None else None


def ancestor_pids(root: Path) -> list[int] | None:
    """Our parent, its parent, ... up to init: ``PPid`` of proc/self/status, then of each parent.

    These run pairbench (its shell, terminal, ``make``, a test runner): the
    doctor must never suggest pausing them. None when proc/self/status has no
    readable ``PPid``; the chain stops at an unreadable parent.
    """
    chain: list[int] = []
    parent = _parent_pid(root, "self")
    if parent is None:
        return None
    while parent and parent not in chain and len(chain) < MAX_ANCESTORS:
        chain.append(parent)
        parent = _parent_pid(root, str(parent))
    return chain


def _parent_pid(root: Path, pid: str) -> int | None:
    return int_or_none(key_values(read_text(root, f"proc/{pid}/status")).get("PPid"))


def _own_ticks(root: Path, pids: set[int]) -> int:
    """User + system clock ticks of the processes ``pids`` (all their threads) and of the children
    they have waited for (``cutime``, ``cstime``); 0 for one unread."""
    total = 0
    for pid in pids:
        text = read_text(root, f"proc/{pid}/stat") or ""
        fields = text[text.rfind(")") + 2:].split() if ")" in text else []
        try:
            total += sum(int(value) for value in fields[11:15]) if len(fields) >= 13 else 0
        except ValueError:
            continue
    return total


def _snapshot(root: Path, exclude: set[int], cgroup: str | None) -> dict:
    """One reading of every counter ``activity`` differences. The children of the processes in
    ``exclude`` (pairbench's spawner, which runs the commands and waits for them) are left out as
    those are: a window read after samples were taken does not count them as the machine's load."""
    processes = _process_ticks(root, exclude)
    children = {pid for pid, (_, _, parent) in processes.items() if parent in exclude}
    return {"cpu": _cpu_times(root), "processes": {pid: p for pid, p in processes.items() if pid not in children},
            "excluded_ticks": _own_ticks(root, exclude | children),
            "swap": _swap_pages(root), "throttle": throttle_counts(root, cgroup)}


def activity(root: Path, window_s: float = ACTIVITY_WINDOW_S, *,
             sleep: Callable[[float], None] = time.sleep, exclude: set[int] | None = None,
             live: bool = False) -> dict:
    """What the machine is doing right now: two snapshots ``window_s`` apart.

    CPU use comes from /proc/stat jiffies (``busy_cpus``: CPUs' worth of time
    spent running tasks other than the processes in ``exclude``, their children
    and what those waited for, i.e. neither idle, iowait, stolen by the
    hypervisor nor ours: pairbench reads the machine while it loads its own
    code, and a measuring command until its first samples are taken (the
    spawner and the commands it ran are its children);
    ``steal_percent`` and ``iowait_percent`` of all CPU time);
    per-process CPU from /proc/[pid]/stat user + system ticks, as a percentage
    of one CPU over the same window; swapping from /proc/vmstat pswpin/pswpout;
    quota throttling from our cgroup's cpu.stat (``cgroup_nr_periods`` quota
    periods passed, ``cgroup_nr_throttled`` of them throttled, in the window).
    Processes in ``exclude`` (by default this process) and their children are left out;
    ``ancestor_pids`` lists our parent processes. Each busy process is its name
    and CPU share; with ``live`` (the doctor's view of this machine now) also its
    PID, parent PID and command line. Anything unreadable, or a window in which
    no jiffy passed, is None. Costs ``window_s``.
    """
    return ActivityWindow(root, exclude).finish(window_s, sleep=sleep, live=live)


class ActivityWindow:
    """:func:`activity` in two halves: the first snapshot when made, the second at :meth:`finish`,
    so that other reading can fill the window (``collect_environment`` reads the rest of the
    machine meanwhile)."""

    @classmethod
    def here(cls) -> ActivityWindow:
        """A window on this machine, leaving this process out."""
        return cls(Path("/"))

    def __init__(self, root: Path, exclude: set[int] | None = None):
        self.root = root
        self.exclude = {os.getpid()} if exclude is None else exclude
        self.cgroup = (cpu_cgroup(root) or (None,))[0]
        self.started = time.monotonic()
        self.before = _snapshot(root, self.exclude, self.cgroup)

    def elapsed_s(self) -> float:
        """Seconds since the first snapshot."""
        return time.monotonic() - self.started

    def finish(self, window_s: float = ACTIVITY_WINDOW_S, *, sleep: Callable[[float], None] = time.sleep,
               live: bool = False) -> dict:
        """The activity from the first snapshot to a second one ``window_s`` after it (``sleep`` waits
        what is left of the window; called even when nothing is left, as tests' seam)."""
        sleep(max(window_s - (time.monotonic() - self.started), 0.0))
        after = _snapshot(self.root, self.exclude, self.cgroup)
        elapsed = time.monotonic() - self.started
        # opened long before (while pairbench loaded), the window is as long as it was
        length = window_s if elapsed < 1.5 * window_s else round(elapsed, 3)
        return _activity_between(self.root, self.before, after, length, live)


def _activity_between(root: Path, before: dict, after: dict, window_s: float, live: bool) -> dict:
    """What changed between two snapshots (see :func:`activity`)."""
    periods, throttled = (_counter_delta(b, a)
                          for b, a in zip(before["throttle"], after["throttle"], strict=True))
    result: dict = {"window_s": window_s, "cpu": None, "busiest_processes": None,
                    "swap_in_pages": None, "swap_out_pages": None,
                    "cgroup_nr_periods": periods, "cgroup_nr_throttled": throttled,
                    "ancestor_pids": ancestor_pids(root)}
    if before["swap"] and after["swap"]:
        result["swap_in_pages"] = after["swap"][0] - before["swap"][0]
        result["swap_out_pages"] = after["swap"][1] - before["swap"][1]
    use = _cpu_use(before["cpu"], after["cpu"], after["excluded_ticks"] - before["excluded_ticks"])
    if use is not None:
        result["cpu"], per_cpu_ticks = use
        busiest = _busiest(root, before["processes"], after["processes"], per_cpu_ticks, live=live)
        result["busiest_processes"] = busiest if live else stored_processes(busiest)
    return result


def _counter_delta(before: int | None, after: int | None) -> int | None:
    """How much a counter rose; None when unread at either end or when it went back (reset)."""
    if before is None or after is None or after < before:
        return None
    return after - before


def _cpu_use(before, after, excluded_ticks: int = 0) -> tuple[dict, float] | None:
    """The CPU figures between two /proc/stat readings and the ticks one CPU had; None if none passed.
    ``excluded_ticks``, the excluded processes' CPU time in the window, is not counted as busy."""
    if not before or not after:
        return None
    delta = [b - a for a, b in zip(before[0], after[0], strict=True)]
    total, ncpu = sum(delta), after[1]
    if total <= 0:
        return None
    idle, iowait, steal = delta[3], delta[4], delta[7]
    busy = max(total - idle - iowait - steal - max(excluded_ticks, 0), 0)
    cpu = {
        "busy_cpus": round(busy / total * ncpu, 3),
        "steal_percent": round(100 * steal / total, 2),
        "iowait_percent": round(100 * iowait / total, 2),
    }
    return cpu, total / ncpu


def _busiest(root: Path, before: dict, after: dict, per_cpu_ticks: float, *, live: bool) -> list[dict]:
    """The ``TOP_PROCESSES`` processes that used the most CPU between the snapshots; with ``live``
    each with its command line."""
    busy = []
    for pid, (name, ticks, ppid) in after.items():
        if pid in before and before[pid][0] == name and ticks > before[pid][1]:
            percent = 100 * (ticks - before[pid][1]) / per_cpu_ticks
            busy.append({"pid": pid, "name": name, "ppid": ppid, "cpu_percent": round(percent, 1)})
    busy.sort(key=lambda p: (-p["cpu_percent"], p["pid"]))
    for process in busy[:TOP_PROCESSES] if live else ():
        text = read_text(root, f"proc/{process['pid']}/cmdline") or ""
        process["command"] = " ".join(text.replace("\0", " ").split())[:80] or process["name"]
    return busy[:TOP_PROCESSES]


def stored_processes(busiest):
    """Busy processes as a result keeps them: each one's name and CPU share (``STORED_PROCESS_KEYS``).

    Also applied to metadata read from a file, so the PIDs and command lines an
    earlier pairbench stored are not shown again. Anything but a list of
    objects is returned as it is (the checks call it malformed).
    """
    if not isinstance(busiest, list):
        return busiest
    return [{key: p[key] for key in STORED_PROCESS_KEYS if key in p} if isinstance(p, dict) else p
            for p in busiest]


def without_process_details(environment: Mapping) -> Mapping:
    """``environment`` (machine metadata read from a file) with its busy processes as a result keeps
    them (:func:`stored_processes`); unchanged when it has none."""
    activity_ = environment.get("activity")
    if not isinstance(activity_, Mapping) or "busiest_processes" not in activity_:
        return environment
    kept = {**activity_, "busiest_processes": stored_processes(activity_["busiest_processes"])}
    return {**environment, "activity": kept}
