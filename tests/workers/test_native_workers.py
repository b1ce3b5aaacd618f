"""The native workers speak docs/worker-protocol.md: the C header (``pairbench.h``), the Rust
example and the Go example are built for real and driven over real pipes, as pairbench drives them.

Each language's build happens once per module; a language is skipped only when its toolchain is
not installed. The C-only tests use ``native_probes.c``, benchmarks made to observe the header.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import SCHEDSTAT, samples_cpu_share

from pairbench.command import Execution
from pairbench.worker.protocol import (
    FDS_VARIABLE,
    MAX_LINE_BYTES,
    REPLY_FIELDS,
    ErrorReply,
    parse_count,
    parse_greeting,
    parse_listed,
    parse_reply,
    split_name,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "src" / "pairbench" / "worker" / "include"
EXAMPLES = ROOT / "examples"
PROBES = Path(__file__).with_name("native_probes.c")
C_FLAGS = ("-O2", "-std=c11", "-Wall", "-Wextra", "-Werror")
CXX_FLAGS = ("-x", "c++", "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror")
REPLY_TIMEOUT_S = 20.0  # generous: the slowest sample here takes some 20 ms on a quiet machine
O_CLOEXEC = 0o2000000  # as /proc/PID/fdinfo shows it (octal, Linux)


# --------------------------------------------------------------------------- building


@dataclass(frozen=True)
class Program:
    """A built worker: how to start it and the benchmarks it should list."""

    argv: tuple[str, ...]
    names: tuple[str, ...]


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed, so this worker cannot be built")
    return path


def build(argv: list[str | Path], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        pytest.fail(f"building failed: {' '.join(map(str, argv))}\n{done.stdout}\n{done.stderr}")


def build_c(source: Path | list[Path], out: Path, cxx: bool = False) -> Path:
    sources = source if isinstance(source, list) else [source]
    compiler = require("c++") if cxx else require("cc")
    build([compiler, *(CXX_FLAGS if cxx else C_FLAGS), "-I", INCLUDE, *sources, "-o", out])
    return out


@pytest.fixture(scope="module")
def c_example(tmp_path_factory) -> Program:
    out = build_c(EXAMPLES / "c" / "bench.c", tmp_path_factory.mktemp("c") / "bench")
    return Program((str(out),), ("checksum", "sort[n=64]"))


@pytest.fixture(scope="module")
def rust_example(tmp_path_factory) -> Program:
    cargo = require("cargo")
    tmp = tmp_path_factory.mktemp("rust")
    project = shutil.copytree(EXAMPLES / "rust", tmp / "project", ignore=shutil.ignore_patterns("target"))
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp / "target")}
    build([cargo, "build", "--release", "--offline", "--locked", "--quiet"], cwd=project, env=env)
    binary = tmp / "target" / "release" / "pairbench-worker-example"
    return Program((str(binary),), ("checksum", "sum[n=1000]", "sum[n=100000]", "sort[n=1000]"))


@pytest.fixture(scope="module")
def go_example(tmp_path_factory) -> Program:
    go = require("go")
    tmp = tmp_path_factory.mktemp("go")
    project = shutil.copytree(EXAMPLES / "go", tmp / "project")  # outside any VCS: no stamping
    # Never download a toolchain or module; keep the usual build cache when it is writable.
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": "-buildvcs=false"}
    cache = subprocess.run([go, "env", "GOCACHE"], capture_output=True, text=True, env=env).stdout.strip()
    if not cache or not os.access(cache if os.path.isdir(cache) else os.path.dirname(cache), os.W_OK):
        env["GOCACHE"] = str(tmp / "gocache")
    build([go, "build", "-o", tmp / "worker", "."], cwd=project, env=env)
    return Program((str(tmp / "worker"),), ("checksum", "sum[n=1000]", "sum[n=100000]", "sort[n=1000]"))


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> Program:
    out = build_c(PROBES, tmp_path_factory.mktemp("probes") / "probes")
    return Program((str(out),), PROBE_NAMES)


PROBE_NAMES = ("spawn", "slow_hooks", "failing_setup", "keep_mix", "keep[kinds=scalars,pointers]")


@pytest.fixture(params=["c", "rust", "go"])
def example(request) -> Program:
    """Each language's example worker in turn."""
    return request.getfixturevalue(f"{request.param}_example")


# --------------------------------------------------------------------------- driving


class Worker:
    """One worker started the way pairbench starts it, and a strict client of its pipes."""

    def __init__(self, program: Program, directory: Path, env: dict[str, str]):
        request_r, self._requests = os.pipe()
        self._replies, reply_w = os.pipe()
        self.fds = (request_r, reply_w)  # the numbers the worker was given
        self.pipe_inodes = {os.fstat(request_r).st_ino, os.fstat(reply_w).st_ino}
        self.stderr_path = directory / "stderr.txt"
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                program.argv, pass_fds=self.fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=stderr, start_new_session=True,
                env={**os.environ, **env, FDS_VARIABLE: f"{request_r},{reply_w}"})
        os.close(request_r)
        os.close(reply_w)
        self._buffer = b""

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def send(self, line: str | bytes) -> None:
        os.write(self._requests, (line.encode() if isinstance(line, str) else line) + b"\n")

    def read_line(self) -> str:
        """The next reply line, checked to be UTF-8 within the line limit."""
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while b"\n" not in self._buffer:
            assert len(self._buffer) < MAX_LINE_BYTES, "a reply line is longer than 4096 bytes"
            ready, _, _ = select.select([self._replies], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                pytest.fail(f"no reply within {REPLY_TIMEOUT_S} s; stderr: {self.stderr()}")
            chunk = os.read(self._replies, 65536)
            if not chunk:
                pytest.fail(f"the worker closed its replies; stderr: {self.stderr()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        assert len(line) < MAX_LINE_BYTES, "a reply line is longer than 4096 bytes"
        return line.decode("utf-8")

    def greeting(self) -> None:
        parse_greeting(self.read_line())

    def list(self) -> list[str]:
        self.send("list")
        return [parse_listed(self.read_line()) for _ in range(parse_count(self.read_line()))]

    def request(self, line: str | bytes) -> Execution | ErrorReply:
        self.send(line)
        return parse_reply(self.read_line())

    def run(self, name: str, iterations: int) -> Execution:
        reply = self.request(f"run {name} {iterations}")
        assert isinstance(reply, Execution), f"run {name} {iterations}: {reply}"
        return reply

    def close_requests(self) -> None:
        if self._requests >= 0:
            os.close(self._requests)
            self._requests = -1

    def wait(self) -> int:
        return self.process.wait(timeout=REPLY_TIMEOUT_S)

    def stop(self) -> None:
        self.close_requests()
        os.close(self._replies)
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own group: the worker and its children
        self.process.wait()


@pytest.fixture
def start(tmp_path):
    """``start(program, **env)``: a greeted worker, stopped at the end of the test."""
    started: list[Worker] = []

    def start(program: Program, **env: str) -> Worker:
        directory = tmp_path / f"worker{len(started)}"
        directory.mkdir()
        worker = Worker(program, directory, env)
        started.append(worker)
        worker.greeting()
        return worker

    yield start
    for worker in started:
        worker.stop()


def min_ns(worker: Worker, name: str, iterations: int, samples: int = 3) -> int:
    """The quickest of a few samples: other load only ever adds time."""
    return min(worker.run(name, iterations).wall_ns for _ in range(samples))


def without_fds_variable() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != FDS_VARIABLE}


# --------------------------------------------------------------------------- every language


def test_the_worker_greets_and_lists_its_benchmarks_with_valid_names(example, start):
    names = start(example).list()
    assert tuple(names) == example.names
    sort = next(name for name in names if name.startswith("sort["))
    assert split_name(sort)[0] == "sort"
    assert [key for key, _ in split_name(sort)[1]] == ["n"]


def test_list_on_the_command_line_prints_the_names(example):
    done = subprocess.run([*example.argv, "--list"], capture_output=True, text=True, timeout=30,
                          env=without_fds_variable())
    assert done.returncode == 0, done.stderr
    assert tuple(done.stdout.splitlines()) == example.names


def test_a_sample_times_the_loop_and_grows_with_the_iterations(example, start):
    worker = start(example)
    iterations = 1
    while worker.run("checksum", iterations).wall_ns < 200_000 and iterations < 1 << 30:
        iterations *= 2
    small = min_ns(worker, "checksum", iterations)
    big = worker.run("checksum", 64 * iterations)
    assert big.wall_ns > 8 * small, f"{64 * iterations} iterations took {big.wall_ns} ns, {iterations} took {small} ns"
    # The thread's CPU time is over the loop alone: some, and no more than the loop's wall time.
    assert 0 < big.user_ns + big.sys_ns <= big.wall_ns + 2_000_000
    assert big.max_rss_kib > 0


@pytest.mark.skipif(not SCHEDSTAT.exists(), reason="a platform limit: no per-thread CPU account in /proc")
def test_the_samples_cpu_time_is_what_the_kernel_charged_the_thread_for_them(example, start):
    # A CPU-bound loop of ~1 ms, 200 times: the CPU time the replies report must be nearly all the
    # kernel charged the worker's thread meanwhile (the rest is the protocol's handling), never more.
    # getrusage(RUSAGE_THREAD) alone reported 15-20%: the thread's account was stale.
    worker = start(example)
    iterations = 1
    while worker.run("checksum", iterations).wall_ns < 1_000_000 and iterations < 1 << 30:
        iterations *= 2
    share = samples_cpu_share(worker.process.pid, lambda: [worker.run("checksum", iterations) for _ in range(200)])
    assert 0.8 <= share <= 1.0


def test_a_reply_carries_every_field_of_the_protocol(example, start):
    worker = start(example)
    worker.send("run checksum 2")
    line = worker.read_line()
    assert isinstance(parse_reply(line), Execution)
    assert tuple(item.partition("=")[0] for item in line.split(" ")[1:]) == tuple(REPLY_FIELDS)


def test_an_unknown_benchmark_is_an_error_and_the_worker_goes_on(example, start):
    worker = start(example)
    reply = worker.request("run no-such-benchmark 1")
    assert isinstance(reply, ErrorReply)
    assert "no-such-benchmark" in reply.message
    assert worker.run("checksum", 1).wall_ns > 0
    assert tuple(worker.list()) == example.names


@pytest.mark.parametrize("request_line", [
    b"hello", b"list extra", b"run", b"run checksum", b"run checksum 1 2", b"run  checksum 1",
    b"run checksum 0", b"run checksum -1", b"run checksum +1", b"run checksum 0x10",
    b"run checksum 1099511627777", b"run checksum 99999999999999999999999", b"run \xff\x01 1",
])
def test_a_malformed_request_is_answered_with_an_error_line(example, start, request_line):
    worker = start(example)
    reply = worker.request(request_line)  # read_line has checked it is one UTF-8 line
    assert isinstance(reply, ErrorReply)
    assert not any(ord(c) < 32 or ord(c) == 127 for c in reply.message)
    assert worker.run("checksum", 1).wall_ns > 0


def test_quit_ends_the_worker_with_status_0(example, start):
    worker = start(example)
    worker.send("quit")
    assert worker.wait() == 0


def test_the_end_of_the_requests_ends_the_worker_with_status_0(example, start):
    worker = start(example)
    worker.run("checksum", 1)
    worker.close_requests()
    assert worker.wait() == 0


def test_a_request_over_the_line_limit_ends_the_worker_with_status_2(example, start):
    worker = start(example)
    worker.send(b"run " + b"x" * MAX_LINE_BYTES + b" 1")
    assert worker.wait() == 2
    assert "4096" in worker.stderr()


def test_without_the_variable_the_program_says_it_is_a_worker_and_exits_2(example):
    done = subprocess.run(example.argv, capture_output=True, text=True, timeout=30,
                          env=without_fds_variable(), stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "pairbench worker" in done.stderr
    assert f"pairbench bench {example.argv[0]}" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("value", ["", "3", "x,y", "-1,4", "900,901"])
def test_a_bad_variable_exits_2_with_a_message(example, value):
    done = subprocess.run(example.argv, capture_output=True, text=True, timeout=30,
                          env={**without_fds_variable(), FDS_VARIABLE: value}, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert FDS_VARIABLE in done.stderr


def test_the_pipes_are_close_on_exec_in_the_worker(example, start):
    worker = start(example)
    pid = worker.process.pid
    flags_by_inode: dict[int, list[int]] = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        if target.startswith("pipe:["):
            fdinfo = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
            flags = next(int(line.split()[1], 8) for line in fdinfo.splitlines() if line.startswith("flags:"))
            flags_by_inode.setdefault(int(target[6:-1]), []).append(flags)
    assert worker.pipe_inodes <= flags_by_inode.keys(), "the worker does not hold both pipes"
    for inode in worker.pipe_inodes:
        assert all(flags & O_CLOEXEC for flags in flags_by_inode[inode]), "a pipe would be inherited"


# --------------------------------------------------------------------------- the C header


def test_c_children_inherit_neither_the_pipes_nor_the_variable(probes, start, tmp_path):
    worker = start(probes, NATIVE_OUT=str(tmp_path))
    worker.run("spawn", 1)
    fds = (tmp_path / "fds.txt").read_text()
    env = (tmp_path / "env.txt").read_text()
    assert "/proc/" in fds and "NATIVE_OUT=" in env  # the child did list its descriptors and variables
    for inode in worker.pipe_inodes:
        assert f"pipe:[{inode}]" not in fds
    assert FDS_VARIABLE not in env


def test_c_setup_and_teardown_run_once_per_sample_outside_the_timed_loop(probes, start, tmp_path):
    worker = start(probes, NATIVE_OUT=str(tmp_path))
    samples = [worker.run("slow_hooks", n) for n in (1, 1, 1, 5)]
    # Setup and teardown each sleep 20 ms: had either been timed, every sample would take longer.
    assert min(s.wall_ns for s in samples) < 10_000_000
    assert (tmp_path / "hooks.log").read_text().splitlines() == [
        "setup, bodies so far: 0", "teardown after bodies: 1",
        "setup, bodies so far: 1", "teardown after bodies: 1",
        "setup, bodies so far: 1", "teardown after bodies: 1",
        "setup, bodies so far: 1", "teardown after bodies: 5",
    ]


def test_c_a_failing_setup_replies_error_skips_the_loop_and_still_tears_down(probes, start, tmp_path):
    worker = start(probes, NATIVE_OUT=str(tmp_path))
    reply = worker.request("run failing_setup 4")
    assert reply == ErrorReply(r"no fixture:\x09disk on fire\x0a")
    assert (tmp_path / "hooks.log").read_text().splitlines() == ["failing_setup teardown 0"]
    assert worker.run("keep_mix", 1).wall_ns > 0  # the failure was that sample's alone


def test_c_keep_makes_the_compiler_keep_a_computation(probes, start):
    worker = start(probes)
    iterations = 1 << 16
    # 256 dependent multiply-adds take some 200 ns; deleted, an iteration takes about 0.3 ns.
    assert worker.run("keep_mix", iterations).wall_ns / iterations > 20


def test_c_the_header_compiles_as_cpp_and_the_worker_serves(start, tmp_path):
    program = Program((str(build_c(PROBES, tmp_path / "probes-cxx", cxx=True)),), PROBE_NAMES)
    worker = start(program)
    assert tuple(worker.list()) == PROBE_NAMES
    assert worker.run("keep[kinds=scalars,pointers]", 1000).wall_ns > 0
    build_c(EXAMPLES / "c" / "bench.c", tmp_path / "example-cxx", cxx=True)


def test_c_benchmarks_in_several_files_share_one_registry(start, tmp_path):
    (tmp_path / "main.c").write_text('#include "pairbench.h"\nPAIRBENCH(in_main) { pairbench_keep(1); }\n'
                                     "PAIRBENCH_MAIN()\n")
    (tmp_path / "more.c").write_text('#include "pairbench.h"\nPAIRBENCH_SETUP(in_more) {}\n'
                                     "PAIRBENCH(in_more) { pairbench_keep(2); }\n")
    binary = build_c([tmp_path / "main.c", tmp_path / "more.c"], tmp_path / "two")
    assert sorted(start(Program((str(binary),), ())).list()) == ["in_main", "in_more"]


@pytest.mark.parametrize("cxx", [False, True])
def test_c_every_benchmark_loop_starts_at_a_64_byte_boundary_whatever_code_comes_before_it(tmp_path, cxx):
    """A benchmark's loop does not move across a 64-byte line when the code before it changes: with
    1 and with 9 statements in the benchmark before ``same``, every loop function starts at a
    multiple of 64 (an unaligned ``same`` once ran 2.07 times slower in one of two such builds)."""
    nm = require("nm")
    for statements in (1, 9):
        body = " ".join(f"pairbench_keep({k});" for k in range(statements))
        (tmp_path / "layout.c").write_text(
            f'#include "pairbench.h"\nPAIRBENCH(before) {{ {body} }}\n'
            "PAIRBENCH(same) { unsigned s = 0; for (unsigned i = 0; i < 2000u; i++) s ^= i; pairbench_keep(s); }\n"
            "PAIRBENCH_MAIN()\n")
        binary = build_c(tmp_path / "layout.c", tmp_path / f"layout-{statements}", cxx=cxx)
        listed = subprocess.run([nm, binary], capture_output=True, text=True, timeout=60, check=True).stdout
        loops = {line.split()[-1]: int(line.split()[0], 16) for line in listed.splitlines()
                 if "pairbench_loop_" in line}
        assert len(loops) == 2 and all(address % 64 == 0 for address in loops.values()), listed


@pytest.mark.parametrize(("source", "message"), [
    ("PAIRBENCH_SETUP(ghost) {}\nPAIRBENCH(real) {}", "a setup or teardown has no benchmark: ghost"),
    ('PAIRBENCH(sort) {}\nPAIRBENCH_NAMED(other, "sort") {}', "two benchmarks are named sort"),
    ('PAIRBENCH_NAMED(spaced, "has space") {}', "not the name of spaced"),
])
def test_c_a_wrong_registration_exits_2_naming_it(tmp_path, source, message):
    (tmp_path / "bad.c").write_text(f'#include "pairbench.h"\n{source}\nPAIRBENCH_MAIN()\n')
    binary = build_c(tmp_path / "bad.c", tmp_path / "bad")
    done = subprocess.run([binary, "--list"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert message in done.stderr


def test_pairbench_bench_drives_each_example_worker_to_a_result(example, tmp_path):
    from cli_runner import invoke

    result = tmp_path / "r.json"
    program = " ".join(str(word) for word in example.argv)
    code, out, err = invoke("bench", "-q", "--runs", "16", "--sample-time", "200us", "--json", str(result),
                            program, program)
    assert code == 0, err
    import json

    document = json.loads(result.read_text())
    assert document["kind"] == "bench" and len(document["benchmarks"]) >= 2
    assert all(len(s["samples"]["wall_ns"]) >= 16 for s in document["series"])


def test_include_dir_names_the_directory_of_the_header():
    from cli_runner import invoke

    code, out, _ = invoke("include-dir")
    assert code == 0
    assert (Path(out.strip()) / "pairbench.h").is_file()


def test_every_thread_of_a_started_go_worker_is_pinned_to_the_workers_cpu(go_example):
    from pairbench.measure.executor import OutputPolicy
    from pairbench.measure.worker import Worker as Driver
    from pairbench.measure.worker import WorkerSpec
    from pairbench.model import Command

    cpu = min(os.sched_getaffinity(0))
    driver = Driver(WorkerSpec(Command("go worker", go_example.argv), None, OutputPolicy(), None, cpu), "go")
    try:
        driver.start()
        threads = [int(tid) for tid in os.listdir(f"/proc/{driver.pid}/task")]
        assert len(threads) > 1  # the Go runtime's threads, made before the greeting
        assert all(os.sched_getaffinity(tid) == {cpu} for tid in threads)
    finally:
        driver.stop()
