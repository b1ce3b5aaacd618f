"""Notes on the machine and on a series' samples: chosen by ``analysis.rules`` from the stored metadata
and samples as typed records, worded by ``report.wording`` for the kind of measurement."""

from __future__ import annotations

import pytest
from machines import machine_environment

from pairbench.analysis.rules import (
    at_rss_floor,
    executor_rss_floor_kib,
    machine_notes,
    rss_floor_note,
    switches_note,
)
from pairbench.notes import Subject
from pairbench.report.wording import with_subject, word

ABSORBS = ("a single command's summary absorbs all of it (compare's interleaving would cancel what "
           "variants share)")


@pytest.fixture
def machine(tmp_path):
    """``machine("noisy-laptop")`` -> the collected environment of that fixture tree."""
    return lambda name: machine_environment(name, tmp_path)


def codes(notes) -> list[str]:
    return [note.code for note in notes]


def _bare_metal(**extra) -> dict:
    env = {"load_average": [0.1, 0.1, 0.1], "logical_cpus": 8, "online_cpus": list(range(8)),
           "isolation": {"allowed_cpus": list(range(8)), "isolated": []},
           "virtualization": {"hypervisor_flag": False, "container": None}}
    env.update(extra)
    return env


# --------------------------------------------------------------------------- the machine


def test_a_tuned_idle_machine_gets_no_note(machine):
    assert machine_notes(machine("tuned-server"), "run", 1) == []
    assert machine_notes(machine("tuned-server"), "compare", 2) == []


def test_a_noisy_laptop_gets_one_note_per_condition_and_one_for_its_settings(machine):
    notes = machine_notes(machine("noisy-laptop"), "run", 1)
    assert codes(notes) == ["machine-busy", "machine-memory-short", "machine-power-limited", "machine-untuned"]
    busy = notes[0].data
    assert (busy["kind"], busy["sides"], busy["cpus"], busy["busy_cpus_now"]) == ("run", 1, 4, 3.6)
    assert busy["load_average"] == pytest.approx(3.41)
    assert busy["busiest"] == {"name": "firefox", "cpu_percent": 90.0}
    assert notes[3].data == {"items": [{"check": "governor", "governors": ["powersave"]},
                                       {"check": "turbo"}, {"check": "smt"}]}


def test_a_noisy_laptop_in_words_for_a_single_command_run(machine):
    assert [word(note) for note in machine_notes(machine("noisy-laptop"), "run", 1)] == [
        f"3.6 CPUs busy just now (load average 3.4) on 4 CPUs (busiest: firefox 90%): timings will be noisy; {ABSORBS}",
        "memory is short (1.14 GiB of 15.5 GiB available; swap in use 1020 MiB; 32 pages swapped in "
        "the last 100 ms; memory pressure 4.2% some, 1.1% full (last 10 s)): samples that wait for "
        f"memory are slow and erratic; {ABSORBS}",
        "on battery (BAT0 Discharging 41%); platform profile balanced: clock speeds follow the power "
        f"limits, so timings drift; {ABSORBS}",
        "this machine is not set up for benchmarking (governor powersave, turbo boost on, SMT "
        "siblings active): `pairbench doctor` says what each costs and how to fix it",
    ]


def test_compare_is_told_its_interleaving_cancels_shared_noise(machine):
    notes = machine_notes(machine("noisy-laptop"), "compare", 2)
    assert (notes[0].data["kind"], notes[0].data["sides"]) == ("compare", 2)
    assert word(notes[0]).endswith("timings will be noisy; compare's interleaved rounds cancel what the "
                                   "variants share, but its intervals widen")


@pytest.mark.parametrize(("metric", "words"), [("instructions", "instructions"),
                                               ("cycles-model", "estimated cycles (Callgrind's cache model)")])
def test_a_busy_machine_is_said_not_to_move_a_counts_verdict(machine, metric, words):
    [busy] = [n for n in machine_notes(machine("noisy-laptop"), "compare", 2, metric) if n.code == "machine-busy"]
    assert busy.data["metric"] == metric
    assert word(busy).endswith(f"the verdicts are on {words}, which load does not move; the times shown "
                               "beside them will be noisy")


@pytest.mark.parametrize("metric", ["wall", "cpu", "auto", None])
def test_a_busy_machine_is_said_to_make_timings_noisy_whatever_time_is_compared(machine, metric):
    [busy] = [n for n in machine_notes(machine("noisy-laptop"), "compare", 2, metric) if n.code == "machine-busy"]
    assert "metric" not in busy.data and "timings will be noisy; compare's interleaved rounds" in word(busy)


def test_a_multi_command_run_is_told_its_commands_shared_the_noise(machine):
    notes = machine_notes(machine("noisy-laptop"), "run", 3)
    assert word(notes[0]).endswith("the commands were interleaved, so they shared it alike, but each "
                                   "summary absorbs it")


def test_container_quota_and_vm_steal_become_notes_but_unknowns_do_not(machine):
    container = machine_notes(machine("container"), "run", 1)
    assert codes(container) == ["machine-busy", "machine-paused"]
    assert word(container[0]).startswith("load average 0.8 on 4 CPUs: timings will be noisy")
    assert container[1].data["paused_now"] is True
    assert word(container[1]).startswith(
        "docker container; cgroup CPU quota 0.5 CPUs; throttled in 1 of 1 quota periods in the last "
        "100 ms (312 since the cgroup began): the hypervisor or the cgroup quota paused the benchmark")
    vm = machine_notes(machine("vm"), "compare", 2)
    assert codes(vm) == ["machine-paused"]
    assert vm[0].data["finding"]["code"] == "doctor-virtualization" and "reading" not in vm[0].data
    assert word(vm[0]).startswith("virtual machine (QEMU Standard PC (Q35 + ICH9, 2009)); steal 12.5% now: ")


def test_the_metadata_of_an_older_document_gets_no_note():
    assert machine_notes({"load_average": [0.1, 0.1, 0.1], "logical_cpus": 2}, "run", 1) == []


def test_a_cgroup_quota_on_bare_metal_is_a_condition_of_the_moment_not_a_virtual_machine():
    env = _bare_metal(virtualization={"hypervisor_flag": False, "container": "docker",
                                      "cgroup_cpu": {"quota_cpus": 2.0, "nr_throttled": 0}})
    notes = machine_notes(env, "compare", 2)
    assert codes(notes) == ["machine-paused"] and notes[0].data["paused_now"] is False
    assert word(notes[0]).startswith("bare metal, in a docker container; cgroup CPU quota 2 CPUs: the "
                                     "hypervisor or the cgroup quota can pause the benchmark")
    assert "virtual machine" not in word(notes[0])


def test_moderate_steal_in_a_vm_gets_its_own_note_beside_the_untuned_machine_note():
    env = _bare_metal(virtualization={"hypervisor_flag": True},
                      activity={"cpu": {"steal_percent": 5.0, "busy_cpus": 0.1}, "window_s": 0.1})
    notes = machine_notes(env, "run", 2)
    assert codes(notes) == ["machine-paused", "machine-untuned"]
    assert notes[1].data == {"items": [{"check": "virtualization"}]}
    assert [word(n).split(":")[0] for n in notes] == [
        "virtual machine (hypervisor flag in /proc/cpuinfo); steal 5.0% now",
        "this machine is not set up for benchmarking (a virtual machine)"]


def test_the_load_note_names_the_figure_that_raised_it():
    env = _bare_metal(load_average=[0.2, 0.2, 0.2], logical_cpus=2, online_cpus=[0, 1],
                      activity={"cpu": {"busy_cpus": 1.9}, "window_s": 0.1})
    note = machine_notes(env, "run", 1)[0]
    assert (note.code, note.data["busy_cpus_now"], note.data["load_average"]) == ("machine-busy", 1.9, 0.2)
    assert word(note).startswith("1.9 CPUs busy just now (load average 0.2) on 2 CPUs: timings will be noisy")


def test_malformed_metadata_gives_no_note_rather_than_an_error():
    assert machine_notes({"load_average": "abc", "virtualization": "kvm", "power": {}}, "compare", 2) == []


# --------------------------------------------------------------------------- a series' samples


def test_involuntary_switches_beyond_the_quietest_sample_are_noted_with_the_rate_and_the_samples():
    wall = [10_000_000] * 20
    switches = [1] + [4] * 19
    note = switches_note(switches, wall)
    assert note.code == "involuntary-switches"
    assert note.data == {"rate": pytest.approx(3 * 19 / 0.2), "affected": 19, "n": 20}
    assert with_subject(note.about(Subject(side="busy"))) == (
        "busy: 285/s involuntary context switches beyond its quietest sample's, in 19 of 20 samples: "
        "other tasks took its CPU mid-sample, and those samples include their time slices")


@pytest.mark.parametrize(("switches", "why"), [
    ([1] * 20, "no switch beyond the quietest sample's"),
    ([1] * 28 + [40, 40], "in only 2 of 30 samples, under 10% of them"),
    ([1] + [2] * 19, "19 switches in 20 s: under 10 per second"),
    ([1], "one sample has no quietest to compare with"),
])
def test_switches_that_do_not_bear_on_the_times_are_not_noted(switches, why):
    wall = [1_000_000_000] * len(switches) if "per second" in why else [10_000_000] * len(switches)
    assert switches_note(switches, wall) is None, why


def test_one_note_names_every_side_whose_max_rss_is_at_the_floor():
    note = rss_floor_note(["busy", "quiet"], 40_000)
    assert (note.code, note.data) == ("rss-at-floor", {"sides": ["busy", "quiet"], "floor_kib": 40_000})
    assert word(note) == (
        "max RSS of busy, quiet is at the smallest value the executor can report (about 39.1 MiB, the "
        "size of the process that spawns commands, which Linux charges to a child at exec): the commands' "
        "own peak is at most the value shown")
    assert rss_floor_note([], 40_000) is None


@pytest.mark.parametrize(("rss", "floor", "at"), [
    (40_100, 40_000, True), (42_000, 40_000, True), (42_001, 40_000, False), (90_000, 40_000, False),
    (38_100, 40_000, True), (38_000, 40_000, False),
    (12_000, None, False), (12_000, 0, False), (0, 40_000, False),
    (1_331, 111_652, False),  # a C worker's 1.3 MiB beside a floor of 109 MiB: its own, not the floor
])
def test_a_reading_within_five_percent_of_the_floor_is_at_it(rss, floor, at):
    assert at_rss_floor(rss, floor) is at


@pytest.mark.parametrize(("document", "environment", "floor"), [
    ("pairbench.result/2", {"executor": {"kind": "SpawnerExecutor", "rss_floor_kib": 40_000}}, 40_000),
    ("pairbench.result/2", {}, None), ("pairbench.result/2", {"executor": {"rss_floor_kib": None}}, None),
    ("pairbench.result/1", {"rss_floor_kib": 40_000}, 40_000),  # where the first result documents kept it
    ("pairbench.result/1", {"rss_floor_kib": "40000"}, None),  # unchecked then: anything else is no floor
])
def test_the_floor_is_read_from_where_a_result_stores_it(document, environment, floor):
    from pairbench.model import SAMPLE_COLUMNS
    from pairbench.store.resultfile import run_from_document

    side = {"name": "a", "label": "", "command": {"text": "a", "argv": ["a"]}}
    header = ({"variants": [{**side, "samples": {c: [] for c in SAMPLE_COLUMNS}}]} if document.endswith("/1") else {"sides": [side], "kind": "run",
                                                                  "benchmarks": [{"name": "command"}]})
    run = run_from_document({"format": document, **header, "environment": environment, "series": []})
    assert executor_rss_floor_kib(run) == floor
