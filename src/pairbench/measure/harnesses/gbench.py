"""Google Benchmark: binaries built with libbenchmark (``BENCHMARK(...)`` and ``BENCHMARK_MAIN()``).

Listing: ``--benchmark_list_tests=true`` prints one name a line. An invocation
runs one benchmark (``--benchmark_filter=^NAME$``, the name's regular-expression
characters escaped), once (``--benchmark_repetitions=1``), and writes its JSON
report to a file of ours (``--benchmark_out``). The iteration count is given
explicitly (``--benchmark_min_time=Nx``) where the library takes it (1.8 and
later); 1.7 and earlier take only a time, so there the harness chooses the
count (about ``--sample-time`` of work, the same rule on both sides) and each
sample records the count it ran.

Read from the JSON (``parse_json``, also used by ``pairbench import``): every
entry of ``run_type`` "iteration" (aggregates such as ``_mean`` are pairbench's
to compute), its ``real_time`` per iteration in ``time_unit`` times its
``iterations``, and as extra metrics its CPU time (``cpu_ns``), bytes and items
per second, and every user counter.
"""

from __future__ import annotations

import re
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
    listed_names,
    load_json,
    metric_total,
    numbered_lines,
    own_metric,
    read_bounded,
    tail_text,
    total_ns,
)

NAME = "gbench"
_TIME_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_KNOWN_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
    "aggregate_unit", "error_occurred", "error_message", "label", "big_o", "rms", "complexity",
})
_ERE_SPECIAL = re.compile(r"([.\[()*+?{|^$\\])")
_ERE_BRACKETED = re.compile(r"([\]}])")


def filter_for(name: str) -> str:
    """The ``--benchmark_filter`` that matches ``name`` alone: anchored, its POSIX extended regular
    expression characters escaped (libbenchmark compiles filters as ERE). ``]`` and ``}`` are
    written as bracket expressions (``[]]``, ``[}]``): escaped, 1.7's ``std::regex`` refuses them
    ("Invalid escape"), and an unescaped ``}`` after a ``{``-escape is not literal everywhere."""
    return "^" + _ERE_BRACKETED.sub(r"[\1]", _ERE_SPECIAL.sub(r"\\\1", name)) + "$"


class Gbench:
    """The adapter of Google Benchmark binaries."""

    name = NAME

    def discover(self, program: Program, scratch: Path, timeout_s: float | None) -> Discovery:
        """The binary's benchmark names, in its order, and whether it takes an iteration count."""
        listed = capture(program.command("--benchmark_list_tests=true"), timeout_s=timeout_s)
        if listed.status != 0:
            raise DiscoveryError(listed.failure("listing its benchmarks (--benchmark_list_tests)"))
        names = listed_names((line for _, line in numbered_lines(listed.text())), NAME)
        return Discovery(names, explicit_iterations=_takes_iteration_counts(program, timeout_s))

    def invocation(self, program: Program, name: str, iterations: int | None, sample_time_ns: int,
                   scratch: Path) -> Invocation:
        """One run of ``name``: ``iterations`` exactly (1.8+), or about ``sample_time_ns`` of it (1.7)."""
        amount = f"{iterations}x" if iterations is not None else f"{sample_time_ns / 1e9:.9g}"
        result_path = cleared(scratch / "gbench.json")
        options = (f"--benchmark_filter={filter_for(name)}", "--benchmark_repetitions=1",
                   f"--benchmark_min_time={amount}", f"--benchmark_out={result_path}",
                   "--benchmark_out_format=json")
        return Invocation(program.command(*options), name, iterations, result_path)

    def read(self, invocation: Invocation, output: bytes) -> Report:
        """The report of the invocation's benchmark from its JSON file (``NoResult`` when the filter
        matched nothing, ``FormatError`` when the file cannot be read)."""
        path = invocation.result_path
        if b"Failed to match any benchmarks" in output:  # it leaves an empty report file
            raise NoResult(NAME, invocation.command.text, "the filter matched no benchmark")
        if b"Could not compile benchmark re" in output:  # and exits 0, with an empty report file
            raise FormatError(NAME, invocation.command.text, f"it refused the filter: {tail_text(output)}")
        if path is None or not path.exists():
            raise NoResult(NAME, str(path), "the harness wrote no JSON report")
        report = parse_json(read_bounded(path, NAME), str(path))
        found = [r for r in report.results if r.name == invocation.benchmark]
        if not found:
            raise NoResult(NAME, str(path), f"no result for {invocation.benchmark!r} (the filter matched none)")
        return found[0]


REFUSED_DOUBLE = b"is expected to be a double"
"""What 1.7 prints of ``--benchmark_min_time=1x``, whether or not the program then exits."""


def _takes_iteration_counts(program: Program, timeout_s: float | None) -> bool:
    """Whether the library takes ``--benchmark_min_time=Nx`` (Google Benchmark 1.8 and later). 1.7
    refuses the value: ``BENCHMARK_MAIN()`` then exits 1, but a program of its own ``main`` that does
    not call ``ReportUnrecognizedArguments`` only warns and exits 0, and would run every sample
    for the library's default 0.5 s whatever count it is given; so its warning is read too."""
    probe = capture(program.command("--benchmark_list_tests=true", "--benchmark_min_time=1x"),
                    timeout_s=timeout_s)
    return probe.status == 0 and REFUSED_DOUBLE not in probe.output


@frozen
class GbenchReport:
    """A Google Benchmark JSON document: its ``context`` (machine, library) and its results."""

    context: Mapping
    results: tuple[Report, ...]


def parse_json(text: str, source: str) -> GbenchReport:
    """Read a ``--benchmark_format=json`` or ``--benchmark_out`` document (every version since 1.5)."""
    return parse_document(load_json(text, NAME, source), source)


def parse_document(document, source: str) -> GbenchReport:
    """The report of a parsed Google Benchmark JSON document."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise FormatError(NAME, source, "not a Google Benchmark JSON report: no \"benchmarks\" list "
                          "(write it with --benchmark_format=json or --benchmark_out=FILE)")
    context = document.get("context", {})
    if not isinstance(context, dict):
        raise FormatError(NAME, source, "\"context\" must be an object")
    results = []
    for i, entry in enumerate(document["benchmarks"]):
        where = f"benchmarks[{i}]"
        if not isinstance(entry, dict):
            raise FormatError(NAME, source, f"{where} must be an object")
        if entry.get("run_type", "iteration") != "iteration":
            continue  # an aggregate (mean, median, stddev, cv) of repetitions
        results.append(_result(entry, source, where, context))
    return GbenchReport(context, tuple(results))


def _result(entry: dict, source: str, where: str, context: Mapping) -> Report:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise FormatError(NAME, source, f"{where}.name must be a non-empty string")
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in _TIME_UNITS:
        version = context.get("library_version", "unknown")
        raise FormatError(NAME, source, f"{where} ({name!r}): time_unit {unit!r} is not one of "
                          f"{', '.join(_TIME_UNITS)} (library version {version}: a format pairbench does not know)")
    if entry.get("error_occurred"):
        message = entry.get("error_message", "")
        return Report(name, 1, 0.0, error=str(message) if message else "the benchmark reported an error")
    iterations = count(entry.get("iterations"), NAME, source, f"{where} ({name!r}).iterations")
    scale = _TIME_UNITS[unit]
    real = finite_number(entry.get("real_time"), NAME, source, f"{where}.real_time")
    cpu = finite_number(entry.get("cpu_time", 0.0), NAME, source, f"{where}.cpu_time")
    if cpu < 0:
        raise FormatError(NAME, source, f"{where} ({name!r}).cpu_time is negative ({cpu!r})")
    metrics = {"cpu_ns": metric_total(cpu * scale, iterations, NAME, source, f"{where}.cpu_time")}
    for key, value in entry.items():
        if key not in _KNOWN_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[own_metric(str(key), metrics)] = finite_number(value, NAME, source, f"{where}.{key}")
    return Report(name, iterations, total_ns(real * scale, iterations, NAME, source, f"{where} ({name!r}).real_time"),
                  metrics)
