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
never an exception (see :func:`evaluate`). A finding holds what was read and
judged; ``report.findings`` words it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from pairbench.environment.findings import Finding, Report, found
from pairbench.environment.pausing import pausing
from pairbench.environment.stored import (
    NUMBER,
    cpu_list,
    load_average,
    online_cpus,
    section,
    stored,
    usable_cpus,
)

SMT_OFF = ("off", "forceoff", "notsupported", "notimplemented")
SLOW_CLOCKSOURCES = ("hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit")
TIMER_WARN_NS = 1_000  # a step above 1 us quantizes sub-millisecond samples by > 0.1%
TIMER_FAIL_NS = 1_000_000  # a 1 ms step: the clock of Windows-era asv (asv #780)
BUSY_PROCESS_PERCENT = 5.0  # processes using less than this share of a CPU are not named
LOAD_WARN = 0.5  # another task using half a CPU on average already shares caches and power
LOW_POWER_PROFILES = ("low-power", "quiet", "cool")


# ------------------------------------------------------------------ CPU frequency


def check_governor(env: Mapping) -> Finding:
    """CPU frequency governor: ``performance`` on every CPU is ok."""
    governors = {name: stored(n, int, f"governors.{name}") for name, n in section(env, "governors").items()}
    if not governors:
        return found("governor", "unknown")
    return found("governor", "ok" if set(governors) == {"performance"} else "warn", governors=governors)


def check_turbo(env: Mapping) -> Finding:
    """Turbo boost: disabled is ok (the clock no longer depends on temperature and busy cores)."""
    turbo = env.get("turbo")
    if not turbo:
        return found("turbo", "unknown")
    stored(turbo, dict, "turbo")
    if stored(turbo.get("enabled"), bool, "turbo.enabled") is None:
        raise ValueError("turbo.enabled is missing")
    if not stored(turbo.get("file"), str, "turbo.file"):
        raise ValueError("turbo.file is missing")
    return found("turbo", "warn" if turbo["enabled"] else "ok", **turbo)


def check_smt(env: Mapping) -> Finding:
    """SMT (hyper-threading): no active siblings is ok."""
    smt = section(env, "smt")
    control, active = smt.get("control"), smt.get("active")
    groups = [cpu_list(group, "smt.sibling_groups") for group in stored(smt.get("sibling_groups"), list,
                                                                        "smt.sibling_groups") or []]
    data = {"control": control, "active": active, "sibling_groups": groups}
    if active or (groups and control not in SMT_OFF):
        return found("smt", "warn", **data)
    return found("smt", "unknown" if control is None and active is None else "ok", **data)


def check_thermal(env: Mapping) -> Finding:
    """Thermal throttling counters: zero since boot is ok."""
    counters = env.get("thermal_throttle")
    if not counters:
        return found("thermal", "unknown")
    core = stored(counters.get("core_throttle_count"), int, "thermal_throttle.core_throttle_count")
    package = stored(counters.get("package_throttle_count"), int,
                     "thermal_throttle.package_throttle_count")
    if core is None or package is None:
        raise ValueError("thermal_throttle lacks core_throttle_count or package_throttle_count")
    return found("thermal", "ok" if core == 0 and package == 0 else "warn", **counters)


# ------------------------------------------------------------------ scheduler and kernel


def check_load(env: Mapping, *, live: bool = False) -> Finding:
    """Load average and CPU use now: warn from half a CPU busy, fail when under half a CPU is free.

    The level is the larger of the 1-minute load average and the CPUs busy in
    the activity window, compared with the machine's online CPUs (the load
    average is machine-wide). Only ``live`` (metadata read from this machine
    now) names processes by PID and command line and says which PIDs to pause:
    a PID stored in a file may belong to another process by now.
    """
    load, cpus = load_average(env), online_cpus(env)
    activity = section(env, "activity")
    busy_now = stored((activity.get("cpu") or {}).get("busy_cpus"), NUMBER, "activity.cpu.busy_cpus")
    if load is None and busy_now is None:
        return found("load", "unknown")
    level = max(load[0] if load else 0.0, busy_now or 0.0)
    busiest = [_process(p) for p in activity.get("busiest_processes") or []
               if p["cpu_percent"] >= BUSY_PROCESS_PERCENT]
    data = {"load_average": load, "cpus": cpus, "busy_cpus_now": busy_now, "busiest_processes": busiest,
            "window_s": activity.get("window_s", 0), "live": live,
            "cpu_pressure": (section(env, "pressure").get("cpu") or {}).get("some_avg10")}
    if cpus and level > cpus - LOAD_WARN and level >= LOAD_WARN:
        status = "fail"
    elif level >= LOAD_WARN:
        status = "warn"
    else:
        return found("load", "ok", **data)
    return found("load", status, **data, **(pausing(busiest, activity) if live else {}))


def _process(process: Mapping) -> dict:
    """A busy process as the load finding keeps it: its name and CPU share (and, read live, its PID
    and command line)."""
    stored(process["name"], str, "busiest_processes.name")
    stored(process["cpu_percent"], NUMBER, "busiest_processes.cpu_percent")
    return dict(process)


def check_isolation(env: Mapping) -> Finding:
    """Isolated CPUs (isolcpus / nohz_full): running on isolated CPUs is ok."""
    iso = section(env, "isolation")
    isolated, allowed, nohz = (cpu_list(iso.get(key), f"isolation.{key}")
                               for key in ("isolated", "allowed_cpus", "nohz_full"))
    if isolated is None:
        return found("isolation", "unknown")
    data = {"isolated": isolated, "nohz_full": nohz, "allowed_cpus": allowed, "cmdline": iso.get("cmdline")}
    if isolated:
        return found("isolation", "ok" if allowed and set(allowed) <= set(isolated) else "warn", **data)
    online = online_cpus(env)
    if not online or online < 2:
        return found("isolation", "ok", **data)
    return found("isolation", "warn", **data, suggested_cpu=max(allowed) if allowed else online - 1)


def check_aslr(env: Mapping) -> Finding:
    """ASLR: full randomization (2) is ok; see the module docstring for why."""
    value = section(env, "kernel_settings").get("aslr")
    if value not in (0, 1, 2):
        return found("aslr", "unknown")
    return found("aslr", "ok" if value == 2 else "warn", randomize_va_space=value)


def check_clock(env: Mapping) -> Finding:
    """Clock source and the measured timer resolution."""
    source = section(env, "clocksource")
    step = section(env, "timer").get("measured_resolution_ns")
    current = stored(source.get("current"), str, "clocksource.current")
    available = [stored(name, str, "clocksource.available") for name in
                 stored(source.get("available"), list, "clocksource.available") or []]
    data = {"clocksource": current, "available": available, "measured_resolution_ns": step}
    if step and step >= TIMER_FAIL_NS:
        return found("clock", "fail", **data)
    if (step and step > TIMER_WARN_NS) or current in SLOW_CLOCKSOURCES:
        return found("clock", "warn", **data, slow_source=current in SLOW_CLOCKSOURCES)
    return found("clock", "unknown" if not current and not step else "ok", **data)


def check_perf(env: Mapping) -> Finding:
    """perf_event_paranoid: <= 2 lets a user count cycles and instructions of their own processes."""
    settings = section(env, "kernel_settings")
    paranoid = stored(settings.get("perf_event_paranoid"), int, "kernel_settings.perf_event_paranoid")
    rate = stored(settings.get("perf_event_max_sample_rate"), int, "kernel_settings.perf_event_max_sample_rate")
    if paranoid is None:
        return found("perf", "unknown")
    return found("perf", "ok" if paranoid <= 2 else "warn", perf_event_paranoid=paranoid,
                 perf_event_max_sample_rate=rate)


# ------------------------------------------------------------------ where we run


def check_virtualization(env: Mapping) -> Finding:
    """Hypervisor, container, cgroup CPU quota and its throttling now, and steal time."""
    virt, cpus = section(env, "virtualization"), usable_cpus(env)
    activity = section(env, "activity")
    steal = stored((activity.get("cpu") or {}).get("steal_percent"), NUMBER, "activity.cpu.steal_percent")
    quota = stored((virt.get("cgroup_cpu") or {}).get("quota_cpus"), NUMBER, "cgroup_cpu.quota_cpus")
    throttled = _throttled(activity, virt)
    vm = bool(virt.get("hypervisor_flag") or virt.get("hypervisor_type") or virt.get("dmi_virtual"))
    known = any(virt.get(k) is not None for k in ("hypervisor_flag", "hypervisor_type", "dmi"))
    short_quota = quota is not None and (quota < 1 or bool(cpus and quota < cpus))
    window = activity.get("window_s")
    data = {"virtual_machine": vm if known else None, "container": virt.get("container"),
            "hypervisor": (virt.get("hypervisor_type") or virt.get("dmi")) if vm else None,
            "steal_percent": steal, "quota_cpus": quota, "cpus": cpus, **throttled, "short_quota": short_quota,
            "window_s": window if isinstance(window, NUMBER) else None}
    if (quota is not None and quota < 1) or (steal is not None and steal >= 10):
        return found("virtualization", "fail", **data)
    if vm or short_quota or throttled["nr_throttled_now"] or (steal or 0) >= 1:
        return found("virtualization", "warn", **data)
    return found("virtualization", "unknown" if not known and virt.get("container") is None else "ok", **data)


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


def check_memory(env: Mapping) -> Finding:
    """Swap in use, swapping now, and memory pressure (PSI)."""
    mem = section(env, "memory")
    psi = section(env, "pressure").get("memory") or {}
    activity = section(env, "activity")
    if not mem and not psi:
        return found("memory", "unknown")
    total, available = mem.get("mem_total_kib"), mem.get("mem_available_kib")
    swap_used = (mem.get("swap_total_kib") or 0) - (mem.get("swap_free_kib") or 0)
    swapping = (activity.get("swap_in_pages") or 0) + (activity.get("swap_out_pages") or 0)
    data = {"memory": dict(mem), "pressure": dict(psi), "swapped_pages_now": swapping, "swap_used_kib": swap_used,
            "window_s": activity.get("window_s", 0)}
    tight = bool(total and available is not None and available < 0.1 * total)
    if swapping or psi.get("full_avg10", 0) >= 1:
        return found("memory", "fail", **data)
    if psi.get("some_avg10", 0) >= 1 or tight or (swap_used and total and available is not None
                                                  and available < 0.2 * total):
        return found("memory", "warn", **data)
    return found("memory", "ok" if mem else "unknown", **data)  # unknown: swap and free memory not read


def check_power(env: Mapping) -> Finding:
    """Power supply and platform profile: mains power is ok."""
    power = stored(env.get("power"), dict, "power")
    if power is None:
        return found("power", "unknown")
    on_battery = stored(power.get("on_battery"), bool, "power.on_battery")
    if on_battery is None:
        raise ValueError("power.on_battery is missing")
    profile = stored(power.get("platform_profile"), str, "power.platform_profile")
    batteries = [dict(b) for b in stored(power.get("batteries"), list, "power.batteries") or []]
    data = {**power, "batteries": batteries}
    return found("power", "warn" if on_battery or profile in LOW_POWER_PROFILES else "ok", **data)


CHECKS: tuple[tuple[str, Callable[[Mapping], Finding]], ...] = (
    ("load", check_load),
    ("governor", check_governor),
    ("turbo", check_turbo),
    ("smt", check_smt),
    ("aslr", check_aslr),
    ("isolation", check_isolation),
    ("clock", check_clock),
    ("perf", check_perf),
    ("virtualization", check_virtualization),
    ("memory", check_memory),
    ("power", check_power),
    ("thermal", check_thermal),
)
MALFORMED = (AttributeError, KeyError, TypeError, IndexError, ValueError)


def evaluate(environment: Mapping, *, live: bool = False) -> tuple[Finding, ...]:
    """Judge ``environment`` (as collected or as stored in a result document): one finding per check.

    ``live``: the metadata was read from this machine just now, so the load
    check may name processes by PID and say which to pause (``check_load``).
    A check that meets a value it cannot use (a missing key, a string where a
    number belongs) answers ``unknown`` with the key ``missing``, or what was ``malformed``.
    """
    return tuple(_guarded(check_id, functools.partial(check_load, live=live) if check is check_load
                          else check, environment) for check_id, check in CHECKS)


def _guarded(check_id: str, check: Callable[[Mapping], Finding], environment) -> Finding:
    try:
        return check(environment)
    except MALFORMED as exc:
        if isinstance(exc, KeyError) and exc.args:
            return found(check_id, "unknown", missing=str(exc.args[0])[:200])
        return found(check_id, "unknown", malformed=str(exc)[:200])


DOCTOR_WINDOW_S = 0.5  # the doctor can afford a longer look at "right now" than run can


def diagnose_machine(environment: Mapping, *, live: bool = False) -> Report:
    """``pairbench doctor``'s report on the machine metadata ``environment`` (collected now, or stored
    with a result: ``store.metadata.stored_environment``); the metadata goes in the report's details.

    ``live``: it was read from this machine just now (``pairbench doctor`` without
    ``--environment``), so the load finding may say which PIDs to pause.
    """
    return Report("environment", evaluate(environment, live=live), {"environment": environment})
