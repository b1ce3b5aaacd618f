"""A harness program runs from a fresh copy of its file at each invocation, so where its pages lie in
memory is drawn anew for every sample, on both sides alike (``measure.placement``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes import FakeExecutor

from pairbench.measure.harnesses.base import Invocation, Program, Report
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.placement import copied_program, fresh_placement

TRUE = shutil.which("true")
ECHO = shutil.which("echo")


class OneLineHarness:
    """A harness adapter whose invocation is its program with the benchmark's name as argument."""

    name = "gbench"

    def invocation(self, program, name, iterations, sample_time_ns, scratch):
        return Invocation(program.command(name, text=f"{program.text} {name}"), name, iterations)

    def read(self, invocation, output):
        return Report(invocation.benchmark, 1, 1000)


def elf(path: str | None) -> bool:
    return path is not None and Path(path).read_bytes()[:4] == b"\x7fELF"


@pytest.fixture(autouse=True)
def elf_programs():
    """These tests copy real ELF executables: coreutils' ``true`` and ``echo`` are on every Linux this
    project supports, so one that is missing or not ELF is a broken machine, not a case to skip."""
    assert elf(TRUE) and elf(ECHO), f"true ({TRUE}) and echo ({ECHO}) must be ELF executables"


def test_each_invocation_runs_a_new_file_with_the_programs_bytes(tmp_path):
    seen = []

    def record(command, index, clock_ns):
        path = command.argv[0]
        seen.append((path, os.stat(path).st_ino, Path(path).read_bytes() == Path(TRUE).read_bytes()))
        return 0.001

    target = HarnessTarget(OneLineHarness(), Program((TRUE,), text="true"), "A", "bench", 0, None, 1_000_000,
                           tmp_path, OutputFile(tmp_path / "out"))
    executor = FakeExecutor(record)
    rows = [target.execute(executor, timeout_ns=None)[0] for _ in range(3)]
    assert all(row.execution.status == 0 for row in rows)
    assert all(path != TRUE and same for path, _, same in seen)  # never the file itself, always its bytes
    assert not any(os.path.exists(path) for path, _, _ in seen)  # each copy removed after its invocation
    assert executor.calls[0].text == "true bench"  # the program's own name in what is shown


@pytest.mark.e2e
def test_a_copy_runs_as_the_program_does(tmp_path):
    with fresh_placement(Program((ECHO, "placed"), text="echo"), tmp_path) as program:
        assert program.argv[0] != ECHO and program.argv[1:] == ("placed",) and program.text == "echo"
        done = subprocess.run(program.argv, capture_output=True, text=True, check=True)
    assert done.stdout == "placed\n" and not Path(program.argv[0]).exists()


def test_a_script_a_wrapper_or_pytest_benchmarks_python_runs_as_given(tmp_path):
    script = tmp_path / "bench.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    python = Program((TRUE, "-m", "pytest"), target="tests/bench_x.py")  # pytest-benchmark's: this Python
    for program in (Program((str(script),)), Program(("no-such-program",)), Program(("taskset", TRUE)), python):
        assert not copied_program(program)
        with fresh_placement(program, tmp_path / "scratch") as placed:
            assert placed is program


def test_a_binary_that_finds_its_libraries_beside_itself_runs_as_given(tmp_path):
    binary = tmp_path / "bench"
    binary.write_bytes(Path(TRUE).read_bytes() + b"\0RUNPATH=$ORIGIN/../lib\0")
    binary.chmod(0o755)
    plain = tmp_path / "plain"
    shutil.copyfile(TRUE, plain)
    plain.chmod(0o755)
    assert not copied_program(Program((str(binary),), text="bench"))  # a copy would lose ../lib
    assert copied_program(Program((str(plain),), text="plain"))
    with fresh_placement(Program((str(binary),), text="bench"), tmp_path / "scratch") as placed:
        assert placed.argv[0] == str(binary)
