"""A benchmark's history on one machine: its points over commits, and the steps (change points) in it.

A point is a commit: the results stored of it (several when it was measured
more than once) give one value, the median of their medians. Its interval is
not only what one run says: each result was measured alone, at its own time,
so two records of one commit, or neighbouring commits of the same code, differ
by the machine's noise between runs, which on a loaded machine is many times a
run's own interval (the range of the results' 95% intervals, kept as
``run_low`` / ``run_high``). A point's interval is its value times
exp(+-1.96 s), s the larger of the history's noise between commits (the SD of
the log values about the fitted steps and drifts) and the SD of its own
results' medians when it has several, widened to take in the runs' intervals
(``BenchmarkHistory`` with fewer than 6 points has no noise estimate: the runs'
intervals alone). Results of a dirty tree are a point of their own (the commit
plus changes), and so is each result of no known commit.

Change points are found on the logarithms of the points' values (values not all
positive, such as a count that is 0 at some commits, over their typical size) by
``analysis.change_points.detect``: steps, drifts and their noise. The size of a step is the
Hodges-Lehmann shift of the log values after it against those before it (each
up to the neighbouring step, a drifting segment's values carried along its
line to the step), with its 95% interval, shown as a percentage change; the
size of a drift is its line's rise over its commits, with an interval from the
slope's standard error under the noise's long-run SD. A step that one step does not explain
decisively better than a ramp (``change_points.detect``, step 5c) is a change that may be
**spread** over the points of its span (a step or a drift): ``confirm`` and ``bisect`` are offered
over the span, and a bisect there may answer that the change is spread. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from pairbench import stats
from pairbench.analysis.change_points import SPAN_LEVEL, Detection, detect
from pairbench.errors import StatisticsError
from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey

STEP_CONFIDENCE = 0.95
Z_95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
STATUSES = ("confirmed", "rejected", "unconfirmed")
LARGEST_LOG = math.log(np.finfo(np.float64).max)  # a ratio beyond e^709.78 is no float


@frozen
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
    run_low: float | None = None  # the range of its results' own 95% intervals (one run's noise)
    run_high: float | None = None
    spread: float | None = None  # the SD of its results' log medians, with 2 or more positive ones


@frozen
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
    bisect: Bisect | None = None  # how to find its commit, when several lie in its span
    span: Span | None = None  # where it may lie; None when that is not known (beside a drift)
    spread: bool = False  # a change that may be spread over its span's commits (a step or a drift), not one step

    @property
    def between(self) -> tuple[str | None, str | None]:
        """The commits the step lies between: its span's (when both are known), else its own two
        points'."""
        if self.span and self.span.before and self.span.after:
            return self.span.before, self.span.after
        return self.before, self.after


@frozen
class Span:
    """Where a step may lie: its first point after the step is one of ``points[first .. last]``,
    with posterior probability ``level``; ``before`` is the commit of the point before ``first``,
    ``after`` that of ``last``. Of a change that may be spread (``Step.spread``), the points it may
    be spread over: its likeliest ramp's, widened to take in the span of one step's place."""

    first: int
    last: int
    before: str | None
    after: str | None
    level: float | None = SPAN_LEVEL  # None for a spread change's commits: no posterior level


@frozen
class Bisect:
    """What settles a step whose two points have several commits between them:
    ``pairbench bisect good bad -k filter``, over the ``commits`` commits after ``good`` up to
    ``bad``. ``filter`` matches the benchmark's name as its program lists it, and nothing else."""

    good: str
    bad: str
    filter: str
    commits: int


@frozen
class Drift:
    """A slow change of one benchmark: its values follow a line over ``points[start:end]`` (the
    commits ``first`` .. ``last``) instead of a level. ``change`` is the line's rise over them in
    percent, with its interval at ``confidence``."""

    benchmark: BenchmarkKey
    start: int
    end: int
    first: str | None
    last: str | None
    change: float
    low: float
    high: float
    confidence: float = STEP_CONFIDENCE


@frozen
class Found:
    """A commit a paired comparison found changed against the commit just before it in the history:
    the commit ``pairbench bisect`` names (its last comparison), or a ``confirm`` of one commit, whether
    or not the history's own segmentation sees a step there. ``index`` is the commit's point;
    ``change`` the comparison's effect in percent with its interval, ``verdict`` slower or faster."""

    index: int
    before: str
    after: str
    verdict: str
    change: float | None
    low: float | None
    high: float | None


@frozen
class BenchmarkHistory:
    """One benchmark's points, steps and drifts on one machine."""

    benchmark: BenchmarkKey
    points: tuple[Point, ...]
    steps: tuple[Step, ...]
    noise: float | None  # the SD of the log values' noise (about a relative SD), None with < 6 points
    autocorrelation: float | None = None  # the noise's lag-1 autocorrelation (AR(1)), None likewise
    drifts: tuple[Drift, ...] = ()
    fit: tuple[float, ...] = ()  # each point's fitted level (its segment's median, or its drift's line)
    metric: str = "wall"  # what every point's median is of (``analysis.points``): never two in one history
    found: tuple[Found, ...] = ()  # commits a paired comparison found changed against their predecessor

    def values(self) -> np.ndarray:
        return np.array([p.median for p in self.points], dtype=np.float64)

    def typical(self) -> float | None:
        """The size its values are shown in units of (``typical_size``: no mean of two values
        that overflows), None without points."""
        values = self.values()
        return typical_size(values) if values.size else None

    def levels(self) -> list[tuple[int, int, float, float]]:
        """Each non-empty segment between steps as (first point, point after the last, its fitted
        level at the first and at the last point): the fit's line where the analysis fitted one (a
        drift slopes), else the median of the segment's values at both ends."""
        bounds = [0, *(s.index for s in self.steps), len(self.points)]
        fit = np.asarray(self.fit, dtype=np.float64) if self.fit else None
        values = self.values()
        return [(start, end, *((float(fit[start]), float(fit[end - 1])) if fit is not None
                               else (float(np.median(values[start:end])),) * 2))
                for start, end in zip(bounds[:-1], bounds[1:], strict=True) if end > start]


@frozen
class ChangePoint:
    """A step in one or more benchmarks between the same two commits."""

    before: str | None
    after: str | None
    steps: tuple[Step, ...]

    @property
    def benchmarks(self) -> tuple[BenchmarkKey, ...]:
        return tuple(step.benchmark for step in self.steps)


@frozen
class History:
    """Every benchmark asked for, on one machine, and their change points grouped by commits."""

    machine: str
    histories: tuple[BenchmarkHistory, ...]
    change_points: tuple[ChangePoint, ...]
    paired: tuple = ()  # analysis.links.LinkHistory of each benchmark recorded in links


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
    low, high = (min(lows) if lows else None), (max(highs) if highs else None)
    spread = statistics.stdev(math.log(m) for m in medians) if len(medians) > 1 and min(medians) > 0 else None
    return Point(series.commit[first], series.commit_time[first], branch,
                 bool(series.dirty[first]), series.started_at[latest], len(rows), statistics.median(medians),
                 low, high, tuple(series.result_uid[i] for i in rows), low, high, spread)


def benchmark_history(benchmark: BenchmarkKey, points: Sequence[Point],
                      confirmations: Iterable = (), metric: str = "wall") -> BenchmarkHistory:
    """The steps and drifts of one benchmark's points (all on ``metric``), each step with what
    ``confirm`` found of it, and the commits a paired comparison found changed (``found_commits``)."""
    confirmations = list(confirmations)
    values = np.array([p.median for p in points], dtype=np.float64)
    logs = np.log(values) if values.size and np.all(values > 0) else None
    reference = typical_size(values)
    scale = logs if logs is not None else values / reference
    found = detect(scale)
    segments = _Segments(scale, found, logs is not None, reference)
    steps = tuple(_with_confirmation(segments.step(benchmark, points, k), points, confirmations)
                  for k in range(len(found.breaks)))
    drifts = tuple(segments.drift(benchmark, points, k) for k, line in enumerate(found.segmentation.sloped)
                   if line)
    noise = found.noise if logs is not None else None
    shown = tuple(with_noise(p, noise.sd) for p in points) if noise else tuple(points)
    return BenchmarkHistory(benchmark, shown, steps, noise.sd if noise else None,
                            noise.phi if noise else None, drifts, segments.fit(), metric,
                            found_commits(points, confirmations))


def found_commits(points: Sequence[Point], confirmations: Iterable) -> tuple[Found, ...]:
    """The commits (``Found``) that a confirmation of the point just before them found slower or
    faster, the latest confirmation of each pair (an older one of the same two commits is overtaken)."""
    position = {}
    for i, p in enumerate(points):
        if p.commit is not None and not p.dirty:
            position.setdefault(p.commit, i)
    latest = {}
    for c in confirmations:
        before, after = position.get(c.before), position.get(c.after)
        if before is not None and after == before + 1:
            latest[(c.before, c.after)] = c
    return tuple(Found(position[c.after], c.before, c.after, c.verdict, c.effect, c.effect_low, c.effect_high)
                 for c in sorted(latest.values(), key=lambda c: position[c.after])
                 if c.status == "confirmed" and c.verdict in ("slower", "faster"))


def with_noise(point: Point, between: float) -> Point:
    """``point`` with its interval widened by the noise between runs (module docstring): its value
    times exp(+-1.96 s), s the larger of ``between`` (the history's noise SD between commits, log
    units) and the spread of its own results, taking in its runs' own intervals."""
    from dataclasses import replace

    s = max(between, point.spread or 0.0)
    if not point.median > 0 or not math.isfinite(s) or abs(math.log(point.median)) + Z_95 * s >= LARGEST_LOG:
        return point  # no ratio, or bounds beyond the float range: the runs' own intervals alone
    low, high = point.median * math.exp(-Z_95 * s), point.median * math.exp(Z_95 * s)
    runs_low = point.run_low if point.run_low is not None else point.low
    runs_high = point.run_high if point.run_high is not None else point.high
    return replace(point, low=min(low, runs_low) if runs_low is not None else low,
                   high=max(high, runs_high) if runs_high is not None else high,
                   run_low=runs_low, run_high=runs_high)


def typical_size(values: np.ndarray) -> float:
    """What a history of values that are not all positive is measured against: the (lower) median
    of their magnitudes, or the largest when most are 0; 1 when all are. On that scale a change of 0.01 is 1%,
    as on the log scale, so the penalty and the evidence (whose flat priors are not unit-free) mean
    the same whatever the unit, and values near the float range do not overflow."""
    magnitudes = np.sort(np.abs(values))
    lower_median = float(magnitudes[(values.size - 1) // 2]) if values.size else 0.0  # no mean of two: no overflow
    for size in (lower_median, float(np.max(magnitudes, initial=0.0))):
        if size > 0.0:
            return size
    return 1.0


class _Segments:
    """The sizes of a detection's steps and drifts on the series ``scale``: log values, or, when
    some values are not positive, the values over ``reference`` (:func:`typical_size`), whose
    changes are percentages of it."""

    def __init__(self, scale: np.ndarray, found: Detection, logs: bool, reference: float):
        self.scale, self.found, self.logs, self.reference = scale, found, logs, reference
        self.edges = [0, *found.breaks, scale.size]

    def step(self, benchmark: BenchmarkKey, points, k: int) -> Step:
        """The k-th step: the values after it against those before (module docstring)."""
        start, index, end = self.edges[k], self.edges[k + 1], self.edges[k + 2]
        sloped = self.found.segmentation.sloped
        before = self._carried(start, index, sloped[k], index - 0.5)
        after = self._carried(index, end, sloped[k + 1], index - 0.5)
        change, low, high = _size(after, before, self.logs)
        spread = not self.found.one_step(k)
        places = self.found.spread[k] if spread else self.found.spans[k] if self.found.spans else None
        span = Span(places[0], places[1], points[places[0] - 1].commit, points[places[1]].commit,
                    None if spread else SPAN_LEVEL) if places else None
        return Step(benchmark, index, points[index - 1].commit, points[index].commit, change, low, high,
                    STEP_CONFIDENCE, span=span, spread=spread)

    def _carried(self, a: int, b: int, line: bool, to: float) -> np.ndarray:
        """``scale[a:b]``, each value carried along the segment's line to position ``to`` when sloped."""
        values = self.scale[a:b]
        if not line:
            return values
        return values + stats.slope(values) * (to - np.arange(a, b))

    def drift(self, benchmark: BenchmarkKey, points, k: int) -> Drift:
        """The k-th segment (a line) as a drift: its rise over its commits, with an interval."""
        a, b = self.edges[k], self.edges[k + 1]
        u = np.arange(b - a, dtype=np.float64) - (b - a - 1) / 2.0
        rise = stats.slope(self.scale[a:b]) * (b - a - 1)
        half = Z_95 * self.found.noise.long_run_sd / math.sqrt(float(np.dot(u, u))) * (b - a - 1)
        change, low, high = (_percent(v, self.logs) for v in (rise, rise - half, rise + half))
        return Drift(benchmark, a, b, points[a].commit, points[b - 1].commit, change, low, high)

    def fit(self) -> tuple[float, ...]:
        """Each point's level: its segment's median, or the segment's line (in the values' units)."""
        fit = stats.median_fitted(self.scale, self.found.segmentation)
        return tuple((np.exp(fit) if self.logs else fit * self.reference).tolist())


def _size(after, before, logs: bool) -> tuple[float, float | None, float | None]:
    """The Hodges-Lehmann shift of after against before, in percent, with its interval (None when
    too few values give none)."""
    try:
        hl = stats.hodges_lehmann(after, before, STEP_CONFIDENCE)
    except StatisticsError:
        shift = float(np.median(after) - np.median(before))
        return _percent(shift, logs), None, None
    return _percent(hl.estimate, logs), _percent(hl.low, logs), _percent(hl.high, logs)


def _percent(x: float | None, logs: bool) -> float | None:
    """A change on the history's scale in percent (None for none); beyond the float range, inf."""
    if x is None or not math.isfinite(x):
        return None
    if not logs:
        return 100.0 * x
    return 100.0 * math.expm1(x) if x < LARGEST_LOG else math.inf


def _with_confirmation(step: Step, points: Sequence[Point], confirmations: list) -> Step:
    """The step with the status of the latest confirmation of its own commits (``_spans``)."""
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
    """Whether ``confirmation`` compared this step's own commits: its two points, or two commits
    inside the span where the step may lie that hold it between them (a bisect of the step's range
    keeps such comparisons). A comparison of a wider range says nothing of this step: any change
    elsewhere in that range, or noise, could have made its verdict."""
    if (confirmation.before, confirmation.after) in ((step.before, step.after), step.between):
        return True
    before, after = position.get(confirmation.before), position.get(confirmation.after)
    if before is None or after is None or not before < step.index <= after:
        return False
    first, last = (step.span.first - 1, step.span.last) if step.span else (step.index - 1, step.index)
    return first <= before and after <= last


def _status(confirmation, step: Step) -> str:
    if confirmation.status == "rejected":
        return "rejected"
    if confirmation.status != "confirmed":
        return "unconfirmed"
    slower = step.change > 0  # a larger value per operation
    return "confirmed" if (confirmation.verdict == "slower") == slower else "rejected"


def with_bisects(history: History, commits_between: Mapping[tuple[str, str], int]) -> History:
    """``history`` with a :class:`Bisect` on each step that is not rejected and whose span has more
    than one commit: ``commits_between[step.between]``, the commits after its first commit up to
    its second (1: the step is at the second). On a change that may be spread over its commits
    (``Step.spread``) the bisect is over those commits, and the renderers say that it may answer
    that the change is spread (a drift has no one commit) rather than name one."""
    from dataclasses import replace

    def bisect(step: Step) -> Bisect | None:
        good, bad = step.between
        count = commits_between.get((good, bad)) if good and bad else None
        if count is None or count < 2 or step.status == "rejected":
            return None
        return Bisect(good, bad, bisect_filter(step.benchmark), count)

    histories = tuple(replace(h, steps=tuple(replace(s, bisect=bisect(s)) for s in h.steps))
                      for h in history.histories)
    return replace(history, histories=histories, change_points=group_change_points(histories))


def bisect_filter(key: BenchmarkKey) -> str:
    """The ``-k`` regex of one benchmark: ^name$ escaped, its parameters (``name[a=1,b=2]``) in any
    order, since a program may list them in another order than the sorted one of its key (up to
    four of them; more are taken in that order)."""
    if not key.params or len(key.params) > 4:
        return f"^{re.escape(key.label)}$"
    orders = sorted(",".join(f"{k}={v}" for k, v in order) for order in itertools.permutations(key.params))
    inside = orders[0] if len(orders) == 1 else "(?:" + "|".join(re.escape(o) for o in orders) + ")"
    if len(orders) == 1:
        inside = re.escape(inside)
    return f"^{re.escape(key.name)}\\[{inside}\\]$"


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
