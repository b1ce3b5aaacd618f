"""Our cgroup's CPU controller (the quota in CPUs and how often it throttled us), and a cgroup v2
subtree delegated to pairbench for measuring each command's peak memory."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pairbench.environment._read import int_or_none, key_values, read_int, read_text


def cgroup_cpu(root: Path) -> dict | None:
    """Our cgroup's CPU quota in CPUs (None: unlimited) and how often it throttled us, or None.

    cgroup v2: ``cpu.max`` ("max 100000" or "150000 100000") and ``cpu.stat``
    (``nr_throttled``); v1: ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``. The
    path from /proc/self/cgroup is tried first, then the hierarchy's root (a
    container without a cgroup namespace sees its own cgroup there).
    ``nr_throttled`` counts the quota periods in which the cgroup was throttled
    since it was created; ``activity`` measures the count over its window.
    """
    found = cpu_cgroup(root)
    if found is None:
        return None
    base, cpus = found
    return {"quota_cpus": cpus, "nr_throttled": throttle_counts(root, base)[1]}


def cpu_cgroup(root: Path) -> tuple[str, float | None] | None:
    """The directory (below ``root``) of our cgroup's CPU controller and its quota in CPUs."""
    paths = {}
    for line in (read_text(root, "proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                paths[controller] = parts[2].rstrip("/")
    if "" in paths:
        for base in _candidates("sys/fs/cgroup", paths[""]):
            quota = read_text(root, f"{base}/cpu.max")
            if quota is not None:
                limit, _, period = quota.partition(" ")
                return base, None if limit == "max" else _ratio(limit, period)
    if "cpu" in paths:
        for base in _candidates("sys/fs/cgroup/cpu", paths["cpu"]):
            quota = read_int(root, f"{base}/cpu.cfs_quota_us")
            if quota is not None:
                period = read_int(root, f"{base}/cpu.cfs_period_us")
                return base, None if quota < 0 or not period else quota / period
    return None


def _candidates(hierarchy: str, path: str) -> list[str]:
    return [hierarchy + path, hierarchy] if path else [hierarchy]


def throttle_counts(root: Path, base: str | None) -> tuple[int | None, int | None]:
    """``nr_periods`` and ``nr_throttled`` of the cgroup's cpu.stat (None where unreadable)."""
    stat = key_values(read_text(root, f"{base}/cpu.stat"), sep=" ") if base else {}
    return int_or_none(stat.get("nr_periods")), int_or_none(stat.get("nr_throttled"))


def _ratio(numerator: str, denominator: str) -> float | None:
    try:
        return int(numerator) / int(denominator)
    except (ValueError, ZeroDivisionError):
        return None


def delegated_memory_cgroup(root: Path, named: str | None = None) -> tuple[str | None, str]:
    """A cgroup v2 directory under which each command can run in a child cgroup of its own whose
    ``memory.peak`` is the command's peak memory; ``(directory, "")``, or ``(None, why not)``.

    ``named`` (``$PAIRBENCH_CGROUP``) names such a directory, or is ``none``
    (off). Otherwise our own cgroup (``proc/self/cgroup``'s ``0::`` line, under
    the ``cgroup2`` mount of ``proc/self/mountinfo``) is taken if it enables
    the memory controller for its children (``memory`` in
    ``cgroup.subtree_control``) and we may create cgroups in it. cgroup v2
    allows that only in a cgroup without processes of its own (or the root),
    so a delegated subtree where pairbench runs in a leaf qualifies, the
    cgroup of a login shell does not. The spawner makes sure (a child cgroup
    that holds a process and has ``memory.peak``) before using it.
    """
    if named is not None and named.strip():
        if named.strip().lower() == "none":
            return None, "turned off (PAIRBENCH_CGROUP=none)"
        return _usable(Path(named), "", named)
    mount = _cgroup2_mount(root)
    if mount is None:
        return None, "no cgroup v2 hierarchy is mounted"
    own = _own_cgroup2_path(root, mount[1])
    if own is None:
        return None, "pairbench's cgroup v2 is unknown (no 0:: line in /proc/self/cgroup)"
    relative = mount[0].strip("/") + own
    return _usable(root, relative, "/" + relative)


def _usable(root: Path, relative: str, shown: str) -> tuple[str | None, str]:
    base = root / relative if relative else root
    controllers = (read_text(base, "cgroup.controllers") or "").split()
    if "memory" not in controllers:
        return None, (f"the cgroup v2 memory controller is not available in {shown} (cgroup.controllers: "
                      f"{' '.join(controllers) or 'none'})")
    if "memory" not in (read_text(base, "cgroup.subtree_control") or "").split():
        return None, (f"{shown} does not enable the memory controller for its child cgroups "
                      "(cgroup.subtree_control); delegate a cgroup to pairbench and name it with "
                      "PAIRBENCH_CGROUP")
    if not os.access(base, os.W_OK):
        return None, f"{shown} is not writable by this user"
    return str(base), ""


def _cgroup2_mount(root: Path) -> tuple[str, str] | None:
    """The mount point of the cgroup v2 hierarchy and the cgroup it shows at that point."""
    for line in (read_text(root, "proc/self/mountinfo") or "").splitlines():
        fields, _, tail = line.partition(" - ")
        words = fields.split()
        if tail.split()[:1] == ["cgroup2"] and len(words) >= 5:
            return _unescape(words[4]), _unescape(words[3])
    return None


def _own_cgroup2_path(root: Path, mount_root: str) -> str | None:
    """Our cgroup v2 path, relative to the mount (``/a/b``, or ``""`` for the mount's own cgroup)."""
    for line in (read_text(root, "proc/self/cgroup") or "").splitlines():
        if line.startswith("0::"):
            path = line[3:].rstrip("/")
            base = mount_root.rstrip("/")
            if base and (path == base or path.startswith(base + "/")):
                path = path[len(base):]
            return path
    return None


def _unescape(text: str) -> str:
    """A mountinfo field with its octal escapes (``\\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
