"""A sample's fixed cost, and the iteration count that keeps it from pulling a ratio towards 1.

A sample of N calls is timed by reading the clocks before and after its loop
(``worker.serve.timed_loop``). What a sample costs besides its calls (the
clock reads: on a KVM guest reading the thread's CPU clock is a system call of
about 1 us; the loop's set-up) is a constant c added to both sides of a
comparison, so a ratio a/b is measured as (aN + c)/(bN + c). With s = c/(bN),
the share of c in the baseline's sample, an effect e = a/b - 1 comes out as
e/(1 + s): pulled towards 0 by s/(1 + s) of itself, whatever its sign, and by
at most what the quicker side's sample gives (:func:`effect_pull`). In samples
of 10-40 us a true +252% came out as +89% to +235% (benchmarks/RESULTS.md).

c is measured once per comparison, before the first sample and outside any
sample's timing: the median of ``EMPTY_SAMPLES`` samples of no call at all,
timed by the Python worker's own loop (:func:`measure_fixed_cost`), the larger
of its wall and CPU time (:class:`FixedCost`). Then the iteration count is
raised, by powers of two, until c is at most ``FIXED_COST_SHARE`` (1%) of the
quicker side's sample, whatever --sample-time asked (:func:`floored_iterations`),
and a note says so: the effect is then pulled towards 0 by at most 1% of
itself. Google Benchmark (``--benchmark_min_time``, 0.5 s) and pyperf (values
of at least 100 ms) set floors too. ``benchmarks/short_samples.py`` measured
the choice here: a note beside a biased verdict would leave the user to rerun,
and the longer samples cost neither rounds nor time, and narrowed the interval
(at 10 us a +2% change was inconclusive after 10,800 rounds without the floor,
decided in 32 with it).

A cold start after a preemption is part of a sample's fixed cost as well, but
not of an empty sample's: it depends on the function and the load, so no
measurement taken once can bound it. Pure, but for :func:`measure_fixed_cost`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from pairbench.frozen import frozen
from pairbench.notes import Note, Subject
from pairbench.worker.protocol import MAX_ITERATIONS

FIXED_COST_SHARE = 0.01
"""A sample's fixed cost is at most this share of the quicker side's sample."""
EMPTY_SAMPLES = 31
"""Empty samples timed to measure the fixed cost (their median: a preempted one does not move it)."""


@frozen
class FixedCost:
    """A sample's fixed cost on each clock (nanoseconds): ``ns`` is the larger, what the floor keeps
    small (a verdict may be on either clock; the CPU clock's own read is the larger on a guest);
    ``wall_ns`` is what a probe's wall time holds of it."""

    wall_ns: float = 0.0
    cpu_ns: float = 0.0

    @property
    def ns(self) -> float:
        return max(self.wall_ns, self.cpu_ns)


def fixed_cost(empty: list[tuple[int, int]]) -> FixedCost:
    """The fixed cost of a sample from empty samples' (wall, CPU) nanoseconds: each clock's median."""
    if not empty:
        return FixedCost()
    return FixedCost(float(statistics.median(w for w, _ in empty)), float(statistics.median(c for _, c in empty)))


def measure_fixed_cost(samples: int = EMPTY_SAMPLES) -> FixedCost:
    """The fixed cost of a sample of the Python worker's timed loop on this machine, measured now
    (about 30 us): ``samples`` loops of no call, timed as the worker times a benchmark."""
    from pairbench.worker.serve import NO_ARGUMENT, timed_loop

    empty = []
    for _ in range(samples):
        reply = timed_loop(_nothing, NO_ARGUMENT, 0, collect=0)
        empty.append((reply.wall_ns, reply.user_ns + reply.sys_ns))
    return fixed_cost(empty)


def _nothing() -> None:
    """The call of an empty sample (never called: its loop runs no iteration)."""


def effect_pull(fixed_ns: float, quickest_sample_ns: float) -> float:
    """The share of itself by which a fixed cost ``fixed_ns`` per sample pulls an effect towards 0,
    when the baseline's sample lasts ``quickest_sample_ns``: s/(1 + s), s their ratio; given the
    quicker side's sample, the most it can be on either side."""
    if quickest_sample_ns <= 0:
        return 1.0 if fixed_ns > 0 else 0.0
    share = fixed_ns / quickest_sample_ns
    return share / (1 + share)


def floored_iterations(iterations: int, quickest_ns: float, fixed_ns: float,
                       share: float = FIXED_COST_SHARE) -> int:
    """The iteration count at least ``iterations``, doubled until a sample's fixed cost ``fixed_ns``
    is at most ``share`` of the quicker side's sample (``quickest_ns`` at ``iterations``), up to the
    protocol's most."""
    n = max(iterations, 1)
    per_call = quickest_ns / n
    while fixed_ns > share * per_call * n and n < MAX_ITERATIONS and per_call > 0:
        n *= 2
    return min(n, MAX_ITERATIONS)


@dataclass
class ProbeTimes:
    """The quickest time each side's probes of the iteration count gave at each count."""

    times: dict[tuple[int, int], float] = field(default_factory=dict)

    def keep(self, side: int, n: int, ns: float) -> None:
        key = (side, n)
        self.times[key] = min(ns, self.times.get(key, ns))

    def quickest_at(self, iterations: int, wall_fixed_ns: float = 0.0) -> float | None:
        """The quicker side's time of the calls of a sample of ``iterations``, from the largest count
        probed, less the fixed cost its wall time held (None: nothing probed). At most half of a
        probe is taken for that cost: a probe is a quarter of --sample-time or more, and a cost
        measured apart could exceed a quick probe, which would make the calls look free."""
        if not self.times:
            return None
        largest = max(n for _, n in self.times)
        probe = min(ns for (_, n), ns in self.times.items() if n == largest)
        return max(probe - wall_fixed_ns, probe / 2) * iterations / largest


@frozen
class SampleFloor:
    """What the floor did to a comparison's iteration count: ``chosen`` from --sample-time, raised to
    ``iterations`` (equal when not raised)."""

    chosen: int
    iterations: int
    fixed_ns: float
    quickest_ns: float  # the quicker side's sample at ``chosen`` iterations
    sample_time_ns: int

    @property
    def raised(self) -> bool:
        return self.iterations > self.chosen

    def note(self, subject: Subject | None = None) -> Note:
        """The ``sample-time-raised`` note: what was asked, what a sample is now, and the pull on the
        effect each has."""
        now_ns = self.quickest_ns * self.iterations / self.chosen
        data = {"sample_time_ns": self.sample_time_ns, "fixed_ns": self.fixed_ns, "chosen": self.chosen,
                "iterations": self.iterations, "quickest_ns": self.quickest_ns, "sample_ns": now_ns,
                "pull_asked": effect_pull(self.fixed_ns, self.quickest_ns),
                "pull": effect_pull(self.fixed_ns, now_ns), "share": FIXED_COST_SHARE}
        return Note("sample-time-raised", data, subject or Subject())


def floor_sample(chosen: int, probes: ProbeTimes, fixed: FixedCost, sample_time_ns: int) -> SampleFloor:
    """The floor on ``chosen`` iterations, from the quicker side's probes and the fixed cost."""
    quickest = probes.quickest_at(chosen, fixed.wall_ns)
    if quickest is None or fixed.ns <= 0:
        return SampleFloor(chosen, chosen, fixed.ns, quickest or 0.0, sample_time_ns)
    return SampleFloor(chosen, floored_iterations(chosen, quickest, fixed.ns), fixed.ns, quickest, sample_time_ns)
