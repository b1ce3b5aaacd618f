"""Our cgroup's CPU controller: the quota in CPUs and how often it throttled us."""

from __future__ import annotations

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
