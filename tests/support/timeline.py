"""When each test ran, on which xdist worker: for ``benchmarks/test_suite.py``'s breakdown of
``make test`` (collection, the run, the idle tail of the worker that finished first).

Active only when ``PAIRBENCH_TEST_TIMELINE`` names a path prefix: each worker then appends one
JSON line per test (worker, test id, start and end on the wall clock, and the CPU time the worker
and the children it waited for spent in between) to ``PREFIX.WORKER.jsonl``.
A pytest a test starts has no xdist worker of its own and writes as ``main``, so the workers'
files hold the workers' tests only.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

VARIABLE = "PAIRBENCH_TEST_TIMELINE"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    prefix = os.environ.get(VARIABLE)
    if not prefix:
        yield
        return
    started, cpu = time.time(), _cpu()
    yield
    worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
    with open(f"{prefix}.{worker}.jsonl", "a") as out:
        out.write(json.dumps({"worker": worker, "id": item.nodeid, "start": started, "end": time.time(),
                              "cpu": _cpu() - cpu}) + "\n")


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
