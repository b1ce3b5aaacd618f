"""Workers: long-lived benchmark programs driven over the worker protocol (``docs/worker-protocol.md``).

A :class:`Worker` starts one side's program with two dedicated pipes (passed
by number in ``PAIRBENCH_WORKER_FDS``; the worker marks them close-on-exec, and
here they are close-on-exec anyway, so nothing else inherits them), reads its
greeting, lists its benchmarks and asks for samples. The worker times each
sample itself, around its loop only: the round trip over the pipes is never
part of a sample.

Everything a worker says is hostile. Lines are read with a deadline and a
length limit and parsed strictly (``pairbench.worker.protocol``). A worker that
exits, is killed, breaks the protocol or does not answer within the timeout
raises :class:`WorkerFailed` with the sample status that says what happened
(``STATUS_TIMEOUT``, ``STATUS_PROTOCOL``, an exit code or ``-signal``) and the
tail of its standard error; it is then stopped, and :meth:`Worker.start` may
start it again (for the next benchmark).

A :class:`WorkerTarget` is the sampler's view of one benchmark on one worker:
one execution is one ``run NAME ITERATIONS`` request.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import select
import subprocess
import tempfile
import time
from collections.abc import Callable

from pairbench.command import (
    STATUS_BENCHMARK_ERROR,
    STATUS_PROTOCOL,
    STATUS_TIMEOUT,
    STATUS_UNREADABLE,
    Command,
    describe_status,
)
from pairbench.errors import CommandNotFound
from pairbench.frozen import frozen
from pairbench.measure import callgrind, child_environment, children
from pairbench.measure.executor import Execution, Executor, OutputPolicy
from pairbench.measure.sampler import RoundEnd, Sink
from pairbench.measure.targets import Row
from pairbench.model import INSTRUCTIONS_METRIC, RESIDENT_METRIC
from pairbench.outputs import open_stream
from pairbench.worker import protocol
from pairbench.worker.protocol import ErrorReply, ProtocolError

STARTUP_TIMEOUT_NS = 60_000_000_000
"""How long a worker may take to greet and to list its benchmarks when no --timeout is given."""
STDERR_TAIL_BYTES = 2000
ZERO_TIME = "it reported a sample of 0 ns (ns=0): a sample lasts at least 1 ns; is its clock too coarse?"
_KILL_GRACE_S = 0.5


class WorkerFailed(Exception):
    """The worker ended, hung or broke the protocol; ``status`` is the sample status saying which."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


COUNTER_VARIABLE = "PAIRBENCH_COUNTER"
"""How pairbench asks a worker to count its loop's instructions (``worker/counting.py``, ``pairbench.h``)."""
NO_DUMP = ("Callgrind received no counts from the worker: build a C or C++ worker where <valgrind/callgrind.h> "
           "is found (Debian: valgrind), so that pairbench.h counts its loop; a Python worker needs the counting "
           "library pairbench's install builds there")


@frozen
class Counting:
    """How a worker's loop is counted: ``callgrind`` (the worker runs under Callgrind, its dumps go to
    ``directory``) or ``instructions`` (a hardware counter inside the worker)."""

    kind: str
    valgrind: str = ""
    directory: callgrind.OutputDirectory | None = None


@frozen
class WorkerSpec:
    """How to start one side's worker: its command (argv, no shell), working directory, where its
    standard output goes, and the timeout of each request (None: ``STARTUP_TIMEOUT_NS`` for start-up
    and listing, no limit for samples)."""

    command: Command
    cwd: str | None = None
    output: OutputPolicy = OutputPolicy()
    timeout_ns: int | None = None
    cpu: int | None = None  # the CPU the worker is pinned to (both sides share one), or None
    counting: Counting | None = None  # how its loop's instructions are counted, or None


class _LineReader:
    """Reads ``\\n``-terminated lines from a pipe, each within a deadline and a length limit."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = b""

    def readline(self, deadline_ns: int | None) -> str | None:
        """The next line without its newline; None at end of file (a partial last line is a
        ``ProtocolError``); ``TimeoutError`` past the deadline."""
        while True:
            end = self._buffer.find(b"\n", 0, protocol.MAX_LINE_BYTES)
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1:]
                return _decoded(line)
            if len(self._buffer) >= protocol.MAX_LINE_BYTES:
                raise ProtocolError(f"a line longer than {protocol.MAX_LINE_BYTES} bytes")
            chunk = self._read(deadline_ns)
            if not chunk:
                if self._buffer:
                    raise ProtocolError(f"a line cut short by the end of the output: {_shown(self._buffer)}")
                return None
            self._buffer += chunk

    def _read(self, deadline_ns: int | None) -> bytes:
        wait = None if deadline_ns is None else max(deadline_ns - time.monotonic_ns(), 0) / 1e9
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            raise TimeoutError
        return os.read(self.fd, 65536)


def _decoded(line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(f"a line that is not UTF-8: {_shown(line)}") from None


def _shown(data: bytes) -> str:
    return repr(data[:80].decode("utf-8", "backslashreplace"))


_PAGE_KIB = os.sysconf("SC_PAGESIZE") // 1024


class Worker:
    """One side's worker process: started on demand, asked for samples, stopped at the end."""

    def __init__(self, spec: WorkerSpec, side: str):
        self.spec = spec
        self.side = side
        self._process: subprocess.Popen | None = None
        self._requests: int | None = None
        self._replies: _LineReader | None = None
        self._stderr = None
        self._program_pid: int | None = None
        self._greeted = False
        self.fresh = False  # started and not yet sampled (a target primes it first)
        self.block = 0  # the block of the benchmark this process measures (see Rotation)

    def start(self) -> None:
        """Start the worker and read its greeting (``CommandNotFound`` if it cannot be started,
        ``WorkerFailed`` if it does not greet)."""
        self.spawn()
        self.greeted()

    def spawn(self) -> None:
        """Start the worker's process, not waiting for its greeting (``greeted`` does): several
        workers start at once this way."""
        if self._process is not None:
            return
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        try:
            self._process = self._spawn(request_r, reply_w)
        except BaseException:
            for fd in (request_w, reply_r):
                os.close(fd)
            self._stderr.close()
            raise
        finally:
            with contextlib.suppress(OSError):
                os.close(request_r)
                os.close(reply_w)
        self._requests, self._replies = request_w, _LineReader(reply_r)
        self._greeted, self.fresh, self._program_pid = False, True, None

    def greeted(self) -> None:
        """Read the greeting of a just spawned worker (once), then pin it to ``spec.cpu``: so
        workers started together start in parallel, and every thread the worker has made by then
        (a Go runtime's) is pinned. Its keeper is pinned there too: what it does to end the worker's
        leftovers runs on the lane's own CPU, between the lane's samples, never beside another
        lane's sample."""
        if self._process is None:
            self.spawn()
        if not self._greeted:
            self._expect(protocol.parse_greeting, self._startup_deadline(), "its greeting")
            self._greeted = True
            self._program_pid = children.program_pid(self._process)
            if self.spec.cpu is not None:
                pin(self._program_pid, self.spec.cpu)
                if self._process.pid != self._program_pid:
                    pin(self._process.pid, self.spec.cpu)

    def _spawn(self, request_r: int, reply_w: int) -> subprocess.Popen:
        env = {**child_environment.for_children(), protocol.FDS_VARIABLE: f"{request_r},{reply_w}"}
        argv = self.spec.command.argv
        counting = self.spec.counting
        if counting is not None:
            env[COUNTER_VARIABLE] = counting.kind
            if counting.kind == "callgrind":
                argv = (*callgrind.callgrind_argv(counting.valgrind, counting.directory.path, region=True), *argv)
        stdout = self._open_output()
        try:
            return children.start(argv, cwd=self.spec.cwd, env=env, stdout=stdout,
                                  stderr=self._stderr, pass_fds=(request_r, reply_w), grace_s=_KILL_GRACE_S)
        except OSError as exc:
            raise CommandNotFound(f"cannot start the worker {self.spec.command.text!r} of {self.side}: "
                                  f"{exc.strerror or exc}") from None
        finally:
            if stdout not in (None, subprocess.DEVNULL):
                os.close(stdout)

    def _open_output(self):
        output = self.spec.output
        if output.mode == "inherit":
            return None
        if output.mode == "file":  # through the output guard: no journal, no link another user planted
            return open_stream(output.path, truncate=False)
        return subprocess.DEVNULL

    def benchmarks(self) -> tuple[str, ...]:
        """The worker's benchmark names, in its order (checked, distinct)."""
        self.start()
        self._send(protocol.list_request())
        deadline = self._startup_deadline()
        count = self._expect(protocol.parse_count, deadline, "its list")
        names = tuple(self._expect(protocol.parse_listed, deadline, "its list") for _ in range(count))
        if len(set(names)) != len(names):
            repeated = next(n for i, n in enumerate(names) if n in names[:i])
            self._fail(f"it lists the benchmark {repeated!r} twice", STATUS_PROTOCOL)
        return names

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when not started; its keeper's until it greeted)."""
        return None if self._process is None else (self._program_pid or self._process.pid)

    def resident_kib(self) -> int | None:
        """The worker's resident memory now (``/proc/PID/statm``), None when unreadable.

        Its self-reported peak RSS cannot show growth below the size of pairbench itself: Linux
        charges the spawning process's peak to the child at exec. The current size can."""
        if self.pid is None:
            return None
        try:
            with open(f"/proc/{self.pid}/statm", "rb") as statm:
                return int(statm.read(200).split()[1]) * _PAGE_KIB
        except (OSError, ValueError, IndexError):
            return None

    def sample(self, name: str, iterations: int) -> Execution | ErrorReply:
        """One sample of ``iterations`` iterations of benchmark ``name``; ``WorkerFailed`` if the
        worker ends, hangs (``spec.timeout_ns``) or breaks the protocol."""
        self.start()
        self._send(protocol.run_request(name, iterations))
        deadline = None if self.spec.timeout_ns is None else time.monotonic_ns() + self.spec.timeout_ns
        reply = self._expect(protocol.parse_reply, deadline, f"its reply to a sample of {name!r}")
        if isinstance(reply, Execution) and reply.wall_ns == 0:
            return ErrorReply(ZERO_TIME)  # the protocol's words allow it; no sample lasts 0 ns
        return reply

    def stop(self) -> None:
        """Ask the worker to quit, then stop its process group; idempotent."""
        self._end(ask_to_quit=True)

    def retire(self) -> None:
        """Stop the process group at once, without asking (its block is over: what the worker
        would do on quitting, an interpreter's shutdown, only delays the next block)."""
        self._end(ask_to_quit=False)

    def _end(self, *, ask_to_quit: bool) -> None:
        """Close the pipes and stop the process group (after a ``quit`` and a grace period when
        ``ask_to_quit``; at once for a worker that failed); idempotent."""
        process, self._process = self._process, None
        if process is None:
            return
        if ask_to_quit:
            with contextlib.suppress(OSError):
                os.write(self._requests, protocol.quit_request().encode())
        self._close_pipes()
        if ask_to_quit:
            with contextlib.suppress(subprocess.TimeoutExpired):
                children.wait(process, _KILL_GRACE_S)
        children.stop(process, _KILL_GRACE_S)
        self._stderr.close()

    def _startup_deadline(self) -> int:
        return time.monotonic_ns() + (self.spec.timeout_ns or STARTUP_TIMEOUT_NS)

    def _send(self, line: str) -> None:
        try:
            os.write(self._requests, line.encode())
        except BrokenPipeError:
            self._fail_ended()

    def _expect(self, parse, deadline_ns: int | None, what: str):
        try:
            line = self._replies.readline(deadline_ns)
            if line is None:
                self._fail_ended()
            return parse(line)
        except TimeoutError:
            limit = self.spec.timeout_ns or STARTUP_TIMEOUT_NS
            self._fail(f"no answer within {limit / 1e9:g} s (--timeout) awaiting {what}", STATUS_TIMEOUT)
        except ProtocolError as exc:
            self._fail(f"it broke the worker protocol awaiting {what}: {exc}", STATUS_PROTOCOL)

    def _fail_ended(self):
        """The worker closed its reply pipe: it exited or was killed; say how."""
        process = self._process
        try:
            status = children.wait(process, _KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            status = None
        if status is None:
            self._fail("it closed its reply pipe", STATUS_PROTOCOL)
        self._fail(f"the worker ended: {describe_status(status)}", status if status != 0 else STATUS_PROTOCOL)

    def _fail(self, why: str, status: int):
        tail = self._stderr_tail()
        self._end(ask_to_quit=False)
        message = why + (f"; its standard error ended with: {tail}" if tail else "")
        raise WorkerFailed(message, status)

    def _close_pipes(self) -> None:
        for fd in (self._requests, self._replies.fd if self._replies else None):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._requests = self._replies = None

    def _stderr_tail(self) -> str:
        """The last lines the worker wrote to standard error (control characters are made visible
        where they are shown)."""
        if self._stderr is None or self._stderr.closed:
            return ""
        try:
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(size - STDERR_TAIL_BYTES, 0))
            data = self._stderr.read()
        except OSError:
            return ""
        return data.decode("utf-8", "replace").strip()


def pin(pid: int, cpu: int) -> None:
    """Pin every thread of process ``pid`` to ``cpu`` (best effort: a thread may have ended); the
    processes it starts afterwards inherit it."""
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        threads = [pid]
    for tid in threads:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(tid, {cpu})


class Rotation(Sink):
    """Fresh worker processes every ``block_rounds`` measured rounds: the blocks of a benchmark.

    Two processes of one program differ by a few percent (memory layout, hash seeds, where the
    allocator put things), a difference that stays with them for their lifetime. Measured in one
    pair of processes, that difference would pass for an effect of the code. Starting both sides
    afresh for each block makes it noise that varies from block to block, and the verdict is
    drawn from the blocks (``analysis.comparison``), as pyperf draws its from many processes.
    ``block`` is the current block's number; a target restarts its worker when it has moved on.
    """

    def __init__(self, block_rounds: int, workers: list[Worker], seed: int = 0):
        self.block_rounds = block_rounds
        self.block = 0
        self.workers = workers
        self._order = random.Random(seed)

    def on_round(self, end: RoundEnd) -> None:
        if not end.warmup and end.rounds % self.block_rounds == 0:
            self.block += 1

    def refresh(self) -> None:
        """Start every side's worker afresh for the current block, if not done yet for it: every
        old process ends first, then the new ones start all at once (a start-up can be long: an
        interpreter's), in a fresh random order.

        Not each side ended and restarted in turn, baseline first: a fixed order is a difference
        between the sides that nothing averages out (a new process may get back the memory pages
        the one ended just before it freed, and which side starts first is the one whose start-up
        overlaps the other's), so it is randomized like every other order. Measured on 1,000 A/A
        blocks each way, neither order showed a lean (``benchmarks/block_symmetry.py``,
        ``benchmarks/RESULTS.md``, issue 12): this removes a possibility, not a measured bias."""
        stale = [worker for worker in self.workers if worker.block != self.block]
        for worker in stale:
            worker.retire()
        self._order.shuffle(stale)
        for worker in stale:
            worker.spawn()
            worker.block = self.block
        for worker in stale:
            worker.greeted()


PRIMING_SAMPLES = 2
"""Samples a fresh worker process runs before its first measured one, stored as warmups and never
paired: a new process's first samples pay for page faults and cold caches."""


@frozen
class WorkerTarget:
    """Benchmark ``name`` (index ``benchmark`` of the run) on one side's worker: one execution is
    one sample of ``iterations`` iterations. ``timeout_ns`` is the worker's own (its spec's). With a
    ``rotation``, the worker is started afresh when a new block begins, and each sample's ``block``
    metric says which block took it. With ``resident``, each sample also holds the worker's resident
    memory right after it (``RESIDENT_METRIC``: validation regresses it on the iterations run)."""

    worker: Worker
    benchmark_name: str
    benchmark: int
    iterations: int
    rotation: Rotation | None = None
    resident: bool = False

    @property
    def name(self) -> str:
        """What failure messages call this target: the benchmark on its side."""
        return f"benchmark {self.benchmark_name!r} on {self.worker.side!r}"

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """Ask the worker for one sample (after priming a fresh worker, whose samples come first,
        marked); a failure is the row's status, said in ``detail``."""
        primed: list[Row] = []
        start = executor.now_ns()
        try:
            self._rotate(executor, primed)
            start = executor.now_ns()
            reply = self.worker.sample(self.benchmark_name, self.iterations)
        except WorkerFailed as exc:
            return (*primed, self._failed(start, executor.now_ns(), exc.status, str(exc)))
        if isinstance(reply, ErrorReply):
            self._discard_dump()
            return (*primed, self._failed(start, executor.now_ns(), STATUS_BENCHMARK_ERROR,
                                          f"the benchmark failed: {reply.message}"))
        row = self._row(reply, start)
        if self.resident:
            row = dataclasses.replace(row, metrics={**row.metrics, RESIDENT_METRIC: float(self.worker.resident_kib() or 0)})
        return (*primed, row)

    def _row(self, reply: Execution, start: int, priming: bool = False) -> Row:
        row = Row(self.benchmark, dataclasses.replace(reply, start_ns=start), self.iterations,
                  self._metrics(reply.minor_faults, reply.major_faults), priming=priming)
        if reply.instructions is not None:
            return dataclasses.replace(row, metrics={**row.metrics, INSTRUCTIONS_METRIC: float(reply.instructions)})
        return self._with_dump(row)

    def _with_dump(self, row: Row) -> Row:
        """``row`` with the counts of the Callgrind dump its sample made, read now that the sample has
        ended; a failed row (saying why) when there is none or it cannot be read."""
        counting = self.worker.spec.counting
        if counting is None or counting.kind != "callgrind":
            return row
        try:
            counts = counting.directory.take_dump()
        except (callgrind.CallgrindError, OSError) as exc:
            counts, why = None, f"Callgrind's counts could not be read: {exc}"
        else:
            why = NO_DUMP
        if counts is None:
            failed = dataclasses.replace(row.execution, status=STATUS_UNREADABLE)
            return dataclasses.replace(row, execution=failed, detail=why)
        return dataclasses.replace(row, metrics={**row.metrics, **callgrind.count_metrics(counts)})

    def _discard_dump(self) -> None:
        counting = self.worker.spec.counting
        if counting is not None and counting.directory is not None:
            counting.directory.clear()

    def _rotate(self, executor: Executor, primed: list[Row]) -> None:
        """Start a fresh worker process if a new block has begun, and prime it (its samples go to
        ``primed``)."""
        if self.rotation is None:
            return
        if self.worker.block != self.rotation.block:
            self.rotation.refresh()
        if not self.worker.fresh:
            return
        self.worker.fresh = False
        for _ in range(PRIMING_SAMPLES):
            start = executor.now_ns()
            reply = self.worker.sample(self.benchmark_name, self.iterations)
            if isinstance(reply, ErrorReply):
                return  # the measured sample that follows fails and says why
            primed.append(self._row(reply, start, priming=True))

    def _metrics(self, minor: int, major: int) -> dict[str, float]:
        metrics = {"minor_faults": float(minor), "major_faults": float(major)}
        if self.rotation is not None:
            metrics["block"] = float(self.rotation.block)
        return metrics

    def _failed(self, start: int, end: int, status: int, detail: str) -> Row:
        """A failed sample: it lasted from ``start`` until the failure was known (at least 1 ns, as
        every stored duration)."""
        return Row(self.benchmark, Execution(wall_ns=max(end - start, 1), start_ns=start, status=status),
                   self.iterations, self._metrics(0, 0), detail=detail)


PROBE_SAMPLES = 2
"""Samples a probe of the iteration count takes of each side at each count tried: the quickest counts."""
PROBE_SAMPLES_MOST = 8
"""At most this many while every sample so far was interrupted (``quickest_probe``)."""


def quickest_probe(take: Callable[[], tuple[float, bool]]) -> float:
    """The time a probe of the iteration count gives one side at one count: the quickest of
    ``PROBE_SAMPLES`` samples, taken by ``take()`` as (time, whether another task interrupted it:
    an involuntary context switch inside the timed loop), and more, up to ``PROBE_SAMPLES_MOST``,
    while every one so far was interrupted.

    A probe another task preempted lasts the rest of that task's time slice longer (milliseconds
    on a loaded machine) and would size every sample of the benchmark too small: beside `make test`
    and two busy loops, 13 in 1000 single probes chose 1 to 16 calls of a 36 us function instead of
    32 or 64, none of 1000 by this rule (``benchmarks/function_probe.py``); in samples of tens of us
    a sample's constant cost (reading the thread's CPU clock, about 1 us here, and a cold start)
    pulled ``compare_functions``' CPU-time ratio of 3.5 towards 1."""
    times, interrupted = [], True
    while len(times) < PROBE_SAMPLES or (interrupted and len(times) < PROBE_SAMPLES_MOST):
        elapsed, disturbed = take()
        times.append(elapsed)
        interrupted = interrupted and disturbed
    return min(times)


def choose_iterations(probe, sample_time_ns: int, max_probes: int = 40) -> int:
    """The power of two of iterations that makes a sample last about ``sample_time_ns``.

    ``probe(n)`` returns the time of a sample of ``n`` iterations on the slowest
    side. The count grows from 1 (by up to 1024x a step, so a benchmark of a
    nanosecond needs a few probes) until a probe lasts a quarter of the target,
    then the per-iteration time it gave picks the nearest power of two.
    """
    n = 1
    for _ in range(max_probes):
        elapsed = max(int(probe(n)), 0)
        if elapsed * 4 >= sample_time_ns or n >= protocol.MAX_ITERATIONS:
            break
        growth = sample_time_ns // (4 * elapsed) if elapsed else 1024
        n = min(n * min(max(_power_of_two_below(growth), 2), 1024), protocol.MAX_ITERATIONS)
    if elapsed == 0:
        return n
    exact = sample_time_ns * n / elapsed
    return max(1, min(_nearest_power_of_two(exact), protocol.MAX_ITERATIONS))


def _power_of_two_below(x: int) -> int:
    return 1 << (max(int(x), 1).bit_length() - 1)


def _nearest_power_of_two(x: float) -> int:
    """The power of two nearest to ``x`` on a log scale (at least 1)."""
    low = _power_of_two_below(int(x))
    return low * 2 if x > low * 1.4142135623730951 else low
