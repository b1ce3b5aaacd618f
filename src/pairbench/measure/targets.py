"""Targets: what one side runs to take a sample, and the rows of benchmark values it yields.

A :class:`Target` is executed once per round by the :class:`~pairbench.measure.sampler.Sampler`.
One execution may yield rows for several benchmarks (an in-process worker or a
harness binary reports each of its benchmarks); a whole command yields one
row, for its one benchmark. Today's target is :class:`CommandTarget`; worker
and harness targets implement the same protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pairbench.command import Command
from pairbench.measure.executor import Execution, Executor


@dataclass(frozen=True)
class Row:
    """One benchmark's measurement from one execution of a target.

    ``execution`` holds the time over all ``iterations`` and the resource usage;
    ``metrics`` holds further values (float totals over the iterations, such
    as bytes allocated), keyed by name.
    """

    benchmark: int
    execution: Execution
    iterations: int = 1
    metrics: Mapping[str, float] = field(default_factory=dict)


class Target(Protocol):
    """What a side runs for one sample."""

    @property
    def name(self) -> str:
        """The side's name, for messages."""
        ...

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """Run once and return its rows (none when it measured nothing); a failure is a row's status."""
        ...


@dataclass(frozen=True)
class CommandTarget:
    """A whole command: one execution, one row, for benchmark ``benchmark``."""

    command: Command
    name: str
    benchmark: int = 0
    iterations: int = 1

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        return (Row(self.benchmark, executor.run(self.command, timeout_ns=timeout_ns), self.iterations),)
