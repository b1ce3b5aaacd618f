"""A benchmark's history on one machine: its points over commits, and the steps (change points) in it.

A point is a commit: the results stored of it (several when it was measured
more than once) give one value, the median of their medians, shown with the
range of their medians' 95% intervals. Results of a dirty tree are a point of
their own (the commit plus changes), and so is each result of no known commit.

Change points are found on the logarithms of the points' values (a step is a
ratio, whatever the benchmark's speed), by PELT with the squared-error cost
(``stats.changepoint``), as follows:

1. the noise's SD is estimated from consecutive differences (robust to steps);
2. the series is divided by it, and each value's distance from the running
   median of five is clipped to ``CLIP`` SDs, so one wild result cannot make
   two steps (a step moves the running median with it and is kept);
3. PELT with a penalty of ``PENALTY_FACTOR`` x ln(n) per step, each segment at
   least ``MIN_SEGMENT`` commits long.

The penalty factor and the minimum segment were chosen by simulation on
series built from real result noise (``benchmarks/changepoints.py``: false
alarms per 1,000 commits and detection delay at 1%, 3% and 10% steps, in
``benchmarks/RESULTS.md``). The size of a step is the Hodges-Lehmann shift of
the log values after it against those before it (each up to the next step),
with its 95% interval, shown as a percentage change. Pure: no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pairbench import stats
from pairbench.errors import StatisticsError
from pairbench.model import BenchmarkKey

PENALTY_FACTOR = 4.0
MIN_SEGMENT = 3
CLIP = 3.0
RUNNING_MEDIAN = 5
STEP_CONFIDENCE = 0.95
STATUSES = ("confirmed", "rejected", "unconfirmed")


@dataclass(frozen=True)
class Point:
    """One commit of a history (or one result of no known commit, or a dirty tree's results)."""

    commit: str | None
    commit_time: str | None
    branch: str | None
    dirty: bool
    started_at: str  # of its latest result
    results: int
    median: float
    low: float | None
    high: float | None
    result_uids: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """A change point of one benchmark: between ``points[index - 1]`` and ``points[index]``.

    ``change`` is the size in percent (after / before - 1) with its interval at
    ``confidence``; ``status`` says what ``pairbench confirm`` found of it:
    confirmed, rejected, or unconfirmed (never confirmed, or inconclusive).
    """

    benchmark: BenchmarkKey
    index: int
    before: str | None  # the last commit before the step
    after: str | None  # the first commit after it
    change: float
    low: float | None
    high: float | None
    confidence: float
    status: str = "unconfirmed"
    verdict: str | None = None  # the confirmation's verdict, when there is one


@dataclass(frozen=True)
class BenchmarkHistory:
    """One benchmark's points and steps on one machine."""

    benchmark: BenchmarkKey
    points: tuple[Point, ...]
    steps: tuple[Step, ...]
    noise: float | None  # the SD of the log values' noise (about a relative SD), None with < 3 points

    def values(self) -> np.ndarray:
        return np.array([p.median for p in self.points], dtype=np.float64)


@dataclass(frozen=True)
class ChangePoint:
    """A step in one or more benchmarks between the same two commits."""

    before: str | None
    after: str | None
    steps: tuple[Step, ...]

    @property
    def benchmarks(self) -> tuple[BenchmarkKey, ...]:
        return tuple(step.benchmark for step in self.steps)


@dataclass(frozen=True)
class History:
    """Every benchmark asked for, on one machine, and their change points grouped by commits."""

    machine: str
    histories: tuple[BenchmarkHistory, ...]
    change_points: tuple[ChangePoint, ...]


def points_of(series) -> tuple[Point, ...]:
    """The points of a store's ``Series`` (see the module docstring), in its order; results
    without a successful sample are left out. Every clean result of a commit joins that commit's
    point, wherever the store's order puts it: a commit measured again later (by ``confirm``, or
    after commits of the same committer time) is placed by its first result."""
    groups: list[list[int]] = []
    of_commit: dict[str, list[int]] = {}
    for i in range(len(series)):
        if not math.isfinite(series.median[i]):
            continue
        commit = series.commit[i]
        if commit is not None and not series.dirty[i]:
            if commit in of_commit:
                of_commit[commit].append(i)
                continue
            of_commit[commit] = [i]
            groups.append(of_commit[commit])
        else:
            groups.append([i])
    return tuple(_point(series, rows) for rows in groups)


def _point(series, rows: list[int]) -> Point:
    """The point of the results ``rows`` (plain Python: a history has one per commit, 10,000 of them)."""
    medians = [float(series.median[i]) for i in rows]
    lows = [v for i in rows if math.isfinite(v := float(series.median_low[i]))]
    highs = [v for i in rows if math.isfinite(v := float(series.median_high[i]))]
    first, latest = rows[0], rows[-1]
    branch = next((series.branch[i] for i in reversed(rows) if series.branch[i] is not None), None)
    return Point(series.commit[first], series.commit_time[first], branch,
                 bool(series.dirty[first]), series.started_at[latest], len(rows), statistics.median(medians),
                 min(lows) if lows else None, max(highs) if highs else None,
                 tuple(series.result_uid[i] for i in rows))


def benchmark_history(benchmark: BenchmarkKey, points: Sequence[Point],
                      confirmations: Iterable = ()) -> BenchmarkHistory:
    """The steps of one benchmark's points, each with what ``confirm`` found of it."""
    values = np.array([p.median for p in points], dtype=np.float64)
    logs = np.log(values) if values.size and np.all(values > 0) else None
    breaks, noise = detect(logs if logs is not None else values)
    steps = tuple(_step(benchmark, points, values, logs, breaks, k) for k in range(len(breaks)))
    steps = tuple(_with_confirmation(step, points, list(confirmations)) for step in steps)
    return BenchmarkHistory(benchmark, tuple(points), steps, noise if logs is not None else None)


def detect(y: np.ndarray, *, penalty_factor: float = PENALTY_FACTOR, min_segment: int = MIN_SEGMENT
           ) -> tuple[tuple[int, ...], float | None]:
    """The breakpoints of ``y`` (module docstring) and the noise's SD; none below 2 segments' length.
    ``penalty_factor`` and ``min_segment`` are for the simulation that chose their defaults."""
    if y.size < 2 * min_segment:
        return (), None
    sd = stats.noise_scale(y)
    if sd <= 0:  # most values equal: the SD of all differences, else nothing moves
        sd = float(np.std(np.diff(y))) / math.sqrt(2.0)
        if sd <= 0:
            return (), 0.0
    z = clipped((y - np.median(y)) / sd)
    return stats.pelt(z, penalty_factor * math.log(y.size), min_segment), sd


def clipped(z: np.ndarray) -> np.ndarray:
    """``z`` with each value's distance from the running median of ``RUNNING_MEDIAN`` (shorter at
    the ends) limited to ``CLIP``."""
    half = RUNNING_MEDIAN // 2
    padded = np.concatenate((np.full(half, z[0]), z, np.full(half, z[-1])))
    windows = np.lib.stride_tricks.sliding_window_view(padded, RUNNING_MEDIAN)
    level = np.median(windows, axis=1)
    return level + np.clip(z - level, -CLIP, CLIP)


def _step(benchmark: BenchmarkKey, points, values, logs, breaks, k: int) -> Step:
    start = breaks[k - 1] if k else 0
    index = breaks[k]
    end = breaks[k + 1] if k + 1 < len(breaks) else len(values)
    scale = logs if logs is not None else values
    before, after = scale[start:index], scale[index:end]
    change, low, high = _size(after, before, logs is not None, float(np.median(values[start:index])))
    return Step(benchmark, index, points[index - 1].commit, points[index].commit, change, low, high,
                STEP_CONFIDENCE)


def _size(after, before, logs: bool, reference: float) -> tuple[float, float | None, float | None]:
    """The Hodges-Lehmann shift of after against before, in percent, with its interval (None when
    too few values give none)."""
    def percent(x):
        if x is None or not math.isfinite(x):
            return None
        return 100.0 * math.expm1(x) if logs else 100.0 * x / reference

    try:
        hl = stats.hodges_lehmann(after, before, STEP_CONFIDENCE)
    except StatisticsError:
        shift = float(np.median(after) - np.median(before))
        return percent(shift), None, None
    return percent(hl.estimate), percent(hl.low), percent(hl.high)


def _with_confirmation(step: Step, points: Sequence[Point], confirmations: list) -> Step:
    """The step with the status of the latest confirmation that spans it (module docstring)."""
    from dataclasses import replace

    position = {}
    for i, p in enumerate(points):
        if p.commit is not None and not p.dirty:
            position.setdefault(p.commit, i)
    spanning = [c for c in confirmations if _spans(c, step, position)]
    if not spanning:
        return step
    latest = spanning[-1]
    return replace(step, status=_status(latest, step), verdict=latest.verdict)


def _spans(confirmation, step: Step, position: Mapping[str, int]) -> bool:
    if confirmation.before == step.before and confirmation.after == step.after:
        return True
    before, after = position.get(confirmation.before), position.get(confirmation.after)
    return before is not None and after is not None and before < step.index <= after


def _status(confirmation, step: Step) -> str:
    if confirmation.status == "rejected":
        return "rejected"
    if confirmation.status != "confirmed":
        return "unconfirmed"
    slower = step.change > 0  # a larger value per operation
    return "confirmed" if (confirmation.verdict == "slower") == slower else "rejected"


def group_change_points(histories: Iterable[BenchmarkHistory]) -> tuple[ChangePoint, ...]:
    """The steps of every benchmark grouped by their commits (before, after), newest last."""
    groups: dict[tuple, list[Step]] = {}
    order: dict[tuple, tuple] = {}
    for history in histories:
        for step in history.steps:
            key = (step.before, step.after)
            groups.setdefault(key, []).append(step)
            when = history.points[step.index]
            order.setdefault(key, (when.commit_time or when.started_at, when.started_at))
    return tuple(ChangePoint(before, after, tuple(steps))
                 for (before, after), steps in sorted(groups.items(), key=lambda item: order[item[0]]))
