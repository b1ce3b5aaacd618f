"""Machine metadata stored with every result: what ran where, on which CPU, under what load.

Everything is read from ``/proc`` and ``/sys`` below a configurable ``root`` so that
tests can point it at a fixture tree. A value that cannot be read (containers,
non-Linux systems) is ``None``, never an error.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from importlib import metadata
from pathlib import Path

LIBRARIES = ("numpy", "scipy", "rich", "click")


def read_text(root: Path, relative: str) -> str | None:
    """The stripped content of ``root/relative``, or None when it cannot be read."""
    try:
        return (root / relative.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def cpu_model(root: Path) -> str | None:
    """The CPU model name from /proc/cpuinfo ("model name", or "Hardware"/"Processor" on ARM)."""
    text = read_text(root, "proc/cpuinfo")
    if not text:
        return platform.processor() or None
    for key in ("model name", "Hardware", "Processor", "cpu model"):
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key and value.strip():
                return value.strip()
    return None


def governors(root: Path) -> dict[str, int]:
    """How many CPUs use each cpufreq scaling governor ({"performance": 2})."""
    counts: dict[str, int] = {}
    cpu_dir = root / "sys/devices/system/cpu"
    for policy in sorted(cpu_dir.glob("cpu[0-9]*/cpufreq/scaling_governor")):
        value = read_text(root, str(policy.relative_to(root)))
        if value:
            counts[value] = counts.get(value, 0) + 1
    return counts


def turbo_boost(root: Path) -> bool | None:
    """Whether turbo/boost is enabled: intel_pstate no_turbo, or cpufreq boost; None if unknown."""
    no_turbo = read_text(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo in ("0", "1"):
        return no_turbo == "0"
    boost = read_text(root, "sys/devices/system/cpu/cpufreq/boost")
    if boost in ("0", "1"):
        return boost == "1"
    return None


def load_average(root: Path) -> list[float] | None:
    """The 1, 5 and 15 minute load averages from /proc/loadavg."""
    text = read_text(root, "proc/loadavg")
    try:
        return [float(x) for x in text.split()[:3]] if text else None
    except ValueError:
        return None


def kernel_release(root: Path) -> str:
    return read_text(root, "proc/sys/kernel/osrelease") or platform.release()


def os_name(root: Path) -> str:
    """The distribution's PRETTY_NAME from os-release, else the platform's system name."""
    text = read_text(root, "etc/os-release") or read_text(root, "usr/lib/os-release")
    for line in (text or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def measured_timer_resolution_ns(samples: int = 2000) -> int:
    """The smallest non-zero step of the monotonic clock, measured (not the advertised resolution)."""
    smallest = None
    last = time.monotonic_ns()
    for _ in range(samples):
        now = time.monotonic_ns()
        step = now - last
        if step > 0 and (smallest is None or step < smallest):
            smallest = step
        last = now
    return int(smallest or 0)


def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def collect_environment(root: str | os.PathLike = "/") -> dict:
    """Metadata describing this machine now, as a JSON-ready dict."""
    from pairbench import __version__

    base = Path(root)
    return {
        "host": socket.gethostname(),
        "os": os_name(base),
        "kernel": kernel_release(base),
        "machine": platform.machine(),
        "cpu_model": cpu_model(base),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "governors": governors(base),
        "turbo_boost": turbo_boost(base),
        "load_average": load_average(base),
        "timer": {
            "clock": "CLOCK_MONOTONIC",
            "advertised_resolution_ns": int(time.get_clock_info("monotonic").resolution * 1e9),
            "measured_resolution_ns": measured_timer_resolution_ns(),
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "pairbench": __version__,
        "libraries": library_versions(),
    }
