"""The Python worker as pairbench sees it: a real process on two real pipes, every reply checked
with ``pairbench.worker.protocol``'s parsers (``harness_client``)."""

from __future__ import annotations

import os
import subprocess

import pytest
from harness_client import HarnessClient, WorkerGone, worker_argv
from processes import SCHEDSTAT, samples_cpu_share

from pairbench.worker import protocol

pytestmark = pytest.mark.e2e  # real worker processes

BASIC = """
import pairbench

@pairbench.benchmark
def noop():
    pass

@pairbench.benchmark(params={"n": [10, 1000]}, setup=lambda n: list(range(n, 0, -1)))
def sort(data):
    sorted(data)
"""


@pytest.fixture
def start(tmp_path):
    """``start(*args, env=...)``: a worker (run in ``tmp_path``) that has greeted; stopped after."""
    clients = []

    def start_worker(*args, env=None, greet=True, **kwargs) -> HarnessClient:
        client = HarnessClient(*args, cwd=tmp_path, env=env, **kwargs)
        clients.append(client)
        if greet:
            client.greeting()
        return client

    yield start_worker
    for client in clients:
        client.close()


# --------------------------------------------------------------------------- the exchange


def test_worker_greets_lists_and_answers_samples_with_every_field(start, write):
    worker = start(write("bench_basic.py", BASIC))
    assert worker.list() == ["noop", "sort[n=10]", "sort[n=1000]"]
    reply = worker.sample("sort[n=1000]", 64)
    assert reply.wall_ns > 0 and reply.max_rss_kib > 0
    assert worker.sample("noop", 1).wall_ns > 0
    assert worker.quit() == 0


def test_params_without_setup_are_passed_as_keyword_arguments(start, write, recorded):
    worker = start(write("bench_kw.py", """
        import pairbench
        from recorder import record

        @pairbench.benchmark(params={"size": [3], "kind": ["asc"]})
        def build(size, kind):
            record(size=size, kind=kind)
    """), env=recorded.env)
    assert worker.list() == ["build[kind=asc,size=3]"]
    worker.sample("build[kind=asc,size=3]", 2)
    assert recorded() == [{"size": 3, "kind": "asc"}] * 2


def test_time_grows_with_the_iteration_count(start, write):
    worker = start(write("bench_work.py", """
        import pairbench

        @pairbench.benchmark
        def work():
            sum(range(100))
    """))
    one = min(worker.sample("work", 1).wall_ns for _ in range(3))
    many = worker.sample("work", 20_000)
    assert many.wall_ns > 50 * one  # about 20,000 times; preemption cannot bring it under 50
    assert many.user_ns + many.sys_ns > 0


@pytest.mark.skipif(not SCHEDSTAT.exists(), reason="a platform limit: no per-thread CPU account in /proc")
def test_the_samples_cpu_time_is_what_the_kernel_charged_the_thread_for_them(start, write):
    # ~1 ms of CPU-bound work, 200 times: the CPU time the replies report must be nearly all the
    # kernel charged the worker's thread meanwhile, never more. getrusage(RUSAGE_THREAD) alone
    # reported 15-20%: the thread's account was stale.
    worker = start(write("bench_work.py", """
        import pairbench

        @pairbench.benchmark
        def work():
            sum(range(100))
    """))
    iterations = 1
    while worker.sample("work", iterations).wall_ns < 1_000_000 and iterations < 1 << 30:
        iterations *= 2
    share = samples_cpu_share(worker.process.pid, lambda: [worker.sample("work", iterations) for _ in range(200)])
    assert 0.8 <= share <= 1.0


def test_setup_and_teardown_run_once_per_sample_outside_the_timed_loop(start, write, recorded):
    worker = start(write("bench_slow_setup.py", """
        import time
        import pairbench
        from recorder import record

        def setup():
            record(phase="setup")
            time.sleep(0.3)
            return "argument"

        def teardown(argument):
            record(phase="teardown", argument=argument)
            time.sleep(0.3)

        @pairbench.benchmark(setup=setup, teardown=teardown)
        def quick(argument):
            record(phase="body", argument=argument)
    """), env=recorded.env)
    samples = [worker.sample("quick", iterations) for iterations in (1, 2)]
    assert all(sample.wall_ns < 300_000_000 for sample in samples), samples  # the sleeps are 300 ms each
    assert [r["phase"] for r in recorded()] == ["setup", "body", "teardown", "setup", "body", "body", "teardown"]
    assert {r.get("argument") for r in recorded() if r["phase"] != "setup"} == {"argument"}


def test_the_garbage_collector_is_disabled_during_the_loop_and_restored_after(start, write, recorded):
    worker = start(write("bench_gc.py", """
        import gc
        import pairbench
        from recorder import record

        @pairbench.benchmark(setup=lambda: record(where="setup", enabled=gc.isenabled()),
                             teardown=lambda _: record(where="teardown", enabled=gc.isenabled()))
        def allocate(_):
            record(where="body", enabled=gc.isenabled())
    """), env=recorded.env)
    worker.sample("allocate", 3)
    assert [(r["where"], r["enabled"]) for r in recorded()] == [
        ("setup", True), ("body", False), ("body", False), ("body", False), ("teardown", True)]


# --------------------------------------------------------------------------- failures and bad requests


def test_a_benchmark_that_raises_gets_an_error_reply_and_the_worker_goes_on(start, write):
    worker = start(write("bench_fail.py", """
        import sys
        import pairbench

        @pairbench.benchmark
        def fails():
            raise KeyError("missing")

        @pairbench.benchmark(setup=lambda: 1 / 0)
        def bad_setup(_):
            pass

        @pairbench.benchmark(teardown=lambda: sys.exit(3))
        def bad_teardown():
            pass

        @pairbench.benchmark
        def fine():
            pass
    """))
    assert worker.run("fails", 4) == protocol.ErrorReply("KeyError: 'missing'")
    assert worker.run("bad_setup", 1) == protocol.ErrorReply("ZeroDivisionError: division by zero (in setup)")
    assert worker.run("bad_teardown", 1) == protocol.ErrorReply("SystemExit: 3 (in teardown)")
    assert worker.sample("fine", 8).wall_ns > 0


def test_an_unknown_benchmark_is_an_error_reply(start, write):
    worker = start(write("bench_basic.py", BASIC))
    reply = worker.run("sort[n=5]", 1)
    assert isinstance(reply, protocol.ErrorReply) and "unknown benchmark 'sort[n=5]'" in reply.message
    assert worker.sample("noop", 1).wall_ns > 0


@pytest.mark.parametrize("request_line", [b"run noop 0\n", b"run noop\n", b"run noop 99999999999999999999\n",
                                          b"hello\n", b"\xff\xfe\n", b"\n"])
def test_a_malformed_request_is_an_error_reply(start, write, request_line):
    worker = start(write("bench_basic.py", BASIC))
    worker.send(request_line)
    assert isinstance(protocol.parse_reply(worker.readline()), protocol.ErrorReply)
    assert worker.list() == ["noop", "sort[n=10]", "sort[n=1000]"]


def test_a_request_line_over_the_limit_ends_the_worker_with_status_2(start, write):
    worker = start(write("bench_basic.py", BASIC))
    worker.send(b"run " + b"x" * protocol.MAX_LINE_BYTES + b" 1\n")
    assert worker.wait() == 2
    assert f"longer than {protocol.MAX_LINE_BYTES} bytes" in worker.stderr()


# --------------------------------------------------------------------------- ending


def test_quit_ends_the_worker_with_status_0(start, write):
    worker = start(write("bench_basic.py", BASIC))
    assert worker.quit() == 0
    with pytest.raises(WorkerGone):
        worker.readline()


def test_end_of_file_on_the_request_pipe_ends_the_worker(start, write):
    worker = start(write("bench_basic.py", BASIC))
    worker.send("list")  # a partial line, then end of file: pairbench went away mid-request
    worker.close_requests()
    assert worker.wait() == 0


# --------------------------------------------------------------------------- starting


def test_without_the_fds_variable_the_worker_explains_and_exits_2(tmp_path, write):
    file = write("bench_basic.py", BASIC)
    env = {k: v for k, v in os.environ.items() if k != protocol.FDS_VARIABLE}
    result = subprocess.run(worker_argv(file), env=env, capture_output=True, text=True, timeout=20)
    assert result.returncode == 2
    assert f"{protocol.FDS_VARIABLE} is not set" in result.stderr and "--list" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("value", ["5", "a,b", "900,901"])
def test_a_bad_fds_variable_exits_2(start, write, value):
    worker = start(write("bench_basic.py", BASIC), fds_value=value, greet=False)
    assert worker.wait() == 2
    assert protocol.FDS_VARIABLE in worker.stderr()


def test_list_option_prints_the_names_and_exits_0(tmp_path, write):
    file = write("bench_basic.py", BASIC)
    result = subprocess.run(worker_argv("--list", file), capture_output=True, text=True, timeout=20)
    assert (result.returncode, result.stdout) == (0, "noop\nsort[n=10]\nsort[n=1000]\n")


def test_an_import_error_ends_the_worker_with_status_2_before_the_greeting_naming_the_file(start, write):
    file = write("bench_broken.py", "import no_such_module_anywhere\n")
    worker = start(file, greet=False)
    with pytest.raises(WorkerGone):
        worker.readline()
    assert worker.wait() == 2
    assert f"cannot import {file}, line 1: ModuleNotFoundError" in worker.stderr()


def test_root_is_imported_from_before_the_benchmark_files_directory(tmp_path, write):
    for tree in ("tree_a", "tree_b"):
        write(f"{tree}/mylib.py", f"VALUE = {tree[-1]!r}\n")
    write("tree_c/src/mylib.py", "VALUE = 'c'\n")
    bench = write("tree_b/bench_value.py", """
        import mylib
        import pairbench

        @pairbench.benchmark(name=f"value_{mylib.VALUE}")
        def value():
            pass
    """)

    def listed(*root):
        result = subprocess.run(worker_argv("--list", *root, bench), capture_output=True, text=True,
                                timeout=20, check=True)
        return result.stdout.split()

    assert listed() == ["value_b"]
    assert listed("--root", tmp_path / "tree_a") == ["value_a"]
    assert listed("--root", tmp_path / "tree_c") == ["value_c"]  # a src layout


# --------------------------------------------------------------------------- isolation


CHILD = """
import json, os, stat, sys
seen = {}
for fd in map(int, sys.argv[1].split(",")):
    try:
        seen[fd] = os.fstat(fd).st_ino
    except OSError:
        seen[fd] = None
print(json.dumps({"fds": seen, "env": os.environ.get(sys.argv[2])}))
"""


def test_the_control_pipes_and_the_fds_variable_do_not_reach_a_child_process(start, write, recorded):
    worker = start(write("bench_child.py", f"""
        import json, os, subprocess, sys
        import pairbench
        from recorder import record

        @pairbench.benchmark
        def spawn():
            fds = os.environ["HARNESS_CLIENT_FDS"]
            out = subprocess.run([sys.executable, "-c", {CHILD!r}, fds, "{protocol.FDS_VARIABLE}"],
                                 close_fds=False, capture_output=True, text=True, check=True).stdout
            record(child=json.loads(out), env=os.environ.get("{protocol.FDS_VARIABLE}"),
                   inheritable=[os.get_inheritable(int(fd)) for fd in fds.split(",")])
    """), env=recorded.env)
    worker.sample("spawn", 1)
    [seen] = recorded()
    pipes = {os.fstat(worker.request_w).st_ino, os.fstat(worker.reply_r).st_ino}
    assert not pipes & set(seen["child"]["fds"].values())
    assert seen["inheritable"] == [False, False]
    assert seen["env"] is None and seen["child"]["env"] is None


def test_the_worker_loads_no_numpy_scipy_click_or_other_pairbench_module(start, write, recorded):
    worker = start(write("bench_modules.py", """
        import sys
        import pairbench
        from recorder import record

        @pairbench.benchmark
        def modules():
            record(modules=sorted(sys.modules))
    """), env=recorded.env)
    worker.sample("modules", 1)
    modules = recorded()[0]["modules"]
    assert not [m for m in modules if m.split(".")[0] in ("numpy", "scipy", "click", "rich", "jinja2")]
    assert {m for m in modules if m.startswith("pairbench.")} == {
        "pairbench.command", "pairbench.notes", "pairbench.worker.protocol", "pairbench.limits", "pairbench.worker",
        "pairbench.worker.discovery", "pairbench.frozen",
        "pairbench.worker.registry", "pairbench.worker.serve"}


def test_a_fresh_setup_prepares_every_call_and_times_only_the_calls(monkeypatch):
    import types

    from pairbench.worker import serve

    clock = [0]
    monkeypatch.setattr(serve, "time", types.SimpleNamespace(perf_counter_ns=lambda: clock[0],
                                                       thread_time_ns=lambda: clock[0]))
    prepared, seen = [], []

    def setup():
        clock[0] += 1_000_000  # the setup's time: not in the sample
        prepared.append([3, 1, 2])
        return prepared[-1]

    def call(data):
        clock[0] += 10  # the call's
        seen.append(list(data))
        data.sort()

    reply = serve.timed_fresh_calls(setup, call, 8, teardown=lambda data: data.append("done"))
    assert seen == [[3, 1, 2]] * 8 and len(prepared) == 8
    assert all(data == [1, 2, 3, "done"] for data in prepared)
    assert reply.wall_ns == 80


def test_a_reply_splits_the_threads_cpu_clock_by_getrusage_and_counts_its_usage():
    from collections import namedtuple

    from pairbench.command import Execution
    from pairbench.worker import serve

    usage = namedtuple("usage", "ru_utime ru_stime ru_nvcsw ru_nivcsw ru_minflt ru_majflt")
    before, after = usage(1.0, 0.5, 10, 2, 100, 0), usage(1.003, 0.501, 12, 5, 140, 1)
    reply = serve._reply(5_000_000, 4_000_000, before, after)
    assert (reply.wall_ns, reply.user_ns, reply.sys_ns) == (5_000_000, 3_000_000, 1_000_000)
    assert (reply.voluntary_cs, reply.involuntary_cs, reply.minor_faults, reply.major_faults) == (2, 3, 40, 1)
    capped = serve._reply(5_000_000, 400_000, before, after)  # system time never beyond the CPU clock
    assert (capped.user_ns, capped.sys_ns) == (0, 400_000)
    assert serve._reply(5_000_000, 4_000_000, None, None) == Execution(wall_ns=5_000_000, start_ns=0)
