"""Environment checks: judge the machine metadata of ``environment.collect_environment``.

Every check is a pure function of the metadata dict, so a stored result can be
judged again later: ``pairbench doctor --environment FILE`` does, and the
analysis of every run derives its machine notes from them
(``analysis.rules.machine_notes``). A value the collector could not read is
``None`` and its check says ``unknown``.

The checks and their sources: pyperf's ``system show/tune`` (``pyperf/_system.py``:
governor, turbo, isolcpus/rcu_nocbs, nohz_full, ASLR, perf sample rate, power
supply), Google Benchmark's CPU-scaling and ASLR warnings, bencher's
``noise`` (steal, context switches), and the kernel's own documentation for
PSI (``Documentation/accounting/psi.rst``), SMT control
(``Documentation/admin-guide/hw-vuln/l1tf.rst``) and thermal throttle counters
(``Documentation/ABI/testing/sysfs-devices-system-cpu``).

On ASLR pairbench sides with pyperf, not with Google Benchmark: pairbench runs
every sample in a fresh process, and with full randomization each process
gets a different memory layout, so layout luck averages out across samples
instead of biasing every sample of a command the same way (Mytkowicz et al.,
"Producing wrong data without doing anything obviously wrong!", ASPLOS 2009).

Stored metadata may be partial, from another version, or hand-edited: a value
of the wrong type makes its check ``unknown`` ("stored value malformed: ..."),
never an exception (see :func:`evaluate`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

from pairbench.environment.findings import Finding
from pairbench.environment.pausing import SHOWN_PROCESSES, load_fix
from pairbench.environment.stored import (
    NUMBER,
    load_average,
    online_cpus,
    section,
    stored,
    usable_cpus,
)
from pairbench.units import format_duration, format_kib

SMT_OFF = ("off", "forceoff", "notsupported", "notimplemented")
SLOW_CLOCKSOURCES = ("hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit")
TIMER_WARN_NS = 1_000  # a step above 1 us quantizes sub-millisecond samples by > 0.1%
TIMER_FAIL_NS = 1_000_000  # a 1 ms step: the clock of Windows-era asv (asv #780)
BUSY_PROCESS_PERCENT = 5.0  # processes using less than this share of a CPU are not named
LOAD_WARN = 0.5  # another task using half a CPU on average already shares caches and power


def cpu_list_text(cpus) -> str:
    """[0, 1, 2, 5] -> "0-2,5"."""
    cpus = sorted(cpus)
    parts, start = [], None
    for i, cpu in enumerate(cpus):
        start = cpu if start is None else start
        if i + 1 == len(cpus) or cpus[i + 1] != cpu + 1:
            parts.append(str(start) if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(parts)


# ------------------------------------------------------------------ CPU frequency


def check_governor(env: Mapping) -> Finding:
    """CPU frequency governor: ``performance`` on every CPU is ok."""
    title, governors = "CPU frequency governor", section(env, "governors")
    why = ("a dynamic governor raises the clock only after load appears and lowers it in pauses, "
           "so a short command runs partly at a low clock and a sample's time depends on what "
           "ran just before it")
    if not governors:
        return Finding("governor", title, "unknown",
                       "no /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor (typical of VMs "
                       "and containers: the host sets the frequency)", why)
    reading = ", ".join(f"{name} on {n} CPU{'s' * (n > 1)}" for name, n in sorted(governors.items()))
    if set(governors) == {"performance"}:
        return Finding("governor", title, "ok", reading, why, data={"governors": dict(governors)})
    return Finding("governor", title, "warn", reading, why,
                   "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
                   {"governors": dict(governors)})


def check_turbo(env: Mapping) -> Finding:
    """Turbo boost: disabled is ok (the clock no longer depends on temperature and busy cores)."""
    title, turbo = "turbo boost", env.get("turbo")
    why = ("turbo raises the clock while the package is cool and few cores are busy and lowers "
           "it as it heats or other cores wake, so the same work takes different times "
           "depending on what ran before and beside it")
    if not turbo:
        return Finding("turbo", title, "unknown", "no intel_pstate/no_turbo or cpufreq/boost file "
                       "in /sys/devices/system/cpu (no boost control visible, e.g. in a VM)", why)
    stored(turbo, dict, "turbo")
    if stored(turbo.get("enabled"), bool, "turbo.enabled") is None:
        raise ValueError("turbo.enabled is missing")
    if not stored(turbo.get("file"), str, "turbo.file"):
        raise ValueError("turbo.file is missing")
    state = "enabled" if turbo["enabled"] else "disabled"
    reading = f"{state} ({turbo['file']})"
    if not turbo["enabled"]:
        return Finding("turbo", title, "ok", reading, why, data=dict(turbo))
    value = "1" if turbo["file"].endswith("no_turbo") else "0"
    return Finding("turbo", title, "warn", reading, why,
                   f"echo {value} | sudo tee {turbo['file']}", dict(turbo))


def check_smt(env: Mapping) -> Finding:
    """SMT (hyper-threading): no active siblings is ok."""
    title, smt = "SMT siblings", section(env, "smt")
    why = ("SMT siblings share a core's execution units and caches: whatever runs on the "
           "sibling slows the benchmark by an amount that changes from sample to sample")
    control, active, groups = smt.get("control"), smt.get("active"), smt.get("sibling_groups") or []
    shared = "; ".join("CPUs " + cpu_list_text(g) + " share a core" for g in groups[:3])
    data = {"control": control, "active": active, "sibling_groups": groups}
    if active or (groups and control not in SMT_OFF):
        reading = f"active (smt/control = {control})" + (f": {shared}" if shared else "")
        fix = ("echo off | sudo tee /sys/devices/system/cpu/smt/control" if control == "on"
               else "disable SMT (Hyper-Threading) in the firmware setup")
        return Finding("smt", title, "warn", reading, why, fix, data)
    if control is None and active is None:
        return Finding("smt", title, "unknown",
                       "no /sys/devices/system/cpu/smt and no sibling CPUs listed", why, data=data)
    return Finding("smt", title, "ok", f"none active (smt/control = {control})", why, data=data)


def check_thermal(env: Mapping) -> Finding:
    """Thermal throttling counters: zero since boot is ok."""
    title, counters = "thermal throttling", env.get("thermal_throttle")
    why = ("a throttled CPU runs slower until it cools, so samples taken after a hot stretch are "
           "slower than those before it")
    if not counters:
        return Finding("thermal", title, "unknown", "no /sys/devices/system/cpu/cpu*/thermal_throttle "
                       "counters (Intel CPUs have them; VMs and most AMD/ARM systems do not)", why)
    core = stored(counters.get("core_throttle_count"), int, "thermal_throttle.core_throttle_count")
    package = stored(counters.get("package_throttle_count"), int,
                     "thermal_throttle.package_throttle_count")
    if core is None or package is None:
        raise ValueError("thermal_throttle lacks core_throttle_count or package_throttle_count")
    reading = f"{core} core and {package} package throttling events since boot"
    if core == 0 and package == 0:
        return Finding("thermal", title, "ok", reading, why, data=dict(counters))
    return Finding("thermal", title, "warn", reading, why,
                   "improve cooling or disable turbo, then check the counters stay still while you "
                   "measure: grep . /sys/devices/system/cpu/cpu*/thermal_throttle/*_count",
                   dict(counters))


# ------------------------------------------------------------------ scheduler and kernel


def check_load(env: Mapping, *, live: bool = False) -> Finding:
    """Load average and CPU use now: warn from half a CPU busy, fail when under half a CPU is free.

    The level is the larger of the 1-minute load average and the CPUs busy in
    the activity window, compared with the machine's online CPUs (the load
    average is machine-wide). Only ``live`` (metadata read from this machine
    now) names processes by PID and command line and says which PIDs to pause:
    a PID stored in a file may belong to another process by now.
    """
    title, load, cpus = "load", load_average(env), online_cpus(env)
    activity = section(env, "activity")
    busy_now = stored((activity.get("cpu") or {}).get("busy_cpus"), NUMBER, "activity.cpu.busy_cpus")
    why = ("other tasks compete for the CPU, caches, memory bandwidth and power budget: samples "
           "get slower and more spread, in bursts that follow the other tasks' phases")
    if load is None and busy_now is None:
        return Finding("load", title, "unknown", "cannot read /proc/loadavg or /proc/stat", why)
    level = max(load[0] if load else 0.0, busy_now or 0.0)
    busiest = [p for p in activity.get("busiest_processes") or []
               if p["cpu_percent"] >= BUSY_PROCESS_PERCENT]
    reading = _load_reading(load, busy_now, cpus, busiest, env, live=live)
    data = {"load_average": load, "cpus": cpus, "busy_cpus_now": busy_now,
            "busiest_processes": busiest}
    if cpus and level > cpus - LOAD_WARN and level >= LOAD_WARN:
        status = "fail"
    elif level >= LOAD_WARN:
        status = "warn"
    else:
        return Finding("load", title, "ok", reading, why, data=data)
    return Finding("load", title, status, reading, why, load_fix(busiest, activity, live=live), data)


def _load_reading(load, busy_now, cpus, busiest, env: Mapping, *, live: bool) -> str:
    parts = []
    if load:
        parts.append(f"load average {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)"
                     + (f" on {cpus} CPUs" if cpus else ""))
    if busy_now is not None:
        window = section(env, "activity").get("window_s", 0)
        parts.append(f"{busy_now:.2f} CPUs busy in the last {window * 1000:.0f} ms")
    psi = (section(env, "pressure").get("cpu") or {}).get("some_avg10")
    if psi is not None:
        parts.append(f"tasks waited for a CPU {psi:.1f}% of the last 10 s (PSI)")
    if busiest and live:
        parts.append("busiest: " + ", ".join(
            f"{p.get('command') or p['name']} (pid {p['pid']}, {p['cpu_percent']:.0f}%)"
            for p in busiest[:SHOWN_PROCESSES]))
    elif busiest:
        parts.append("busiest: " + ", ".join(f"{p['name']} ({p['cpu_percent']:.0f}%)"
                                             for p in busiest[:SHOWN_PROCESSES]))
    return "; ".join(parts)


def check_isolation(env: Mapping) -> Finding:
    """Isolated CPUs (isolcpus / nohz_full): running on isolated CPUs is ok."""
    title, iso = "isolated CPUs", section(env, "isolation")
    why = ("without isolation the scheduler may put any task, timer tick or RCU callback on the "
           "benchmark's CPU; isolcpus and nohz_full keep them off")
    isolated, allowed, nohz = iso.get("isolated"), iso.get("allowed_cpus"), iso.get("nohz_full")
    if isolated is None:
        return Finding("isolation", title, "unknown", "cannot read /sys/devices/system/cpu/isolated", why)
    data = {"isolated": isolated, "nohz_full": nohz, "allowed_cpus": allowed,
            "cmdline": iso.get("cmdline")}
    tickless = f"; nohz_full: {cpu_list_text(nohz) if nohz else 'none'}" if nohz is not None else ""
    if isolated:
        reading = f"isolated: {cpu_list_text(isolated)}{tickless}"
        if allowed and set(allowed) <= set(isolated):
            return Finding("isolation", title, "ok", reading + f"; pairbench runs on {cpu_list_text(allowed)}",
                           why, data=data)
        where = f"; pairbench may run on {cpu_list_text(allowed)}" if allowed else ""
        return Finding("isolation", title, "warn", reading + where, why,
                       f"taskset -c {cpu_list_text(isolated)} pairbench ...", data)
    online = online_cpus(env)
    if not online or online < 2:
        return Finding("isolation", title, "ok", "none (a single CPU: nothing to isolate from)",
                       why, data=data)
    last = max(allowed) if allowed else online - 1
    return Finding("isolation", title, "warn", f"none{tickless}", why,
                   f"add isolcpus={last} nohz_full={last} rcu_nocbs={last} to GRUB_CMDLINE_LINUX in "
                   f"/etc/default/grub, run sudo update-grub, reboot, then measure with "
                   f"taskset -c {last} pairbench ...", data)


def check_aslr(env: Mapping) -> Finding:
    """ASLR: full randomization (2) is ok; see the module docstring for why."""
    title = "ASLR"
    value = section(env, "kernel_settings").get("aslr")
    why = ("each sample runs in a new process; with full randomization every process gets a "
           "different memory layout, so layout luck averages out over the samples instead of "
           "biasing all samples of one command the same way")
    names = {0: "off", 1: "conservative (heap not randomized)", 2: "full randomization"}
    if value not in names:
        return Finding("aslr", title, "unknown", "cannot read /proc/sys/kernel/randomize_va_space", why)
    reading = f"{names[value]} (randomize_va_space = {value})"
    if value == 2:
        return Finding("aslr", title, "ok", reading, why, data={"randomize_va_space": value})
    return Finding("aslr", title, "warn", reading, why, "sudo sysctl -w kernel.randomize_va_space=2",
                   {"randomize_va_space": value})


def check_clock(env: Mapping) -> Finding:
    """Clock source and the measured timer resolution."""
    title = "clock"
    source = section(env, "clocksource")
    step = section(env, "timer").get("measured_resolution_ns")
    current, available = source.get("current"), source.get("available") or []
    why = ("every sample is two clock reads: a coarse clock quantizes short samples and a slow "
           "clock source (hpet, acpi_pm) adds its read cost to every sample")
    parts = [f"clock source {current} (available: {' '.join(available)})" if current else
             "clock source unreadable (/sys/devices/system/clocksource)"]
    if step:
        parts.append(f"CLOCK_MONOTONIC steps measured at {format_duration(step)}")
    data = {"clocksource": current, "available": available, "measured_resolution_ns": step}
    reading = "; ".join(parts)
    if step and step >= TIMER_FAIL_NS:
        return Finding("clock", title, "fail", reading, why,
                       "use a system with a high-resolution clock (Linux: tsc)", data)
    if (step and step > TIMER_WARN_NS) or current in SLOW_CLOCKSOURCES:
        return Finding("clock", title, "warn", reading, why, _clock_fix(current, available, step), data)
    if not current and not step:
        return Finding("clock", title, "unknown", reading, why, data=data)
    return Finding("clock", title, "ok", reading, why, data=data)


def _clock_fix(current: str | None, available: list, step: int | None) -> str:
    """Switch to tsc when the kernel offers it and it is not in use; else what can be done."""
    if "tsc" in available and current != "tsc":
        return "echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource"
    if current in SLOW_CLOCKSOURCES:
        return ("no faster clock source to switch to: check the kernel log (dmesg | grep -i "
                "clocksource) for why tsc was rejected")
    shortest = format_duration(step * 1000) if step else "1 ms"
    return (f"no clock source to switch to ({current or 'the current one'} is the fastest offered): "
            f"keep every sample above {shortest}, so the clock's step is under 0.1% of it")


def check_perf(env: Mapping) -> Finding:
    """perf_event_paranoid: <= 2 lets a user count cycles and instructions of their own processes."""
    title = "perf events"
    settings = section(env, "kernel_settings")
    paranoid, rate = settings.get("perf_event_paranoid"), settings.get("perf_event_max_sample_rate")
    why = ("hardware counters (perf stat -e cycles,instructions) measure a command's work without "
           "the timer's and the scheduler's noise; above 2, users cannot count even their own "
           "processes")
    paranoid = stored(paranoid, int, "kernel_settings.perf_event_paranoid")
    rate = stored(rate, int, "kernel_settings.perf_event_max_sample_rate")
    if paranoid is None:
        return Finding("perf", title, "unknown", "cannot read /proc/sys/kernel/perf_event_paranoid", why)
    reading = f"perf_event_paranoid = {paranoid}" + (
        f", perf_event_max_sample_rate = {rate}/s" if rate is not None else "")
    data = {"perf_event_paranoid": paranoid, "perf_event_max_sample_rate": rate}
    if paranoid <= 2:
        return Finding("perf", title, "ok", reading, why, data=data)
    return Finding("perf", title, "warn", reading, why, "sudo sysctl -w kernel.perf_event_paranoid=2", data)


# ------------------------------------------------------------------ where we run


def check_virtualization(env: Mapping) -> Finding:
    """Hypervisor, container, cgroup CPU quota and its throttling now, and steal time."""
    title, virt, cpus = "virtualization", section(env, "virtualization"), usable_cpus(env)
    activity = section(env, "activity")
    steal = stored((activity.get("cpu") or {}).get("steal_percent"), NUMBER, "activity.cpu.steal_percent")
    quota = stored((virt.get("cgroup_cpu") or {}).get("quota_cpus"), NUMBER, "cgroup_cpu.quota_cpus")
    throttled = _throttled(activity, virt)
    vm = bool(virt.get("hypervisor_flag") or virt.get("hypervisor_type") or virt.get("dmi_virtual"))
    known = any(virt.get(k) is not None for k in ("hypervisor_flag", "hypervisor_type", "dmi"))
    why = ("a hypervisor schedules the virtual CPUs (time it gives to other guests is steal), "
           "and a cgroup quota pauses the benchmark when its share runs out: both add delays the "
           "command did not cause, and numbers from different hosts are not comparable")
    parts = [_where(virt, vm, known)]
    if steal is not None:
        parts.append(f"steal {steal:.1f}% now")
    if quota is not None:
        parts.append(f"cgroup CPU quota {quota:g} CPUs")
    parts += filter(None, [_throttling_text(throttled, activity.get("window_s"))])
    data = {"virtual_machine": vm if known else None, "container": virt.get("container"),
            "steal_percent": steal, "quota_cpus": quota, "cpus": cpus, **throttled}
    reading = "; ".join(parts)
    short_quota = quota is not None and (quota < 1 or bool(cpus and quota < cpus))
    fix = _virt_fix(steal=steal, quota=quota, cpus=cpus, vm=vm, short_quota=short_quota,
                    throttled_now=throttled["nr_throttled_now"])
    if (quota is not None and quota < 1) or (steal is not None and steal >= 10):
        return Finding("virtualization", title, "fail", reading, why, fix, data)
    if vm or short_quota or throttled["nr_throttled_now"] or (steal or 0) >= 1:
        return Finding("virtualization", title, "warn", reading, why, fix, data)
    if not known and virt.get("container") is None:
        return Finding("virtualization", title, "unknown", reading, why, data=data)
    return Finding("virtualization", title, "ok", reading, why, data=data)


def _throttled(activity: Mapping, virt: Mapping) -> dict:
    """The quota's throttling: periods throttled in the activity window and since the cgroup began.

    ``nr_throttled`` (cpu.stat) counts since the cgroup was created, so only
    the window's count says the quota paused anything now; the total is context.
    """
    cgroup = virt.get("cgroup_cpu") or {}
    return {
        "nr_throttled_now": stored(activity.get("cgroup_nr_throttled"), int, "activity.cgroup_nr_throttled"),
        "nr_periods_now": stored(activity.get("cgroup_nr_periods"), int, "activity.cgroup_nr_periods"),
        "nr_throttled": stored(cgroup.get("nr_throttled"), int, "cgroup_cpu.nr_throttled"),
    }


def _throttling_text(throttled: Mapping, window_s) -> str:
    """ "throttled in 1 of 1 quota periods in the last 100 ms (313 since the cgroup began)"; "" if never."""
    now, periods, total = (throttled["nr_throttled_now"], throttled["nr_periods_now"],
                           throttled["nr_throttled"])
    if not now and not total:
        return ""
    if now is None:  # a document from before the window was measured: the total alone
        return f"throttled in {total} quota periods since the cgroup began"
    window = f"the last {window_s * 1000:.0f} ms" if isinstance(window_s, NUMBER) else "the activity window"
    text = (f"not throttled in {window}" if not now else
            f"throttled in {now} of {periods} quota periods in {window}" if periods else
            f"throttled in {now} quota periods in {window}")
    return text + (f" ({total} since the cgroup began)" if total else "")


def _where(virt: Mapping, vm: bool, known: bool) -> str:
    container = virt.get("container")
    inside = f"{container} container" if container else ""
    if vm:
        how = virt.get("hypervisor_type") or virt.get("dmi") or "hypervisor flag in /proc/cpuinfo"
        return f"virtual machine ({how})" + (f", in a {inside}" if inside else "")
    if known:
        return "bare metal" + (f", in a {inside}" if inside else "")
    return inside or "cannot tell (no cpuinfo flags, /sys/hypervisor or DMI data)"


def _virt_fix(*, steal, quota, cpus, vm: bool, short_quota: bool, throttled_now) -> str:
    """The fix for each cause found: a quota below the CPUs, throttling now, steal or a VM."""
    fixes = []
    if short_quota:
        whole = max(1, cpus or math.ceil(quota))
        fixes.append(f"give the container all {whole} CPUs it may run on (docker run --cpus={whole}) "
                     "or remove the quota while measuring")
    elif throttled_now:
        fixes.append("remove the cgroup's CPU quota while measuring, or stop the other work in the "
                     "cgroup: together they used up its quota")
    if vm:
        fixes.append("measure on bare metal or on an instance with dedicated cores, and compare only "
                     "results from the same instance type")
    elif (steal or 0) >= 1:
        fixes.append("measure when the host is idle, or on an instance with dedicated cores")
    return "; also ".join(fixes) or "measure when the host is idle"


def check_memory(env: Mapping) -> Finding:
    """Swap in use, swapping now, and memory pressure (PSI)."""
    title, mem = "memory", section(env, "memory")
    psi = section(env, "pressure").get("memory") or {}
    activity = section(env, "activity")
    why = ("a benchmark that waits for memory (reclaim, swap-in) takes longer by amounts that "
           "depend on everything else running: slow, erratic samples")
    if not mem and not psi:
        return Finding("memory", title, "unknown", "cannot read /proc/meminfo or /proc/pressure/memory", why)
    total, available = mem.get("mem_total_kib"), mem.get("mem_available_kib")
    swap_used = (mem.get("swap_total_kib") or 0) - (mem.get("swap_free_kib") or 0)
    swapping = (activity.get("swap_in_pages") or 0) + (activity.get("swap_out_pages") or 0)
    parts = []
    if total and available is not None:
        parts.append(f"{format_kib(available)} of {format_kib(total)} available")
    if mem.get("swap_total_kib") is None:
        parts.append("swap unknown (cannot read /proc/meminfo)")
    else:
        parts.append(f"swap in use {format_kib(swap_used)}" if swap_used else "no swap in use")
    if swapping:
        parts.append(f"{swapping} pages swapped in the last {activity.get('window_s', 0) * 1000:.0f} ms")
    if psi:
        parts.append(f"memory pressure {psi.get('some_avg10', 0):.1f}% some, "
                     f"{psi.get('full_avg10', 0):.1f}% full (last 10 s)")
    data = {"memory": dict(mem), "pressure": dict(psi), "swapped_pages_now": swapping}
    reading = "; ".join(parts)
    fix = ("free memory (close programs); once there is room, sudo swapoff -a && sudo swapon -a "
           "brings swapped pages back")
    tight = bool(total and available is not None and available < 0.1 * total)
    if swapping or psi.get("full_avg10", 0) >= 1:
        return Finding("memory", title, "fail", reading, why, fix, data)
    if psi.get("some_avg10", 0) >= 1 or tight or (swap_used and total and available is not None
                                                  and available < 0.2 * total):
        return Finding("memory", title, "warn", reading, why, fix, data)
    if not mem:  # no pressure now, but swap and free memory were not read
        return Finding("memory", title, "unknown", reading, why, data=data)
    return Finding("memory", title, "ok", reading, why, data=data)


def check_power(env: Mapping) -> Finding:
    """Power supply and platform profile: mains power is ok."""
    title, power = "power supply", stored(env.get("power"), dict, "power")
    why = ("on battery, or in a low-power profile, firmware lowers power limits and clock speeds "
           "and changes them as the charge falls")
    if power is None:
        return Finding("power", title, "unknown", "no /sys/class/power_supply", why)
    on_battery = stored(power.get("on_battery"), bool, "power.on_battery")
    if on_battery is None:
        raise ValueError("power.on_battery is missing")
    profile = stored(power.get("platform_profile"), str, "power.platform_profile")
    reading = _power_reading(power, on_battery)
    reading += f"; platform profile {profile}" if profile else ""
    data = dict(power)
    if on_battery:
        return Finding("power", title, "warn", reading, why, "plug in the charger", data)
    if profile in ("low-power", "quiet", "cool"):
        return Finding("power", title, "warn", reading, why,
                       "echo performance | sudo tee /sys/firmware/acpi/platform_profile", data)
    return Finding("power", title, "ok", reading, why, data=data)


def _power_reading(power: Mapping, on_battery: bool) -> str:
    """ "on battery (BAT0 Discharging 41%)", "mains power", "no battery found"..."""
    batteries = stored(power.get("batteries"), list, "power.batteries") or []
    charge = ", ".join(
        f"{b.get('name')} {b.get('status') or 'status unknown'}"
        + (f" {b['capacity']}%" if b.get("capacity") is not None else "") for b in batteries)
    if on_battery:
        state = "on battery"
    elif power.get("mains_online"):
        state = "mains power"
    elif not batteries:
        return "no battery found"
    else:
        mains = "no mains supply online" if power.get("mains_online") is False else "no mains supply listed"
        return f"battery not discharging ({charge}); {mains}"
    return state + (f" ({charge})" if charge else "")


CHECKS: tuple[tuple[str, str, Callable[[Mapping], Finding]], ...] = (
    ("load", "load", check_load),
    ("governor", "CPU frequency governor", check_governor),
    ("turbo", "turbo boost", check_turbo),
    ("smt", "SMT siblings", check_smt),
    ("aslr", "ASLR", check_aslr),
    ("isolation", "isolated CPUs", check_isolation),
    ("clock", "clock", check_clock),
    ("perf", "perf events", check_perf),
    ("virtualization", "virtualization", check_virtualization),
    ("memory", "memory", check_memory),
    ("power", "power supply", check_power),
    ("thermal", "thermal throttling", check_thermal),
)
MALFORMED = (AttributeError, KeyError, TypeError, IndexError, ValueError)


def evaluate(environment: Mapping, *, live: bool = False) -> tuple[Finding, ...]:
    """Judge ``environment`` (as collected or as stored in a result document): one finding per check.

    ``live``: the metadata was read from this machine just now, so the load
    check may name processes by PID and say which to pause (``check_load``).
    A check that meets a value it cannot use (a missing key, a string where a
    number belongs) answers ``unknown`` with "stored value malformed: ...".
    """
    return tuple(_guarded(check_id, title, functools.partial(check_load, live=live) if check is check_load
                          else check, environment) for check_id, title, check in CHECKS)


def _guarded(check_id: str, title: str, check: Callable[[Mapping], Finding], environment) -> Finding:
    try:
        return check(environment)
    except MALFORMED as exc:
        problem = f"{exc.args[0]!r} is missing" if isinstance(exc, KeyError) and exc.args else str(exc)
        return Finding(check_id, title, "unknown", f"stored value malformed: {problem[:200]}")
