"""The doctor's findings in words: each check's title, what was read, why it matters, and the fix.

A finding is a note of code ``doctor-CHECK`` (``environment.findings``) whose
data holds its status and the figures it was judged from; its reading is
worded like every note (``READINGS``, part of ``report.wording.WORDINGS``;
``report.doctor.reading``), ``TITLES``, ``WHY`` and :func:`fix` give the
rest. Metadata from a file may hold values of the wrong type: a check that meets one says so
(``malformed``), and figures these words cannot use are shown as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pairbench.command import describe_status
from pairbench.environment.findings import Finding
from pairbench.environment.pausing import SHOWN_PROCESSES
from pairbench.units import format_duration, format_kib, format_rate

TITLES = {
    "load": "load", "governor": "CPU frequency governor", "turbo": "turbo boost", "smt": "SMT siblings",
    "aslr": "ASLR", "isolation": "isolated CPUs", "clock": "clock", "perf": "perf events",
    "virtualization": "virtualization", "memory": "memory", "power": "power supply", "thermal": "thermal throttling",
    "runs": "runs", "duration": "duration", "setup-overhead": "setup overhead", "memory-growth": "memory growth",
    "stability": "stability", "modality": "modes", "autocorrelation": "serial dependence", "outliers": "outliers",
    "context-switches": "context switches", "cpu-bound": "CPU-bound", "mean-min-gap": "mean-min gap", "name": "name",
}

WHY = {
    "load": ("other tasks compete for the CPU, caches, memory bandwidth and power budget: samples "
             "get slower and more spread, in bursts that follow the other tasks' phases"),
    "governor": ("a dynamic governor raises the clock only after load appears and lowers it in pauses, "
                 "so a short command runs partly at a low clock and a sample's time depends on what "
                 "ran just before it"),
    "turbo": ("turbo raises the clock while the package is cool and few cores are busy and lowers "
              "it as it heats or other cores wake, so the same work takes different times "
              "depending on what ran before and beside it"),
    "smt": ("SMT siblings share a core's execution units and caches: whatever runs on the "
            "sibling slows the benchmark by an amount that changes from sample to sample"),
    "aslr": ("each sample runs in a new process; with full randomization every process gets a "
             "different memory layout, so layout luck averages out over the samples instead of "
             "biasing all samples of one command the same way"),
    "isolation": ("without isolation the scheduler may put any task, timer tick or RCU callback on the "
                  "benchmark's CPU; isolcpus and nohz_full keep them off"),
    "clock": ("every sample is two clock reads: a coarse clock quantizes short samples and a slow "
              "clock source (hpet, acpi_pm) adds its read cost to every sample"),
    "perf": ("hardware counters (perf stat -e cycles,instructions) measure a command's work without "
             "the timer's and the scheduler's noise; above 2, users cannot count even their own "
             "processes"),
    "virtualization": ("a hypervisor schedules the virtual CPUs (time it gives to other guests is steal), "
                       "and a cgroup quota pauses the benchmark when its share runs out: both add delays the "
                       "command did not cause, and numbers from different hosts are not comparable"),
    "memory": ("a benchmark that waits for memory (reclaim, swap-in) takes longer by amounts that "
               "depend on everything else running: slow, erratic samples"),
    "power": ("on battery, or in a low-power profile, firmware lowers power limits and clock speeds "
              "and changes them as the charge falls"),
    "thermal": ("a throttled CPU runs slower until it cools, so samples taken after a hot stretch are "
                "slower than those before it"),
    "runs": "a failing run measures the failure, not the benchmark",
    "duration": ("when most of a sample is process start-up, or a few timer steps, the command's own "
                 "work is a small part of what is measured and its changes drown in start-up noise"),
    "setup-overhead": ("a fixed cost in every sample dilutes the per-iteration work: a 10% change in the "
                       "work shows as a smaller change in the sample, and the setup's own noise is added"),
    "memory-growth": ("a benchmark whose memory grows with its iteration count does different work at "
                      "different counts (allocation, page faults, reclaim), so its per-iteration time is "
                      "not a constant; the Swift benchmark suite's validation rules (BenchmarkDoctor) call such "
                      "benchmarks written incorrectly"),
    "stability": ("a large spread needs many more samples for the same precision, and usually means "
                  "something outside the command is changing its time"),
    "modality": ("two or more modes mean the command takes different paths or the machine switches "
                 "states; a single summary then describes none of them"),
    "autocorrelation": ("neighbouring samples that resemble each other (drift, warming, periodic load) carry "
                        "less information than their number says, and the textbook error of the mean is "
                        "then too small"),
    "outliers": ("samples beyond the Tukey fence are usually interruptions (other tasks, interrupts, "
                 "page faults); pairbench reports them and never removes them"),
    "context-switches": ("an involuntary context switch means another task took the CPU mid-sample; the "
                         "sample then includes that task's time slice"),
    "cpu-bound": ("a verdict on CPU time (--metric cpu) leaves other tasks' time slices out, and so stays steady "
                  "on a busy machine, but it leaves out the command's own waiting and adds up its threads too"),
    "mean-min-gap": ("the minimum is the time without interference; a mean far above it says a long tail "
                     "of disturbed samples (the gap between mean and minimum is Daniel Lemire's error metric)"),
    "name": "long names are cut or wrap in report tables, hiding which benchmark a row is",
}


def fix(finding: Finding) -> str:
    """The exact command or step that fixes it ("" when there is nothing to do)."""
    d = finding.note.data
    if "malformed" in d or "missing" in d:
        return ""
    remedy = FIXES.get(finding.check, "")
    try:
        if d["status"] not in ("warn", "fail") and finding.check not in FIXED_WHATEVER_STATUS:
            return ""
        return remedy if isinstance(remedy, str) else remedy(d, d["status"])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return ""


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


# ------------------------------------------------------------------ the machine


def _governor(d: Mapping) -> str:
    if not d.get("governors"):
        return ("no /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor (typical of VMs "
                "and containers: the host sets the frequency)")
    return ", ".join(f"{name} on {n} CPU{'s' * (n > 1)}" for name, n in sorted(d["governors"].items()))


def _turbo(d: Mapping) -> str:
    if "enabled" not in d:
        return ("no intel_pstate/no_turbo or cpufreq/boost file in /sys/devices/system/cpu (no boost control "
                "visible, e.g. in a VM)")
    return f"{'enabled' if d['enabled'] else 'disabled'} ({d['file']})"


def _turbo_fix(d: Mapping, status: str) -> str:
    return f"echo {'1' if d['file'].endswith('no_turbo') else '0'} | sudo tee {d['file']}"


def _smt(d: Mapping) -> str:
    if d["status"] == "warn":
        shared = "; ".join("CPUs " + cpu_list_text(g) + " share a core" for g in d["sibling_groups"][:3])
        return f"active (smt/control = {d['control']})" + (f": {shared}" if shared else "")
    if d["status"] == "unknown":
        return "no /sys/devices/system/cpu/smt and no sibling CPUs listed"
    return f"none active (smt/control = {d['control']})"


def _smt_fix(d: Mapping, status: str) -> str:
    return ("echo off | sudo tee /sys/devices/system/cpu/smt/control" if d["control"] == "on"
            else "disable SMT (Hyper-Threading) in the firmware setup")


def _thermal(d: Mapping) -> str:
    if "core_throttle_count" not in d:
        return ("no /sys/devices/system/cpu/cpu*/thermal_throttle counters (Intel CPUs have them; VMs and most "
                "AMD/ARM systems do not)")
    return f"{d['core_throttle_count']} core and {d['package_throttle_count']} package throttling events since boot"


def _load(d: Mapping) -> str:
    if d["status"] == "unknown":
        return "cannot read /proc/loadavg or /proc/stat"
    load, busy, cpus, busiest = d["load_average"], d["busy_cpus_now"], d["cpus"], d["busiest_processes"]
    parts = []
    if load:
        parts.append(f"load average {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)" + (f" on {cpus} CPUs" if cpus else ""))
    if busy is not None:
        parts.append(f"{busy:.2f} CPUs busy in the last {d['window_s'] * 1000:.0f} ms")
    if d.get("cpu_pressure") is not None:
        parts.append(f"tasks waited for a CPU {d['cpu_pressure']:.1f}% of the last 10 s (PSI)")
    if busiest and d.get("live"):
        parts.append("busiest: " + ", ".join(f"{p.get('command') or p['name']} (pid {p['pid']}, {p['cpu_percent']:.0f}%)"
                                              for p in busiest[:SHOWN_PROCESSES]))
    elif busiest:
        parts.append("busiest: " + ", ".join(f"{p['name']} ({p['cpu_percent']:.0f}%)" for p in busiest[:SHOWN_PROCESSES]))
    return "; ".join(parts)


UNPAUSABLE = {"parent": "a parent of pairbench", "kernel-thread": "a kernel thread",
              "session": "part of the desktop or login session"}


def _load_fix(d: Mapping, status: str) -> str:
    """Pause the busy processes that may be paused; never pairbench's parents or the session. PIDs
    are named only for metadata read live: one read from a file may belong to another process by now."""
    if not d["busiest_processes"]:
        return "stop background jobs and wait until `uptime` shows a load well below 0.5"
    if not d.get("live"):
        return ("stop the busy programs or wait until they are idle; run `pairbench doctor` on that machine "
                "to see which processes to pause")
    kept = ", ".join(f"{p['name']} (pid {p['pid']}, {UNPAUSABLE[p['why']]})" for p in d["keep"])
    if not d["pause"]:
        return f"close the programs that keep them busy, or wait until they are idle; do not pause {kept}"
    pids = " ".join(map(str, d["pause"]))
    return f"pause them while you measure: kill -STOP {pids} (then kill -CONT {pids})" + (
        f"; leave {kept} running" if kept else "")


def _isolation(d: Mapping) -> str:
    if d["status"] == "unknown":
        return "cannot read /sys/devices/system/cpu/isolated"
    isolated, allowed, nohz = d["isolated"], d["allowed_cpus"], d["nohz_full"]
    tickless = f"; nohz_full: {cpu_list_text(nohz) if nohz else 'none'}" if nohz is not None else ""
    if isolated:
        where = (f"; pairbench runs on {cpu_list_text(allowed)}" if d["status"] == "ok" else
                 f"; pairbench may run on {cpu_list_text(allowed)}" if allowed else "")
        return f"isolated: {cpu_list_text(isolated)}{tickless}{where}"
    return "none (a single CPU: nothing to isolate from)" if d["status"] == "ok" else f"none{tickless}"


def _isolation_fix(d: Mapping, status: str) -> str:
    if d["isolated"]:
        return f"taskset -c {cpu_list_text(d['isolated'])} pairbench ..."
    last = d["suggested_cpu"]
    return (f"add isolcpus={last} nohz_full={last} rcu_nocbs={last} to GRUB_CMDLINE_LINUX in "
            f"/etc/default/grub, run sudo update-grub, reboot, then measure with taskset -c {last} pairbench ...")


ASLR_NAMES = {0: "off", 1: "conservative (heap not randomized)", 2: "full randomization"}


def _aslr(d: Mapping) -> str:
    if "randomize_va_space" not in d:
        return "cannot read /proc/sys/kernel/randomize_va_space"
    return f"{ASLR_NAMES[d['randomize_va_space']]} (randomize_va_space = {d['randomize_va_space']})"


def _clock(d: Mapping) -> str:
    current, step = d["clocksource"], d["measured_resolution_ns"]
    parts = [f"clock source {current} (available: {' '.join(d['available'])})" if current else
             "clock source unreadable (/sys/devices/system/clocksource)"]
    if step:
        parts.append(f"CLOCK_MONOTONIC steps measured at {format_duration(step)}")
    return "; ".join(parts)


def _clock_fix(d: Mapping, status: str) -> str:
    """Switch to tsc when the kernel offers it and it is not in use; else what can be done."""
    current, available, step = d["clocksource"], d["available"], d["measured_resolution_ns"]
    if status == "fail":
        return "use a system with a high-resolution clock (Linux: tsc)"
    if "tsc" in available and current != "tsc":
        return "echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource"
    if d.get("slow_source"):
        return ("no faster clock source to switch to: check the kernel log (dmesg | grep -i "
                "clocksource) for why tsc was rejected")
    shortest = format_duration(step * 1000) if step else "1 ms"
    return (f"no clock source to switch to ({current or 'the current one'} is the fastest offered): "
            f"keep every sample above {shortest}, so the clock's step is under 0.1% of it")


def _perf(d: Mapping) -> str:
    if "perf_event_paranoid" not in d:
        return "cannot read /proc/sys/kernel/perf_event_paranoid"
    rate = d["perf_event_max_sample_rate"]
    return f"perf_event_paranoid = {d['perf_event_paranoid']}" + (
        f", perf_event_max_sample_rate = {rate}/s" if rate is not None else "")


def _virtualization(d: Mapping) -> str:
    parts = [_where(d)]
    if d["steal_percent"] is not None:
        parts.append(f"steal {d['steal_percent']:.1f}% now")
    if d["quota_cpus"] is not None:
        parts.append(f"cgroup CPU quota {d['quota_cpus']:g} CPUs")
    return "; ".join(parts + list(filter(None, [_throttling(d)])))


def _throttling(d: Mapping) -> str:
    """ "throttled in 1 of 1 quota periods in the last 100 ms (313 since the cgroup began)"; "" if never."""
    now, periods, total = d["nr_throttled_now"], d["nr_periods_now"], d["nr_throttled"]
    if not now and not total:
        return ""
    if now is None:  # a document from before the window was measured: the total alone
        return f"throttled in {total} quota periods since the cgroup began"
    window = f"the last {d['window_s'] * 1000:.0f} ms" if d.get("window_s") is not None else "the activity window"
    text = (f"not throttled in {window}" if not now else
            f"throttled in {now} of {periods} quota periods in {window}" if periods else
            f"throttled in {now} quota periods in {window}")
    return text + (f" ({total} since the cgroup began)" if total else "")


def _where(d: Mapping) -> str:
    inside = f"{d['container']} container" if d["container"] else ""
    if d["virtual_machine"]:
        how = d["hypervisor"] or "hypervisor flag in /proc/cpuinfo"
        return f"virtual machine ({how})" + (f", in a {inside}" if inside else "")
    if d["virtual_machine"] is not None:
        return "bare metal" + (f", in a {inside}" if inside else "")
    return inside or "cannot tell (no cpuinfo flags, /sys/hypervisor or DMI data)"


def _virtualization_fix(d: Mapping, status: str) -> str:
    """The fix for each cause found: a quota below the CPUs, throttling now, steal or a VM."""
    fixes = []
    steal, quota, cpus = d["steal_percent"], d["quota_cpus"], d["cpus"]
    if d["short_quota"]:
        whole = max(1, cpus or -int(-quota // 1))
        fixes.append(f"give the container all {whole} CPUs it may run on (docker run --cpus={whole}) "
                     "or remove the quota while measuring")
    elif d["nr_throttled_now"]:
        fixes.append("remove the cgroup's CPU quota while measuring, or stop the other work in the "
                     "cgroup: together they used up its quota")
    if d["virtual_machine"]:
        fixes.append("measure on bare metal or on an instance with dedicated cores, and compare only "
                     "results from the same instance type")
    elif (steal or 0) >= 1:
        fixes.append("measure when the host is idle, or on an instance with dedicated cores")
    return "; also ".join(fixes) or "measure when the host is idle"


def _memory(d: Mapping) -> str:
    if d["status"] == "unknown" and not d.get("memory") and not d.get("pressure"):
        return "cannot read /proc/meminfo or /proc/pressure/memory"
    mem, psi = d["memory"], d["pressure"]
    total, available = mem.get("mem_total_kib"), mem.get("mem_available_kib")
    parts = []
    if total and available is not None:
        parts.append(f"{format_kib(available)} of {format_kib(total)} available")
    if mem.get("swap_total_kib") is None:
        parts.append("swap unknown (cannot read /proc/meminfo)")
    else:
        parts.append(f"swap in use {format_kib(d['swap_used_kib'])}" if d["swap_used_kib"] else "no swap in use")
    if d["swapped_pages_now"]:
        parts.append(f"{d['swapped_pages_now']} pages swapped in the last {d['window_s'] * 1000:.0f} ms")
    if psi:
        parts.append(f"memory pressure {psi.get('some_avg10', 0):.1f}% some, "
                     f"{psi.get('full_avg10', 0):.1f}% full (last 10 s)")
    return "; ".join(parts)


def _power(d: Mapping) -> str:
    if "on_battery" not in d:
        return "no /sys/class/power_supply"
    charge = ", ".join(f"{b.get('name')} {b.get('status') or 'status unknown'}"
                       + (f" {b['capacity']}%" if b.get("capacity") is not None else "") for b in d["batteries"])
    profile = f"; platform profile {d['platform_profile']}" if d.get("platform_profile") else ""
    if d["on_battery"]:
        return "on battery" + (f" ({charge})" if charge else "") + profile
    if d.get("mains_online"):
        return "mains power" + (f" ({charge})" if charge else "") + profile
    if not d["batteries"]:
        return "no battery found" + profile
    mains = "no mains supply online" if d.get("mains_online") is False else "no mains supply listed"
    return f"battery not discharging ({charge}); {mains}" + profile


def _power_fix(d: Mapping, status: str) -> str:
    return "plug in the charger" if d["on_battery"] else "echo performance | sudo tee /sys/firmware/acpi/platform_profile"


# ------------------------------------------------------------------ a benchmark


def _runs(d: Mapping) -> str:
    at = f" with {d['iterations']} iterations" if d["iterated"] else ""
    return f"{d['command']!r}{at} ended with {describe_status(d['exit_status'])}"


def _duration(d: Mapping) -> str:
    wall, share, resolution = d["median_ns"], d.get("startup_share"), d["timer_resolution_ns"]
    parts = [f"median {format_duration(wall)}"]
    if share is not None:
        parts.append(f"process start-up (true) {format_duration(d['startup_ns'])} is {100 * share:.1f}% of it")
    if resolution:
        parts.append(f"{wall / resolution:,.0f} timer steps")
    return "; ".join(parts) + ("; start-up and timer unknown" if d["status"] == "unknown" else "")


def _duration_fix(d: Mapping, status: str) -> str:
    more = ("use a larger {iterations} count" if d["iterated"]
            else "batch more work per run (a loop inside the command, or an iteration count argument)")
    return f"{more} until a run takes at least {format_duration(d['target_ns'])}"


def _pct(share: float | None) -> str:
    return "?" if share is None else f"{100 * share:.1f}%"


def _setup_overhead(d: Mapping) -> str:
    if "intercept" not in d:
        return "no variation in the times to fit a line"
    text = (f"fixed cost {format_duration(d['intercept'])} ± {format_duration(d['intercept_ci'])} per sample, "
            f"{format_duration(d['slope'])} ± {format_duration(d['slope_ci'])} per iteration "
            f"(R² {d['r_squared']:.3f})")
    if d["startup_ns"]:
        text += (f"; minus process start-up ({format_duration(d['startup_ns'])}) the setup is "
                 f"{format_duration(d['setup_ns'])}")
    if d["setup_share"] is not None:
        text += f", {100 * d['setup_share']:.1f}% of a {d['share_at_iterations']}-iteration sample"
    if d["status"] == "unknown":
        low, high = d["share_interval"]
        text += f"; its 95% interval ({_pct(low)} to {_pct(high)}) straddles 5%"
    return text


def _setup_overhead_fix(d: Mapping, status: str) -> str:
    if status == "unknown" and "intercept" in d:
        return "take more runs (--runs) or try counts further apart (--iterations)"
    if status != "warn":
        return ""
    needed = d["needed_iterations"]
    more = f"use {{iterations}} >= {needed} so it is under 5%" if needed else "raise the work per sample"
    return ("move the setup out of the timed command (pairbench --setup runs once, --prepare before "
            f"every sample, untimed), or {more}")


def _memory_growth(d: Mapping) -> str:
    censored, floor = d["censored_counts"], d["rss_floor_kib"]
    if d["status"] == "unknown":
        return (f"max RSS is at the executor's floor ({format_kib(floor)}, the size of the process "
                f"that spawns commands) at {len(censored)} of {len(d['counts'])} iteration counts: "
                "growth below it cannot be seen")
    low, high = d["low_count"], d["high_count"]
    if "constant_kib" in d:
        return f"constant at {format_kib(d['constant_kib'])} for {low}-{high} iterations"
    text = (f"{format_kib(d['slope'])} per iteration (one-sided p = {d['pvalue']:.2g}): "
            f"{format_kib(d['intercept'] + d['slope'] * low)} at {low}, "
            f"{format_kib(d['intercept'] + d['slope'] * high)} at {high} iterations")
    return text + (f" (counts {', '.join(map(str, censored))} at the floor, left out)" if censored else "")


def _memory_growth_fix(d: Mapping, status: str) -> str:
    if status == "unknown":
        return "try larger iteration counts (--iterations) so the peak rises above the floor"
    return ("allocate once, outside the iteration loop, and reuse it (or free what each iteration "
            "allocates)") if status == "warn" else ""


def _stability(d: Mapping) -> str:
    if d["cv"] is None:
        return f"CV undefined for n = {d['n']} (no spread to measure)"
    text = f"CV {100 * d['cv']:.1f}% (SD {format_duration(d['sd'])} on a mean of {format_duration(d['mean'])})"
    return text + (f"; IQR/median {100 * d['iqr_over_median']:.1f}%" if d["iqr_over_median"] is not None else "")


def _modality(d: Mapping) -> str:
    if d["modality"] is None:
        return (f"need at least 12 samples to judge modes, got {d['n']}" if d["modes"] is None else
                f"one mode found, but at least 30 samples are needed to call them unimodal, got {d['n']}")
    places = ", ".join(format_duration(x) for x in d["mode_locations"])
    return (f"{d['modality']}: the lowland detector finds {d['modes']} mode(s) near {places} "
            f"(mvalue {d['mvalue']:.2f})")


def autocorrelation(d: Mapping, word: Callable) -> str:
    """The serial-dependence reading; a statistic's refusal is worded by ``word`` as its note (else its
    own message)."""
    if "refusal" in d:
        refusal = d["refusal"]
        return f"cannot test: {word(refusal) if 'code' in refusal else refusal['message']}"
    return f"lag-1 autocorrelation {d['lag1']:+.2f}; Ljung-Box p = {d['ljung_box_pvalue']:.2g} ({d['lags']} lags)"


def _outliers(d: Mapping) -> str:
    return (f"{d['above_fence']} of {d['n']} samples above Q3 + 1.5 IQR ({format_duration(d['upper_fence_ns'])}); "
            f"clean timings put about {100 * d['rate']:.0f}% there (binomial P = {d['pvalue']:.2g})")


def _context_switches(d: Mapping) -> str:
    return (f"{format_rate(d['excess_per_s'])} involuntary switches beyond the quietest sample's "
            f"({d['quietest']}), in {d['affected_samples']} of {d['n']} samples")


CPU_BOUND_READING = {
    "cpu-bound": ("CPU-bound: {off} of its time off the CPU in the {quiet} samples no other task interrupted; "
                  "CPU time {ratio:.2f}x wall time"),
    "off-cpu": ("not CPU-bound: {off} of its time off the CPU (sleeping, reading, or waiting for a child or a "
                "lock) in the {quiet} samples no other task interrupted"),
    "threads": "several threads or processes at once: CPU time is {ratio:.2f}x wall time",
    "unknown": ("other tasks interrupted every sample, or all but a few (fewer than a quarter ran "
                "uninterrupted), so its own time off the CPU cannot be told "
                "(CPU time {ratio:.2f}x wall time)"),
    "waits": ("not CPU-bound: nearly every sample was interrupted by other tasks, but each also gave up the CPU "
              "itself (sleeping, reading, or waiting for a child or a lock); CPU time {ratio:.2f}x wall time"),
}
CPU_BOUND_FIX = {
    "cpu-bound": "compare it on CPU time (--metric cpu): other tasks' time slices are then left out",
    "off-cpu": "compare it on wall time (--metric wall): CPU time leaves its waiting out",
    "threads": ("compare it on wall time (--metric wall) for how long it takes; CPU time adds up what runs at "
                "once"),
    "unknown": "run it on a quieter machine to tell, or compare it on wall time (--metric wall)",
    "waits": "compare it on wall time (--metric wall): CPU time leaves its waiting out",
}


def _cpu_bound(d: Mapping) -> str:
    off = f"{100 * d['off_cpu_share']:.1f}%" if d["off_cpu_share"] is not None else "-"
    return CPU_BOUND_READING[d["kind"]].format(off=off, quiet=d["unswitched"], ratio=d["cpu_over_wall"])


def _mean_min_gap(d: Mapping) -> str:
    if d["mean_min_gap"] is None:
        return "undefined (minimum <= 0)"
    return f"(mean - min) / mean = {100 * d['mean_min_gap']:.1f}%"


def _name(d: Mapping) -> str:
    return f"{d['length']} characters" + (f" (over {d['max']})" if d["status"] == "warn" else "")


def worded(text: Callable[[Mapping], str]) -> Callable[[Mapping, str], str]:
    """A reading as ``WORDINGS`` takes it; a check that met a malformed value says which."""
    def reading(d: Mapping, unit: str) -> str:
        if "missing" in d:
            return f"stored value malformed: {d['missing']!r} is missing"
        return f"stored value malformed: {d['malformed']}" if "malformed" in d else text(d)

    return reading


READINGS: dict[str, Callable[[Mapping, str], str]] = {"doctor-" + check: worded(text) for check, text in {
    "load": _load, "governor": _governor, "turbo": _turbo, "smt": _smt, "aslr": _aslr, "isolation": _isolation,
    "clock": _clock, "perf": _perf, "virtualization": _virtualization, "memory": _memory, "power": _power,
    "thermal": _thermal, "runs": _runs, "duration": _duration, "setup-overhead": _setup_overhead,
    "memory-growth": _memory_growth, "stability": _stability, "modality": _modality,
    "outliers": _outliers, "context-switches": _context_switches,
    "cpu-bound": _cpu_bound, "mean-min-gap": _mean_min_gap, "name": _name,
}.items()}

FIXED_WHATEVER_STATUS = frozenset({"setup-overhead", "memory-growth", "cpu-bound"})
"""The checks whose fix its function gives for any status (an unknown's too); others have one only
for a warning or a failure."""
FIXES: dict[str, str | Callable[[Mapping, str], str]] = {
    # a text: the one fixed step; a function: the fix its figures (and status) call for
    "load": _load_fix,
    "governor": "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
    "turbo": _turbo_fix,
    "smt": _smt_fix,
    "aslr": "sudo sysctl -w kernel.randomize_va_space=2",
    "isolation": _isolation_fix,
    "clock": _clock_fix,
    "perf": "sudo sysctl -w kernel.perf_event_paranoid=2",
    "virtualization": _virtualization_fix,
    "memory": "free memory (close programs); once there is room, sudo swapoff -a && sudo swapon -a "
              "brings swapped pages back",
    "power": _power_fix,
    "thermal": "improve cooling or disable turbo, then check the counters stay still while you "
               "measure: grep . /sys/devices/system/cpu/cpu*/thermal_throttle/*_count",
    "runs": "make the command succeed on its own first (run it in a shell and check `echo $?`)",
    "duration": _duration_fix,
    "setup-overhead": _setup_overhead_fix,
    "memory-growth": _memory_growth_fix,
    "stability": "quiet the machine (see `pairbench doctor`) and look for a cause inside the "
                 "command (I/O, caches, garbage collection)",
    "modality": "plot the samples in time order (pairbench report) to find what switches",
    "autocorrelation": "compare variants with pairbench compare (interleaved pairs cancel shared "
                       "drift) and add warmup runs (--warmup)",
    "outliers": "quiet the machine (pairbench doctor) or use more samples",
    "context-switches": "stop other CPU-heavy work while measuring (pairbench doctor lists the "
                        "busiest processes)",
    "cpu-bound": lambda d, status: CPU_BOUND_FIX[d["kind"]],
    "mean-min-gap": "quiet the machine (pairbench doctor); compare medians or paired ratios, "
                    "which a tail moves less than a mean",
    "name": lambda d, status: f"give it a shorter name with --name (at most {d['max']} characters)",
}
