"""The scripted executor and workers: exact, scripted executions on a virtual clock, for tests.

The seams they fill are ``main``'s (``executor_factory``, ``workers``): test doubles live with the
tests, beside the fixed machine (``cli_runner.FIXED_ENVIRONMENT``).

No process runs and no real time passes: each :meth:`FakeExecutor.run` looks up
what the command "costs" in a script, advances a virtual clock by that much
(plus an optional fixed gap), and returns the :class:`Execution`. Sampling
plans, stopping rules, reports and the CLI can then be tested exactly, the way
hyperfine's ``MockExecutor`` turns ``sleep 0.1`` into exactly 0.1 s.
:class:`FakeWorkers` does the same for ``bench``'s workers.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pairbench.command import STATUS_TIMEOUT, Command
from pairbench.errors import CommandNotFound, MeasurementError
from pairbench.measure.executor import Execution, ExecutorInfo

if TYPE_CHECKING:  # loaded where used: importing the fakes loads nothing a command does not (test_startup)
    from pairbench.measure.fixed_cost import FixedCost
    from pairbench.worker.protocol import ErrorReply

_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_EXECUTION_FIELDS = frozenset(f.name for f in dataclasses.fields(Execution)) - {"start_ns"}


class ScriptError(LookupError):
    """The fake's script has no entry for a command, ran out, or holds something unusable.

    Deliberately not a ``PairbenchError``: a broken test script must surface as
    a test failure, not be handled like a measurement problem.
    """


@dataclass(frozen=True)
class FakeCall:
    """One entry of :attr:`FakeExecutor.calls`: what ran, when, and what it returned."""

    index: int
    text: str
    command: Command
    start_ns: int
    timeout_ns: int | None
    execution: Execution


class FakeExecutor:
    """An :class:`~pairbench.measure.executor.Executor` that replays a script on a virtual clock.

    What a command costs is looked up, in this order:

    1. ``missing``: texts of commands that "are not installed"; running one
       raises ``CommandNotFound`` like the real executor.
    2. ``script``, either a mapping from command text to an *entry*, or one
       callable ``(command, call_index, clock_ns) -> item`` for every command
       (``call_index`` counts all calls from 0; ``clock_ns`` is the start time).
       A mapping entry is one *item* (repeated forever), a sequence or iterator
       of items (used in order; running out raises :class:`ScriptError`), or
       such a callable.
    3. ``sleep SECONDS`` commands (``sleep 0.25``, ``/bin/sleep 1``, with
       ``--shell`` too) take exactly that long.
    4. ``default``: an item for every other command; without one, an
       unscripted command raises :class:`ScriptError`.

    An *item* is a number (a duration in ``unit``, seconds by default), an
    ``Execution`` (its ``start_ns`` is replaced), a dict of ``Execution`` fields
    (``{"duration": 0.2, "status": 3, "max_rss_kib": 2048}``; ``duration`` in
    ``unit`` or ``wall_ns``), or an exception (instance or class), which is
    raised: ``KeyboardInterrupt`` simulates Ctrl-C during that sample. A status
    is an exit code, ``-signal`` or ``STATUS_TIMEOUT``; a run with
    ``timeout_ns`` whose duration exceeds it returns ``STATUS_TIMEOUT`` with
    ``wall_ns == timeout_ns``, as the real executor would have killed it.

    The clock starts at ``start_ns`` and advances by each execution's wall
    time plus ``gap_ns`` (harness overhead between samples); :meth:`advance`
    moves it by hand. Every completed run is logged in :attr:`calls`.
    ``rss_floor_kib`` is the RSS floor :meth:`info` reports (none by default).

    >>> from pairbench.command import Command
    >>> a, b = Command("a", ("a",)), Command("b", ("b",))
    >>> ex = FakeExecutor({"a": [0.1, 0.2], "b": {"duration": 0.3, "status": 2}}, gap_ns=5)
    >>> [ex.run(c).wall_ns for c in (a, b, a)]
    [100000000, 300000000, 200000000]
    >>> ex.run(b).status, ex.now_ns(), ex.texts
    (2, 900000020, ['a', 'b', 'a', 'b'])
    >>> FakeExecutor().run(Command("sleep 0.25", ("/bin/sleep", "0.25"))).wall_ns
    250000000

    Drift, noise or autocorrelation come from a callable (seed your own RNG):

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> drift = FakeExecutor(lambda cmd, i, clock: 0.1 * (1 + 1e-3 * i) + rng.normal(0, 1e-4))
    >>> drift.run(a).wall_ns > 0
    True
    """

    def __init__(
        self,
        script: Mapping | Callable | None = None,
        *,
        unit: str = "s",
        gap_ns: int = 0,
        start_ns: int = 0,
        default=None,
        missing: Iterable[str] = (),
        rss_floor_kib: int | None = None,
    ):
        if unit not in _UNITS:
            raise ValueError(f"`unit` must be one of {sorted(_UNITS)}, got {unit!r}")
        if not isinstance(gap_ns, int) or gap_ns < 0:
            raise ValueError(f"`gap_ns` must be an integer >= 0, got {gap_ns!r}")
        if script is not None and not isinstance(script, Mapping) and not callable(script):
            raise ValueError(f"`script` must be a mapping, a callable or None, got {script!r}")
        self.unit = unit
        self.gap_ns = gap_ns
        self._default = _entry(default) if default is not None else None
        self.missing = frozenset(missing)
        self.rss_floor_kib = rss_floor_kib
        self.calls: list[FakeCall] = []
        self.closed = False
        self._clock = int(start_ns)
        self._index = 0
        self._callable = script if callable(script) and not isinstance(script, Mapping) else None
        self._entries = (
            {k: _entry(v) for k, v in script.items()} if isinstance(script, Mapping) else {}
        )

    # -- protocol -----------------------------------------------------------------

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Return the scripted :class:`Execution` of ``command`` and advance the clock by it."""
        if self.closed:
            raise MeasurementError("this executor is closed; create a new FakeExecutor")
        if command.text in self.missing:
            program = command.argv[0] if command.argv else command.text
            raise CommandNotFound(f"cannot run {program!r} for command {command.text!r}: "
                                  "no such file (was it deleted?)")
        start = self._clock
        execution = self._to_execution(self._item_for(command, start), command, start)
        if timeout_ns is not None and (
            execution.wall_ns > timeout_ns or execution.status == STATUS_TIMEOUT
        ):
            execution = dataclasses.replace(
                execution, wall_ns=min(execution.wall_ns, timeout_ns), status=STATUS_TIMEOUT
            )
        self.calls.append(
            FakeCall(self._index, command.text, command, start, timeout_ns, execution)
        )
        self._index += 1
        self._clock = start + execution.wall_ns + self.gap_ns
        return execution

    def now_ns(self) -> int:
        """The virtual clock, in nanoseconds."""
        return self._clock

    def info(self) -> ExecutorInfo:
        return ExecutorInfo(type(self).__name__, self.rss_floor_kib)

    def close(self) -> None:
        """Mark the executor closed (``closed`` becomes True); idempotent."""
        self.closed = True

    def __enter__(self) -> FakeExecutor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- for tests ----------------------------------------------------------------

    def advance(self, ns: int) -> None:
        """Move the virtual clock forward by ``ns`` nanoseconds (time spent outside commands)."""
        if not isinstance(ns, int) or ns < 0:
            raise ValueError(f"`ns` must be an integer >= 0, got {ns!r}")
        self._clock += ns

    @property
    def texts(self) -> list[str]:
        """The texts of the commands run so far, in execution order."""
        return [call.text for call in self.calls]

    # -- lookup -------------------------------------------------------------------

    def _item_for(self, command: Command, clock_ns: int):
        if self._callable is not None:
            return self._callable(command, self._index, clock_ns)
        entry = self._entries.get(command.text)
        if entry is not None:
            return self._next_from(entry, command, clock_ns)
        seconds = _sleep_seconds(command)
        if seconds is not None:
            return {"wall_ns": round(seconds * 1e9)}
        if self._default is not None:
            return self._next_from(self._default, command, clock_ns)
        raise ScriptError(
            f"FakeExecutor has no script for command {command.text!r}; add it to the script "
            f"(scripted: {sorted(self._entries)}), pass default=, or use 'sleep SECONDS'"
        )

    def _next_from(self, entry, command: Command, clock_ns: int):
        kind, value = entry
        if kind == "item":
            return value
        if kind == "callable":
            return value(command, self._index, clock_ns)
        try:
            return next(value)
        except StopIteration:
            done = sum(1 for call in self.calls if call.text == command.text)
            raise ScriptError(
                f"the script for command {command.text!r} ran out after {done} execution(s)"
            ) from None

    def _to_execution(self, item, command: Command, start: int) -> Execution:
        if isinstance(item, BaseException) or (
            isinstance(item, type) and issubclass(item, BaseException)
        ):
            raise item
        if isinstance(item, Execution):
            return dataclasses.replace(item, start_ns=start)
        if isinstance(item, Mapping):
            return self._from_mapping(item, command, start)
        return Execution(wall_ns=self._duration_ns(item, command), start_ns=start)

    def _from_mapping(self, item: Mapping, command: Command, start: int) -> Execution:
        fields = dict(item)
        unknown = set(fields) - _EXECUTION_FIELDS - {"duration"}
        if unknown:
            raise ScriptError(
                f"script item for {command.text!r} has unknown key(s) {sorted(unknown)}; "
                f"use 'duration' or {sorted(_EXECUTION_FIELDS)}"
            )
        if ("duration" in fields) == ("wall_ns" in fields):
            raise ScriptError(
                f"script item for {command.text!r} needs exactly one of 'duration' and 'wall_ns', "
                f"got {item!r}"
            )
        if "duration" in fields:
            fields["wall_ns"] = self._duration_ns(fields.pop("duration"), command)
        else:
            fields["wall_ns"] = self._duration_ns(fields["wall_ns"], command, scale=1)
        return Execution(start_ns=start, **fields)

    def _duration_ns(self, value, command: Command, scale: int | None = None) -> int:
        if scale is None:
            scale = _UNITS[self.unit]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ScriptError(
                f"script item for {command.text!r} must be a duration, an Execution, a dict "
                f"or an exception, got {value!r}"
            )
        if isinstance(value, numbers.Integral):
            ns = int(value) * scale
        elif math.isfinite(value):
            ns = round(float(value) * scale)
        else:
            ns = -1
        if ns < 0:
            raise ScriptError(
                f"script duration for {command.text!r} must be finite and >= 0, got {value!r}"
            )
        return ns


class FakeWorkers:
    """Scripted ``bench`` workers on a virtual clock: what ``main(workers=...)`` takes in tests, so
    ``bench`` output has golden files like ``run``'s (no process runs, no real time passes).

    ``programs`` maps a side's worker command text to its benchmarks, each a mapping of
    ``per_iteration_ns`` (required), ``fixed_ns`` (a cost every sample pays, default 0),
    ``kept_bytes`` (resident memory kept per iteration, default 0) and ``error`` (the message of a
    benchmark that fails every sample). A sample of ``n`` iterations lasts
    ``fixed_ns + n * per_iteration_ns`` times a seeded lognormal noise of ``noise`` (relative);
    the clock advances by it plus ``gap_ns`` (the round trip). Every worker started shares the clock,
    and the noise's stream, so a run is reproducible from ``seed``.
    """

    def __init__(self, programs: Mapping[str, Mapping[str, Mapping]], *, seed: int = 0, noise: float = 0.01,
                 gap_ns: int = 20_000, start_ns: int = 0, sample_cost_ns: float = 0.0):
        """``sample_cost_ns``: what the lane is told a sample's fixed cost is (its clock reads)."""
        self.programs = {text: dict(benchmarks) for text, benchmarks in programs.items()}
        self.sample_cost_ns = sample_cost_ns
        self.clock = FakeExecutor(start_ns=start_ns)
        self.noise, self.gap_ns = noise, gap_ns
        self.started: list[str] = []  # the sides whose worker was started, in order (each block's too)
        self._seed, self._noise_stream = seed, None

    @property
    def _rng(self):
        """The noise's stream, made at the first sample: numpy loads in the command, as it would
        without the fakes (``tests/cli/test_startup.py`` counts the threads beside the samples)."""
        if self._noise_stream is None:
            self._noise_stream = _generator(self._seed)
        return self._noise_stream

    def __call__(self, spec, side: str) -> FakeWorker:
        if spec.command.text not in self.programs:
            raise ScriptError(f"FakeWorkers has no program {spec.command.text!r} (scripted: {sorted(self.programs)})")
        return FakeWorker(self, spec, side)

    def info(self) -> ExecutorInfo:
        return ExecutorInfo("worker")

    def fixed_cost(self) -> FixedCost:
        from pairbench.measure.fixed_cost import FixedCost

        return FixedCost(self.sample_cost_ns, self.sample_cost_ns)

    def take(self, benchmark: Mapping, iterations: int) -> int:
        """The nanoseconds of one scripted sample; the clock moves past it."""
        ideal = benchmark.get("fixed_ns", 0) + iterations * benchmark["per_iteration_ns"]
        ns = max(1, round(ideal * float(_exp(self._rng.normal(0.0, self.noise)))))
        self.clock.advance(ns + self.gap_ns)
        return ns


class ProgramWorkers(FakeWorkers):
    """:class:`FakeWorkers` whose programs are scripted by ``script_of(command text)`` when first
    started: for workers whose paths are made while the test runs (a built revision's, which the test
    maps to its commit)."""

    def __init__(self, script_of: Callable[[str], Mapping[str, Mapping]], **options):
        super().__init__({}, **options)
        self.script_of = script_of

    def __call__(self, spec, side: str) -> FakeWorker:
        self.programs.setdefault(spec.command.text, dict(self.script_of(spec.command.text)))
        return super().__call__(spec, side)


class FakeWorker:
    """One side's scripted worker (see :class:`FakeWorkers`): the interface of ``measure.worker.Worker``."""

    def __init__(self, workers: FakeWorkers, spec, side: str):
        self.workers, self.spec, self.side = workers, spec, side
        self.benchmark_script = workers.programs[spec.command.text]
        self.fresh, self.block, self.running = False, 0, False
        self.kept_bytes = 0  # what this process's samples kept, for its resident memory

    def start(self) -> None:
        self.spawn()

    def spawn(self) -> None:
        if not self.running:
            self.running, self.fresh, self.kept_bytes = True, True, 0
            self.workers.started.append(self.side)

    def greeted(self) -> None:
        self.spawn()

    def benchmarks(self) -> tuple[str, ...]:
        self.start()
        return tuple(self.benchmark_script)

    def sample(self, name: str, iterations: int) -> Execution | ErrorReply:
        self.start()
        benchmark = self.benchmark_script[name]
        if benchmark.get("error"):
            from pairbench.worker.protocol import ErrorReply

            return ErrorReply(benchmark["error"])
        ns = self.workers.take(benchmark, iterations)
        self.kept_bytes += iterations * benchmark.get("kept_bytes", 0)
        return Execution(wall_ns=ns, start_ns=0, user_ns=ns, max_rss_kib=2048)

    def resident_kib(self) -> int | None:
        return 4096 + self.kept_bytes // 1024 if self.running else None

    def stop(self) -> None:
        self.running = False

    def retire(self) -> None:
        self.running = False


def _entry(value):
    """Classify a mapping entry: one item (repeated), an iterator of items, or a callable."""
    if isinstance(value, (Mapping, Execution, numbers.Real, BaseException)):
        return ("item", value)
    if isinstance(value, type) and issubclass(value, BaseException):
        return ("item", value)
    if callable(value):
        return ("callable", value)
    if isinstance(value, (str, bytes)):
        raise ScriptError(f"a script entry must be a duration, not text: {value!r}")
    if isinstance(value, Iterator):
        return ("iterator", value)
    if isinstance(value, Iterable):
        return ("iterator", iter(list(value)))
    raise ScriptError(f"unusable script entry {value!r}")


def _sleep_seconds(command: Command) -> float | None:
    """The seconds of a ``sleep N`` / ``sleep Ns`` command (hyperfine's mock convention), else None."""
    words = command.text.split() if command.text else list(command.argv)
    if len(words) != 2 or os.path.basename(words[0]) != "sleep":
        return None
    text = words[1].removesuffix("s")
    try:
        seconds = float(text)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class ScriptedCalls:
    """``sessions.functions.CALLS`` scripted, for ``compare_functions`` and the pytest plugin's
    fixture: a call of ``function`` lasts ``per_call(function, args)`` seconds (all of it CPU time)
    times a seeded lognormal noise of ``noise``, on a virtual clock that the sampler reads too; timing
    a sample costs nothing. No function is called."""

    def __init__(self, per_call: Callable[[Callable, tuple], float], *, noise: float = 0.01, seed: int = 0):
        self.per_call, self.noise = per_call, noise
        self.clock = FakeExecutor()
        self._rng = _generator(seed)

    def now_ns(self) -> int:
        return self.clock.now_ns()

    def info(self) -> ExecutorInfo:
        return ExecutorInfo("in-process")

    def time(self, function: Callable, iterations: int, args: tuple, kwargs, start_ns: int) -> Execution:
        ns = max(1, round(iterations * self.per_call(function, args) * 1e9
                          * float(_exp(self._rng.normal(0.0, self.noise)))))
        self.clock.advance(ns)
        return Execution(wall_ns=ns, user_ns=ns, start_ns=start_ns)

    def fixed_cost(self) -> FixedCost:
        from pairbench.measure.fixed_cost import FixedCost

        return FixedCost(0.0, 0.0)


def _generator(seed: int):
    """numpy's seeded generator, numpy imported here: importing the fakes loads nothing a command does
    not (``tests/cli/test_startup.py`` counts what a command loads before its first sample)."""
    import numpy as np

    return np.random.default_rng(seed)


def _exp(x):
    import numpy as np

    return np.exp(x)
