"""The worker that serves pytest-benchmark tests: each test's ``benchmark(...)`` call recorded once,
then timed in paired rounds like any worker's benchmarks (``pairbench bench`` of pytest-benchmark
tests).

``python -m pairbench.worker.pytest_benchmark --root ROOT PATH`` takes its pipes (as every Python
worker: ``serve.take_fds``), then runs pytest on PATH in ROOT with pytest-benchmark switched off
(``-p no:benchmark``, the project's ``addopts`` cleared) and this module's plugin in its place:
only the tests that take the ``benchmark`` fixture run, and the fixture records the call
(``benchmark(f, *args, **kwargs)`` or ``benchmark.pedantic(f, args, kwargs)``) under the test's
node id, calls it once and returns its result, as pytest-benchmark's ``--benchmark-disable`` does.
Then it serves the recorded calls until pairbench has done. So a side costs one interpreter per
block of rounds, not one pytest process per sample (two a round), and a sample is timed around the
loop inside the process, as ``@pairbench.benchmark`` functions are.

``benchmark.pedantic(..., setup=...)`` prepares every call afresh: such a test's calls are each
prepared, untimed, and timed on their own (``serve.timed_fresh_calls``), as pytest-benchmark times
them.

:func:`serve_pytest` (running tests, then serving what they recorded) is shared with the
``pairbench`` fixture's worker (``pairbench.pytest_plugin``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable

import pytest

from pairbench.worker.protocol import as_name
from pairbench.worker.registry import Benchmark
from pairbench.worker.serve import StartFailed, serve, take_fds

EXIT_USAGE = 2
_RECORDED: dict[str, Benchmark] = {}


class Recorder:
    """What a test receives as ``benchmark``: records the call it is given, then makes it once."""

    def __init__(self, name: str):
        self.name = self.fullname = name
        self.extra_info: dict = {}
        self.group = None
        self._used = False

    def __call__(self, function: Callable, *args, **kwargs):
        self._record(Benchmark(self.name, functools.partial(function, *args, **kwargs)))
        return function(*args, **kwargs)

    def pedantic(self, target: Callable, args=(), kwargs=None, setup=None, teardown=None, rounds=1,
                 warmup_rounds=0, iterations=1):
        """pytest-benchmark's ``pedantic``: the rounds and iterations are pairbench's to choose."""
        kwargs = dict(kwargs or {})
        if setup is not None:
            prepare = functools.partial(_prepared, setup, tuple(args), kwargs)
            after = functools.partial(_call_prepared, teardown) if teardown is not None else None
            self._record(Benchmark(self.name, functools.partial(_call_prepared, target), setup=prepare,
                                   teardown=after, fresh_setup=True))
            args, kwargs = prepare()
        else:
            after = functools.partial(teardown, *args, **kwargs) if teardown is not None else None
            self._record(Benchmark(self.name, functools.partial(target, *args, **kwargs), teardown=after))
        result = target(*args, **kwargs)
        if teardown is not None:
            teardown(*args, **kwargs)
        return result

    def _record(self, benchmark: Benchmark) -> None:
        if self._used:
            raise RuntimeError(f"{self.name}: the benchmark fixture can be used once per test")
        self._used = True
        _RECORDED[self.name] = benchmark


def _prepared(setup: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """What ``pedantic``'s ``setup()`` returns, ``(args, kwargs)``, or the arguments given when None."""
    prepared = setup()
    return (tuple(prepared[0]), dict(prepared[1])) if prepared is not None else (args, kwargs)


def _call_prepared(target: Callable, prepared: tuple[tuple, dict]):
    return target(*prepared[0], **prepared[1])


class RecordingPlugin:
    """pytest-benchmark's place in the worker's pytest session: the ``benchmark`` fixture records."""

    @pytest.hookimpl
    def pytest_configure(self, config):
        config.addinivalue_line("markers", "benchmark(**options): pytest-benchmark's options, not used by "
                                           "pairbench's worker")

    @pytest.hookimpl
    def pytest_collection_modifyitems(self, config, items):
        kept = [item for item in items if "benchmark" in getattr(item, "fixturenames", ())]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept

    @pytest.fixture
    def benchmark(self, request):
        return Recorder(as_name(request.node.nodeid))


def serve_pytest(root: str, arguments: list[str], plugins: list, request_fd: int, reply_fd: int,
                 recorded: Callable[[], list[Benchmark]]) -> int:
    """Run pytest with ``arguments`` in ``root`` (it and its ``src/`` first on the import path, so
    the tree imports its own code; the project's ``addopts`` cleared), then serve the benchmarks
    ``recorded()`` gives once the tests ran; exit 2 when they recorded none."""
    os.chdir(root)
    sys.path[:0] = [root] + ([os.path.join(root, "src")] if os.path.isdir(os.path.join(root, "src")) else [])
    status = pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", root, *arguments],
                         plugins=plugins)
    benchmarks = recorded()
    if not benchmarks:
        sys.stderr.write(f"pairbench: the tests under {root} recorded no benchmark (pytest exit {int(status)})\n")
        return EXIT_USAGE
    return serve(benchmarks, request_fd, reply_fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pairbench.worker.pytest_benchmark",
                                     description="Serve the pytest-benchmark tests under PATH over the worker "
                                                 "protocol (started by pairbench bench).")
    parser.add_argument("--root", required=True, help="the tree's root: pytest's rootdir, first on sys.path")
    parser.add_argument("path", help="a test file or directory")
    args = parser.parse_args(argv)
    try:
        request_fd, reply_fd = take_fds(os.environ)
    except StartFailed as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_USAGE
    root = os.path.abspath(args.root)
    target = os.path.relpath(os.path.abspath(args.path), root)
    return serve_pytest(root, ["-p", "no:benchmark", target], [RecordingPlugin()], request_fd, reply_fd,
                        lambda: list(_RECORDED.values()))


if __name__ == "__main__":
    sys.exit(main())
