"""The environment collector reads each fixture machine's /proc and /sys exactly."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import machines
import pytest
from machines import machine_tree

from pairbench.environment import ActivityWindow, activity, collect_environment, parse_cpu_list
from pairbench.environment._read import READ_CHUNK, read_text
from pairbench.environment.checks import evaluate


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
    busiest = machine("noisy-laptop", live=True)["activity"]["busiest_processes"]
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


def _proc_stat(root: Path, busy_ticks: int, idle_ticks: int, pid_ticks: int) -> None:
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc/stat").write_text(f"cpu  {busy_ticks} 0 0 {idle_ticks} 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n")
    (root / "proc/4242").mkdir(exist_ok=True)
    (root / "proc/4242/stat").write_text(f"4242 (pairbench) S 1 1 1 0 -1 0 0 0 0 0 {pid_ticks} 0 0 0\n")


def test_our_own_cpu_time_in_the_window_is_not_counted_as_the_machine_being_busy(tmp_path):
    # 2 CPUs, 20 ticks in the window: 12 busy, of which 10 were ours (pairbench loading its code)
    _proc_stat(tmp_path, busy_ticks=100, idle_ticks=100, pid_ticks=50)
    later = lambda _s: _proc_stat(tmp_path, busy_ticks=112, idle_ticks=108, pid_ticks=60)  # noqa: E731
    ours = activity(tmp_path, 0.1, sleep=later, exclude={4242})
    assert ours["cpu"]["busy_cpus"] == 0.2  # the 2 ticks of others, as CPUs: 2 / 20 * 2
    _proc_stat(tmp_path, busy_ticks=100, idle_ticks=100, pid_ticks=50)
    theirs = activity(tmp_path, 0.1, sleep=later, exclude=set())
    assert theirs["cpu"]["busy_cpus"] == 1.2 and theirs["busiest_processes"][0]["name"] == "pairbench"


def _process(root: Path, pid: int, parent: int, ticks: int, reaped: int = 0) -> None:
    (root / f"proc/{pid}").mkdir(parents=True, exist_ok=True)
    (root / f"proc/{pid}/stat").write_text(f"{pid} (spawner) S {parent} 1 1 0 -1 0 0 0 0 0 {ticks} 0 {reaped} 0\n")


def test_the_samples_our_spawner_ran_in_the_window_are_not_counted_as_the_machine_being_busy(tmp_path):
    # 2 CPUs, 20 ticks in the window: 14 busy, of which 2 were pairbench's own, and 10 its spawner's
    # (started in the window: 1 of its own, 9 of the commands it ran and waited for, cutime)
    _proc_stat(tmp_path, busy_ticks=100, idle_ticks=100, pid_ticks=50)
    window = ActivityWindow(tmp_path, exclude={4242})

    def later(_s):
        _proc_stat(tmp_path, busy_ticks=114, idle_ticks=106, pid_ticks=52)
        _process(tmp_path, 4343, parent=4242, ticks=1, reaped=9)

    ours = window.finish(0.1, sleep=later)
    assert ours["cpu"]["busy_cpus"] == 0.2  # the 2 ticks of others: 2 / 20 * 2
    assert ours["busiest_processes"] == []  # the spawner is not one of the machine's busy processes


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


# ------------------------------------------------------------------ power supplies


def _supply(root, name: str, **files: str) -> None:
    directory = root / "sys/class/power_supply" / name
    directory.mkdir(parents=True)
    for file, text in files.items():
        (directory / file).write_text(text + "\n")


def _power(root):
    return collect_environment(root, activity_window_s=0.0, sleep=lambda s: None)["power"]


def test_an_online_mains_supply_means_mains_power_even_when_a_battery_says_discharging(tmp_path):
    _supply(tmp_path, "AC", type="Mains", online="1")
    _supply(tmp_path, "BAT0", type="Battery", status="Discharging", capacity="80")
    power = _power(tmp_path)
    assert power["on_battery"] is False and power["mains_online"] is True


def test_a_wireless_mouse_battery_does_not_put_a_desktop_on_battery(tmp_path):
    _supply(tmp_path, "hidpp_battery_0", type="Battery", scope="Device", status="Discharging",
            capacity="55")
    power = _power(tmp_path)
    assert power == {"on_battery": False, "mains_online": None, "batteries": [],
                     "platform_profile": None}


def test_a_laptop_on_its_battery_is_on_battery_whatever_its_mouse_says(tmp_path):
    _supply(tmp_path, "AC", type="Mains", online="0")
    _supply(tmp_path, "BAT0", type="Battery", status="Discharging", capacity="41")
    _supply(tmp_path, "hidpp_battery_0", type="Battery", scope="Device", status="Full")
    power = _power(tmp_path)
    assert power["on_battery"] is True and [b["name"] for b in power["batteries"]] == ["BAT0"]


# ------------------------------------------------------------------ malformed and unreadable files


def _collect(root):
    env = collect_environment(root, activity_window_s=0.0, sleep=lambda s: None)
    json.dumps(env, allow_nan=False)  # still a valid result document
    return env


@pytest.mark.parametrize("loadavg", ["0.52\n", "nan 0.1 0.1 1/100 7\n", "0.1 inf 0.1 1/100 7\n",
                                     "0.1 0.2\n", "a b c d e\n", "\n"])
def test_a_malformed_loadavg_is_unknown_and_never_nan(tmp_path, loadavg):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/loadavg").write_text(loadavg)
    env = _collect(tmp_path)
    assert env["load_average"] is None
    load = {f.check: f for f in evaluate(env)}["load"]
    assert load.status == "unknown"


def test_a_malformed_pressure_figure_is_left_out_and_the_rest_is_read(tmp_path):
    (tmp_path / "proc/pressure").mkdir(parents=True)
    (tmp_path / "proc/pressure/cpu").write_text(
        "some avg10=1.2.3 avg60=0.50 avg300=nan total=12\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    assert _collect(tmp_path)["pressure"] == {"cpu": {"some_avg60": 0.5, "full_avg10": 0.0,
                                                      "full_avg60": 0.0, "full_avg300": 0.0}}


def _unreadable(monkeypatch, directory, method: str):
    """Make ``directory`` unreadable: chmod 000, or (as root, whom chmod does not stop) make
    ``Path.<method>`` raise PermissionError for it and everything below it."""
    if os.geteuid() != 0:
        directory.chmod(0)
        return
    original = getattr(Path, method)

    def refuse(self, *args, **kwargs):
        if self == directory or directory in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, method, refuse)


def test_an_unreadable_power_supply_directory_means_power_unknown(tmp_path, monkeypatch):
    _supply(tmp_path, "BAT0", type="Battery", status="Discharging", capacity="41")
    directory = tmp_path / "sys/class/power_supply"
    _unreadable(monkeypatch, directory, "iterdir")
    try:
        env = _collect(tmp_path)
    finally:
        directory.chmod(0o755)
    assert env["power"] is None
    assert {f.check: f for f in evaluate(env)}["power"].status == "unknown"


def test_an_untraversable_run_directory_does_not_stop_the_container_check(tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    (tmp_path / "run/.containerenv").write_text("")
    (tmp_path / "proc/1").mkdir(parents=True)
    (tmp_path / "proc/1/cgroup").write_text("0::/kubepods/besteffort/pod1\n")
    _unreadable(monkeypatch, tmp_path / "run", "exists")
    try:
        env = _collect(tmp_path)
    finally:
        (tmp_path / "run").chmod(0o755)
    assert env["virtualization"]["container"] == "kubernetes"  # found by the next sign


# ------------------------------------------------------------------ who pairbench is, throttling now


def test_the_collector_records_pairbenchs_parent_processes(machine):
    assert machine("noisy-laptop")["activity"]["ancestor_pids"] == [2010, 2009, 1]
    assert machine("container")["activity"]["ancestor_pids"] is None  # no PPid in its status


def test_the_real_parent_chain_starts_at_our_parent():
    env = collect_environment("/", activity_window_s=0.0)
    assert env["activity"]["ancestor_pids"][0] == os.getppid()


def test_cgroup_throttling_is_counted_over_the_activity_window(machine):
    env = machine("container")
    assert env["activity"]["cgroup_nr_periods"] == 1 and env["activity"]["cgroup_nr_throttled"] == 1
    assert env["virtualization"]["cgroup_cpu"]["nr_throttled"] == 312  # since the cgroup began, read as the window opened
    assert machine("tuned-server")["activity"]["cgroup_nr_throttled"] == 0


def test_library_versions_agree_with_importlib_metadata():
    from importlib import metadata

    from pairbench.environment import LIBRARIES, library_versions

    assert library_versions() == {name: metadata.version(name) for name in LIBRARIES}


def test_a_library_version_is_read_from_its_dist_info_directory_name(tmp_path, monkeypatch):
    from pairbench.environment import _dist_info_version

    (tmp_path / "Some_Lib-3.1.4.dist-info").mkdir()
    (tmp_path / "other-1.0.dist-info").mkdir()
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing"), str(tmp_path)])
    assert _dist_info_version("some-lib") == "3.1.4"
    assert _dist_info_version("absent") is None


def test_a_fixture_machine_read_slowly_keeps_its_window_and_text(tmp_path, monkeypatch):
    # on a loaded machine the tree is read past 1.5 windows; its text must not say "in the last 221 ms"
    quick = machines.machine_environment("noisy-laptop", tmp_path)["activity"]
    tree = machines.machine_tree

    def slowly_read(name, path):
        root, sleep = tree(name, path)
        return root, lambda seconds: (time.sleep(0.2), sleep(seconds))

    monkeypatch.setattr(machines, "machine_tree", slowly_read)
    slow = machines.machine_environment("noisy-laptop", tmp_path)["activity"]
    assert slow == quick and slow["window_s"] == machines.WINDOW_S


# ``read_text`` reads through os.read (a third of a text file object's cost): as Path.read_text reads
def test_a_file_is_read_as_path_read_text_reads_it_stripped(tmp_path):
    (tmp_path / "proc").mkdir()
    content = b"  cpu 1 2\r\nline\rlast \xff\n" + b"x" * (2 * READ_CHUNK + 5) + b"\n\n"
    (tmp_path / "proc" / "stat").write_bytes(content)
    expected = (tmp_path / "proc" / "stat").read_text(encoding="utf-8", errors="replace").strip()
    assert read_text(tmp_path, "/proc/stat") == read_text(tmp_path, "proc/stat") == expected
    assert expected.startswith("cpu 1 2\nline\nlast \ufffd\n")


def test_a_file_that_cannot_be_opened_or_read_is_none(tmp_path):
    (tmp_path / "directory").mkdir()
    assert read_text(tmp_path, "missing") is None
    assert read_text(tmp_path, "directory") is None  # opened, but read() fails: EISDIR
