"""Environment checks judge each fixture machine as a benchmarker would, and unreadable means unknown."""

from __future__ import annotations

import copy

import pytest

from pairbench.analysis.rules import machine_notes
from pairbench.environment.checks import (
    check_clock,
    check_load,
    check_power,
    check_smt,
    check_virtualization,
    diagnose_machine,
    evaluate,
)
from pairbench.report.doctor import reading
from pairbench.report.findings import WHY, cpu_list_text, fix

EXPECTED = {
    "tuned-server": dict(load="ok", governor="ok", turbo="ok", smt="ok", aslr="ok", isolation="ok",
                         clock="ok", perf="ok", virtualization="ok", memory="ok", power="ok",
                         thermal="ok"),
    "noisy-laptop": dict(load="fail", governor="warn", turbo="warn", smt="warn", aslr="ok",
                         isolation="warn", clock="ok", perf="warn", virtualization="ok",
                         memory="fail", power="warn", thermal="warn"),
    "container": dict(load="warn", governor="unknown", turbo="unknown", smt="unknown",
                      aslr="unknown", isolation="unknown", clock="ok", perf="unknown",
                      virtualization="fail", memory="unknown", power="unknown", thermal="unknown"),
    "vm": dict(load="ok", governor="unknown", turbo="unknown", smt="ok", aslr="ok",
               isolation="warn", clock="ok", perf="ok", virtualization="fail", memory="ok",
               power="unknown", thermal="unknown"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_machine_gets_the_expected_status_per_check(machine, name):
    findings = {f.check: f.status for f in evaluate(machine(name))}
    assert findings == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_finding_that_is_not_ok_says_why_and_every_warning_says_how_to_fix(machine, name):
    for finding in evaluate(machine(name)):
        assert reading(finding) and WHY[finding.check]
        if finding.status in ("warn", "fail"):
            assert fix(finding), finding.check


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_machine_finding_that_is_ok_or_unknown_offers_no_fix(machine, name):
    for finding in evaluate(machine(name)):
        if finding.status in ("ok", "unknown"):
            assert fix(finding) == "", finding.check


def test_overall_status_is_the_worst_finding(machine):
    assert diagnose_machine(machine("tuned-server")).status == "ok"
    assert diagnose_machine(machine("noisy-laptop")).status == "fail"
    report = diagnose_machine(machine("container"))
    assert report.status == "fail"
    assert report.counts() == {"ok": 1, "unknown": 9, "warn": 1, "fail": 1}


def test_noisy_laptop_names_the_busy_processes_and_pauses_all_but_the_desktop_shell(machine):
    load = {f.check: f for f in evaluate(machine("noisy-laptop", live=True), live=True)}["load"]
    assert "load average 3.41 (1 min), 2.87 (5 min) on 4 CPUs" in reading(load)
    assert "3.60 CPUs busy in the last 100 ms" in reading(load)
    assert "firefox -contentproc -childID 7 (pid 2001, 90%)" in reading(load)
    assert "/usr/bin/gnome-shell (pid 2003, 10%)" in reading(load)  # named: it is busy
    assert fix(load) == ("pause them while you measure: kill -STOP 2001 2002 (then kill -CONT 2001 2002); "
                        "leave gnome-shell (pid 2003, part of the desktop or login session) running")


def test_fixes_are_the_exact_commands(machine):
    laptop = {f.check: f for f in evaluate(machine("noisy-laptop"))}
    assert fix(laptop["governor"]) == (
        "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")
    assert fix(laptop["turbo"]) == "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"
    assert fix(laptop["smt"]) == "echo off | sudo tee /sys/devices/system/cpu/smt/control"
    assert fix(laptop["perf"]) == "sudo sysctl -w kernel.perf_event_paranoid=2"
    assert fix(laptop["isolation"]).startswith("add isolcpus=3 nohz_full=3 rcu_nocbs=3 to GRUB_CMDLINE_LINUX")
    assert fix(laptop["power"]) == "plug in the charger"
    assert laptop["memory"].status == "fail" and "32 pages swapped" in reading(laptop["memory"])


def test_a_cgroup_quota_under_one_cpu_fails_and_says_how_much_to_give(machine):
    virt = {f.check: f for f in evaluate(machine("container"))}["virtualization"]
    assert reading(virt) == ("docker container; cgroup CPU quota 0.5 CPUs; throttled in 1 of 1 quota "
                            "periods in the last 100 ms (312 since the cgroup began)")
    # the check warns while the quota is below the CPUs pairbench may run on, so the fix names those
    assert fix(virt).startswith("give the container all 4 CPUs it may run on (docker run --cpus=4)")


def test_vm_steal_over_ten_percent_fails(machine):
    virt = {f.check: f for f in evaluate(machine("vm"))}["virtualization"]
    assert virt.status == "fail"
    assert reading(virt) == "virtual machine (QEMU Standard PC (Q35 + ICH9, 2009)); steal 12.5% now"


def test_a_vm_without_steal_only_warns(machine):
    env = machine("vm")
    env["activity"]["cpu"]["steal_percent"] = 0.0
    assert check_virtualization(env).status == "warn"


def test_an_old_document_without_the_new_metadata_is_judged_unknown_not_failed():
    old = {"load_average": [0.1, 0.1, 0.1], "governors": {}, "turbo_boost": None,
           "logical_cpus": 4, "timer": {"measured_resolution_ns": 40}}
    statuses = {f.check: f.status for f in evaluate(old)}
    assert statuses["load"] == "ok" and statuses["clock"] == "ok"
    assert all(s in ("ok", "unknown") for s in statuses.values())


@pytest.mark.parametrize(("load", "cpus", "status"), [
    (0.3, 2, "ok"), (0.5, 2, "warn"), (1.5, 2, "warn"), (1.51, 2, "fail"), (1.9, 2, "fail"),
    (0.4, 1, "ok"), (0.6, 1, "fail"), (7.5, 8, "warn"), (7.6, 8, "fail"),
])
def test_load_fails_when_less_than_half_a_cpu_is_left_for_the_benchmark(load, cpus, status):
    env = {"load_average": [load, load, load], "online_cpus": list(range(cpus))}
    assert check_load(env).status == status


def test_busy_cpus_now_count_even_when_the_load_average_is_still_low():
    env = {"load_average": [0.1, 0.1, 0.1], "online_cpus": [0, 1],
           "activity": {"window_s": 0.1, "cpu": {"busy_cpus": 1.8}, "busiest_processes": []}}
    assert check_load(env).status == "fail"


@pytest.mark.parametrize(("source", "step", "status"), [
    ("tsc", 25, "ok"), ("hpet", 25, "warn"), ("tsc", 2_000, "warn"), ("tsc", 1_000_000, "fail"),
    (None, None, "unknown"),
])
def test_clock_judges_the_source_and_the_measured_step(source, step, status):
    env = {"clocksource": {"current": source, "available": ["tsc", "hpet"] if source else None},
           "timer": {"measured_resolution_ns": step}}
    assert check_clock(env).status == status


def test_slow_clocksource_fix_switches_to_tsc_when_available():
    env = {"clocksource": {"current": "hpet", "available": ["hpet", "tsc"]},
           "timer": {"measured_resolution_ns": 700}}
    assert fix(check_clock(env)) == (
        "echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource")


def test_low_power_profile_warns_even_on_mains():
    env = {"power": {"on_battery": False, "mains_online": True, "batteries": [],
                     "platform_profile": "low-power"}}
    finding = check_power(env)
    assert finding.status == "warn"
    assert fix(finding) == "echo performance | sudo tee /sys/firmware/acpi/platform_profile"


def test_smt_siblings_without_a_control_file_still_warn():
    env = {"smt": {"control": None, "active": None, "sibling_groups": [[0, 4], [1, 5]]}}
    finding = check_smt(env)
    assert finding.status == "warn"
    assert fix(finding) == "disable SMT (Hyper-Threading) in the firmware setup"
    assert "CPUs 0,4 share a core" in reading(finding)


def test_isolated_cpus_unused_by_pairbench_warn_with_the_taskset_command(machine):
    env = copy.deepcopy(machine("tuned-server"))
    env["isolation"]["allowed_cpus"] = list(range(8))
    finding = {f.check: f for f in evaluate(env)}["isolation"]
    assert finding.status == "warn" and fix(finding) == "taskset -c 6-7 pairbench ..."


def test_cpu_list_text_compresses_ranges():
    assert cpu_list_text([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert cpu_list_text([3]) == "3"


def test_isolation_advice_names_a_cpu_pairbench_may_run_on():
    env = {"online_cpus": list(range(8)), "logical_cpus": 8,
           "isolation": {"allowed_cpus": [2, 3], "isolated": [], "nohz_full": []}}
    iso = {f.check: f for f in evaluate(env)}["isolation"]
    assert iso.status == "warn"
    assert "isolcpus=3 nohz_full=3 rcu_nocbs=3" in fix(iso) and "taskset -c 3 pairbench" in fix(iso)


def test_pinned_to_one_cpu_of_many_is_not_called_nothing_to_isolate_from():
    env = {"online_cpus": list(range(8)), "logical_cpus": 8,
           "isolation": {"allowed_cpus": [5], "isolated": [], "nohz_full": []}}
    iso = {f.check: f for f in evaluate(env)}["isolation"]
    assert iso.status == "warn" and "taskset -c 5 pairbench" in fix(iso)


def test_memory_without_meminfo_does_not_claim_no_swap():
    env = {"pressure": {"memory": {"some_avg10": 0.0, "full_avg10": 0.0}}}
    mem = {f.check: f for f in evaluate(env)}["memory"]
    assert mem.status == "unknown"
    assert "swap unknown (cannot read /proc/meminfo)" in reading(mem)


# ------------------------------------------------------------------ power wording


def test_a_full_battery_without_a_mains_supply_is_not_called_no_battery_found():
    env = {"power": {"on_battery": False, "mains_online": None, "platform_profile": None,
                     "batteries": [{"name": "BAT0", "status": "Full", "capacity": 100}]}}
    finding = check_power(env)
    assert finding.status == "ok"
    assert reading(finding) == "battery not discharging (BAT0 Full 100%); no mains supply listed"


def test_a_desktop_without_batteries_says_no_battery_found():
    env = {"power": {"on_battery": False, "mains_online": None, "platform_profile": None,
                     "batteries": []}}
    assert reading(check_power(env)) == "no battery found"


# ------------------------------------------------------------------ clock fix


@pytest.mark.parametrize("available", [["tsc", "hpet"], ["tsc"]])
def test_a_coarse_step_on_tsc_does_not_suggest_switching_to_tsc(available):
    env = {"clocksource": {"current": "tsc", "available": available},
           "timer": {"measured_resolution_ns": 2_000}}
    finding = check_clock(env)
    assert finding.status == "warn"
    assert "echo tsc" not in fix(finding)
    assert fix(finding) == ("no clock source to switch to (tsc is the fastest offered): keep every "
                           "sample above 2.000 ms, so the clock's step is under 0.1% of it")


def test_a_slow_clock_source_without_tsc_points_to_the_kernel_log():
    env = {"clocksource": {"current": "hpet", "available": ["hpet", "acpi_pm"]},
           "timer": {"measured_resolution_ns": 700}}
    assert fix(check_clock(env)).startswith("no faster clock source to switch to: check the kernel log")


# ------------------------------------------------------------------ virtualization fix by cause

VM_FIX = ("measure on bare metal or on an instance with dedicated cores, and compare only results "
          "from the same instance type")


def _virt_env(*, vm=True, steal=0.0, quota=None, cpus=4, throttled_now=None, throttled_total=None):
    return {"online_cpus": list(range(cpus)), "logical_cpus": cpus,
            "isolation": {"allowed_cpus": list(range(cpus))},
            "virtualization": {"hypervisor_flag": vm, "container": "docker",
                               "cgroup_cpu": {"quota_cpus": quota, "nr_throttled": throttled_total}},
            "activity": {"window_s": 0.1, "cpu": {"steal_percent": steal, "busy_cpus": 0.1},
                         "cgroup_nr_throttled": throttled_now, "cgroup_nr_periods": 1}}


def test_steal_with_a_quota_of_all_cpus_gets_vm_advice_not_quota_advice():
    finding = check_virtualization(_virt_env(steal=15.0, quota=4.0, cpus=4))
    assert finding.status == "fail"
    assert fix(finding) == VM_FIX


def test_a_quota_below_the_cpus_on_bare_metal_gets_quota_advice_only():
    finding = check_virtualization(_virt_env(vm=False, quota=2.0, cpus=4))
    assert finding.status == "warn"
    assert fix(finding) == ("give the container all 4 CPUs it may run on (docker run --cpus=4) or "
                           "remove the quota while measuring")


def test_steal_and_a_short_quota_get_both_fixes():
    fix_text = fix(check_virtualization(_virt_env(steal=15.0, quota=2.0, cpus=4)))
    assert fix_text.startswith("give the container all 4 CPUs") and fix_text.endswith(VM_FIX)


def test_throttling_now_under_a_quota_of_all_cpus_says_to_remove_the_quota():
    finding = check_virtualization(_virt_env(vm=False, quota=4.0, cpus=4, throttled_now=1,
                                             throttled_total=40))
    assert finding.status == "warn"
    assert reading(finding).endswith("throttled in 1 of 1 quota periods in the last 100 ms "
                                    "(40 since the cgroup began)")
    assert fix(finding).startswith("remove the cgroup's CPU quota while measuring")


def test_throttling_long_ago_is_context_not_a_finding():
    env = _virt_env(vm=False, quota=4.0, cpus=4, throttled_now=0, throttled_total=312)
    finding = check_virtualization(env)
    assert finding.status == "ok"
    assert reading(finding).endswith("not throttled in the last 100 ms (312 since the cgroup began)")
    assert machine_notes(env, "run", 1) == []


# ------------------------------------------------------------------ what the load fix may pause


def _busy(*processes, ancestors=None) -> dict:
    return {"load_average": [3.0, 3.0, 3.0], "online_cpus": [0, 1, 2, 3],
            "activity": {"window_s": 0.1, "cpu": {"busy_cpus": 3.0}, "ancestor_pids": ancestors,
                         "busiest_processes": [
                             {"pid": pid, "name": name, "cpu_percent": 50.0, "command": name}
                             for pid, name in processes]}}


def test_the_load_fix_never_pauses_pairbenchs_own_parents():
    finding = check_load(_busy((900, "make"), (901, "cc1"), ancestors=[900, 899, 1]), live=True)
    assert fix(finding) == ("pause them while you measure: kill -STOP 901 (then kill -CONT 901); "
                           "leave make (pid 900, a parent of pairbench) running")


@pytest.mark.parametrize("name", ["Xorg", "Xwayland", "gnome-shell", "kwin_wayland", "sway",
                                  "plasmashell", "systemd", "systemd-journal", "sshd", "tmux: server"])
def test_the_load_fix_says_to_close_rather_than_pause_the_session(name):
    finding = check_load(_busy((700, name)), live=True)
    assert "kill -STOP" not in fix(finding)
    assert fix(finding) == ("close the programs that keep them busy, or wait until they are idle; do not "
                           f"pause {name} (pid 700, part of the desktop or login session)")


def test_stored_metadata_names_busy_processes_but_never_a_pid_to_pause():
    finding = check_load(_busy((901, "cc1"), (902, "ld")))  # as read from a file: not live
    assert "busiest: cc1 (50%), ld (50%)" in reading(finding) and "pid" not in reading(finding)
    assert "kill" not in fix(finding) and "`pairbench doctor` on that machine" in fix(finding)


# ------------------------------------------------------------------ malformed stored metadata


@pytest.mark.parametrize(("metadata", "check"), [
    ({"power": {}}, "power"),
    ({"turbo": {"file": "/x"}}, "turbo"),
    ({"turbo": {"enabled": True}}, "turbo"),
    ({"thermal_throttle": {"cpus": 1}}, "thermal"),
    ({"kernel_settings": {"perf_event_paranoid": "2"}}, "perf"),
    ({"load_average": [0.1]}, "load"),
    ({"load_average": "abc"}, "load"),
    ({"load_average": [0.1, 0.1, 0.1], "online_cpus": 4}, "load"),
    ({"load_average": [0.1, 0.1, 0.1], "online_cpus": "0-3"}, "load"),
    ({"activity": {"busiest_processes": [{"pid": 1}], "cpu": {"busy_cpus": 3.0}}}, "load"),
    ({"virtualization": "kvm"}, "virtualization"),
    ({"clocksource": {"current": "tsc", "available": 3}, "timer": {"measured_resolution_ns": 5000}},
     "clock"),
    ({"memory": {"mem_total_kib": "16G", "mem_available_kib": 1}}, "memory"),
    ({"smt": {"sibling_groups": [1, 2]}}, "smt"),
])
def test_malformed_stored_metadata_makes_its_check_unknown_not_a_crash(metadata, check):
    findings = {f.check: f for f in evaluate(metadata)}
    assert len(findings) == 12
    assert findings[check].status == "unknown"
    assert reading(findings[check]).startswith("stored value malformed: ")
    machine_notes(metadata, "compare", 2)  # the analysis of run, compare and show uses the same checks


def test_metadata_that_is_not_an_object_gives_twelve_unknowns():
    assert {f.status for f in evaluate(["not", "a", "mapping"])} == {"unknown"}
