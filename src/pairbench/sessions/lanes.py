"""Lanes: one job's means of measuring a benchmark on every side, for the suite driver.

The driver (``sessions.driver``) measures each benchmark the same way whatever
runs it: a pilot that sizes a sample, validation samples at fractions of it,
then paired rounds. A *lane* is what it measures with, and one job owns one:

* a :class:`WorkerLane` holds one worker process per side (``measure.worker``),
  all pinned to the job's CPU. A worker process lives for many samples, and two
  processes of one program differ by a few percent for their whole life, so the
  lane starts them afresh for each block of rounds (``Rotation``), and the
  verdict is drawn from block medians.
* a :class:`HarnessLane` runs a harness program (``measure.harnesses``) once per
  sample: an invocation is a fresh process, so every sample carries its own
  process's difference. Rounds are then independent of each other without
  blocks (each round is its own pair of processes), at the price of that
  process-to-process spread in every round's ratio, and of a process start per
  sample. Its executor (with its own output file) belongs to the job, so jobs
  never share one.

A lane makes the targets of a benchmark on each side (:meth:`Lane.target`), at
any iteration count or sample time: the driver's sampler takes the pilot's and
the validation's samples of them, then runs the rounds of :meth:`Lane.rounds`.
"""

from __future__ import annotations

import dataclasses
import os
import resource
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pairbench.frozen import frozen
from pairbench.harness_registry import PAIRBENCH
from pairbench.measure.executor import Executor, ExecutorInfo, WallClock
from pairbench.measure.fixed_cost import FixedCost, measure_fixed_cost
from pairbench.measure.harnesses import Adapter
from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.sampler import Sink
from pairbench.measure.targets import Target
from pairbench.measure.worker import Rotation, Worker, WorkerFailed, WorkerSpec, WorkerTarget, pin

WORKER_VALIDATION_ROUNDS = 6  # samples per fraction and side: cheap in a live worker
HARNESS_VALIDATION_ROUNDS = 3  # each is a process: 12 points per side fit a line
REPETITION_WARMUPS = 1
"""A fresh Go process's first repetitions stored as warmups, never paired: the first ran 1.2-1.4 times
slower than the next ones in ``benchmarks/loaded.py --part go-repetitions`` (benchmarks/RESULTS.md)."""
BLOCK_TIME_NS = 64_000_000
"""How long the measured rounds of one block of fresh worker processes last, about: with 1 ms
samples, 32 rounds. Shorter blocks cost more process starts; longer ones give fewer blocks, the
values the verdict is drawn from."""
WORKER_CLOCK = WallClock("worker")
ROUND_ORDER, VALIDATION_ORDER, WORKER_START_ORDER = 0, 7919, 104_729
"""The streams of :func:`benchmark_seed`: each random order of one benchmark draws from its own."""


def benchmark_seed(run_seed: int, b: int, stream: int = ROUND_ORDER) -> int:
    """The seed of one of benchmark ``b``'s random orders, from the run's ``--seed``: every benchmark
    and every kind of order its own, reproducible from the run's seed alone."""
    return (run_seed * 1_000_003 + b + stream) % (1 << 63)


class WorkerStart:
    """How a worker lane starts each side's worker, and the clock its rounds are timed by: the real
    :class:`Worker` on the monotonic clock (a test gives a fake's, on a virtual clock)."""

    clock: Executor = WORKER_CLOCK

    def __call__(self, spec: WorkerSpec, side: str) -> Worker:
        return Worker(spec, side)

    def fixed_cost(self) -> FixedCost:
        """The fixed cost of a worker's sample (its clock reads), measured now in this process by the
        Python worker's own timed loop (``measure.fixed_cost``); a native worker's loop costs less."""
        return measure_fixed_cost()

    def info(self) -> ExecutorInfo:
        """What measured: the workers themselves; a worker's max RSS is at least the size pairbench
        had when it started the worker, which Linux charges to a child at exec."""
        return WallClock(WORKER_CLOCK.kind, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss).info()


class LaneFailed(Exception):
    """A sample outside the rounds failed (the worker or harness program ended, hung, broke its
    protocol, or the benchmark failed); the message names the side."""


class Lane(Protocol):
    """One job's means of measuring (see the module docstring)."""

    executor: Executor
    explicit_iterations: bool  # a sample can be given an exact iteration count
    validation_rounds: int
    harness: str  # "pairbench", or the adapter's harness
    repetitions: int  # samples of a benchmark one execution of a round's target yields (a warmup's among them)
    warms_up: bool  # whether --warmup rounds run before the measured ones
    cpu: int | None  # the CPU this job's samples run on (its thread is pinned there), or None

    def target(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int, *,
               validation: bool = False) -> Target:
        """Benchmark ``name`` (index ``b``) on ``side``, outside the rounds; a validation sample also
        reads what validation judges that the sample itself does not hold (a worker's memory)."""
        ...

    def fixed_cost(self) -> FixedCost:
        """What every sample costs besides its iterations (reading the clocks), measured now; 0 when
        unknown (the harness times itself)."""
        ...

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int, rounds_per_block: int, *,
               fixed_cpu_ns: float | None = None) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        """The targets of the paired rounds, the sinks they need, and the rounds per block (None:
        every round is its own processes). ``fixed_cpu_ns``: what an invocation costs besides its
        loops, for a harness whose CPU time is its process's (``analysis.process_cpu``)."""
        ...

    def close(self) -> None:
        ...


def block_rounds(sides: int, sample_time_ns: int) -> int:
    """Measured rounds per block of fresh worker processes: about ``BLOCK_TIME_NS`` of samples,
    8 to 256 rounds. Not longer when the workers are slow to start: the verdict needs many
    blocks (each pair of processes has its own difference), not long ones."""
    return max(8, min(256, round(BLOCK_TIME_NS / (sides * sample_time_ns))))


class WorkerLane:
    """One worker process per side, pinned to the job's CPU, started afresh per block of rounds."""

    explicit_iterations = True
    validation_rounds = WORKER_VALIDATION_ROUNDS
    harness = PAIRBENCH
    repetitions = 1
    warms_up = True  # --warmup rounds: a live worker's first samples pay for cold caches

    def __init__(self, specs: Sequence[WorkerSpec], sides: Sequence[str], seed: int = 0, *,
                 start: WorkerStart | None = None):
        """``start`` makes each side's worker (the real :class:`Worker`, or a test's fake with its clock)."""
        start = start or WorkerStart()
        self.workers = [start(spec, side) for spec, side in zip(specs, sides, strict=True)]
        self._start = start
        self.cpu = specs[0].cpu if specs else None
        self.executor = start.clock
        self._seed = seed  # the run's: each benchmark's blocks start their workers in its own order

    def listed(self) -> list[tuple[str, ...]]:
        """Each side's benchmark names (``LaneFailed`` naming the side whose worker failed)."""
        names = []
        for worker in self.workers:
            try:
                names.append(worker.benchmarks())
            except WorkerFailed as exc:
                raise LaneFailed(f"the worker of {worker.side!r} ({worker.spec.command.text}) failed to "
                                 f"start: {exc}") from None
        return names

    def fixed_cost(self) -> FixedCost:
        return self._start.fixed_cost()

    def target(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int, *,
               validation: bool = False) -> WorkerTarget:
        return WorkerTarget(self.workers[side], name, b, iterations, resident=validation)

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int, rounds_per_block: int, *,
               fixed_cpu_ns: float | None = None) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        rotation = Rotation(rounds_per_block, self.workers, seed=benchmark_seed(self._seed, b, WORKER_START_ORDER))
        targets = tuple(WorkerTarget(worker, name, b, iterations, rotation) for worker in self.workers)
        return targets, (rotation,), rotation.block_rounds

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
            counting = worker.spec.counting
            if counting is not None and counting.directory is not None:  # Callgrind's dumps, all read
                counting.directory.remove()


@frozen
class HarnessSide:
    """One side's harness program and the directory its invocations write their reports in."""

    name: str
    program: Program
    scratch: Path


class HarnessLane:
    """A harness program per side, one invocation per sample, on the job's own executor (pinned with
    the invocations it starts to ``cpu``, when given)."""

    validation_rounds = HARNESS_VALIDATION_ROUNDS
    warms_up = False  # every invocation is a new process, and the harness warms itself up

    def __init__(self, adapter: Adapter, sides: Sequence[HarnessSide], executor: Executor, output: Path, *,
                 explicit_iterations: bool, cpu: int | None = None, repetitions: int = 1):
        """``repetitions``: of a benchmark in each invocation of the rounds, where the adapter repeats
        (``repeated``); the pilot's and validation's invocations run it once."""
        self.adapter, self.sides, self.executor, self.cpu = adapter, tuple(sides), executor, cpu
        self.repetitions = repetitions if hasattr(adapter, "repeated") else 1
        self.warmups = REPETITION_WARMUPS if self.repetitions > REPETITION_WARMUPS else 0
        spawner = getattr(executor, "spawner_pid", None)
        if cpu is not None and spawner is not None:  # in process, the job's pinned thread starts them
            pin(spawner, cpu)
        self.harness = adapter.name
        self.output = OutputFile(output)
        self.explicit_iterations = explicit_iterations
        for side in self.sides:
            side.scratch.mkdir(parents=True, exist_ok=True)

    def fixed_cost(self) -> FixedCost:
        return FixedCost()  # the harness's own loop and clocks: not known here

    def target(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int, *,
               validation: bool = False) -> HarnessTarget:
        one = self.sides[side]
        return HarnessTarget(self.adapter, one.program, one.name, name, b, iterations, sample_time_ns,
                             one.scratch, self.output)

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int, rounds_per_block: int, *,
               fixed_cpu_ns: float | None = None) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        targets = tuple(dataclasses.replace(self.target(side, name, b, iterations, sample_time_ns),
                                            repetitions=self.repetitions, warmups=self.warmups,
                                            fixed_cpu_ns=fixed_cpu_ns if self.repetitions > 1 else None)
                        for side in range(len(self.sides)))
        return targets, (), None

    def close(self) -> None:
        self.executor.close()


def job_cpus(jobs: int) -> list[int | None]:
    """The CPU each job's workers are pinned to: the last ones this process may use, one per job
    (a job beyond the CPUs shares one), so no job's sides run on a slower or busier CPU than its
    other side's."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return [None] * jobs
    return [cpus[-1 - (j % len(cpus))] for j in range(jobs)]
