"""The sampler's view of one benchmark of a harness program: one execution is one invocation.

A :class:`HarnessTarget` asks its adapter for the invocation of its benchmark,
runs it on the executor (timed, with the invocation's rusage: the process's
whole life, start-up and the harness's own calibration included), and turns
the harness's report into one row: ``iterations`` as the harness ran them and
the metric ``value``, the time the harness measured around its loop over all
of them, which is what the analysis compares. ``wall_ns`` keeps the
invocation's own wall time, so the overhead of a sample stays visible.

An invocation of an adapter that repeats (Go's ``-test.count``; ``repeated``)
yields a row per repetition, each marked with its number (the metric
``repetition``, from 1) and all sharing the invocation's execution (its wall
time and rusage: one process's); the first ``warmups`` of them are stored as
warmups and never paired (a fresh process's first repetition pays for its cold
start). The analysis takes the median of a side's repetitions in a round
(``analysis.comparison``). Given what such an invocation costs in CPU time besides its loops
(``fixed_cpu_ns``, ``analysis.process_cpu``), each repetition also carries its share of the rest of
its process's CPU time as the harness's own CPU time (``cpu_ns``): a Go benchmark's CPU time, which
its runtime's threads do not spoil.

Each invocation runs its program from a fresh copy of the program's file (``measure.placement``), so
where the file's pages lie in memory is drawn anew for every sample, as address-space randomization
draws its virtual addresses: two byte-identical files otherwise keep their own pages for the whole run.

The invocation's standard output and error go to a file of the job's executor
(:class:`OutputFile`), read after each invocation for the report (Go prints
it) or, when the invocation failed, for the last lines to show.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path

from pairbench.command import (
    STATUS_BENCHMARK_ERROR,
    STATUS_NO_RESULT,
    STATUS_UNREADABLE,
    describe_status,
)
from pairbench.frozen import frozen
from pairbench.harness_registry import words
from pairbench.measure.executor import Execution, Executor
from pairbench.measure.harnesses import Adapter
from pairbench.measure.harnesses.base import (
    MAX_OUTPUT_BYTES,
    FormatError,
    NoResult,
    Program,
    Report,
    tail_text,
)
from pairbench.measure.placement import fresh_placement
from pairbench.measure.targets import Row
from pairbench.model import CPU_METRIC, FIXED_CPU_METRIC, PRIMARY_METRIC, REPETITION_METRIC


class OutputFile:
    """The file an executor writes its commands' standard output and error to (opened by the
    executor for appending): emptied before an invocation, read after it, at most
    ``MAX_OUTPUT_BYTES``."""

    def __init__(self, path: Path):
        self.path = path

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.truncate(self.path, 0)

    def read(self) -> bytes:
        try:
            with open(self.path, "rb") as handle:
                return handle.read(MAX_OUTPUT_BYTES)
        except FileNotFoundError:
            return b""


@frozen
class HarnessTarget:
    """Benchmark ``benchmark_name`` (index ``benchmark`` of the run) of one side's harness program,
    at ``iterations`` (None: the harness chooses from ``sample_time_ns``)."""

    adapter: Adapter
    program: Program
    side: str
    benchmark_name: str
    benchmark: int
    iterations: int | None
    sample_time_ns: int
    scratch: Path
    output: OutputFile
    repetitions: int = 1
    warmups: int = 0
    fixed_cpu_ns: float | None = None  # an invocation's CPU time besides its loops (``process_cpu``)

    @property
    def name(self) -> str:
        """What failure messages call this target."""
        return f"benchmark {self.benchmark_name!r} on {self.side!r} ({words(self.adapter.name)})"

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """One invocation, one row (a row per repetition where it repeats); a failure (exit, signal, timeout, no result, an unreadable report,
        the harness's own error) is the row's status, said in ``detail``."""
        with contextlib.ExitStack() as placed:
            try:
                program = placed.enter_context(fresh_placement(self.program, self.scratch))
                invocation = (self.adapter.repeated(program, self.benchmark_name, self.iterations,
                                                    self.repetitions) if self.repetitions > 1 else
                              self.adapter.invocation(program, self.benchmark_name, self.iterations,
                                                      self.sample_time_ns, self.scratch))
            except OSError as exc:  # the program's copy, or what an earlier invocation left where the report
                # goes, could not be made or removed
                return (self._failed(Execution(wall_ns=1, start_ns=executor.now_ns()), STATUS_UNREADABLE,
                                     f"its copy or its report's place could not be prepared: {exc}"),)
            self.output.clear()
            execution = executor.run(invocation.command, timeout_ns=timeout_ns)
        output = self.output.read()
        if execution.status != 0:
            tail = tail_text(output)
            return (self._failed(execution, execution.status, f"it {_ended(execution.status)}"
                                 + (f"; its output ended with: {tail}" if tail else "")),)
        try:
            reports = (self.adapter.reports(invocation, output) if invocation.repetitions > 1
                       else (self.adapter.read(invocation, output),))
        except NoResult as exc:
            return (self._failed(execution, STATUS_NO_RESULT, f"no result: {exc}; was the benchmark renamed "
                                 "or removed?"),)
        except FormatError as exc:
            return (self._failed(execution, STATUS_UNREADABLE, f"its report could not be read: {exc}"),)
        failed = next((r.error for r in reports if r.error), "")
        if failed:
            return (self._failed(execution, STATUS_BENCHMARK_ERROR, f"the benchmark failed: {failed}"),)
        if len(reports) == 1:
            return (self.row(execution, reports[0]),)
        return tuple(self.repetition_row(execution, report, number, len(reports))
                     for number, report in enumerate(reports, 1))

    def repetition_row(self, execution: Execution, report: Report, number: int, of: int = 1) -> Row:
        """The row of repetition ``number`` (from 1) of ``of``: marked with its number, and a warmup
        (never paired) among the first ``warmups``; with ``fixed_cpu_ns``, its share of its process's
        CPU time besides that cost, as the harness's own CPU time (``analysis.process_cpu``)."""
        row = self.row(execution, report)
        if row.execution.status != 0:
            return row
        metrics = {**row.metrics, REPETITION_METRIC: float(number)}
        if self.fixed_cpu_ns is not None:
            loops = max(execution.user_ns + execution.sys_ns - self.fixed_cpu_ns, 0.0)
            metrics |= {CPU_METRIC: loops / of, FIXED_CPU_METRIC: float(self.fixed_cpu_ns)}
        return dataclasses.replace(row, metrics=metrics, priming=number <= self.warmups)

    def row(self, execution: Execution, report: Report) -> Row:
        """The row of a report: the harness's iterations and time (``value``), its metrics. A time of 0
        is a measurement (the harness's timer did not advance): the pilot then tries more
        iterations, and the analysis refuses to compare it; a negative one is not."""
        if report.total_ns < 0:
            return self._failed(execution, STATUS_UNREADABLE, f"it reported a time of {report.total_ns} ns")
        return Row(self.benchmark, execution, report.iterations,
                   {**report.metrics, PRIMARY_METRIC: float(report.total_ns)})

    def _failed(self, execution: Execution, status: int, detail: str) -> Row:
        return Row(self.benchmark, Execution(wall_ns=max(execution.wall_ns, 1), start_ns=execution.start_ns,
                                             status=status, user_ns=execution.user_ns, sys_ns=execution.sys_ns,
                                             max_rss_kib=execution.max_rss_kib),
                   self.iterations or 1, {PRIMARY_METRIC: 0.0}, detail=detail)


def _ended(status: int) -> str:
    if status > 0:
        return f"exited with {describe_status(status)}"
    return describe_status(status)
