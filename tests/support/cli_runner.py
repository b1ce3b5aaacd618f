"""Run ``pairbench`` in-process and capture what it prints (shared by every test directory).

``invoke(*args)`` calls ``cli.main`` with the seams a test sets: the executor
(``use_executor``, a fixture in ``tests/conftest.py``, installs one for the
test), ``bench``'s workers (``workers=FakeWorkers(...)``), the machine's metadata (``FIXED_ENVIRONMENT`` unless a test passes its
own; ``real_environment=True`` reads this machine) and the progress clock.
"""

from __future__ import annotations

import io
from typing import NamedTuple

from pairbench import cli

# A quiet, tuned machine with nothing to say, in the shapes the collector writes
# (``environment.collect_environment``): golden output does not depend on the host.
FIXED_ENVIRONMENT = {
    "host": "bench-01", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-test",
    "machine": "x86_64", "cpu_model": "Example CPU @ 3.0GHz", "logical_cpus": 2, "online_cpus": [0, 1],
    "usable_cpus": 2, "governors": {"performance": 2}, "turbo_boost": False,
    "turbo": {"enabled": False, "file": "/sys/devices/system/cpu/intel_pstate/no_turbo"},
    "smt": {"control": "off", "active": False, "sibling_groups": []},
    "load_average": [0.05, 0.04, 0.01],
    "timer": {"clock": "CLOCK_MONOTONIC", "advertised_resolution_ns": 1, "measured_resolution_ns": 30},
    "kernel_settings": {"aslr": 2, "perf_event_paranoid": 1, "perf_event_max_sample_rate": 100000},
    "python": {"version": "3.11.7", "implementation": "CPython"},
    "pairbench": "0.2.0", "libraries": {"numpy": "2.0.0", "scipy": "1.14.0"},
}


class CliResult(NamedTuple):
    """Exit code and captured output; unpacks as ``code, out, err``."""

    code: int
    out: str
    err: str


class Seams:
    """What ``invoke`` passes to ``cli.main`` unless told otherwise (set by the fixtures)."""

    executor = None  # an Executor for every measurement, or None for the real one
    real_programs = True  # False outside e2e tests (tests/conftest.py): the real executor and workers fail


class RealProgramsInATestNotMarkedE2e(AssertionError):
    """Raised when a test not marked ``e2e`` would run real programs through ``invoke``."""


class _Refused:
    """Stands for the real executor and workers in a test not marked ``e2e``: any use fails it."""

    def __call__(self, *args, **kwargs):
        raise RealProgramsInATestNotMarkedE2e(
            "this test runs real programs (pairbench's real executor or workers): mark it "
            "@pytest.mark.e2e, or give invoke a scripted executor (use_executor) or workers")

    def __getattr__(self, name):
        self()


_refused = _Refused()


def invoke(*args: str, executor=None, environment=None, real_environment: bool = False, clock=None,
           stdout=None, stderr=None, workers=None, executor_factory=None) -> CliResult:
    """``executor_factory``: a new executor for each measurement (a command that measures several
    times, as ``bisect`` does, closes each), instead of the one ``executor``."""
    out, err = stdout or io.StringIO(), stderr or io.StringIO()
    chosen = executor if executor is not None else Seams.executor
    if environment is None and not real_environment:
        environment = dict(FIXED_ENVIRONMENT)
    if executor_factory is None and chosen is not None:
        executor_factory = lambda output: chosen  # noqa: E731
    real = None if Seams.real_programs else _refused
    code = cli.main(
        list(args), stdout=out, stderr=err, color=False,
        executor_factory=executor_factory if executor_factory is not None else real,
        environment=(lambda *a, **k: dict(environment)) if environment is not None else None,
        clock=clock, workers=workers if workers is not None else real,
    )
    return CliResult(code, out.getvalue(), err.getvalue())
