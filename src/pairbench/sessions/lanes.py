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

Every sample taken outside the rounds (:meth:`probe`: the pilot's and
validation's) is returned as a :class:`Probe`; the driver stores it as a warmup.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pairbench.command import describe_status
from pairbench.doctor.workerchecks import (
    collected_runtime,
    validate_harness_benchmark,
    validate_worker_benchmark,
)
from pairbench.environment.findings import Finding
from pairbench.measure.executor import Executor, WallClock
from pairbench.measure.harnesses import Adapter
from pairbench.measure.harnesses.base import Program
from pairbench.measure.harnesses.target import HarnessTarget, OutputFile
from pairbench.measure.sampler import Sink
from pairbench.measure.targets import Target
from pairbench.measure.worker import Rotation, Worker, WorkerFailed, WorkerSpec, WorkerTarget, pin
from pairbench.model import PRIMARY_METRIC, Sample
from pairbench.worker.protocol import ErrorReply

WORKER_VALIDATION_ROUNDS = 6  # samples per fraction and side: cheap in a live worker
HARNESS_VALIDATION_ROUNDS = 3  # each is a process: 12 points per side fit a line
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


class LaneFailed(Exception):
    """A sample outside the rounds failed (the worker or harness program ended, hung, broke its
    protocol, or the benchmark failed); the message names the side."""


@dataclass(frozen=True)
class Probe:
    """One unpaired sample: the row to store (a warmup), the time the side's own timer measured, the
    memory reading validation needs, and how long taking it took here (for sizing rounds)."""

    sample: Sample
    metrics: dict[str, float]
    measured_ns: float
    memory_kib: int | None
    cost_ns: int

    def view(self) -> Sample:
        """The sample as validation judges it: the time measured by the side's own timer."""
        return Sample(**{**self.sample.__dict__, "wall_ns": max(int(round(self.measured_ns)), 1)})


class Lane(Protocol):
    """One job's means of measuring (see the module docstring)."""

    executor: Executor
    explicit_iterations: bool  # a sample can be given an exact iteration count
    validation_rounds: int
    memory_code: str  # the note a memory-growth finding becomes
    harness: str  # "pairbench", or the adapter's harness
    warms_up: bool  # whether --warmup rounds run before the measured ones
    names_chosen: bool  # the benchmarks' names were given to pairbench's harness (not another suite's)
    cpu: int | None  # the CPU this job's samples run on (its thread is pinned there), or None

    def probe(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int) -> Probe:
        """One sample of ``name`` on ``side`` outside the rounds; ``LaneFailed`` on any failure."""
        ...

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int,
               rounds_per_block: int) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        """The targets of the paired rounds, the sinks they need, and the rounds per block (None:
        every round is its own processes)."""
        ...

    def validate(self, samples: Sequence[Sample], memory: Sequence[int | None], resolution_ns: int
                 ) -> tuple[Finding, ...]:
        """The doctor's findings on one side's validation samples (``Probe.view``)."""
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
    memory_code = "benchmark-memory-growth"
    harness = "pairbench"
    warms_up = True  # --warmup rounds: a live worker's first samples pay for cold caches

    def __init__(self, specs: Sequence[WorkerSpec], sides: Sequence[str], origin_ns: int, seed: int = 0,
                 harness: str = "pairbench"):
        self.workers = [Worker(spec, side) for spec, side in zip(specs, sides, strict=True)]
        self.cpu = specs[0].cpu if specs else None
        self.harness = harness  # whose benchmarks the workers serve: the wording of their findings
        self.runtime = collected_runtime(harness, specs[0].command.argv if specs else ())
        self.names_chosen = harness == "pairbench"  # pytest-benchmark's names are its tests'
        self.executor = WORKER_CLOCK
        self._origin = origin_ns
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

    def probe(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int) -> Probe:
        worker = self.workers[side]
        start = time.monotonic_ns()
        try:
            reply = worker.sample(name, iterations)
        except WorkerFailed as exc:
            raise LaneFailed(f"on {worker.side!r}: {exc}") from None
        if isinstance(reply, ErrorReply):
            raise LaneFailed(f"on {worker.side!r}: the benchmark failed: {reply.message}")
        cost = time.monotonic_ns() - start
        sample = Sample(wall_ns=reply.ns, user_ns=reply.user_ns, sys_ns=reply.sys_ns, max_rss_kib=reply.maxrss_kib,
                        voluntary_cs=reply.vcs, involuntary_cs=reply.ivcs, start_ns=max(start - self._origin, 0),
                        iterations=iterations, warmup=1)
        metrics = {"minor_faults": float(reply.minflt), "major_faults": float(reply.majflt),
                   "block": float(worker.block)}
        return Probe(sample, metrics, float(reply.ns), worker.resident_kib(), cost)

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int,
               rounds_per_block: int) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        rotation = Rotation(rounds_per_block, self.workers, seed=benchmark_seed(self._seed, b, WORKER_START_ORDER))
        targets = tuple(WorkerTarget(worker, name, b, iterations, rotation) for worker in self.workers)
        return targets, (rotation,), rotation.block_rounds

    def validate(self, samples: Sequence[Sample], memory: Sequence[int | None], resolution_ns: int
                 ) -> tuple[Finding, ...]:
        return validate_worker_benchmark(samples, memory, resolution_ns, self.runtime)

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()


@dataclass(frozen=True)
class HarnessSide:
    """One side's harness program and the directory its invocations write their reports in."""

    name: str
    program: Program
    scratch: Path


class HarnessLane:
    """A harness program per side, one invocation per sample, on the job's own executor (pinned with
    the invocations it starts to ``cpu``, when given)."""

    validation_rounds = HARNESS_VALIDATION_ROUNDS
    memory_code = "benchmark-peak-growth"
    warms_up = False  # every invocation is a new process, and the harness warms itself up
    names_chosen = False  # the suite's own names (Go's, Google Benchmark's...): not renamed here

    def __init__(self, adapter: Adapter, sides: Sequence[HarnessSide], executor: Executor, output: Path, *,
                 explicit_iterations: bool, origin_ns: int, timeout_ns: int | None, cpu: int | None = None):
        self.adapter, self.sides, self.executor, self.cpu = adapter, tuple(sides), executor, cpu
        spawner = getattr(executor, "spawner_pid", None)
        if cpu is not None and spawner is not None:  # in process, the job's pinned thread starts them
            pin(spawner, cpu)
        self.harness = adapter.name
        self.runtime = collected_runtime(adapter.name, self.sides[0].program.argv if self.sides else ())
        self.output = OutputFile(output)
        self.explicit_iterations = explicit_iterations
        self.timeout_ns = timeout_ns
        self._origin = origin_ns
        for side in self.sides:
            side.scratch.mkdir(parents=True, exist_ok=True)

    def target(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int) -> HarnessTarget:
        one = self.sides[side]
        return HarnessTarget(self.adapter, one.program, one.name, name, b, iterations, sample_time_ns,
                             one.scratch, self.output)

    def probe(self, side: int, name: str, b: int, iterations: int | None, sample_time_ns: int) -> Probe:
        target = self.target(side, name, b, iterations, sample_time_ns)
        start = time.monotonic_ns()
        (row,) = target.execute(self.executor, timeout_ns=self.timeout_ns)
        ex = row.execution
        if ex.status != 0:
            what = row.detail or describe_status(ex.status)
            raise LaneFailed(f"on {self.sides[side].name!r}: {what}")
        sample = Sample(wall_ns=ex.wall_ns, user_ns=ex.user_ns, sys_ns=ex.sys_ns, max_rss_kib=ex.max_rss_kib,
                        voluntary_cs=ex.voluntary_cs, involuntary_cs=ex.involuntary_cs,
                        start_ns=max(ex.start_ns - self._origin, 0), iterations=row.iterations, warmup=1)
        measured = float(row.metrics[PRIMARY_METRIC])
        return Probe(sample, dict(row.metrics), measured, ex.max_rss_kib, time.monotonic_ns() - start)

    def rounds(self, b: int, name: str, iterations: int | None, sample_time_ns: int,
               rounds_per_block: int) -> tuple[tuple[Target, ...], tuple[Sink, ...], int | None]:
        targets = tuple(self.target(side, name, b, iterations, sample_time_ns) for side in range(len(self.sides)))
        return targets, (), None

    def validate(self, samples: Sequence[Sample], memory: Sequence[int | None], resolution_ns: int
                 ) -> tuple[Finding, ...]:
        floor = self.executor.info().rss_floor_kib or 0
        return validate_harness_benchmark(samples, resolution_ns, floor, self.runtime)

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
