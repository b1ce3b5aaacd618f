"""pytest-benchmark: tests that use its ``benchmark`` fixture, in a file or a directory of a project.

A side is a path (a test file or directory) in its own tree: its tests run
with this Python (``python -m pytest``), in the tree's root (the git working
tree holding the path, else the path's directory), with that root and its
``src/`` first on ``PYTHONPATH``, so each side imports its own code, and
without pytest-xdist's worker variables (pytest-benchmark disables itself
under them).

Listing: one discovery run of the path with ``--benchmark-only`` and the
shortest rounds names, in its JSON report, exactly the tests that benchmark.
An invocation runs one test by its node id (``--rootdir`` is the tree's root,
so ids are relative to it) with ``--benchmark-max-time`` of ``--sample-time``,
no warm-up of its own and its JSON report in a file of ours. pytest-benchmark
has no option for an iteration count: it calibrates one, by the same rule on
both sides, and each sample records the rounds times iterations it ran.

Read from the JSON (``parse_json``, also used by ``pairbench import``): each
benchmark's ``stats``: ``mean`` (one iteration, seconds) times ``rounds`` x
``iterations``; and its per-round times (``data``: ``--benchmark-json`` always
writes them, ``--benchmark-save`` with ``--benchmark-save-data``), which an
import keeps as samples.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pairbench.frozen import frozen
from pairbench.measure.harnesses.base import (
    Discovery,
    DiscoveryError,
    FormatError,
    Invocation,
    NoResult,
    Program,
    Report,
    capture,
    cleared,
    count,
    finite_number,
    load_json,
    read_bounded,
    total_ns,
)
from pairbench.measure.revisions import toplevel

NAME = "pytest-benchmark"
PROCESSES = "pytest-benchmark-processes"  # the harness of this adapter: a pytest run per sample
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
"""Set in a pytest-xdist worker: a pytest started from one (a test suite, a plugin) would see them, and
pytest-benchmark then disables every benchmark. The runs pairbench starts do without them."""
_COMMON = ("-q", "-p", "no:cacheprovider", "--benchmark-only", "--benchmark-warmup=off")


def program_for(path: str) -> Program:
    """The side running the pytest-benchmark tests at ``path``: this Python, in the tree's root."""
    target = os.path.abspath(path)
    root = toplevel(target) or (target if os.path.isdir(target) else os.path.dirname(target))
    relative = os.path.relpath(target, root)
    paths = [root] + ([os.path.join(root, "src")] if os.path.isdir(os.path.join(root, "src")) else [])
    existing = os.environ.get("PYTHONPATH")
    env = (("PYTHONPATH", os.pathsep.join(paths + ([existing] if existing else []))),)
    argv = (sys.executable, "-m", "pytest", f"--rootdir={root}")
    return Program(argv, root, env, text=f"pytest {relative}", target=relative, unset=XDIST_VARIABLES)


class PytestBenchmark:
    """The adapter of pytest-benchmark suites."""

    name = PROCESSES

    def discover(self, program: Program, scratch: Path, timeout_s: float | None) -> Discovery:
        report_path = scratch / "discovery.json"
        ran = capture(program.command(_positional(program.target), *_COMMON, "--benchmark-min-rounds=1",
                                      "--benchmark-max-time=0.000001", f"--benchmark-json={report_path}"),
                      timeout_s=timeout_s)
        if ran.status not in (0, 1) or not report_path.exists():  # 1: some test failed; 5: none collected
            raise DiscoveryError(ran.failure("running its benchmarks once to list them (--benchmark-only)"))
        names = tuple(r.name for r in parse_json(read_bounded(report_path, NAME), str(report_path)).results)
        return Discovery(names, explicit_iterations=False)

    def invocation(self, program: Program, name: str, iterations: int | None, sample_time_ns: int,
                   scratch: Path) -> Invocation:
        report_path = cleared(scratch / "pytest-benchmark.json")
        options = (_positional(name), *_COMMON, "--benchmark-min-rounds=5", f"--benchmark-max-time={sample_time_ns / 1e9:.9g}",
                   f"--benchmark-json={report_path}")
        return Invocation(program.command(*options, text=f"{program.text} {name}"), name, None, report_path)

    def read(self, invocation: Invocation, output: bytes) -> Report:
        path = invocation.result_path
        if path is None or not path.exists():
            raise NoResult(NAME, str(path), "pytest wrote no JSON report (no test matched the node id?)")
        found = [r for r in parse_json(read_bounded(path, NAME), str(path)).results
                 if r.name == invocation.benchmark]
        if not found:
            raise NoResult(NAME, str(path), f"no result for {invocation.benchmark!r} (the node id matched no "
                           "benchmark)")
        return found[0]


def _positional(node: str) -> str:
    """A path or node id as pytest's argument: one starting with ``-`` would be read as an option
    (pytest reads options even after ``--``), so it is given as ``./NODE``, which names the same."""
    return f"./{node}" if node.startswith("-") else node


@frozen
class PytestReport:
    """A pytest-benchmark JSON document: its machine and commit information, and its results with
    each one's per-round times (seconds per iteration) where the file holds them."""

    machine: Mapping
    version: str
    results: tuple[Report, ...]
    rounds: tuple[tuple[float, ...], ...]


def parse_json(text: str, source: str) -> PytestReport:
    """Read a ``--benchmark-json`` (or ``--benchmark-save``) document of pytest-benchmark 3 to 5."""
    return parse_document(load_json(text, NAME, source), source)


def parse_document(document, source: str) -> PytestReport:
    """The report of a parsed pytest-benchmark JSON document."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise FormatError(NAME, source, "not a pytest-benchmark JSON report: no \"benchmarks\" list")
    results, rounds = [], []
    for i, entry in enumerate(document["benchmarks"]):
        result, data = _result(entry, source, f"benchmarks[{i}]")
        results.append(result)
        rounds.append(data)
    machine = document.get("machine_info", {})
    return PytestReport(machine if isinstance(machine, dict) else {}, str(document.get("version", "")),
                        tuple(results), tuple(rounds))


def _result(entry, source: str, where: str) -> tuple[Report, tuple[float, ...]]:
    if not isinstance(entry, dict):
        raise FormatError(NAME, source, f"{where} must be an object")
    name = entry.get("fullname") or entry.get("name")
    stats = entry.get("stats")
    if not isinstance(name, str) or not name or not isinstance(stats, dict):
        raise FormatError(NAME, source, f"{where} needs a \"fullname\" and a \"stats\" object")
    rounds = count(stats.get("rounds"), NAME, source, f"{where} ({name!r}): stats.rounds")
    iterations = count(stats.get("iterations", 1), NAME, source, f"{where} ({name!r}): stats.iterations")
    operations = count(rounds * iterations, NAME, source, f"{where} ({name!r}): stats.rounds x stats.iterations")
    mean = finite_number(stats.get("mean"), NAME, source, f"{where}.stats.mean")
    data = stats.get("data", [])
    if not isinstance(data, list):
        raise FormatError(NAME, source, f"{where}.stats.data must be a list")
    per_round = tuple(finite_number(v, NAME, source, f"{where}.stats.data[{j}]") for j, v in enumerate(data))
    for j, seconds in enumerate(per_round):  # seconds per iteration: a round's time must be a sample's
        total_ns(seconds * 1e9, iterations, NAME, source, f"{where} ({name!r}): stats.data[{j}]")
    total = total_ns(mean * 1e9, operations, NAME, source, f"{where} ({name!r}): stats.mean")
    return Report(name, operations, total, {"rounds": float(rounds)}), per_round
