"""Two Python functions measured in this process: ``pairbench.compare_functions`` and the pytest
plugin's fixture.

:func:`measure_functions` measures both callables in rounds of random order, one
sample of each per round (the same power-of-two iteration count on both, about
``sample_time`` a sample, but long enough that the fixed cost of timing a sample
is at most 1% of the quicker function's: ``measure.fixed_cost``; garbage
collection off inside the timed loop), and
stops on the same anytime-valid verdict rule as ``pairbench compare``. Both
functions live in one process, so there are no worker processes to start
afresh: what differs between them is their code, as in an in-process A/B
harness. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence

import numpy.random  # noqa: F401 - the sampler's round orders: loaded before the first call is timed

from pairbench.analysis import Analysis, analyse, criteria_of
from pairbench.analysis.stopping import StoppingRule
from pairbench.frozen import frozen
from pairbench.measure.executor import Execution, WallClock
from pairbench.measure.fixed_cost import (
    FixedCost,
    ProbeTimes,
    SampleFloor,
    floor_sample,
    measure_fixed_cost,
)
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import Row
from pairbench.measure.worker import choose_iterations, quickest_probe
from pairbench.model import BenchmarkKey, Command, Run, Side
from pairbench.notes import Note
from pairbench.parsers import parse_settings, settings_from_stored
from pairbench.sessions.result import finished, new_run
from pairbench.settings import USE_DEFAULTS, Settings
from pairbench.store.merge import join_runs
from pairbench.worker.serve import NO_ARGUMENT, timed_loop

IN_PROCESS_CLOCK = WallClock("in-process")


class InProcessCalls:
    """How the functions are timed and on which clock: the Python harness's timed loop
    (:func:`time_calls`) and the wall clock. It is the sampler's executor (``now_ns``, ``info``).
    :data:`CALLS` is the one used; a test puts a scripted one in its place
    (``tests/support/fakes.ScriptedCalls``: a time per call on a virtual clock)."""

    def now_ns(self) -> int:
        return IN_PROCESS_CLOCK.now_ns()

    def info(self):
        return IN_PROCESS_CLOCK.info()

    def time(self, function: Callable, iterations: int, args: tuple, kwargs: Mapping, start_ns: int) -> Execution:
        return time_calls(function, iterations, args, kwargs, start_ns)

    def fixed_cost(self) -> FixedCost:
        return measure_fixed_cost()


CALLS = InProcessCalls()


@frozen
class FunctionTarget:
    """One function, called ``iterations`` times per sample with fixed arguments, timed around the
    loop only, with garbage collection collected before and off during the loop."""

    function: Callable
    name: str
    iterations: int
    args: tuple = ()
    kwargs: Mapping = None

    def execute(self, executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """One sample; ``executor``: the sampler's, an :class:`InProcessCalls`."""
        return (Row(0, executor.time(self.function, self.iterations, self.args, self.kwargs or {},
                                     executor.now_ns()), self.iterations),)


def time_calls(function: Callable, iterations: int, args: tuple, kwargs: Mapping, start_ns: int) -> Execution:
    """Call ``function(*args, **kwargs)`` ``iterations`` times in the Python harness's timed loop;
    the loop's nanoseconds, CPU time and context switches as an Execution.

    Only the youngest generation is collected first (the collector is off inside the loop, so no
    sample pays for a collection the other did not cause): a full collection would cost
    milliseconds in a process holding numpy and scipy, longer than the sample."""
    call = function if not (args or kwargs) else functools.partial(function, *args, **kwargs)
    reply = timed_loop(call, NO_ARGUMENT, iterations, collect=0)
    return Execution(wall_ns=reply.wall_ns, user_ns=reply.user_ns, sys_ns=reply.sys_ns,
                     voluntary_cs=reply.voluntary_cs, involuntary_cs=reply.involuntary_cs, start_ns=start_ns)


def joined(runs: Sequence[Run], name: str) -> Run:
    """Runs of one function each, measured alone one after another (the pytest plugin's tests), as one
    run of one side ``name`` with a benchmark each, in the order measured (``store.merge.join_runs``):
    so one result document keeps them all."""
    if len(runs) == 1:
        return runs[0]
    run = join_runs(runs)
    side = dataclasses.replace(run.sides[0], name=name, command=Command(name, ()))
    settings = settings_from_stored(run.settings.kind, (name,), (name,), run.settings.stored())  # validated
    return run.replace(sides=(side,), settings=settings)


def measure_functions(baseline: Callable, candidate: Callable | None = None, args: tuple = (),
                      kwargs: Mapping | None = None, *, name: str | None = None, **options) -> tuple[Run, Analysis]:
    """The run and analysis behind ``pairbench.compare_functions``: ``options`` are ``bench``'s
    (``max_time``, ``alpha``, ``threshold``, ``sample_time``, ``seed``), defaulting to
    ``USE_DEFAULTS["functions"]`` and ``bench``'s. With no ``candidate``, one function measured
    alone (its summary, no comparison). ``name`` names the benchmark (default: the baseline's name).
    What the stopping rule computes with is imported with this module: the functions run in this
    process, where an import between samples would also evict their data from the caches."""
    kwargs = dict(kwargs or {})
    functions = (baseline,) if candidate is None else (baseline, candidate)
    names = _names(*functions)
    settings = parse_settings("bench", names, {**USE_DEFAULTS["functions"], **options, "names": names,
                                               "quiet": True})
    labels = ("baseline", "candidate") if candidate is not None else ("",)
    sides = tuple(Side(n, Command(n, ()), label) for n, label in zip(names, labels, strict=True))
    key = BenchmarkKey(name or getattr(baseline, "__name__", None) or "function")
    skeleton = new_run("bench", settings, sides, (key,), {})
    floor = sample_floor(functions, args, kwargs, settings.workers.sample_time_ns)
    targets = tuple(FunctionTarget(f, n, floor.iterations, args, kwargs)
                    for f, n in zip(functions, names, strict=True))
    raised = (floor.note(),) if floor.raised else ()
    run = _sample(skeleton, settings, targets, raised)
    return run, analyse(run)


def sample_floor(functions: Sequence[Callable], args: tuple, kwargs: Mapping, sample_time_ns: int) -> SampleFloor:
    """The iteration count of a sample: about ``sample_time_ns`` of the slowest function, raised until
    the fixed cost of timing a sample (measured first, outside any sample) is at most 1% of the
    quickest function's sample (``measure.fixed_cost``)."""
    fixed = CALLS.fixed_cost()
    probes = ProbeTimes()
    chosen = choose_iterations(functools.partial(slowest_probe, functions, args, kwargs, probes=probes),
                               sample_time_ns)
    return floor_sample(chosen, probes, fixed, sample_time_ns)


def slowest_probe(functions: Sequence[Callable], args: tuple, kwargs: Mapping, n: int, *,
                  probes: ProbeTimes | None = None) -> float:
    """The iteration count's probe of ``n`` calls: the slowest function's nanoseconds, each the
    ``quickest_probe`` of its samples (one another task preempted is taken again); each function's
    kept in ``probes``."""
    def take(function: Callable) -> tuple[float, bool]:
        execution = CALLS.time(function, n, args, kwargs, 0)
        return execution.wall_ns, execution.involuntary_cs > 0

    times = [quickest_probe(functools.partial(take, f)) for f in functions]
    if probes is not None:
        for side, ns in enumerate(times):
            probes.keep(side, n, ns)
    return max(times)


def _sample(skeleton: Run, settings: Settings, targets: tuple[FunctionTarget, ...], notes: Sequence[Note] = ()) -> Run:
    sampling = settings.sampling
    rule = StoppingRule(criteria_of(skeleton), 0, [1]) if len(targets) > 1 else None
    plan = SamplingPlan(targets=targets, stop=StopRule(None, sampling.min_runs, None, sampling.max_time_ns),
                        warmup_rounds=sampling.warmup, seed=sampling.seed)
    calls = CALLS
    sampler = Sampler(calls, plan, sinks=[rule] if rule else [], decide=rule.decide if rule else None)
    sampler.run()
    return finished(skeleton, sampler.series(), calls.info(), stopped_because=sampler.stopped_because,
                    notes=(*notes, *sampler.notes))


def _names(*functions: Callable) -> tuple[str, ...]:
    names = [getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f) for f in functions]
    if len(names) == 2 and names[0] == names[1]:
        names = [f"{names[0]} (baseline)", f"{names[1]} (candidate)"]
    return tuple(names)
