"""Machine metadata stored with every result: what ran where, on which CPU, under what load.

Everything is read from ``/proc`` and ``/sys`` below a configurable ``root`` so that
tests can point it at a fixture tree. A value that cannot be read (containers,
non-Linux systems) is ``None``, never an error. This module only *reads*;
``pairbench.doctor.checks`` judges the readings (ok, warn, fail, unknown), so a
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
* activity right now: two snapshots of ``proc/stat``, ``proc/vmstat`` and
  ``proc/[pid]/stat``, ``activity_window_s`` apart (CPU busy, steal, swapping,
  the busiest other processes).
"""

from __future__ import annotations

import os
import platform
import re
import socket
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

LIBRARIES = ("numpy", "scipy", "rich", "click")
ACTIVITY_WINDOW_S = 0.1  # default window of the "right now" snapshots (10 ticks at USER_HZ 100)
TOP_PROCESSES = 5
_PSI_FIELD = re.compile(r"(\w+)=([0-9.]+)")


def read_text(root: Path, relative: str) -> str | None:
    """The stripped content of ``root/relative``, or None when it cannot be read."""
    try:
        return (root / relative.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def read_int(root: Path, relative: str) -> int | None:
    """The integer in ``root/relative``, or None when it cannot be read or parsed."""
    text = read_text(root, relative)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse_cpu_list(text: str | None) -> list[int] | None:
    """The CPUs of a kernel CPU list ("0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]); [] for ""."""
    if text is None or text.strip() in ("(null)",):
        return [] if text is not None else None
    cpus: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, _, high = part.partition("-")
            cpus.extend(range(int(low), int(high or low) + 1))
    except ValueError:
        return None
    return sorted(set(cpus))


def _key_values(text: str | None, sep: str = ":") -> dict[str, str]:
    """``key: value`` lines as a dict (first occurrence wins)."""
    result: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, found, value = line.partition(sep)
        if found and key.strip() not in result:
            result[key.strip()] = value.strip()
    return result


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
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


# ------------------------------------------------------------------ CPU frequency and topology


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
    control = turbo_control(root)
    return None if control is None else control["enabled"]


def turbo_control(root: Path) -> dict | None:
    """Turbo state and the file that controls it: {"enabled": bool, "file": path}, or None."""
    no_turbo_file = "sys/devices/system/cpu/intel_pstate/no_turbo"
    no_turbo = read_text(root, no_turbo_file)
    if no_turbo in ("0", "1"):
        return {"enabled": no_turbo == "0", "file": "/" + no_turbo_file}
    boost_file = "sys/devices/system/cpu/cpufreq/boost"
    boost = read_text(root, boost_file)
    if boost in ("0", "1"):
        return {"enabled": boost == "1", "file": "/" + boost_file}
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
    for path in cpu_dir.glob("cpu[0-9]*/topology/thread_siblings_list"):
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
    for directory in sorted(cpu_dir.glob("cpu[0-9]*/thermal_throttle")):
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
    allowed = _key_values(read_text(root, "proc/self/status")).get("Cpus_allowed_list")
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


# ------------------------------------------------------------------ virtualization and containers


_DMI_VIRTUAL = ("QEMU", "KVM", "VMware", "VirtualBox", "innotek", "Xen", "Amazon EC2",
                "Google Compute Engine", "Virtual Machine", "Bochs", "Parallels", "OpenStack",
                "DigitalOcean", "Hetzner vServer", "BHYVE", "Firecracker")


def virtualization(root: Path) -> dict:
    """Signs of a hypervisor or a container, and the CPU quota of our cgroup."""
    cpuinfo = read_text(root, "proc/cpuinfo")
    flags = None
    if cpuinfo is not None:
        flags = _key_values(cpuinfo).get("flags", "").split() or None
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
    if (root / ".dockerenv").exists():
        return "docker"
    if (root / "run/.containerenv").exists():
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


def cgroup_cpu(root: Path) -> dict | None:
    """Our cgroup's CPU quota in CPUs (None: unlimited) and how often it throttled us, or None.

    cgroup v2: ``cpu.max`` ("max 100000" or "150000 100000") and ``cpu.stat``
    (``nr_throttled``); v1: ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``. The
    path from /proc/self/cgroup is tried first, then the hierarchy's root (a
    container without a cgroup namespace sees its own cgroup there).
    """
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
                cpus = None if limit == "max" else _ratio(limit, period)
                return {"quota_cpus": cpus, "nr_throttled": _throttled(root, base)}
    if "cpu" in paths:
        for base in _candidates("sys/fs/cgroup/cpu", paths["cpu"]):
            quota = read_int(root, f"{base}/cpu.cfs_quota_us")
            if quota is not None:
                period = read_int(root, f"{base}/cpu.cfs_period_us")
                cpus = None if quota < 0 or not period else quota / period
                return {"quota_cpus": cpus, "nr_throttled": _throttled(root, base)}
    return None


def _candidates(hierarchy: str, path: str) -> list[str]:
    return [hierarchy + path, hierarchy] if path else [hierarchy]


def _throttled(root: Path, base: str) -> int | None:
    stat = _key_values(read_text(root, f"{base}/cpu.stat"), sep=" ")
    return _int_or_none(stat.get("nr_throttled"))


def _ratio(numerator: str, denominator: str) -> float | None:
    try:
        return int(numerator) / int(denominator)
    except (ValueError, ZeroDivisionError):
        return None


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


# ------------------------------------------------------------------ memory, pressure, power


def memory(root: Path) -> dict | None:
    """Total and available memory and swap from /proc/meminfo, in KiB; None if unreadable."""
    info = _key_values(read_text(root, "proc/meminfo"))
    if not info:
        return None

    def kib(key: str) -> int | None:
        return _int_or_none(info.get(key, "").split(" ")[0] or None)

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
                if name.startswith("avg"):
                    values[f"{kind}_{name}"] = float(value)
        result[resource] = values
    return result or None


def power_supply(root: Path) -> dict | None:
    """Mains and batteries from /sys/class/power_supply and the ACPI platform profile.

    ``on_battery`` is True when a mains supply reports offline or a battery
    reports Discharging, False when a mains supply is online (or there is no
    battery at all), None when the directory is missing.
    """
    directory = root / "sys/class/power_supply"
    if not directory.is_dir():
        return None
    mains, batteries = [], []
    for supply in sorted(directory.iterdir()):
        relative = str(supply.relative_to(root))
        kind = read_text(root, f"{relative}/type")
        if kind == "Mains":
            mains.append(read_text(root, f"{relative}/online") == "1")
        elif kind == "Battery":
            batteries.append({
                "name": supply.name,
                "status": read_text(root, f"{relative}/status"),
                "capacity": read_int(root, f"{relative}/capacity"),
            })
    discharging = any(b["status"] == "Discharging" for b in batteries)
    if discharging or (mains and not any(mains)):
        on_battery = bool(batteries) or discharging
    else:
        on_battery = False
    return {
        "on_battery": on_battery,
        "mains_online": any(mains) if mains else None,
        "batteries": batteries,
        "platform_profile": read_text(root, "sys/firmware/acpi/platform_profile"),
    }


# ------------------------------------------------------------------ activity right now


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


def _process_ticks(root: Path, exclude: set[int]) -> dict[int, tuple[str, int]]:
    """pid -> (command name, user + system clock ticks) of every process in /proc."""
    ticks = {}
    for entry in (root / "proc").glob("[0-9]*"):
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        text = read_text(root, f"proc/{entry.name}/stat")
        if not text or ")" not in text:
            continue
        name = text[text.find("(") + 1:text.rfind(")")]
        fields = text[text.rfind(")") + 2:].split()
        try:
            ticks[int(entry.name)] = (name, int(fields[11]) + int(fields[12]))
        except (IndexError, ValueError):
            continue
    return ticks


def _swap_pages(root: Path) -> tuple[int, int] | None:
    values = _key_values(read_text(root, "proc/vmstat"), sep=" ")
    swap_in, swap_out = _int_or_none(values.get("pswpin")), _int_or_none(values.get("pswpout"))
    return (swap_in, swap_out) if swap_in is not None and swap_out is not None else None


def activity(root: Path, window_s: float = ACTIVITY_WINDOW_S, *,
             sleep: Callable[[float], None] = time.sleep, exclude: set[int] | None = None) -> dict:
    """What the machine is doing right now: two snapshots ``window_s`` apart.

    CPU use comes from /proc/stat jiffies (``busy_cpus``: CPUs' worth of time
    spent running tasks, i.e. neither idle, iowait nor stolen by the hypervisor;
    ``steal_percent`` and ``iowait_percent`` of all CPU time);
    per-process CPU from /proc/[pid]/stat user + system ticks, as a percentage
    of one CPU over the same window; swapping from /proc/vmstat pswpin/pswpout.
    Processes in ``exclude`` (by default this process) are left out. Anything
    unreadable, or a window in which no jiffy passed, is None. Costs ``window_s``.
    """
    exclude = {os.getpid()} if exclude is None else exclude
    before = (_cpu_times(root), _process_ticks(root, exclude), _swap_pages(root))
    sleep(window_s)
    after = (_cpu_times(root), _process_ticks(root, exclude), _swap_pages(root))
    result: dict = {"window_s": window_s, "cpu": None, "busiest_processes": None,
                    "swap_in_pages": None, "swap_out_pages": None}
    if before[2] and after[2]:
        result["swap_in_pages"] = after[2][0] - before[2][0]
        result["swap_out_pages"] = after[2][1] - before[2][1]
    if not before[0] or not after[0]:
        return result
    delta = [b - a for a, b in zip(before[0][0], after[0][0], strict=True)]
    total, ncpu = sum(delta), after[0][1]
    if total <= 0:
        return result
    idle, iowait, steal = delta[3], delta[4], delta[7]
    result["cpu"] = {
        "busy_cpus": round((total - idle - iowait - steal) / total * ncpu, 3),
        "steal_percent": round(100 * steal / total, 2),
        "iowait_percent": round(100 * iowait / total, 2),
    }
    per_cpu_ticks = total / ncpu
    busy = []
    for pid, (name, ticks) in after[1].items():
        if pid in before[1] and before[1][pid][0] == name and ticks > before[1][pid][1]:
            percent = 100 * (ticks - before[1][pid][1]) / per_cpu_ticks
            busy.append({"pid": pid, "name": name, "cpu_percent": round(percent, 1)})
    busy.sort(key=lambda p: (-p["cpu_percent"], p["pid"]))
    for process in busy[:TOP_PROCESSES]:
        text = read_text(root, f"proc/{process['pid']}/cmdline") or ""
        process["command"] = " ".join(text.replace("\0", " ").split())[:80] or process["name"]
    result["busiest_processes"] = busy[:TOP_PROCESSES]
    return result


# ------------------------------------------------------------------ everything together


def collect_environment(root: str | os.PathLike = "/", *,
                        activity_window_s: float | None = None,
                        sleep: Callable[[float], None] = time.sleep) -> dict:
    """Metadata describing this machine now, as a JSON-ready dict.

    Takes about ``activity_window_s`` (the "right now" snapshots; None means
    the module's ``ACTIVITY_WINDOW_S``, which test suites may set to 0);
    ``sleep`` is the seam tests use to change a fixture tree between the snapshots.
    """
    from pairbench import __version__

    if activity_window_s is None:
        activity_window_s = ACTIVITY_WINDOW_S
    base = Path(root)
    exclude = {os.getpid()} if base.resolve() == Path("/") else set()
    return {
        "host": socket.gethostname(),
        "os": os_name(base),
        "kernel": kernel_release(base),
        "machine": platform.machine(),
        "cpu_model": cpu_model(base),
        "logical_cpus": os.cpu_count(),
        "online_cpus": parse_cpu_list(read_text(base, "sys/devices/system/cpu/online")),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "governors": governors(base),
        "turbo_boost": turbo_boost(base),
        "turbo": turbo_control(base),
        "smt": smt(base),
        "load_average": load_average(base),
        "activity": activity(base, activity_window_s, sleep=sleep, exclude=exclude),
        "isolation": isolation(base),
        "clocksource": clock_source(base),
        "timer": {
            "clock": "CLOCK_MONOTONIC",
            "advertised_resolution_ns": int(time.get_clock_info("monotonic").resolution * 1e9),
            "measured_resolution_ns": measured_timer_resolution_ns(),
        },
        "kernel_settings": kernel_settings(base),
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


def load_average(root: Path) -> list[float] | None:
    """The 1, 5 and 15 minute load averages from /proc/loadavg."""
    text = read_text(root, "proc/loadavg")
    try:
        return [float(x) for x in text.split()[:3]] if text else None
    except ValueError:
        return None
