"""Machine metadata stored with every result: what ran where, on which CPU, under what load.

Everything is read from ``/proc`` and ``/sys`` below a configurable ``root`` so that
tests can point it at a fixture tree. A value that cannot be read (containers,
non-Linux systems) is ``None``, never an error. This module only *reads*;
``pairbench.environment.checks`` judges the readings (ok, warn, fail, unknown), so a
stored result can be judged again later from its metadata alone.

What is read, and from where (all below ``root``):

* CPU model, governors, turbo/boost, SMT: ``proc/cpuinfo``,
  ``sys/devices/system/cpu/{cpu*/cpufreq,intel_pstate,cpufreq/boost,smt}``;
* ASLR, perf events, kernel command line: ``proc/sys/kernel/*``, ``proc/cmdline``;
* isolated and tickless CPUs, our CPU affinity: ``sys/devices/system/cpu/{isolated,nohz_full}``,
  ``proc/self/status`` (``Cpus_allowed_list``);
* clock source: ``sys/devices/system/clocksource/clocksource0``; the timer's
  resolution is measured (this process, not the tree);
* virtualization and containers: ``proc/cpuinfo`` flags, ``sys/hypervisor/type``,
  ``sys/class/dmi/id``, ``.dockerenv``, ``run/.containerenv``, ``proc/1/cgroup``,
  the CPU quota of our cgroup (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``);
* memory, swap and pressure: ``proc/meminfo``, ``proc/pressure/{cpu,memory,io}``;
* power: ``sys/class/power_supply/*``, ``sys/firmware/acpi/platform_profile``;
* thermal throttling counters: ``sys/devices/system/cpu/cpu*/thermal_throttle``;
* activity right now: two snapshots of ``proc/stat``,
  ``proc/vmstat``, ``proc/[pid]/stat`` and our cgroup's ``cpu.stat``,
  ``activity_window_s`` apart (CPU busy, steal, swapping, quota throttling, the
  busiest other processes), and our parent processes (``PPid`` in
  ``proc/self/status`` and ``proc/[pid]/status``).

A malformed or unreadable file (a number that does not parse, a directory we
may not list) gives None for that reading; no reader raises, and no reading is
NaN or infinite (result documents are written with ``allow_nan=False``).
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pairbench.environment._read import (  # noqa: F401 - read_int, read_text: part of the API
    finite_float,
    glob_sorted,
    int_or_none,
    key_values,
    parse_cpu_list,
    path_exists,
    read_int,
    read_text,
)
from pairbench.environment.activity import ACTIVITY_WINDOW_S, ActivityWindow, activity  # noqa: F401
from pairbench.environment.cgroup import cgroup_cpu

LIBRARIES = ("numpy", "scipy", "rich", "click")
_PSI_FIELD = re.compile(r"(\w+)=([0-9.]+)")


# ------------------------------------------------------------------ identity of the machine


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


def kernel_release(root: Path) -> str:
    return read_text(root, "proc/sys/kernel/osrelease") or platform.release()


def os_name(root: Path) -> str:
    """The distribution's PRETTY_NAME from os-release, else the platform's system name."""
    text = read_text(root, "etc/os-release") or read_text(root, "usr/lib/os-release")
    for line in (text or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def library_versions() -> dict[str, str]:
    """The installed version of each of ``LIBRARIES`` ("not installed" for a missing one)."""
    return {name: _dist_info_version(name) or _metadata_version(name) for name in LIBRARIES}


_DIST_INFO = re.compile(r"(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.dist-info")


def _dist_info_version(name: str) -> str | None:
    """The version in the name of ``name``'s ``NAME-VERSION.dist-info`` directory on ``sys.path``
    (the installed-project naming of PEP 376 and the wheel spec), or None when there is none.

    Why not ``importlib.metadata``: importing it costs about 30 ms, a tenth of
    what a ``compare`` may spend before its first sample, to parse metadata
    whose directory name already says the version. It remains the fallback.
    """
    wanted = re.sub(r"[-_.]+", "_", name).lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for found in names:
            match = _DIST_INFO.fullmatch(found)
            if match and re.sub(r"[-_.]+", "_", match["name"]).lower() == wanted:
                return match["version"]
    return None


def _metadata_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


# ------------------------------------------------------------------ CPU frequency and topology


def governors(root: Path) -> dict[str, int]:
    """How many CPUs use each cpufreq scaling governor ({"performance": 2})."""
    counts: dict[str, int] = {}
    cpu_dir = root / "sys/devices/system/cpu"
    for policy in glob_sorted(cpu_dir, "cpu[0-9]*/cpufreq/scaling_governor"):
        value = read_text(root, str(policy.relative_to(root)))
        if value:
            counts[value] = counts.get(value, 0) + 1
    return counts


def turbo_control(root: Path) -> dict | None:
    """Turbo state and the file that controls it: {"enabled": bool, "file": path}, or None."""
    for path, enabled in (("sys/devices/system/cpu/intel_pstate/no_turbo", "0"),
                          ("sys/devices/system/cpu/cpufreq/boost", "1")):
        value = read_text(root, path)
        if value in ("0", "1"):
            return {"enabled": value == enabled, "file": "/" + path}
    return None


def smt(root: Path) -> dict:
    """Simultaneous multithreading: the kernel's control and the sibling groups of the CPUs.

    ``control`` is on, off, forceoff, notsupported or notimplemented (None if
    unreadable); ``active`` whether siblings run now; ``sibling_groups`` the
    thread_siblings_list groups with more than one CPU.
    """
    active = read_text(root, "sys/devices/system/cpu/smt/active")
    groups: set[tuple[int, ...]] = set()
    cpu_dir = root / "sys/devices/system/cpu"
    for path in glob_sorted(cpu_dir, "cpu[0-9]*/topology/thread_siblings_list"):
        cpus = parse_cpu_list(read_text(root, str(path.relative_to(root))))
        if cpus and len(cpus) > 1:
            groups.add(tuple(cpus))
    return {
        "control": read_text(root, "sys/devices/system/cpu/smt/control"),
        "active": {"1": True, "0": False}.get(active or ""),
        "sibling_groups": [list(g) for g in sorted(groups)],
    }


def thermal_throttle(root: Path) -> dict | None:
    """Thermal throttling events since boot (Intel's per-CPU counters), or None if absent."""
    cpu_dir = root / "sys/devices/system/cpu"
    core, package, cpus = 0, 0, 0
    for directory in glob_sorted(cpu_dir, "cpu[0-9]*/thermal_throttle"):
        relative = str(directory.relative_to(root))
        core_count = read_int(root, f"{relative}/core_throttle_count")
        package_count = read_int(root, f"{relative}/package_throttle_count")
        if core_count is None and package_count is None:
            continue
        cpus += 1
        core += core_count or 0
        package = max(package, package_count or 0)
    if not cpus:
        return None
    return {"cpus": cpus, "core_throttle_count": core, "package_throttle_count": package}


# ------------------------------------------------------------------ scheduler and kernel settings


def isolation(root: Path) -> dict:
    """Isolated and tickless CPUs, the kernel's command-line settings, and our CPU affinity."""
    cmdline = read_text(root, "proc/cmdline")
    params = {}
    for word in (cmdline or "").split():
        name, found, value = word.partition("=")
        if found and name in ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"):
            params[name] = value
    nohz = read_text(root, "sys/devices/system/cpu/nohz_full")
    allowed = key_values(read_text(root, "proc/self/status")).get("Cpus_allowed_list")
    return {
        "isolated": parse_cpu_list(read_text(root, "sys/devices/system/cpu/isolated")),
        "nohz_full": parse_cpu_list(nohz) if nohz is not None else ([] if cmdline else None),
        "cmdline": params if cmdline is not None else None,
        "allowed_cpus": parse_cpu_list(allowed),
    }


def clock_source(root: Path) -> dict:
    """The kernel's current and available clock sources."""
    base = "sys/devices/system/clocksource/clocksource0"
    available = read_text(root, f"{base}/available_clocksource")
    return {
        "current": read_text(root, f"{base}/current_clocksource"),
        "available": available.split() if available is not None else None,
    }


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


def kernel_settings(root: Path) -> dict:
    """ASLR (randomize_va_space) and the perf-event settings."""
    return {
        "aslr": read_int(root, "proc/sys/kernel/randomize_va_space"),
        "perf_event_paranoid": read_int(root, "proc/sys/kernel/perf_event_paranoid"),
        "perf_event_max_sample_rate": read_int(root, "proc/sys/kernel/perf_event_max_sample_rate"),
    }


COUNTER_PMUS = ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3", "armv8_pmuv3_0")
"""Performance-monitoring units whose presence means the processor's instruction counter exists
(``measure.counters`` counts with it)."""


def counting(root: Path) -> dict:
    """What can count instructions here: the processor's PMUs present, and whether Valgrind is on the
    PATH (``--metric instructions``); None for what cannot be read (a fixture tree below another
    ``root`` than / says nothing of this machine's PATH)."""
    import shutil

    try:
        present = sorted(set(os.listdir(root / "sys/bus/event_source/devices")) & set(COUNTER_PMUS))
    except OSError:
        present = None
    live = Path(root).resolve() == Path("/")
    return {"pmus": present, "valgrind": (shutil.which("valgrind") is not None) if live else None}


# ------------------------------------------------------------------ virtualization and containers


_DMI_VIRTUAL = ("QEMU", "KVM", "VMware", "VirtualBox", "innotek", "Xen", "Amazon EC2",
                "Google Compute Engine", "Virtual Machine", "Bochs", "Parallels", "OpenStack",
                "DigitalOcean", "Hetzner vServer", "BHYVE", "Firecracker")


def virtualization(root: Path) -> dict:
    """Signs of a hypervisor or a container, and the CPU quota of our cgroup."""
    cpuinfo = read_text(root, "proc/cpuinfo")
    flags = None
    if cpuinfo is not None:
        flags = key_values(cpuinfo).get("flags", "").split() or None
    vendor = read_text(root, "sys/class/dmi/id/sys_vendor")
    product = read_text(root, "sys/class/dmi/id/product_name")
    dmi = " ".join(filter(None, (vendor, product))) or None
    return {
        "hypervisor_flag": ("hypervisor" in flags) if flags else None,
        "hypervisor_type": read_text(root, "sys/hypervisor/type"),
        "dmi": dmi,
        "dmi_virtual": any(v.lower() in dmi.lower() for v in _DMI_VIRTUAL) if dmi else None,
        "container": container(root),
        "cgroup_cpu": cgroup_cpu(root),
    }


def container(root: Path) -> str | None:
    """The kind of container we run in ("docker", "podman", "kubernetes", "lxc"), else None."""
    if path_exists(root / ".dockerenv"):
        return "docker"
    if path_exists(root / "run/.containerenv"):
        return "podman"
    cgroup = read_text(root, "proc/1/cgroup") or ""
    for marker, name in (("kubepods", "kubernetes"), ("docker", "docker"), ("lxc", "lxc")):
        if marker in cgroup:
            return name
    environ = read_text(root, "proc/1/environ") or ""
    for entry in environ.split("\0"):
        if entry.startswith("container="):
            return entry.split("=", 1)[1] or "container"
    return None


# ------------------------------------------------------------------ memory, pressure, power


def memory(root: Path) -> dict | None:
    """Total and available memory and swap from /proc/meminfo, in KiB; None if unreadable."""
    info = key_values(read_text(root, "proc/meminfo"))
    if not info:
        return None

    def kib(key: str) -> int | None:
        return int_or_none(info.get(key, "").split(" ")[0] or None)

    return {
        "mem_total_kib": kib("MemTotal"),
        "mem_available_kib": kib("MemAvailable"),
        "swap_total_kib": kib("SwapTotal"),
        "swap_free_kib": kib("SwapFree"),
    }


def pressure(root: Path) -> dict | None:
    """Pressure stall information: {"cpu": {"some_avg10": 1.2, "full_avg10": 0.0, ...}, ...}.

    ``some_avg10`` is the share (percent) of the last 10 s in which at least
    one task waited for the resource; ``full_avg10`` in which all did. None
    when the kernel has no PSI (or it is not mounted in a container).
    """
    result = {}
    for resource in ("cpu", "memory", "io"):
        text = read_text(root, f"proc/pressure/{resource}")
        if text is None:
            continue
        values = {}
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            for name, value in _PSI_FIELD.findall(rest):
                number = finite_float(value) if name.startswith("avg") else None
                if number is not None:
                    values[f"{kind}_{name}"] = number
        result[resource] = values
    return result or None


def power_supply(root: Path) -> dict | None:
    """Mains and batteries from /sys/class/power_supply and the ACPI platform profile.

    Supplies whose ``scope`` is ``Device`` (a wireless mouse's or keyboard's
    battery, such as ``hidpp_battery_0``) do not power the machine and are left
    out. ``on_battery`` is False whenever a mains supply is online; otherwise
    True when a battery reports Discharging, or when every mains supply is
    offline and no battery is charging; False when there is no battery at all.
    None when the directory is missing or cannot be listed.
    """
    try:
        supplies = sorted((root / "sys/class/power_supply").iterdir())
    except OSError:
        return None
    mains, batteries = [], []
    for supply in supplies:
        relative = str(supply.relative_to(root))
        if read_text(root, f"{relative}/scope") == "Device":
            continue
        kind = read_text(root, f"{relative}/type")
        if kind == "Mains":
            mains.append(read_text(root, f"{relative}/online") == "1")
        elif kind == "Battery":
            batteries.append({
                "name": supply.name,
                "status": read_text(root, f"{relative}/status"),
                "capacity": read_int(root, f"{relative}/capacity"),
            })
    return {
        "on_battery": _on_battery(mains, batteries),
        "mains_online": any(mains) if mains else None,
        "batteries": batteries,
        "platform_profile": read_text(root, "sys/firmware/acpi/platform_profile"),
    }


def _on_battery(mains: list[bool], batteries: list[dict]) -> bool:
    """Whether the machine runs on its battery (see ``power_supply``)."""
    if any(mains):
        return False
    statuses = {b["status"] for b in batteries}
    if "Discharging" in statuses:
        return True
    return bool(mains) and bool(batteries) and "Charging" not in statuses


# ------------------------------------------------------------------ everything together


def collect_environment(root: str | os.PathLike = "/", *,
                        activity_window_s: float | None = None,
                        sleep: Callable[[float], None] = time.sleep, live: bool = False,
                        activity_since: ActivityWindow | None = None, activity_later: bool = False) -> dict:
    """Metadata describing this machine now, as a JSON-ready dict.

    Takes about ``activity_window_s`` (the "right now" snapshots; None means
    the module's ``ACTIVITY_WINDOW_S``, which test suites may set to 0);
    ``sleep`` is the seam tests use to change a fixture tree between the snapshots.
    The busiest other processes are each a name and a CPU share, as a result
    stores them; ``live`` (the doctor's view of this machine now) adds their
    PIDs and command lines (see ``activity``). ``activity_since``: a window on
    ``root`` opened earlier (a measuring command opens it before it loads its
    code, so the window has passed by the time it is read), else one opened now.
    ``activity_later`` (with ``activity_since``): the window is not read here,
    and ``activity`` is None: the measuring command reads it between its samples,
    once it has passed, so that no wait for it comes before the first sample
    (``sessions.activity``).
    """
    from pairbench import __version__

    if activity_window_s is None:
        activity_window_s = ACTIVITY_WINDOW_S
    base = Path(root)
    exclude = {os.getpid()} if base.resolve() == Path("/") else set()
    window = activity_since or ActivityWindow(base, exclude)  # the rest is read while it passes
    turbo = turbo_control(base)
    found = {
        "host": os.uname().nodename,  # what gethostname(2) reads, without importing socket (2 ms)
        "os": os_name(base),
        "kernel": kernel_release(base),
        "machine": platform.machine(),
        "cpu_model": cpu_model(base),
        "logical_cpus": os.cpu_count(),
        "online_cpus": parse_cpu_list(read_text(base, "sys/devices/system/cpu/online")),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "governors": governors(base),
        "turbo_boost": None if turbo is None else turbo["enabled"],
        "turbo": turbo,
        "smt": smt(base),
        "load_average": load_average(base),
        "activity": None,  # below, once the window has passed
        "isolation": isolation(base),
        "clocksource": clock_source(base),
        "timer": {
            "clock": "CLOCK_MONOTONIC",
            "advertised_resolution_ns": int(time.get_clock_info("monotonic").resolution * 1e9),
            "measured_resolution_ns": measured_timer_resolution_ns(),
        },
        "kernel_settings": kernel_settings(base),
        "counting": counting(base),
        "virtualization": virtualization(base),
        "memory": memory(base),
        "pressure": pressure(base),
        "power": power_supply(base),
        "thermal_throttle": thermal_throttle(base),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "pairbench": __version__,
        "libraries": library_versions(),
    }
    if not (activity_later and activity_since is not None):
        found["activity"] = window.finish(activity_window_s, sleep=sleep, live=live)
    return found


def load_average(root: Path) -> list[float] | None:
    """The 1, 5 and 15 minute load averages from /proc/loadavg; None unless all three are finite numbers."""
    fields = (read_text(root, "proc/loadavg") or "").split()[:3]
    values = [finite_float(x) for x in fields]
    return values if len(values) == 3 and None not in values else None
