"""Footnotes for run and compare: chosen from the stored metadata and samples, worded for the kind of run."""

from __future__ import annotations

from pairbench.doctor import environment_footnotes, sample_footnotes
from pairbench.model import Command, Run, Sample, Samples, Variant


def test_a_tuned_idle_machine_gets_no_footnote(machine):
    assert environment_footnotes(machine("tuned-server"), "run", 1) == []
    assert environment_footnotes(machine("tuned-server"), "compare", 2) == []


def test_noisy_laptop_footnotes_for_a_single_command_run(machine):
    notes = environment_footnotes(machine("noisy-laptop"), "run", 1)
    absorbs = ("a single command's summary absorbs all of it (compare's interleaving would cancel "
               "what variants share)")
    assert notes == [
        f"3.6 CPUs busy just now (load average 3.4) on 4 CPUs (busiest: firefox 90%): timings will be noisy; {absorbs}",
        "memory is short (1.14 GiB of 15.5 GiB available; swap in use 1020 MiB; 32 pages swapped in "
        "the last 100 ms; memory pressure 4.2% some, 1.1% full (last 10 s)): samples that wait for "
        f"memory are slow and erratic; {absorbs}",
        "on battery (BAT0 Discharging 41%); platform profile balanced: clock speeds follow the power "
        f"limits, so timings drift; {absorbs}",
        "this machine is not set up for benchmarking (governor powersave, turbo boost on, SMT "
        "siblings active): `pairbench doctor` says what each costs and how to fix it",
    ]


def test_compare_is_told_its_interleaving_cancels_shared_noise(machine):
    notes = environment_footnotes(machine("noisy-laptop"), "compare", 2)
    assert notes[0].endswith("timings will be noisy; compare's interleaved rounds cancel what the "
                             "variants share, but its intervals widen")


def test_a_multi_command_run_is_told_its_commands_shared_the_noise(machine):
    notes = environment_footnotes(machine("noisy-laptop"), "run", 3)
    assert notes[0].endswith("the commands were interleaved, so they shared it alike, but each "
                             "summary absorbs it")


def test_container_quota_and_vm_steal_become_footnotes_but_unknowns_do_not(machine):
    container = environment_footnotes(machine("container"), "run", 1)
    assert len(container) == 2
    assert container[0].startswith("load average 0.8 on 4 CPUs: timings will be noisy")
    assert container[1].startswith(
        "docker container; cgroup CPU quota 0.5 CPUs; throttled in 1 of 1 quota periods in the last "
        "100 ms (313 since the cgroup began): the hypervisor or the cgroup quota paused the benchmark")
    vm = environment_footnotes(machine("vm"), "compare", 2)
    assert [n.split(":")[0] for n in vm] == ["virtual machine (QEMU Standard PC (Q35 + ICH9, 2009)); steal 12.5% now"]


def test_footnotes_work_on_the_metadata_of_an_older_document():
    assert environment_footnotes({"load_average": [0.1, 0.1, 0.1], "logical_cpus": 2}, "run", 1) == []


def _run(environment=None, **variants) -> Run:
    built = []
    for name, rows in variants.items():
        samples = Samples.from_rows(Sample(**row, seq=i, pair=i) for i, row in enumerate(rows))
        built.append(Variant(name, Command(name, (name,)), samples=samples))
    return Run("run", tuple(built), "0.1.0", "2026-11-22T00:00:00+00:00", state="complete",
               environment=environment or {})


def test_sample_footnotes_name_the_preempted_variant_and_the_rss_floor():
    quiet = [dict(wall_ns=10_000_000, involuntary_cs=1, max_rss_kib=90_000)] * 20
    busy = [dict(wall_ns=10_000_000, involuntary_cs=1 if i == 0 else 4, max_rss_kib=40_100)
            for i in range(20)]
    run = _run({"rss_floor_kib": 40_000}, quiet=quiet, busy=busy)
    assert sample_footnotes(run) == [
        "busy: 285/s involuntary context switches beyond its quietest sample's, in 19 of 20 samples: "
        "other tasks took its CPU mid-sample, and those samples include their time slices",
        "max RSS of busy is at the smallest value the executor can report (39.1 MiB, the size of "
        "the process that spawns commands, which Linux charges to a child at exec): the commands' "
        "own peak is at most this",
    ]


def test_without_a_known_floor_there_is_no_rss_footnote_and_an_argument_supplies_one():
    rows = [dict(wall_ns=10_000_000, involuntary_cs=1, max_rss_kib=12_000)] * 5
    assert sample_footnotes(_run(None, small=rows)) == []
    assert len(sample_footnotes(_run(None, small=rows), rss_floor_kib=12_000)) == 1


def _bare_metal(**extra) -> dict:
    env = {"load_average": [0.1, 0.1, 0.1], "logical_cpus": 8, "online_cpus": list(range(8)),
           "isolation": {"allowed_cpus": list(range(8)), "isolated": []},
           "virtualization": {"hypervisor_flag": False, "container": None}}
    env.update(extra)
    return env


def test_a_cgroup_quota_on_bare_metal_is_a_condition_of_the_moment_not_a_virtual_machine():
    env = _bare_metal(virtualization={"hypervisor_flag": False, "container": "docker",
                                      "cgroup_cpu": {"quota_cpus": 2.0, "nr_throttled": 0}})
    notes = environment_footnotes(env, "compare", 2)
    assert len(notes) == 1
    assert notes[0].startswith("bare metal, in a docker container; cgroup CPU quota 2 CPUs: the "
                               "hypervisor or the cgroup quota can pause the benchmark")
    assert "virtual machine" not in notes[0]


def test_moderate_steal_in_a_vm_gets_its_own_line_beside_the_untuned_machine_line():
    env = _bare_metal(virtualization={"hypervisor_flag": True},
                      activity={"cpu": {"steal_percent": 5.0, "busy_cpus": 0.1}, "window_s": 0.1})
    notes = environment_footnotes(env, "run", 2)
    assert [n.split(":")[0] for n in notes] == [
        "virtual machine (hypervisor flag in /proc/cpuinfo); steal 5.0% now",
        "this machine is not set up for benchmarking (a virtual machine)"]


def test_the_load_footnote_names_the_figure_that_raised_it():
    env = _bare_metal(load_average=[0.2, 0.2, 0.2], logical_cpus=2, online_cpus=[0, 1],
                      activity={"cpu": {"busy_cpus": 1.9}, "window_s": 0.1})
    assert environment_footnotes(env, "run", 1)[0].startswith(
        "1.9 CPUs busy just now (load average 0.2) on 2 CPUs: timings will be noisy")
