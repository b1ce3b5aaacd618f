"""Counting instructions with Callgrind: the reading of its output (on a header Callgrind 3.19
wrote, and on hostile ones), and real counts of a command and of a C worker's loop.

The real counts need Valgrind (``scripts/install-test-deps.sh`` installs Debian's package); each
runs a small program, so they take seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pairbench.command import Command
from pairbench.measure import callgrind
from pairbench.measure.callgrind import CallgrindError, Counts, OutputDirectory, parse_counts
from pairbench.measure.executor import WallClock
from pairbench.measure.posix import PosixExecutor
from pairbench.measure.targets import CommandTarget
from pairbench.measure.worker import Counting, Worker, WorkerSpec, WorkerTarget

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "src" / "pairbench" / "worker" / "include"

# The header of `valgrind --tool=callgrind --cache-sim=yes ... /bin/true` (Valgrind 3.19, Debian 12).
HEADER = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 15960
cmd:  /bin/true
part: 1


desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: D1 cache: 32768 B, 64 B, 8-way associative
desc: LL cache: 8388608 B, 64 B, 16-way associative

desc: Timerange: Basic block 0 - 28938
desc: Trigger: Program termination

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 126575 27890 11769 1083 991 579 1065 778 547


ob=/usr/libexec/valgrind/vgpreload_core-amd64-linux.so
"""


def test_the_summary_line_gives_every_event_by_name():
    counts = parse_counts(HEADER, "cg.1")
    assert counts.instructions == 126575
    assert counts.events["DLmw"] == 547


def test_the_cycle_model_weighs_l1_hits_1_last_level_hits_5_and_memory_35():
    # by hand, iai-callgrind's definitions: accesses Ir + Dr + Dw = 166234; L1 misses
    # 1083 + 991 + 579 = 2653; memory (LL misses) 1065 + 778 + 547 = 2390;
    # L1 hits 163581, LL hits 263: 163581 + 5 * 263 + 35 * 2390 = 248546
    assert parse_counts(HEADER, "cg.1").cycles_model == 248546


def test_without_the_cache_simulation_there_is_no_cycle_model():
    counts = parse_counts("events: Ir\nsummary: 1000\n", "cg.1")
    assert counts.instructions == 1000 and counts.cycles_model is None


def test_trailing_zero_events_left_out_by_callgrind_read_as_zero():
    counts = parse_counts("events: Ir Dr Dw\nsummary: 10 4\n", "cg.1")
    assert counts.events == {"Ir": 10, "Dr": 4, "Dw": 0}


@pytest.mark.parametrize("text, problem", [
    ("events: Ir\n", "no summary line"),
    ("summary: 5\nevents: Ir\n", "before the events line"),
    ("events: Ir\nsummary: 1 2\n", "does not fit"),
    ("events: Dr\nsummary: 3\n", "no instruction count"),
    ("events: Ir\nsummary: 99999999999999999999\n", "does not fit"),
    ("events: Ir\nsummary: -5\n", "no summary line"),
    ("events: Ir\nsummary: 5\x1b[2J\n", "no summary line"),
])
def test_output_that_is_not_callgrinds_is_refused_naming_the_file(text, problem):
    with pytest.raises(CallgrindError, match=problem) as caught:
        parse_counts(text, "cg.77")
    assert "cg.77" in str(caught.value)


def test_counts_of_a_process_tree_are_summed_event_by_event():
    total = Counts({"Ir": 5, "Dr": 1}) + Counts({"Ir": 7, "Dr": 2})
    assert total.events == {"Ir": 12, "Dr": 3}


def test_an_output_directory_reads_each_process_file_once_and_removes_it(tmp_path):
    directory = OutputDirectory("t")
    try:
        for pid, count in ((100, 5), (101, 7)):
            Path(directory.path, f"cg.{pid}").write_text(f"events: Ir\nsummary: {count}\n")
        Path(directory.path, "valgrind.100").write_text("==100== a message\n")
        assert directory.take_processes().instructions == 12
        assert [name for name in os.listdir(directory.path) if name.startswith("cg.")] == []
        with pytest.raises(CallgrindError, match="no output"):
            directory.take_processes()
    finally:
        directory.remove()


def test_a_link_planted_in_place_of_an_output_file_is_not_followed(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("events: Ir\nsummary: 5\n")
    directory = OutputDirectory("t")
    try:
        os.symlink(secret, Path(directory.path, "cg.100"))
        with pytest.raises(OSError):
            directory.take_processes()
    finally:
        directory.remove()


def test_the_callgrind_line_fixes_the_cache_and_counts_a_region_or_a_tree():
    region = callgrind.callgrind_argv("/usr/bin/valgrind", "/d", region=True)
    tree = callgrind.callgrind_argv("/usr/bin/valgrind", "/d", region=False)
    assert "--LL=8388608,16,64" in region and "--collect-atstart=no" in region
    assert "--trace-children=yes" in tree and "--collect-atstart=no" not in tree


# --------------------------------------------------------------------------- real counts


def valgrind() -> str:
    found = callgrind.find_valgrind()
    if found is None or not Path("/usr/include/valgrind/callgrind.h").exists():
        pytest.fail("Valgrind is not installed: make test installs it (scripts/install-test-deps.sh)")
    return found


SPIN = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    volatile unsigned long s = 0;
    long n = argc > 1 ? atol(argv[1]) : 0;
    for (long i = 0; i < n; i++) s += (unsigned long)i * 3u;
    return 0;
}
"""

WORKER = r"""
#include "pairbench.h"
static unsigned long v = 1;
PAIRBENCH(spin) { for (int i = 0; i < 100; i++) v = v * 6364136223846793005u + 1u; pairbench_keep(v); }
PAIRBENCH_MAIN()
"""


def compiled(tmp_path: Path, source: str, name: str, *flags: str) -> Path:
    compiler = shutil.which("cc") or pytest.fail("no C compiler: make test installs one (scripts/install-test-deps.sh)")
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run([compiler, "-O2", *flags, str(tmp_path / f"{name}.c"), "-o", str(tmp_path / name)],
                   check=True, capture_output=True)
    return tmp_path / name


@pytest.mark.e2e
def test_a_command_is_counted_whole_and_the_same_in_every_run(tmp_path):
    program = compiled(tmp_path, SPIN, "spin")
    directory = OutputDirectory("t")
    executor = PosixExecutor()
    try:
        def counted(n: int) -> list[float]:
            target = callgrind.CallgrindCommandTarget(
                CommandTarget(Command(f"spin {n}", (str(program), str(n))), "spin"), valgrind(), directory)
            rows = [target.execute(executor, timeout_ns=120_000_000_000)[0] for _ in range(2)]
            assert all(row.execution.status == 0 for row in rows), [row.detail for row in rows]
            return [row.metrics["instructions"] for row in rows]

        small, large = counted(10_000), counted(20_000)
    finally:
        executor.close()
        directory.remove()
    assert small[0] == small[1] and large[0] == large[1]  # nothing else on the machine moves them
    # 10,000 more iterations of a loop of a few instructions each: the difference is the loop's
    assert 30_000 <= large[0] - small[0] <= 100_000


@pytest.mark.e2e
def test_a_failed_command_keeps_its_status_and_no_counts(tmp_path):
    directory = OutputDirectory("t")
    executor = PosixExecutor()
    try:
        target = callgrind.CallgrindCommandTarget(CommandTarget(Command("false", (shutil.which("false"),)), "f"),
                                                  valgrind(), directory)
        row = target.execute(executor, timeout_ns=60_000_000_000)[0]
    finally:
        executor.close()
        directory.remove()
    assert row.execution.status == 1 and "instructions" not in row.metrics


def c_worker(tmp_path: Path, *flags: str) -> Path:
    return compiled(tmp_path, WORKER, "worker", "-I", str(INCLUDE), *flags)


def counted_samples(argv: tuple[str, ...], iterations: int, samples: int) -> list:
    directory = OutputDirectory("t")
    worker = Worker(WorkerSpec(Command(" ".join(argv), argv), timeout_ns=120_000_000_000,
                               counting=Counting("callgrind", valgrind(), directory)), "side")
    try:
        name = worker.benchmarks()[0]
        target = WorkerTarget(worker, name, 0, iterations)
        return [target.execute(WallClock("worker"), timeout_ns=None)[0] for _ in range(samples)]
    finally:
        worker.stop()
        directory.remove()


@pytest.mark.e2e
def test_a_c_workers_loop_alone_is_counted_the_same_in_every_sample(tmp_path):
    program = str(c_worker(tmp_path))
    at_64 = counted_samples((program,), 64, 3)
    at_128 = counted_samples((program,), 128, 1)
    counts = [row.metrics["instructions"] for row in at_64]
    assert all(row.execution.status == 0 for row in at_64 + at_128)
    assert counts[0] == counts[1] == counts[2]
    # only the loop: twice the iterations, twice the count, but for a constant of a few instructions
    assert abs(at_128[0].metrics["instructions"] - 2 * counts[0]) < 100
    assert at_64[0].metrics["cycles_model"] >= counts[0]


@pytest.mark.e2e
def test_a_c_worker_built_without_callgrinds_header_refuses_to_be_counted(tmp_path):
    program = compiled(tmp_path, WORKER, "plain", "-I", str(INCLUDE), "-DPAIRBENCH_NO_CALLGRIND")
    from pairbench.measure.worker import WorkerFailed

    with pytest.raises(WorkerFailed, match="without <valgrind/callgrind.h>"):
        counted_samples((str(program),), 8, 1)


@pytest.mark.e2e
def test_a_python_workers_loop_is_counted_through_the_counting_library(tmp_path):
    from pairbench.measure import native

    if not Path(native.counting_library_path()).exists():
        pytest.fail("the counting library was not built: make test rebuilds the install where callgrind.h is")
    (tmp_path / "bench_count.py").write_text(
        "import pairbench\n\n@pairbench.benchmark\ndef work():\n    return sum(i * i for i in range(50))\n")
    rows = counted_samples((sys.executable, "-m", "pairbench.worker", str(tmp_path)), 4, 2)
    assert all(row.execution.status == 0 for row in rows), [row.detail for row in rows]
    per_call = [row.metrics["instructions"] / 4 for row in rows]
    assert 2_000 < per_call[1] < 200_000  # a generator of 50 squares, not an interpreter's start-up
