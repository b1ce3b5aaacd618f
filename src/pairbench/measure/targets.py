"""Targets: what one side runs to take a sample, and the rows of benchmark values it yields.

A :class:`Target` is executed once per round by the :class:`~pairbench.measure.sampler.Sampler`.
One execution may yield rows for several benchmarks (an in-process worker or a
harness binary reports each of its benchmarks); a whole command yields one
row, for its one benchmark. Today's target is :class:`CommandTarget`; worker
and harness targets implement the same protocol.

A command's untimed helpers belong to its target: ``--prepare`` runs right before
it and ``--conclude`` right after, each the one given for its command (or for
every command), so each sample gets its own however the round is ordered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import field
from typing import Protocol

from pairbench.command import STATUS_TIMEOUT, Command, describe_status
from pairbench.errors import CommandNotFound, HelperCommandFailed, ProgramNotFound
from pairbench.frozen import frozen
from pairbench.measure.commandline import Shell, parse_command
from pairbench.measure.executor import Execution, Executor
from pairbench.units import format_duration


@frozen
class Row:
    """One benchmark's measurement from one execution of a target.

    ``execution`` holds the time over all ``iterations`` and the resource usage;
    ``metrics`` holds further values (float totals over the iterations, such
    as bytes allocated), keyed by name. ``detail`` says why a failed row failed, when the
    status alone does not (a worker's error message, the tail of its standard error).
    ``priming``: a sample the target took before the one asked for (a fresh worker's first
    samples), stored as a warmup and never paired.
    """

    benchmark: int
    execution: Execution
    iterations: int = 1
    metrics: Mapping[str, float] = field(default_factory=dict)
    detail: str = ""
    priming: bool = False


class Target(Protocol):
    """What a side runs for one sample."""

    @property
    def name(self) -> str:
        """The side's name, for messages."""
        ...

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """Run once and return its rows (none when it measured nothing); a failure is a row's status."""
        ...


@frozen
class CommandTarget:
    """A whole command: one execution, one row, for benchmark ``benchmark``; with its
    ``prepare`` run before it and its ``conclude`` after it, untimed."""

    command: Command
    name: str
    benchmark: int = 0
    iterations: int = 1
    prepare: Command | None = None
    conclude: Command | None = None

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """Run prepare, the command, conclude; a failed helper raises ``HelperCommandFailed``, and the
        run ends there. A failed conclude hands over the sample it followed (``exc.rows``): that sample
        was measured whole, so it is kept."""
        run_helper(executor, self.prepare, "--prepare", timeout_ns)
        row = Row(self.benchmark, executor.run(self.command, timeout_ns=timeout_ns), self.iterations)
        try:
            run_helper(executor, self.conclude, "--conclude", timeout_ns)
        except HelperCommandFailed as exc:
            exc.rows = (row,)
            raise
        return (row,)


def run_helper(executor: Executor, command: Command | None, option: str, timeout_ns: int | None) -> None:
    """Run a helper command (``--setup``, ``--prepare``...) untimed; ``HelperCommandFailed`` saying
    how it ended when it did not succeed."""
    if command is None:
        return
    result = executor.run(command, timeout_ns=timeout_ns)
    if result.status == STATUS_TIMEOUT and timeout_ns:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: timed out after "
                                  f"{format_duration(timeout_ns, digits=3)} (--timeout)")
    if result.status != 0:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: {describe_status(result.status)}")


STARTUP_COMMAND = "true"


class StartupProbe:
    """The start-up probe: runs ``true`` once in every round beside a benchmark being validated
    (``pairbench doctor COMMAND``); its rows are of benchmark ``benchmark``.

    Its time is what any command pays to start (a fork, an exec, with ``--shell``
    the shell too), measured under the same conditions as the benchmark, so the
    duration and setup-overhead checks can take it off. Unlike a command's target,
    a run of ``true`` that fails yields no row (it measured nothing, and must not end
    the validation), and once ``true`` cannot be started the probe stops trying.
    """

    name = "process start-up (true)"

    def __init__(self, command: Command, benchmark: int):
        self.command, self.benchmark = command, benchmark
        self.runnable = True

    @classmethod
    def for_shell(cls, shell: Shell | None, benchmark: int) -> StartupProbe | None:
        """The probe of commands run through ``shell`` (``sh -c true``; ``true`` itself without one),
        or None when ``true`` is not found."""
        try:
            return cls(parse_command(STARTUP_COMMAND, shell=shell), benchmark)
        except ProgramNotFound:
            return None

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """One run of ``true``: its row, or none when it failed or cannot be started (then never again)."""
        if not self.runnable:
            return ()
        try:
            execution = executor.run(self.command, timeout_ns=timeout_ns)
        except CommandNotFound:
            self.runnable = False
            return ()
        return (Row(self.benchmark, execution),) if execution.status == 0 else ()


class CountedCommand:
    """A whole command run under a counter (Callgrind, ``perf stat``): ``--prepare`` and
    ``--conclude`` run as they would, not counted, and the counted sample is kept when
    ``--conclude`` fails, as ``CommandTarget`` keeps its own. A subclass, a dataclass with the
    command's ``target``, says what runs (``counted_command``) and reads the counts into the row
    after the command ended (``counted``); ``before_counting`` readies its output (nothing here)."""

    target: CommandTarget

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def benchmark(self) -> int:
        return self.target.benchmark

    def counted_command(self) -> Command:
        raise NotImplementedError

    def counted(self, row: Row) -> Row:
        raise NotImplementedError

    def before_counting(self) -> None:
        """Called after ``--prepare``, just before the counted command runs."""

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        counted = dataclasses.replace(self.target, command=self.counted_command(), prepare=None, conclude=None)
        run_helper(executor, self.target.prepare, "--prepare", timeout_ns)
        self.before_counting()
        (row,) = counted.execute(executor, timeout_ns=timeout_ns)
        row = self.counted(row)
        try:
            run_helper(executor, self.target.conclude, "--conclude", timeout_ns)
        except HelperCommandFailed as exc:  # the counted sample is kept
            exc.rows = (row,)
            raise
        return (row,)
