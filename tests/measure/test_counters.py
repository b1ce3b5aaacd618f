"""What counts instructions: the processor's counter where the machine exposes one, else Callgrind,
else a refusal that says what to install. This machine has no processor counters (no ``cpu``
PMU), so the hardware path is tested through its detection on fixture trees and through its
failure here, which must be a clear message, never a wrong count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pairbench.measure import callgrind, counters
from pairbench.measure.counters import (
    CountingUnavailable,
    choose_counter,
    hardware_counters,
    parse_perf_stat,
)

INCLUDE = Path(__file__).resolve().parents[2] / "src" / "pairbench" / "worker" / "include"


def machine(tmp_path: Path, pmus: tuple[str, ...], paranoid: int | None = 2) -> str:
    devices = tmp_path / "sys" / "bus" / "event_source" / "devices"
    devices.mkdir(parents=True)
    for name in ("breakpoint", "software", "tracepoint", *pmus):
        (devices / name).mkdir()
    if paranoid is not None:
        (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
        (tmp_path / "proc" / "sys" / "kernel" / "perf_event_paranoid").write_text(f"{paranoid}\n")
    return str(tmp_path)


def test_a_machine_with_a_cpu_pmu_and_paranoid_2_has_usable_counters(tmp_path):
    assert hardware_counters(machine(tmp_path, ("cpu",))).usable


def test_a_hybrid_machine_s_core_pmu_counts_too(tmp_path):
    assert hardware_counters(machine(tmp_path, ("cpu_core", "cpu_atom"))).usable


def test_a_virtual_machine_without_a_cpu_pmu_has_none_and_says_why(tmp_path):
    found = hardware_counters(machine(tmp_path, ()))
    assert not found.usable and "no cpu PMU" in found.why_not


@pytest.mark.skipif(os.geteuid() == 0, reason="root may count at any perf_event_paranoid; "
                    "scripts/test-unprivileged.sh runs this as nobody")
def test_paranoid_above_2_keeps_a_user_from_counting(tmp_path):
    found = hardware_counters(machine(tmp_path, ("cpu",), paranoid=3))
    assert not found.usable and "perf_event_paranoid is 3" in found.why_not


def test_without_counters_instructions_fall_back_to_callgrind(tmp_path, monkeypatch):
    monkeypatch.setattr(callgrind, "find_valgrind", lambda: "/usr/bin/valgrind")
    monkeypatch.setattr(counters, "_version", lambda argv: "valgrind-3.19.0")
    counter = choose_counter("instructions", machine(tmp_path, ()))
    assert (counter.kind, counter.program) == ("callgrind", "/usr/bin/valgrind")


def test_with_counters_and_perf_instructions_use_them_but_the_cycle_model_is_callgrinds(tmp_path, monkeypatch):
    root = machine(tmp_path, ("cpu",))
    monkeypatch.setattr(counters.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(counters, "_version", lambda argv: "")
    monkeypatch.setattr(callgrind, "find_valgrind", lambda: "/usr/bin/valgrind")
    assert choose_counter("instructions", root).kind == "hardware"
    assert choose_counter("cycles-model", root).kind == "callgrind"


def test_with_neither_counters_nor_valgrind_the_refusal_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(callgrind, "find_valgrind", lambda: None)
    with pytest.raises(CountingUnavailable, match="apt-get install valgrind"):
        choose_counter("instructions", machine(tmp_path, ()))


# `perf stat -x, -e instructions:u -o FILE -- /bin/true` on this machine (perf 6.1, no cpu PMU):
RECORDED_UNSUPPORTED = "# started on Sun Nov 29 07:59:04 2026\n\n<not supported>,,instructions:u,0,100.00,,\n"


def test_perf_output_of_a_machine_without_the_event_is_refused_not_read_as_zero():
    with pytest.raises(ValueError, match="counted no instructions"):
        parse_perf_stat(RECORDED_UNSUPPORTED, "perf stat")


def test_perf_csv_gives_the_count_of_its_instructions_line():
    # the -x, layout: value, unit, event, run time, percentage (perf-stat(1), CSV FORMAT)
    assert parse_perf_stat("\n1234567,,instructions:u,881234,100.00,,\n", "perf stat") == 1234567


def test_a_go_program_is_recognised_by_its_build_information(tmp_path):
    program = tmp_path / "prog"
    program.write_bytes(b"\x7fELF" + b"\0" * 100 + counters.GO_MARK + b"\0" * 50)
    assert counters.is_go_program(str(program))
    with pytest.raises(CountingUnavailable, match="Go program"):
        counters.refuse_go(f"{program} -test.bench .")
    assert not counters.is_go_program(sys.executable)


@pytest.mark.skipif(hardware_counters().usable, reason="this machine has counters: the failure cannot be seen")
@pytest.mark.e2e
def test_without_counters_a_c_worker_asked_for_them_ends_saying_why(tmp_path):
    source = tmp_path / "w.c"
    source.write_text('#include "pairbench.h"\nPAIRBENCH(x) { pairbench_keep(1); }\nPAIRBENCH_MAIN()\n')
    subprocess.run(["cc", "-O2", "-I", str(INCLUDE), str(source), "-o", str(tmp_path / "w")], check=True)
    read, write = os.pipe()
    env = {**os.environ, "PAIRBENCH_WORKER_FDS": f"{read},{write}", "PAIRBENCH_COUNTER": "instructions"}
    done = subprocess.run([str(tmp_path / "w")], env=env, pass_fds=(read, write), capture_output=True, text=True,
                          timeout=30)
    os.close(read)
    os.close(write)
    assert done.returncode == 2 and "cannot open the hardware instruction counter" in done.stderr


@pytest.mark.skipif(hardware_counters().usable, reason="this machine has counters: the failure cannot be seen")
def test_without_counters_the_python_worker_refuses_to_count():
    from pairbench.worker import counting

    with pytest.raises(counting.CountingUnavailable, match="hardware instruction counter"):
        counting.HardwareCounter()


def test_the_python_workers_counter_opens_enables_and_reads_a_perf_event():
    # a software event (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK: ns of this thread's CPU time), which a
    # machine without counters has: the same perf_event_open, ioctl and read calls as for instructions
    from pairbench.worker import counting

    try:
        counter = counting.HardwareCounter(event=(1, 1))
    except counting.CountingUnavailable as exc:
        pytest.skip(f"perf events are closed here: {exc}")
    counter.start()
    sum(i * i for i in range(200_000))
    counter.stop()
    counter.finish()
    busy = counter.instructions
    counter.start()
    counter.stop()
    counter.finish()
    assert busy > 1_000_000 > counter.instructions  # ms of work, then (reset) next to nothing
