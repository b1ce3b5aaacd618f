"""A ``bench`` session: in-process benchmarks on one or two workers, paired per benchmark.

Each side is a worker (``measure.worker``): a native program built with
``pairbench.h`` or speaking the worker protocol, or Python benchmark files run
by the Python harness (with ``--against REV``, the baseline is the same files
in a worktree of REV). The benchmarks every side lists are measured one after
another. For each: the iteration count is chosen once (a power of two, equal
on both sides, about ``--sample-time`` a sample), then a sampler runs seeded
rounds of random order, one sample per side, and stops on the same anytime
verdict rule as ``compare`` within ``--max-time``. The verdicts are controlled
family-wise over every comparison of the invocation (the analysis's
``family_size``).

A benchmark that fails (an error, a crash, a hang, a protocol break) keeps the
samples taken, is named in a ``benchmark-failed`` note, and the others go on
(a crashed worker is started again); the CLI exits 3. Ctrl-C ends the whole
session, and what was measured is kept. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from pairbench import __version__
from pairbench.analysis import analyse, baseline_and_candidates, criteria_of
from pairbench.analysis.stopping import StoppingRule
from pairbench.command import STATUS_BENCHMARK_ERROR
from pairbench.doctor import timer_step
from pairbench.doctor.samplechecks import check_name
from pairbench.doctor.workerchecks import (
    VALIDATION_ROUNDS,
    validate_worker_benchmark,
    validation_counts,
)
from pairbench.errors import CommandFailed, UsageError
from pairbench.measure.commandline import parse_command
from pairbench.measure.executor import OutputPolicy, WallClock
from pairbench.measure.revisions import checkout, toplevel
from pairbench.measure.sampler import Measured, Sampler, SamplingPlan, Sink, StopRule
from pairbench.measure.worker import (
    Rotation,
    Worker,
    WorkerFailed,
    WorkerSpec,
    WorkerTarget,
    choose_iterations,
)
from pairbench.model import BenchmarkKey, Command, Run, Sample, Samples, Side
from pairbench.notes import Note, Subject
from pairbench.protocol import ErrorReply, SampleReply, split_name
from pairbench.report.jsonfile import derived_document
from pairbench.session import Outcome, RunJournal, distinct_names, utc_now
from pairbench.settings import Settings

LISTED_AT_MOST = 20
BLOCK_TIME_NS = 64_000_000
"""How long the measured rounds of one block of fresh worker processes last, about: with 1 ms
samples, 32 rounds. Shorter blocks cost more process starts; longer ones give fewer blocks, the
values the verdict is drawn from."""  # names a note lists of the benchmarks found on one side only
BENCH_FAILURE_ADVICE = "The other benchmarks go on; this one keeps the samples taken."

# (benchmark index, its label, how many) -> the progress sink for that benchmark, or None
ProgressFactory = Callable[[int, str, int, StoppingRule | None], Sink | None]


def is_python_target(text: str) -> bool:
    """A Python benchmark file or a directory of them (else a worker program, which may take
    arguments: ``python3 my_worker.py --fast`` is a program)."""
    return os.path.isdir(text) or (text.endswith(".py") and (os.path.isfile(text)
                                                            or not any(c.isspace() for c in text)))


@dataclass(frozen=True)
class _Plan:
    """The sides (for the run), how to start their workers, and the notes of naming them."""

    sides: tuple[Side, ...]
    specs: tuple[WorkerSpec, ...]
    notes: tuple[Note, ...]


WORKER_CLOCK = WallClock("worker")


def _worker_cpu() -> int | None:
    """The one CPU both sides' workers run on, so that neither is measured on a slower or busier
    CPU than the other (the last this process may use, leaving the others to pairbench itself)."""
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError, ValueError):
        return None


def block_rounds(sides: int, sample_time_ns: int) -> int:
    """Measured rounds per block of fresh worker processes: about ``BLOCK_TIME_NS`` of samples,
    8 to 256 rounds. Not longer when the workers are slow to start: the verdict needs many
    blocks (each pair of processes has its own difference), not long ones."""
    return max(8, min(256, round(BLOCK_TIME_NS / (sides * sample_time_ns))))


def python_worker(path: str, root: str) -> Command:
    """The Python harness serving the benchmarks in ``path``, importing first from ``root``."""
    argv = (sys.executable, "-m", "pairbench.harness", "--root", root, path)
    return Command(f"python -m pairbench.harness {path}", argv)


class BenchSession:
    """One ``bench``: workers from settings (checked), then :meth:`measure`."""

    def __init__(self, settings: Settings, environment: Mapping, *,
                 worker_in: Callable[[str], Command] | None = None):
        """``worker_in(tree)``, when given, is the worker serving the benchmarks of a working tree
        (the pytest plugin's); with ``--against`` it is started in a worktree of the revision and
        in the working tree, in place of the Python harness on ``settings.commands``."""
        self.settings = settings
        self._environment = dict(environment)
        self._worker_in = worker_in
        workers = settings.workers
        if worker_in is None and workers.against and not all(is_python_target(t) for t in settings.commands):
            raise UsageError("--against compares Python benchmark files with a git revision; for programs "
                             "give the two builds: pairbench bench ./old ./new")
        if worker_in is None and workers.against and len(settings.commands) != 1:
            raise UsageError("--against takes one FILE_OR_DIR: its benchmarks in the working tree are "
                             "compared with the same path at the revision")
        for text in settings.commands if worker_in is None else ():
            if not is_python_target(text):
                parse_command(text, shell=None)  # the program must exist: CommandNotFound before anything runs

    @contextlib.contextmanager
    def _planned(self) -> Iterator[_Plan]:
        """The sides and their workers' specs; with --against, inside a worktree of the revision."""
        settings, output = self.settings, OutputPolicy.parse(self.settings.sampling.output)
        timeout, cpu = settings.sampling.timeout_ns, _worker_cpu()
        if settings.workers.against:
            path = settings.commands[0]
            root = toplevel(path)
            if root is None:
                raise UsageError(f"--against needs {path!r} inside a git working tree")
            relative = os.path.relpath(os.path.abspath(path), root)
            worker_in = self._worker_in or (lambda tree: python_worker(os.path.join(tree, relative), tree))
            with checkout(settings.workers.against, root) as tree:
                specs = (WorkerSpec(worker_in(tree), tree, output, timeout, cpu),
                         WorkerSpec(worker_in(root), root, output, timeout, cpu))
                names = settings.names or (settings.workers.against, "working tree")
                yield self._plan(specs, names)
            return
        specs = tuple(WorkerSpec(self._worker_command(text), None, output, timeout, cpu)
                      for text in settings.commands)
        yield self._plan(specs, settings.names or settings.commands)

    def _worker_command(self, text: str) -> Command:
        if not is_python_target(text):
            return parse_command(text, shell=None)
        path = os.path.abspath(text)
        return python_worker(path, toplevel(path) or (path if os.path.isdir(path) else os.path.dirname(path)))

    def _plan(self, specs: tuple[WorkerSpec, ...], names) -> _Plan:
        names, renamed = distinct_names(list(names))
        labels = ["baseline", "candidate"] if len(specs) == 2 else [""] * len(specs)
        sides = tuple(Side(name, spec.command, label) for name, spec, label in zip(names, specs, labels, strict=True))
        return _Plan(sides, specs, renamed)

    def measure(self, progress: ProgressFactory | None = None) -> Outcome:
        """Start the workers, list and filter their benchmarks, measure each; analyse; write the result."""
        with self._planned() as plan:
            workers = [Worker(spec, side.name) for spec, side in zip(plan.specs, plan.sides, strict=True)]
            try:
                return self._measure(plan, workers, progress)
            finally:
                for worker in workers:
                    worker.stop()

    def _measure(self, plan: _Plan, workers: list[Worker], progress: ProgressFactory | None) -> Outcome:
        names, found_notes = self._benchmarks([_listed(worker) for worker in workers], plan.sides)
        keys = _keys(names)
        skeleton = Run(kind="bench", sides=plan.sides, settings=self.settings, tool_version=__version__,
                       started_at=utc_now(), benchmarks=keys, environment=self._environment,
                       notes=(*plan.notes, *found_notes), state="running")
        json_path = self.settings.outputs.json_path
        journal = RunJournal(json_path, skeleton) if json_path and json_path != "-" else None
        measuring = _Measuring(self.settings, skeleton, workers, journal, progress)
        interrupted = None
        try:
            measuring.all(names)
        except KeyboardInterrupt as exc:
            interrupted = exc
        run = measuring.finished(skeleton, interrupted)
        analysis = result_error = None
        try:
            analysis = analyse(run)
        finally:
            if journal:
                result_error = journal.save(run, derived_document(run, analysis) if analysis else None)
        error = CommandFailed(f"{len(measuring.failures)} of {len(names)} benchmarks failed: "
                              + "; ".join(measuring.failures[:3])
                              + ("; ..." if len(measuring.failures) > 3 else "")) if measuring.failures else None
        return Outcome(run, analysis, error, interrupted is not None, result_error,
                       getattr(interrupted, "signum", signal.SIGINT))

    def _benchmarks(self, listed: list[tuple[str, ...]], sides: tuple[Side, ...]
                    ) -> tuple[list[str], tuple[Note, ...]]:
        """The benchmarks every side lists (in the baseline's order) that the filter keeps, and notes
        naming those found on one side only."""
        common = [name for name in listed[0] if all(name in other for other in listed[1:])]
        notes = []
        if len(listed) == 2:
            for code, side, only in (("benchmarks-removed", 0, set(listed[0]) - set(listed[1])),
                                     ("benchmarks-added", 1, set(listed[1]) - set(listed[0]))):
                if only:
                    ordered = [n for n in listed[side] if n in only]
                    notes.append(Note(code, {"side": sides[side].name, "count": len(ordered),
                                             "names": ordered[:LISTED_AT_MOST]}))
        pattern = self.settings.workers.filter
        kept = [name for name in common if pattern is None or re.search(pattern, name)]
        if not kept:
            what = f"-k {pattern!r} matches none of the {len(common)}" if pattern else "the sides share none of their"
            raise UsageError(f"nothing to measure: {what} benchmarks")
        return kept, tuple(notes)


def _listed(worker: Worker) -> tuple[str, ...]:
    try:
        return worker.benchmarks()
    except WorkerFailed as exc:
        raise CommandFailed(f"the worker of {worker.side!r} ({worker.spec.command.text}) failed to start: "
                            f"{exc}") from None


def _worker_executor() -> dict:
    """The run's executor record: workers time themselves, and their max RSS is at least the size
    pairbench had when it started them (Linux charges the spawning process's peak at exec)."""
    own_peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return WallClock(WORKER_CLOCK.kind, own_peak_kib).info().to_dict()


def _sample_on(worker: Worker, name: str, iterations: int) -> SampleReply:
    """One sample of benchmark ``name`` on ``worker``; ``WorkerFailed`` naming the side on a failure
    of the worker or an error of the benchmark."""
    try:
        reply = worker.sample(name, iterations)
    except WorkerFailed as exc:
        raise WorkerFailed(f"on {worker.side!r}: {exc}", exc.status) from None
    if isinstance(reply, ErrorReply):
        raise WorkerFailed(f"on {worker.side!r}: the benchmark failed: {reply.message}", STATUS_BENCHMARK_ERROR)
    return reply


@dataclass
class _Series:
    """The rows of one side of one benchmark and their metrics' columns, as they are taken."""

    rows: list[Sample] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)

    def extend(self, rows: list[Sample], metrics: Mapping[str, list[float]]) -> None:
        """Append ``rows`` and their metrics; a metric one part lacks is 0 for its rows."""
        for key in {*self.metrics, *metrics}:
            self.metrics.setdefault(key, [0.0] * len(self.rows)).extend(metrics.get(key, [0.0] * len(rows)))
        self.rows.extend(rows)


def _keys(names: list[str]) -> tuple[BenchmarkKey, ...]:
    """Each name as a key with its parameters (``sort[n=10]``); a name whose key another name
    already gives is kept whole."""
    keys, seen = [], set()
    for name in names:
        base, params = split_name(name)
        key = BenchmarkKey(base, params)
        if key in seen:
            key = BenchmarkKey(name)
        seen.add(key)
        keys.append(key)
    return tuple(keys)


class _Measuring:
    """The measuring of one bench's benchmarks, one after another, with everything they yielded."""

    def __init__(self, settings: Settings, skeleton: Run, workers: list[Worker], journal: Sink | None,
                 progress: ProgressFactory | None):
        self.settings, self.skeleton, self.workers = settings, skeleton, workers
        self.journal, self.progress = journal, progress
        self.samples: dict[tuple[int, int], Samples] = {}
        self.notes: list[Note] = []
        self.failures: list[str] = []
        self._seq = 0
        self._origin = time.monotonic_ns()

    def all(self, names: list[str]) -> None:
        for b, name in enumerate(names):
            self.one(b, name)

    def one(self, b: int, name: str) -> None:
        """Measure benchmark ``b``: choose its iterations, validate it, sample until decided or out of
        time."""
        label = self.skeleton.benchmarks[b].label
        checked: list[_Series] = [_Series() for _ in self.workers]
        try:
            iterations = choose_iterations(lambda n: self._probe(b, name, n, checked),
                                           self.settings.workers.sample_time_ns)
            self._validate(b, name, iterations, checked)
        except WorkerFailed as exc:
            self._failed(label, f"benchmark {label!r} failed before it was measured (while its iteration "
                                f"count was chosen and checked): {exc}")
            self._store(b, checked)
            return
        rounds = block_rounds(len(self.workers), self.settings.workers.sample_time_ns)
        rotation = Rotation(rounds, self.workers)
        rule = self._rule(b, rotation.block_rounds)
        sinks = [s for s in (rotation, self.journal, rule,
                             self.progress(b, label, len(self.skeleton.benchmarks), rule) if self.progress else None)
                 if s is not None]
        sampler = Sampler(WORKER_CLOCK, self._sampling_plan(b, name, iterations, rotation), sinks=sinks,
                          decide=rule.decide if rule and self.settings.sampling.adaptive else None,
                          origin_ns=self._origin, first_seq=self._seq)
        try:
            sampler.run()
        except CommandFailed as exc:
            self._failed(label, str(exc).removesuffix(" " + BENCH_FAILURE_ADVICE))
        finally:
            self._seq = sampler.next_seq
            for side, series in enumerate(checked):
                series.extend(sampler.rows.get((b, side), []), sampler.metrics.get((b, side), {}))
            self._store(b, checked)
            self.notes.extend(sampler.notes)

    def _store(self, b: int, series: list[_Series]) -> None:
        for side, taken in enumerate(series):
            if taken.rows:
                self.samples[(b, side)] = Samples.from_rows(taken.rows, taken.metrics)

    def _validate(self, b: int, name: str, iterations: int, taken: list[_Series]) -> None:
        """Take each side's validation samples of benchmark ``b`` into ``taken`` (at N/8, N/4, N/2
        and N iterations, in seeded random order; warmups, journaled), and note each check they fail
        (``doctor.workerchecks``). ``WorkerFailed`` on any failure."""
        counts = validation_counts(iterations)
        order = np.random.default_rng((self.settings.sampling.seed * 1_000_003 + b + 7919) % (1 << 63))
        validation: list[list[Sample]] = [[] for _ in self.workers]
        resident: list[list[int | None]] = [[] for _ in self.workers]
        for _ in range(VALIDATION_ROUNDS):
            for slot, draw in enumerate(order.permutation(len(self.workers) * len(counts))):
                side, count = divmod(int(draw), len(counts))
                validation[side].append(self._take(b, side, name, counts[count], slot, taken[side]))
                resident[side].append(self.workers[side].resident_kib())
        label = self.skeleton.benchmarks[b].label
        resolution = timer_step(self.skeleton.environment) or 0
        for worker, rows, memory in zip(self.workers, validation, resident, strict=True):
            about = Subject(benchmark=label, side=worker.side)
            self.notes.extend(Note(f"benchmark-{finding.check}", finding.data, about)
                              for finding in validate_worker_benchmark(rows, memory, resolution)
                              if finding.status == "warn")
        named = check_name(label)
        if named.status == "warn":
            self.notes.append(Note("benchmark-name", named.data, Subject(benchmark=label)))

    def _probe(self, b: int, name: str, iterations: int, taken: list[_Series]) -> int:
        """The slowest side's time for ``iterations`` iterations, the samples kept as warmups
        (``WorkerFailed`` on any failure)."""
        return max(self._take(b, side, name, iterations, side, taken[side]).wall_ns
                   for side in range(len(self.workers)))

    def _take(self, b: int, side: int, name: str, iterations: int, slot: int, into: _Series) -> Sample:
        """One sample of benchmark ``b`` on ``side`` before its measuring (a calibration probe or a
        validation sample): stored as a warmup, journaled, and kept in ``into``."""
        start = time.monotonic_ns()
        worker = self.workers[side]
        reply = _sample_on(worker, name, iterations)
        sample = Sample(wall_ns=reply.ns, user_ns=reply.user_ns, sys_ns=reply.sys_ns, max_rss_kib=reply.maxrss_kib,
                        voluntary_cs=reply.vcs, involuntary_cs=reply.ivcs, start_ns=max(start - self._origin, 0),
                        seq=self._seq, slot=slot, iterations=iterations, warmup=1)
        self._seq += 1
        metrics = {"minor_faults": float(reply.minflt), "major_faults": float(reply.majflt),
                   "block": float(worker.block)}
        if self.journal is not None:
            self.journal.on_sample(Measured(side, b, sample, metrics))
        into.extend([sample], {key: [value] for key, value in metrics.items()})
        return sample

    def _rule(self, b: int, rounds_per_block: int) -> StoppingRule | None:
        if len(self.workers) < 2:
            return None
        base, candidates = baseline_and_candidates(self.skeleton)
        return StoppingRule(criteria_of(self.skeleton), base, candidates, benchmark_ids=(b,),
                            block_rounds=rounds_per_block)

    def _sampling_plan(self, b: int, name: str, iterations: int, rotation: Rotation) -> SamplingPlan:
        sampling = self.settings.sampling
        targets = tuple(WorkerTarget(worker, name, b, iterations, rotation) for worker in self.workers)
        return SamplingPlan(targets=targets,
                            stop=StopRule(sampling.runs, sampling.min_runs, sampling.max_runs, sampling.max_time_ns),
                            warmup_rounds=sampling.warmup, timeout_ns=sampling.timeout_ns,
                            seed=(sampling.seed * 1_000_003 + b) % (1 << 63), failure_advice=BENCH_FAILURE_ADVICE)

    def _failed(self, label: str, why: str) -> None:
        """Benchmark ``label`` failed (``why`` names it and the side): said at the end, and noted."""
        self.failures.append(why)
        self.notes.append(Note("benchmark-failed", {"benchmark": label, "why": why}))

    def finished(self, skeleton: Run, interrupted: KeyboardInterrupt | None) -> Run:
        state = "interrupted" if interrupted else ("failed" if self.failures else "complete")
        done = len({b for b, _ in self.samples})
        because = ("interrupted" if interrupted else
                   f"measured {done} benchmark{'s' if done != 1 else ''}"
                   + (f", {len(self.failures)} failed" if self.failures else ""))
        return skeleton.replace(samples=dict(self.samples), state=state, finished_at=utc_now(),
                                stopped_because=because,
                                environment={**skeleton.environment, "executor": _worker_executor()},
                                notes=(*skeleton.notes, *self.notes))
