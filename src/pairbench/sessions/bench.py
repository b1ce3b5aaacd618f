"""A ``bench`` session: a suite of benchmarks on one or two benchmark programs, paired per benchmark.

Each side is a benchmark program of one *harness* (``--harness``, else detected
from the programs, ``measure.harnesses.detect``):

* ``pairbench``: a worker (``measure.worker``): a native program built with
  ``pairbench.h`` or speaking the worker protocol, or Python benchmark files run
  by the Python harness (with ``--against REV``, the baseline is the same files
  in a worktree of REV);
* ``pytest-benchmark``: pytest tests using its ``benchmark`` fixture, served by a
  pytest worker per side (``worker.pytest_benchmark``: the tests run once to
  record their calls, which are then timed like a worker's benchmarks);
* ``gbench``, ``go``, ``criterion``, ``pytest-benchmark-processes``: a program of
  that harness (for pytest-benchmark, a pytest run), run once per sample
  (``measure.harnesses``).

The session lists each side's benchmarks, keeps those every side has (``-k``
filters them; ``--shard K/N`` keeps a share, ``store.shards``), and hands them to
the suite driver (``sessions.driver``) with one lane per ``--jobs`` job. The
verdicts are controlled family-wise over every comparison of the suite, all
its shards included (``analysis``).

A benchmark that fails (an error, a crash, a hang, a protocol break, output the
adapter cannot read) keeps the samples taken, is named in a
``benchmark-failed`` note, and the others go on; the CLI exits 3. Ctrl-C ends
the whole session, and what was measured is kept. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from pairbench import collector, held_signals
from pairbench.errors import CommandFailed, NothingToMeasure, UsageError
from pairbench.frozen import frozen
from pairbench.harness_registry import HARNESS_CHOICES, PAIRBENCH, harness, words
from pairbench.measure.callgrind import OutputDirectory
from pairbench.measure.commandline import parse_command
from pairbench.measure.counters import Counter, choose_counter, refuse_go
from pairbench.measure.executor import Executor, ExecutorInfo, OutputPolicy
from pairbench.measure.harnesses.adapters import adapter_for
from pairbench.measure.harnesses.base import DiscoveryError, FormatError, Program
from pairbench.measure.harnesses.detect import detect_program, detect_python, is_python_target
from pairbench.measure.harnesses.pytest_benchmark import program_for
from pairbench.measure.revisions import checkout, toplevel
from pairbench.measure.spawner import default_executor
from pairbench.measure.worker import Counting, WorkerSpec
from pairbench.model import ANCHOR_LABEL, BenchmarkKey, Command, Side
from pairbench.notes import Note
from pairbench.sessions.commands import distinct_names, path_names
from pairbench.sessions.driver import (
    FAILURE_ADVICE,
    LISTED_AT_MOST,
    Boundaries,
    SuiteDriver,
)
from pairbench.sessions.lanes import (
    WORKER_CLOCK,
    HarnessLane,
    HarnessSide,
    Lane,
    LaneFailed,
    WorkerLane,
    WorkerStart,
    job_cpus,
)
from pairbench.sessions.result import (
    Outcome,
    ProgressFactory,
    conclude,
    finished,
    journal_for,
    new_run,
)
from pairbench.settings import COUNT_METRIC_CHOICES, Settings
from pairbench.store import shards
from pairbench.worker.protocol import split_name

__all__ = ["FAILURE_ADVICE", "BenchSession", "is_python_target", "python_worker"]

ExecutorFactory = Callable[[OutputPolicy], Executor]


def python_worker(path: str, root: str, harness_name: str = PAIRBENCH) -> Command:
    """The worker of ``harness_name`` (``harness_registry.REGISTRY``: its ``python_worker``) serving the Python
    benchmarks in ``path``, importing first from ``root``: pairbench's own, or a pytest session that
    records each pytest-benchmark test's call and then serves the calls (``worker.pytest_benchmark``)."""
    module, words = harness(harness_name).python_worker
    return Command(f"{words} {path}", (sys.executable, "-m", module, "--root", root, path))


@frozen
class _Plan:
    """The sides (for the run), what runs each (worker specs or harness programs), and the notes of
    naming them."""

    sides: tuple[Side, ...]
    specs: tuple[WorkerSpec, ...] = ()
    programs: tuple[Program, ...] = ()
    notes: tuple[Note, ...] = ()


class BenchSession:
    """One ``bench``: sides from settings (checked), then :meth:`measure`."""

    def __init__(self, settings: Settings, environment: Mapping, *,
                 worker_in: Callable[[str], Command] | None = None,
                 executor_factory: ExecutorFactory | None = None, workers: WorkerStart | None = None,
                 boundary: Boundaries = None, anchored: bool = False):
        """``worker_in(tree)``, when given, is the worker serving the benchmarks of a working tree
        (the pytest plugin's); with ``--against`` it is started in a worktree of the revision and
        in the working tree, in place of the Python harness on ``settings.commands``.
        ``executor_factory`` makes the executor of each job's harness invocations, ``workers``
        starts each side's worker (and times it). ``boundary`` is what ``bisect`` decides the comparisons
        against (``analysis.criteria.Boundary``). ``anchored``: of three programs, the third is an
        anchor (``record``: a second baseline the candidate is compared with in the same rounds)."""
        self.settings = settings
        self.anchored = anchored
        self.boundary = boundary
        self._environment = dict(environment)
        self._worker_in = worker_in
        self._executor_factory = executor_factory
        self._workers = workers or WorkerStart()
        workers = settings.workers
        self.harness = PAIRBENCH if worker_in is not None else (workers.harness or _detected(settings.commands))
        self.sample_time_ns = workers.sample_time(self.harness)
        self.in_workers = harness(self.harness).worker
        python = harness(self.harness).python
        if worker_in is None and workers.against and not (python and all(is_python_target(t) for t in settings.commands)):
            raise UsageError("--against compares Python benchmark files with a git revision; for programs "
                             "give the two builds: pairbench bench ./old ./new")
        if worker_in is None and workers.against and len(settings.commands) != 1:
            raise UsageError("--against takes one FILE_OR_DIR: its benchmarks in the working tree are "
                             "compared with the same path at the revision")
        self.counter = self._counter(worker_in)
        for text in settings.commands if worker_in is None else ():
            if not is_python_target(text):
                parse_command(text, shell=None)  # the program must exist: CommandNotFound before anything runs
            elif not python:
                raise UsageError(f"{text!r} is Python code: --harness {self.harness} runs programs; use "
                                 "--harness pytest-benchmark or pairbench")

    def _counter(self, worker_in) -> Counter | None:
        """What counts a count metric's instructions (``measure.counters``), None for a time; refused
        for a harness's own programs, whose calibration runs inside the process that would be counted."""
        metric = self.settings.decision.metric
        if metric not in COUNT_METRIC_CHOICES:
            return None
        if not self.in_workers:
            raise UsageError(
                f"--metric {metric} counts the loop of pairbench's own workers (pairbench.h, Python "
                f"@pairbench.benchmark); a {words(self.harness)} program calibrates and repeats its loop inside the "
                "process that would be counted, so its count per iteration cannot be told from its own work: "
                f"count whole invocations with `pairbench compare --metric {metric} 'PROGRAM ARGS' ...`")
        counter = choose_counter(metric, commands=False)
        if counter.kind == "callgrind" and worker_in is None:
            for text in self.settings.commands:
                refuse_go(text)
        return counter

    # ------------------------------------------------------------------ planning

    @contextlib.contextmanager
    def _planned(self) -> Iterator[_Plan]:
        """The sides and what runs them; with --against, inside a worktree of the revision."""
        settings = self.settings
        if settings.workers.against:
            path = settings.commands[0]
            root = toplevel(path)
            if root is None:
                raise UsageError(f"--against needs {path!r} inside a git working tree")
            relative = os.path.relpath(os.path.abspath(path), root)
            with checkout(settings.workers.against, root) as tree:
                names = settings.names or (settings.workers.against, "working tree")
                yield self._plan([os.path.join(tree, relative), os.path.join(root, relative)], names,
                                 trees=(tree, root))
            return
        yield self._plan(list(settings.commands), settings.names or path_names(settings.commands))

    def _plan(self, texts: list[str], names, trees: tuple[str, ...] | None = None) -> _Plan:
        names, renamed = distinct_names(list(names))
        labels = ["baseline", "candidate", ANCHOR_LABEL][:len(texts)] if len(texts) == 2 or self.anchored \
            else [""] * len(texts)
        if not self.in_workers:
            programs = tuple(self._program(text) for text in texts)
            sides = tuple(Side(name, Command(program.text, program.argv), label)
                          for name, program, label in zip(names, programs, labels, strict=True))
            return _Plan(sides, programs=programs, notes=renamed)
        commands = [self._worker_command(text, tree) for text, tree in zip(texts, trees or [None] * len(texts),
                                                                            strict=True)]
        sides = tuple(Side(name, command, label) for name, command, label in zip(names, commands, labels, strict=True))
        output, timeout = OutputPolicy.parse(self.settings.sampling.output), self.settings.sampling.timeout_ns
        specs = tuple(WorkerSpec(command, tree, output, timeout, None)
                      for command, tree in zip(commands, trees or [None] * len(texts), strict=True))
        return _Plan(sides, specs=specs, notes=renamed)

    def _worker_command(self, text: str, tree: str | None) -> Command:
        if tree is not None and self._worker_in is not None:
            return self._worker_in(tree)
        if not is_python_target(text):
            return parse_command(text, shell=None)
        path = os.path.abspath(text)
        root = tree or toplevel(path) or (path if os.path.isdir(path) else os.path.dirname(path))
        return python_worker(path, root, self.harness)

    def _program(self, text: str) -> Program:
        if harness(self.harness).python:  # Python files run a process per sample: pytest's (pytest-benchmark's)
            return program_for(text)
        command = parse_command(text, shell=None)
        return Program(command.argv, None, (), text=text)

    # ------------------------------------------------------------------ measuring

    def measure(self, progress: ProgressFactory | None = None) -> Outcome:
        """List the sides' benchmarks, keep the suite's (or the shard's), measure each; analyse;
        write the result."""
        with self._planned() as plan, tempfile.TemporaryDirectory(prefix="pairbench-bench-") as scratch:
            origin = (self._workers.clock if self.harness == PAIRBENCH else WORKER_CLOCK).now_ns()
            lanes: list[Lane] = []
            try:
                listed, explicit = self._listed(plan, Path(scratch), lanes)
                return self._measure(plan, lanes, listed, explicit, Path(scratch), origin, progress)
            finally:
                for lane in lanes:
                    lane.close()

    def _listed(self, plan: _Plan, scratch: Path, lanes: list[Lane]) -> tuple[list[tuple[str, ...]], bool]:
        """Each side's benchmarks and whether every side takes an iteration count; for workers the
        first job's lane, which listed them, is kept in ``lanes``."""
        if self.in_workers:
            lanes.append(self._worker_lane(plan, 0))
            try:
                return lanes[0].listed(), True
            except LaneFailed as exc:
                raise CommandFailed(str(exc)) from None
        chosen = adapter_for(self.harness)
        listed, explicit = [], True
        for side, program in zip(plan.sides, plan.programs, strict=True):
            where = scratch / f"discover-{len(listed)}"
            where.mkdir()
            try:
                found = chosen.discover(program, where, self._listing_timeout())
            except (DiscoveryError, FormatError) as exc:
                raise CommandFailed(f"the {words(self.harness)} program of {side.name!r} "
                                    f"({program.text}) could not list its benchmarks: {exc}") from None
            _check_distinct(found.names, side.name)
            listed.append(found.names)
            explicit = explicit and found.explicit_iterations
        return listed, explicit

    def _listing_timeout(self) -> float | None:
        timeout = self.settings.sampling.timeout_ns
        return None if timeout is None else max(timeout / 1e9, 1.0)

    def _worker_lane(self, plan: _Plan, job: int) -> WorkerLane:
        cpu = job_cpus(self.settings.workers.jobs)[job]
        specs = [WorkerSpec(s.command, s.cwd, s.output, s.timeout_ns, cpu, self._counting(side.name))
                 for s, side in zip(plan.specs, plan.sides, strict=True)]
        return WorkerLane(specs, [side.name for side in plan.sides], seed=self.settings.sampling.seed,
                          start=self._workers)

    def _counting(self, side: str) -> Counting | None:
        """How one lane's worker of ``side`` counts (a private directory of its own for Callgrind's
        dumps, removed when the lane closes), None when nothing is counted."""
        if self.counter is None:
            return None
        if self.counter.kind == "hardware":
            return Counting("instructions")
        return Counting("callgrind", self.counter.program, OutputDirectory(side))

    def _lanes(self, plan: _Plan, lanes: list[Lane], explicit: bool, scratch: Path) -> None:
        """One lane per job (the executors made here, in the main thread: a spawner dies with the
        thread that made it). With several jobs each lane's samples run on the job's own CPU."""
        for job in range(len(lanes), self.settings.workers.jobs):
            if self.in_workers:
                lanes.append(self._worker_lane(plan, job))
                continue
            directory = scratch / f"job-{job}"
            directory.mkdir()
            output = directory / "output"
            executor = (self._executor_factory or default_executor)(OutputPolicy("file", str(output)))
            sides = [HarnessSide(side.name, program, directory / f"side-{s}")
                     for s, (side, program) in enumerate(zip(plan.sides, plan.programs, strict=True))]
            cpu = job_cpus(self.settings.workers.jobs)[job] if self.settings.workers.jobs > 1 else None
            lanes.append(HarnessLane(adapter_for(self.harness), sides, executor, output,
                                     explicit_iterations=explicit, cpu=cpu,
                                     repetitions=self.settings.workers.repetitions))

    def _measure(self, plan: _Plan, lanes: list[Lane], listed: list[tuple[str, ...]], explicit: bool,
                 scratch: Path, origin: int, progress: ProgressFactory | None) -> Outcome:
        names, found_notes = self._benchmarks(listed, plan.sides)
        all_keys = _keys(names)
        labels = [key.label for key in all_keys]
        mine = self._shard(labels)
        keep = [i for i, label in enumerate(labels) if label in mine]
        names, keys = [names[i] for i in keep], tuple(all_keys[i] for i in keep)
        skeleton = new_run("bench", self.settings, plan.sides, keys, self._environment,
                           notes=(*plan.notes, *found_notes),
                           suite=shards.suite_record(labels, self.settings.workers.shard, self.harness))
        journal = journal_for(self.settings.outputs.json_path, skeleton)
        self._lanes(plan, lanes, explicit, scratch)
        driver = SuiteDriver(self.settings, skeleton, names, lanes, journal=journal, progress=progress,
                             origin_ns=origin, sample_time_ns=self.sample_time_ns, boundary=self.boundary)
        interrupted = None
        try:
            held_signals.release()  # one held while pairbench started ends the run here, journal written
            collector.release()
            driver.all()
        except KeyboardInterrupt as exc:
            interrupted = exc
        failures = driver.failures
        error = CommandFailed(f"{len(failures)} of {len(names)} benchmarks failed: " + "; ".join(failures[:3])
                              + ("; ..." if len(failures) > 3 else "")) if failures else None
        skipped = driver.skipped_note()
        run = finished(skeleton, driver.samples, self._executor_info(lanes), error=error, interruption=interrupted,
                       stopped_because=_stopped_because(driver, interrupted),
                       notes=(*driver.notes, *([skipped] if skipped else []),
                              *([Note("counted-by", self.counter.to_note_data())] if self.counter else [])))
        return conclude(run, journal, error=error, interruption=interrupted)

    def _executor_info(self, lanes: list[Lane]) -> ExecutorInfo:
        """What measured: a harness's invocations ran on the jobs' executors; workers time themselves,
        and their max RSS is at least the size pairbench had when it started them."""
        if lanes and not isinstance(lanes[0], WorkerLane):
            return lanes[0].executor.info()
        return self._workers.info()

    def _benchmarks(self, listed: list[tuple[str, ...]], sides: tuple[Side, ...]
                    ) -> tuple[list[str], tuple[Note, ...]]:
        """The benchmarks every side lists (in the baseline's order) that the filter keeps, and notes
        naming those found on one side only."""
        others = [set(names) for names in listed[1:]]  # sets: a listing may hold 100,000 names
        common = [name for name in listed[0] if all(name in other for other in others)]
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
            raise NothingToMeasure(f"nothing to measure: {what} benchmarks")
        return kept, tuple(notes)

    def _shard(self, labels: list[str]) -> set[str]:
        """The labels this invocation measures: all, or its shard's."""
        shard = self.settings.workers.shard
        if shard is None:
            return set(labels)
        times = None
        if self.settings.workers.balance:
            from pairbench.store.resultfile import read_result

            times = shards.measuring_times(read_result(self.settings.workers.balance))
        mine = shards.select(labels, *shard, times)
        if not mine:
            raise UsageError(f"--shard {shard[0]}/{shard[1]} holds none of the {len(labels)} benchmarks: "
                             "use fewer shards than benchmarks")
        return set(mine)


def harness_of(commands, named: str | None) -> str:
    """The harness of a bench of ``commands``: the one ``--harness`` names, else the one detected
    (``UsageError`` when the sides' differ)."""
    return named or _detected(commands)


def _detected(commands) -> str:
    """The harness of the programs (``UsageError`` when the sides' differ)."""
    found = []
    for text in commands:
        if is_python_target(text):
            found.append(detect_python(text))
        else:
            found.append(detect_program(parse_command(text, shell=None).argv[0]))
    if len(set(found)) > 1:
        described = ", ".join(f"{text!r} looks like {harness}" for text, harness in zip(commands, found, strict=True))
        raise UsageError(f"the sides are programs of different harnesses ({described}); name the harness with "
                         f"--harness {'|'.join(HARNESS_CHOICES)}")
    return found[0]


def _check_distinct(names: tuple[str, ...], side: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise CommandFailed(f"the program of {side!r} lists the benchmark {name!r} twice; a filter could "
                                "not tell them apart")
        seen.add(name)


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


def _stopped_because(driver: SuiteDriver, interrupted: KeyboardInterrupt | None) -> str:
    if interrupted:
        return "interrupted"
    done = len({b for b, _ in driver.samples})
    return (f"measured {done} benchmark{'s' if done != 1 else ''}"
            + (f", {len(driver.failures)} failed" if driver.failures else "")
            + (f", {len(driver.skipped)} not measured (--suite-time spent)" if driver.skipped else ""))
