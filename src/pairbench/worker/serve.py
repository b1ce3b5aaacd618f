"""The Python worker: serves collected benchmarks over the worker protocol (docs/worker-protocol.md).

``python -m pairbench.worker [--root DIR] FILE_OR_DIR...`` reads its two pipes
from ``PAIRBENCH_WORKER_FDS``, removes the variable and marks the pipes
close-on-exec (before any benchmark file is imported, so nothing they start
inherits them), collects the benchmarks, greets, and answers ``list``,
``run NAME N`` and ``quit`` until ``quit`` or end of file.

A sample runs the setup (untimed), collects garbage, disables the collector,
reads the thread's resource usage, CPU clock and the clock, runs the body N
times in a tight loop, reads them again, restores the collector (as
:mod:`timeit` does) and runs the teardown (untimed). A benchmark that raises is an ``error`` reply;
the worker goes on.

Exit status: 0 after ``quit`` or end of file (pairbench has gone), 2 when the
worker cannot start (not started by pairbench, bad arguments, a benchmark file
that fails to import) or a request line is over the protocol's limit.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import os
import sys
import time
from itertools import repeat

from pairbench.command import Execution
from pairbench.worker import protocol
from pairbench.worker.discovery import collect
from pairbench.worker.registry import Benchmark, HarnessError

try:
    import resource
except ImportError:  # not a POSIX system: the resource-usage fields are left out
    resource = None

EXIT_OK = 0
EXIT_USAGE = 2  # as pairbench.errors.EXIT_USAGE, which a worker does not import

_RUSAGE_THREAD = getattr(resource, "RUSAGE_THREAD", None)
_MAXRSS_DIVISOR = 1024 if sys.platform == "darwin" else 1  # ru_maxrss is bytes on macOS, KiB on Linux
_CAUGHT = (Exception, SystemExit)  # a benchmark calling sys.exit() fails; Ctrl-C still ends the worker
NO_ARGUMENT = object()
COUNTER = None
"""What counts the instructions of a sample's loop (``counting.from_environment``), or None."""


class StartFailed(Exception):
    """The worker cannot start serving; the message says why and what to do."""


class LineTooLong(Exception):
    """A request line over ``protocol.MAX_LINE_BYTES``: pairbench never sends one."""


class BenchmarkFailed(Exception):
    """A sample failed: the message is the ``error`` reply's text."""


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Run the worker (or ``--list`` the benchmarks); the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.list:
            _print_names(collect(args.paths, args.root))
            return EXIT_OK
        request_fd, reply_fd = take_fds(os.environ)
        benchmarks = collect(args.paths, args.root)
    except StartFailed as exc:
        sys.stderr.write(f"{exc}\n\n{parser.format_help()}")
        return EXIT_USAGE
    except HarnessError as exc:
        sys.stderr.write(f"pairbench worker: {exc}\n")
        return EXIT_USAGE
    return serve(benchmarks, request_fd, reply_fd)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pairbench.worker",
        description="A pairbench worker serving the @pairbench.benchmark functions of FILE_OR_DIR "
                    "(directories are searched for bench_*.py and *_bench.py). pairbench starts it: "
                    "run `pairbench bench FILE_OR_DIR`.")
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    parser.add_argument("--root", metavar="DIR",
                        help="import from DIR (and DIR/src) before anything else, so that the benchmarks "
                             "measure that tree's copy of your package")
    parser.add_argument("--list", action="store_true",
                        help="print the names of the collected benchmarks and exit")
    return parser


def _print_names(benchmarks: list[Benchmark]) -> None:
    sys.stdout.write("".join(f"{bench.name}\n" for bench in benchmarks))


def take_fds(environ) -> tuple[int, int]:
    """The request and reply descriptors from ``PAIRBENCH_WORKER_FDS``, which is removed from
    ``environ``; both marked close-on-exec. ``StartFailed`` if absent or not two open descriptors."""
    text = environ.pop(protocol.FDS_VARIABLE, None)
    if text is None:
        raise StartFailed(f"pairbench worker: {protocol.FDS_VARIABLE} is not set, so pairbench did not start "
                          "this program. Measure the benchmarks with `pairbench bench FILE_OR_DIR`, or see "
                          "which there are with `python -m pairbench.worker --list FILE_OR_DIR`.")
    fds = _parse_fds(text)
    for fd in fds:
        try:
            os.set_inheritable(fd, False)
        except OSError as exc:
            raise StartFailed(f"pairbench worker: {protocol.FDS_VARIABLE}={text!r} names descriptor {fd}, "
                              f"which is not open ({exc.strerror})") from None
    return fds


def _parse_fds(text: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2 or not all(part.isdigit() and len(part) <= 9 for part in parts):
        raise StartFailed(f"pairbench worker: {protocol.FDS_VARIABLE}={text[:40]!r} must be two descriptor "
                          "numbers, R,W")
    return int(parts[0]), int(parts[1])


# --------------------------------------------------------------------------- serving


def serve(benchmarks: list[Benchmark], request_fd: int, reply_fd: int) -> int:
    """Greet, then answer requests until ``quit`` or end of file; the exit status. Counting is set up
    first, as ``PAIRBENCH_COUNTER`` asks (for this worker and the pytest worker alike)."""
    global COUNTER
    try:
        COUNTER = _counter(os.environ)
    except HarnessError as exc:
        sys.stderr.write(f"pairbench worker: {exc}\n")
        return EXIT_USAGE
    table = {bench.name: bench for bench in benchmarks}
    reader = LineReader(request_fd)
    try:
        write_line(reply_fd, protocol.GREETING + "\n")
        while True:
            line = reader.readline()
            if line is None:
                return EXIT_OK
            reply = answer(line, table)
            if reply is None:
                return EXIT_OK
            write_line(reply_fd, reply)
    except LineTooLong:
        sys.stderr.write(f"pairbench worker: a request line is longer than {protocol.MAX_LINE_BYTES} "
                         "bytes: the program at the other end does not speak the worker protocol\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK  # pairbench has gone


def _counter(environ):
    """What counts the loop's instructions, as ``PAIRBENCH_COUNTER`` asks (``worker.counting``,
    imported only then: it loads ctypes); ``HarnessError`` when it cannot be done here."""
    if "PAIRBENCH_COUNTER" not in environ:
        return None
    from pairbench.worker import counting

    try:
        return counting.from_environment(environ)
    except counting.CountingUnavailable as exc:
        raise HarnessError(str(exc)) from None


def answer(line: bytes, table: dict[str, Benchmark]) -> str | None:
    """The reply to one request line (without its newline); ``None`` for ``quit``."""
    try:
        request = protocol.parse_request(line.decode("utf-8"))
    except UnicodeDecodeError:
        return protocol.format_error("the request is not UTF-8")
    except protocol.ProtocolError as exc:
        return protocol.format_error(str(exc))
    if request[0] == "quit":
        return None
    if request[0] == "list":
        return protocol.format_list(list(table))
    _, name, iterations = request
    bench = table.get(name)
    if bench is None:
        return protocol.format_error(f"unknown benchmark {name!r}: this worker has {len(table)}, "
                                     "send `list` to see them")
    try:
        return protocol.format_ok(take_sample(bench, int(iterations)))
    except BenchmarkFailed as exc:
        return protocol.format_error(str(exc))


class LineReader:
    """Request lines from a descriptor, each at most ``protocol.MAX_LINE_BYTES`` with its newline."""

    def __init__(self, fd: int):
        self._fd = fd
        self._buffer = bytearray()

    def readline(self) -> bytes | None:
        """The next line without its newline; ``None`` at end of file (a partial last line is
        dropped: its writer has gone); ``LineTooLong`` past the limit."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                if end + 1 > protocol.MAX_LINE_BYTES:
                    raise LineTooLong
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) >= protocol.MAX_LINE_BYTES:
                raise LineTooLong
            chunk = os.read(self._fd, protocol.MAX_LINE_BYTES)
            if not chunk:
                return None
            self._buffer += chunk


def write_line(fd: int, text: str) -> None:
    """Write all of ``text`` to ``fd``."""
    view = memoryview(text.encode("utf-8"))
    while view:
        view = view[os.write(fd, view):]


# --------------------------------------------------------------------------- one sample


def take_sample(bench: Benchmark, iterations: int) -> Execution:
    """One sample of ``bench``: setup, the timed loop of ``iterations`` calls, teardown.
    ``BenchmarkFailed`` if any of them raises (the teardown runs even when the body failed, and the
    body's failure is the one reported)."""
    if bench.fresh_setup:
        return timed_fresh_calls(bench.setup, bench.function, iterations, teardown=bench.teardown)
    call, argument = _prepared(bench)
    failure = None
    try:
        reply = timed_loop(call, argument, iterations)
    except _CAUGHT as exc:
        failure = _described(exc)
    try:
        if bench.teardown is not None:
            bench.teardown() if argument is NO_ARGUMENT else bench.teardown(argument)
    except _CAUGHT as exc:
        failure = failure or _described(exc, "in teardown")
    if failure:
        raise BenchmarkFailed(failure)
    return reply


def _prepared(bench: Benchmark):
    """The body to call and its one argument (``NO_ARGUMENT`` if none), running the setup."""
    if bench.setup is not None:
        try:
            return bench.function, bench.setup(**bench.kwargs)
        except _CAUGHT as exc:
            raise BenchmarkFailed(_described(exc, "in setup")) from exc
    if bench.params:
        return functools.partial(bench.function, **bench.kwargs), NO_ARGUMENT
    return bench.function, NO_ARGUMENT


COLLECTED_GENERATIONS = 1
"""Garbage collected before each sample: the young generations, which hold the previous sample's
garbage (about 6 us). A full collection costs about 0.6 ms in a bare interpreter, and more with a
large heap: as long as a sample, halving the samples a second; the old generation is left to the
collector itself, which runs between samples, while it is enabled."""


def timed_loop(call, argument, iterations: int, collect: int = COLLECTED_GENERATIONS) -> Execution:
    """The ``ok`` reply of ``iterations`` calls of ``call`` (with ``argument`` unless
    ``NO_ARGUMENT``): garbage collected before (generations up to ``collect``), the collector
    disabled during and its state restored after, as :mod:`timeit` does. Only the loop is
    between the two clock readings (and the two readings of the thread's CPU clock)."""
    gc_was_enabled = gc.isenabled()
    gc.collect(collect)
    gc.disable()
    counter = COUNTER
    try:
        before = _thread_usage()
        cpu_start = time.thread_time_ns()
        start = time.perf_counter_ns()
        if counter is not None:  # the loop below, counted (switched off even when a call raises)
            counter.start()
            try:
                _calls(call, argument, iterations)
            finally:
                counter.stop()
        elif argument is NO_ARGUMENT:
            for _ in repeat(None, iterations):
                call()
        else:
            for _ in repeat(None, iterations):
                call(argument)
        ns = time.perf_counter_ns() - start
        cpu_ns = time.thread_time_ns() - cpu_start
        after = _thread_usage()
    finally:
        if gc_was_enabled:
            gc.enable()
    return _counted(_reply(ns, cpu_ns, before, after), counter)


def _calls(call, argument, iterations: int) -> None:
    """The loop of :func:`timed_loop`, when it is counted."""
    if argument is NO_ARGUMENT:
        for _ in repeat(None, iterations):
            call()
    else:
        for _ in repeat(None, iterations):
            call(argument)


def _counted(reply: Execution, counter) -> Execution:
    """``reply`` once the sample's counting is finished (Callgrind's dump written, outside the
    clock readings; a hardware counter's count read into the reply)."""
    if counter is None:
        return reply
    counter.finish()
    return dataclasses.replace(reply, instructions=counter.instructions)


def timed_fresh_calls(setup, call, iterations: int, collect: int = COLLECTED_GENERATIONS, *,
                      teardown=None) -> Execution:
    """The ``ok`` reply of ``iterations`` calls ``call(setup())``, each prepared afresh by ``setup``
    and followed by ``teardown(argument)`` when given, both untimed: the clock and the thread's resource usage are read around each call and summed, so the
    sample holds the calls alone, plus one clock reading each (tens of ns). The collector as in
    :func:`timed_loop`. ``BenchmarkFailed`` if the setup or a call raises."""
    gc_was_enabled = gc.isenabled()
    gc.collect(collect)
    gc.disable()
    ns, used, counter, instructions = 0, {}, COUNTER, 0
    try:
        for _ in repeat(None, iterations):
            try:
                argument = setup()
            except _CAUGHT as exc:
                raise BenchmarkFailed(_described(exc, "in setup")) from exc
            before = _thread_usage()
            start = time.perf_counter_ns()
            try:
                if counter is None:
                    call(argument)
                else:
                    _counted_call(counter, call, argument)
            except _CAUGHT as exc:
                raise BenchmarkFailed(_described(exc)) from exc
            ns += time.perf_counter_ns() - start
            _add_usage(used, before, _thread_usage())
            if counter is not None and counter.resets:  # a hardware counter: sum the calls' counts
                counter.finish()
                instructions += counter.instructions
            _torn_down(teardown, argument)
    finally:
        if gc_was_enabled:
            gc.enable()
    reply = _reply_of_sums(ns, used)
    if counter is None:
        return reply
    if counter.resets:
        return dataclasses.replace(reply, instructions=instructions)
    return _counted(reply, counter)


def _counted_call(counter, call, argument) -> None:
    counter.start()
    try:
        call(argument)
    finally:
        counter.stop()


def _torn_down(teardown, argument) -> None:
    if teardown is None:
        return
    try:
        teardown(argument)
    except _CAUGHT as exc:
        raise BenchmarkFailed(_described(exc, "in teardown")) from exc


_USAGE_FIELDS = ("ru_utime", "ru_stime", "ru_nvcsw", "ru_nivcsw", "ru_minflt", "ru_majflt")


def _add_usage(used: dict, before, after) -> None:
    """Add the resource usage between ``before`` and ``after`` to ``used`` (seconds as µs)."""
    if before is None or after is None:
        return
    for field in _USAGE_FIELDS:
        scale = 1e6 if field in ("ru_utime", "ru_stime") else 1
        used[field] = used.get(field, 0) + round(getattr(after, field) * scale) - round(getattr(before, field) * scale)


def _reply_of_sums(ns: int, used: dict) -> Execution:
    if not used:
        return Execution(wall_ns=_bounded(ns), start_ns=0)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // _MAXRSS_DIVISOR
    return Execution(wall_ns=_bounded(ns), start_ns=0, user_ns=_bounded(used["ru_utime"] * 1000),
                     sys_ns=_bounded(used["ru_stime"] * 1000), voluntary_cs=_bounded(used["ru_nvcsw"]),
                     involuntary_cs=_bounded(used["ru_nivcsw"]), minor_faults=_bounded(used["ru_minflt"]),
                     major_faults=_bounded(used["ru_majflt"]), max_rss_kib=_bounded(maxrss))


def _thread_usage():
    """This thread's resource usage, its CPU time brought up to date first: ``getrusage`` alone
    returns the runtime as of the thread's last tick or context switch (around a ~1 ms sample it
    missed most of the CPU time); reading the thread's CPU clock updates it."""
    if _RUSAGE_THREAD is None:
        return None
    time.thread_time_ns()
    return resource.getrusage(_RUSAGE_THREAD)


def _reply(ns: int, cpu_ns: int, before, after) -> Execution:
    """The ``ok`` reply: ``ns``, the CPU time ``cpu_ns`` (the thread's CPU clock, exact) split as
    user and system by ``getrusage`` (its system time over the sample, at most ``cpu_ns``: a
    tick-sampled share, coarse over one sample, right over many), and the thread's other usage
    between ``before`` and ``after``."""
    used: dict = {}
    _add_usage(used, before, after)
    reply = _reply_of_sums(ns, used)
    if not used:  # no getrusage: no split either, so no CPU time
        return reply
    sys_ns = min(reply.sys_ns, _bounded(cpu_ns))
    return dataclasses.replace(reply, user_ns=_bounded(cpu_ns) - sys_ns, sys_ns=sys_ns)


def _bounded(value: int) -> int:
    return max(0, min(int(value), protocol.MAX_FIELD_VALUE))


def _described(exc: BaseException, phase: str = "") -> str:
    """``Type: message``, with `` (in setup)`` or the like when not raised by the body."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"{text} ({phase})" if phase else text

