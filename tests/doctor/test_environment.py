"""The environment collector reads each fixture machine's /proc and /sys exactly."""

from __future__ import annotations

import json

from machines import machine_tree

from pairbench.environment import activity, collect_environment, parse_cpu_list


def test_tuned_server_readings(machine):
    env = machine("tuned-server")
    assert env["governors"] == {"performance": 8}
    assert env["turbo"] == {"enabled": False, "file": "/sys/devices/system/cpu/intel_pstate/no_turbo"}
    assert env["turbo_boost"] is False
    assert env["smt"] == {"control": "off", "active": False, "sibling_groups": []}
    assert env["isolation"] == {
        "isolated": [6, 7], "nohz_full": [6, 7], "allowed_cpus": [6, 7],
        "cmdline": {"isolcpus": "6-7", "nohz_full": "6-7", "rcu_nocbs": "6-7"},
    }
    assert env["online_cpus"] == list(range(8))
    assert env["clocksource"] == {"current": "tsc", "available": ["tsc", "hpet", "acpi_pm"]}
    assert env["kernel_settings"] == {"aslr": 2, "perf_event_paranoid": 1, "perf_event_max_sample_rate": 1}
    assert env["thermal_throttle"] == {"cpus": 8, "core_throttle_count": 0, "package_throttle_count": 0}
    assert env["cpu_model"] == "Intel(R) Xeon(R) Gold 6330 CPU @ 2.00GHz"
    assert env["os"] == "Debian GNU/Linux 12 (bookworm)"
    assert env["kernel"] == "6.1.0-13-amd64"


def test_tuned_server_activity_is_one_tick_of_eighty(machine):
    env = machine("tuned-server")
    assert env["activity"]["cpu"] == {"busy_cpus": 0.1, "steal_percent": 0.0, "iowait_percent": 0.0}
    assert env["activity"]["busiest_processes"] == []  # sshd and systemd used no tick
    assert env["activity"]["swap_in_pages"] == 0 and env["activity"]["swap_out_pages"] == 0


def test_tuned_server_is_bare_metal_with_an_unlimited_cgroup(machine):
    virt = machine("tuned-server")["virtualization"]
    assert virt["hypervisor_flag"] is False
    assert virt["dmi"] == "Dell Inc. PowerEdge R650" and virt["dmi_virtual"] is False
    assert virt["container"] is None
    assert virt["cgroup_cpu"] == {"quota_cpus": None, "nr_throttled": 0}


def test_noisy_laptop_busiest_processes_are_measured_over_the_window(machine):
    busiest = machine("noisy-laptop")["activity"]["busiest_processes"]
    # 10 ticks per CPU in the window: firefox 8 + 1, cc1plus 8, gnome-shell 1
    assert [(p["pid"], p["name"], p["cpu_percent"]) for p in busiest] == [
        (2001, "firefox", 90.0), (2002, "cc1plus", 80.0), (2003, "gnome-shell", 10.0)]
    assert busiest[1]["command"] == "/usr/lib/gcc/x86_64-linux-gnu/13/cc1plus -quiet big.cpp"


def test_noisy_laptop_readings(machine):
    env = machine("noisy-laptop")
    assert env["activity"]["cpu"]["busy_cpus"] == 3.6
    assert env["activity"]["swap_out_pages"] == 32
    assert env["smt"] == {"control": "on", "active": True, "sibling_groups": [[0, 2], [1, 3]]}
    assert env["governors"] == {"powersave": 4}
    assert env["turbo"]["enabled"] is True
    assert env["power"] == {
        "on_battery": True, "mains_online": False, "platform_profile": "balanced",
        "batteries": [{"name": "BAT0", "status": "Discharging", "capacity": 41}],
    }
    assert env["memory"] == {"mem_total_kib": 16303428, "mem_available_kib": 1200000,
                             "swap_total_kib": 2097148, "swap_free_kib": 1048576}
    assert env["pressure"]["memory"]["full_avg10"] == 1.1
    assert env["pressure"]["cpu"]["some_avg10"] == 38.5
    assert env["thermal_throttle"] == {"cpus": 4, "core_throttle_count": 5864,
                                       "package_throttle_count": 892}
    assert env["isolation"]["isolated"] == [] and env["isolation"]["nohz_full"] == []
    assert env["load_average"] == [3.41, 2.87, 2.10]


def test_container_reads_what_exists_and_none_for_the_rest(machine):
    env = machine("container")
    assert env["virtualization"]["container"] == "docker"
    assert env["virtualization"]["cgroup_cpu"] == {"quota_cpus": 0.5, "nr_throttled": 312}
    assert env["virtualization"]["hypervisor_flag"] is None
    assert env["governors"] == {} and env["turbo"] is None
    assert env["smt"] == {"control": None, "active": None, "sibling_groups": []}
    assert env["isolation"] == {"isolated": None, "nohz_full": None, "cmdline": None,
                                "allowed_cpus": [0, 1, 2, 3]}
    assert env["clocksource"] == {"current": None, "available": None}
    assert env["kernel_settings"] == {"aslr": None, "perf_event_paranoid": None,
                                      "perf_event_max_sample_rate": None}
    assert env["memory"] is None and env["pressure"] is None and env["power"] is None
    assert env["thermal_throttle"] is None
    assert env["activity"]["cpu"] is None and env["activity"]["busiest_processes"] is None
    json.dumps(env, allow_nan=False)  # still a valid document


def test_vm_steal_and_hypervisor(machine):
    env = machine("vm")
    assert env["activity"]["cpu"] == {"busy_cpus": 0.2, "steal_percent": 12.5, "iowait_percent": 0.0}
    virt = env["virtualization"]
    assert virt["hypervisor_flag"] is True and virt["dmi_virtual"] is True
    assert env["clocksource"]["current"] == "kvm-clock"
    assert env["governors"] == {} and env["power"] is None


def test_activity_without_a_passing_jiffy_reports_nothing_rather_than_zero(tmp_path):
    root, _ = machine_tree("noisy-laptop", tmp_path)
    result = activity(root, 0.0, sleep=lambda s: None, exclude=set())
    assert result["cpu"] is None and result["busiest_processes"] is None
    assert result["swap_in_pages"] == 0


def test_cgroup_v1_quota_is_read_from_the_cpu_hierarchy(tmp_path):
    root = tmp_path / "v1"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/cgroup").write_text("4:cpu,cpuacct:/docker/abc\n1:memory:/docker/abc\n")
    cpu = root / "sys/fs/cgroup/cpu"  # no cgroup namespace: our cgroup is the hierarchy's root
    cpu.mkdir(parents=True)
    (cpu / "cpu.cfs_quota_us").write_text("150000\n")
    (cpu / "cpu.cfs_period_us").write_text("100000\n")
    (cpu / "cpu.stat").write_text("nr_periods 10\nnr_throttled 3\nthrottled_time 99\n")
    env = collect_environment(root, activity_window_s=0.0, sleep=lambda s: None)
    assert env["virtualization"]["cgroup_cpu"] == {"quota_cpus": 1.5, "nr_throttled": 3}


def test_an_empty_tree_gives_a_complete_document_of_unknowns(tmp_path):
    env = collect_environment(tmp_path, activity_window_s=0.0, sleep=lambda s: None)
    assert env["load_average"] is None and env["virtualization"]["container"] is None
    assert env["timer"]["measured_resolution_ns"] > 0  # measured on this machine, not read
    json.dumps(env, allow_nan=False)


def test_parse_cpu_list_reads_kernel_ranges():
    assert parse_cpu_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpu_list("") == [] and parse_cpu_list("(null)") == []
    assert parse_cpu_list(None) is None and parse_cpu_list("a-b") is None


def test_the_real_machine_is_collected_without_errors():
    env = collect_environment("/", activity_window_s=0.05)
    assert set(env) >= {"governors", "turbo", "smt", "activity", "isolation", "clocksource",
                        "kernel_settings", "virtualization", "memory", "pressure", "power",
                        "thermal_throttle", "load_average", "timer"}
    json.dumps(env, allow_nan=False)
