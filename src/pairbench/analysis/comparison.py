"""Paired comparisons: a candidate side against the baseline, round by round, with a verdict.

The two sides' values are paired by round (``analysis.pairing``). The effect
is the median per-round log-ratio ln(candidate / baseline) of one
operation's value, as a percent change, with one of two intervals:

* fixed rounds (``--runs``): the exact sign-test interval (``stats.paired_effect``);
* adaptive stopping: the anytime-valid confidence sequence, intersected over
  the rounds (``stats.RunningSequence``): valid although we looked after every
  round, it only narrows, so a verdict once reached stays, and it excludes 0
  exactly when the anytime p-value is below alpha. Its ends may come from earlier
  rounds: a median of all rounds outside it is shown as its nearer end, with a
  ``median-outside-running-interval`` note that gives the median
  (``RunningSequence.current``), so the estimate always lies in its interval.

With several candidates the family-wise error is held at alpha: intervals are
built at level alpha/m and p-values are Bonferroni-adjusted (m p), so a
p-value below alpha always goes with an interval that excludes 0. The verdict
itself comes from ``verdict.decide``. The stopping rule (``analysis.stopping``)
decides through :func:`verdict_of` too, so what stopped a run is what the
analysis reports. The numbers shown beside the verdict are
``analysis.secondary``'s. Pure.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

from pairbench import stats
from pairbench.analysis.blocks import block_medians, blocks_differ, rounds_by_block
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.pairing import (
    Pairing,
    failed_rounds,
    paired_blocks,
    paired_values,
    usable_rounds,
)
from pairbench.analysis.records import Comparison, ComparisonFigure, Effect
from pairbench.analysis.rules import CHOICE_ROUNDS, CpuUse, chosen_metric, cpu_use
from pairbench.analysis.secondary import figure_of, secondary_statistics
from pairbench.analysis.summary import refusal_note
from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.model import REPETITION_METRIC, Samples
from pairbench.notes import Note
from pairbench.stats._order import smallest_n_for_median_interval
from pairbench.stats.paired import log_ratios as _log_ratios
from pairbench.stats.paired import require_spread
from pairbench.stats.sequential import RunningSequence, first_bounded_n, upper_ranks
from pairbench.verdict import Verdict, decide, moved, refuse

MAX_ROUNDS_PLANNED = 10_000_000  # beyond this, "rounds still needed" is not given
ANYTIME_METHOD = "anytime-valid confidence sequence for the median, intersected over rounds"
FIXED_METHOD = "sign-test interval for the median"


# --------------------------------------------------------------------------- the metric


def metric_of(pairing: Pairing, criteria: Criteria) -> tuple[str, CpuUse | None]:
    """What a comparison decides on, and (for ``--metric auto``) the ``cpu_use`` it was chosen by: the
    criteria's metric for a time, else its value (bytes, allocations: there is no CPU time of a
    count); auto chooses by ``rules.chosen_metric`` from the first ``CHOICE_ROUNDS`` rounds both sides
    measured, as the stopping rule does."""
    if pairing.benchmark.unit != "ns":
        return "wall", None
    if criteria.metric != "auto":
        return criteria.metric, None
    b, c, b_index, c_index = usable_rounds(pairing.base, pairing.cand)
    use = cpu_use_of((b, b_index[:CHOICE_ROUNDS]), (c, c_index[:CHOICE_ROUNDS]))
    return chosen_metric(use), use


# --------------------------------------------------------------------------- effect and verdict


def effect_of(log_ratios: np.ndarray, criteria: Criteria) -> tuple[Effect, tuple[Note, ...]]:
    """The effect interval at the criteria's level and its notes; raises StatisticsError when none
    can be given. ``log_ratios`` are in round order (the adaptive interval intersects over rounds)."""
    level = criteria.level
    if criteria.anytime:
        running = RunningSequence(level, criteria.t_opt, tuned_for=criteria.level_alpha)
        running.extend(log_ratios)
        effect, notes = anytime_effect(running)
    else:
        fixed = stats.paired_effect(np.ones_like(log_ratios), np.exp(log_ratios), 1.0 - level)
        effect, notes = (Effect(fixed.estimate_pct, fixed.low_pct, fixed.high_pct, fixed.achieved_confidence,
                                FIXED_METHOD, fixed.p_value, "sign test", fixed.n), fixed.warnings)
    if criteria.holm_level is not None:
        effect = dataclasses.replace(effect, method=f"{effect.method}, Holm step at alpha {level:.3g}")
    return effect, notes


def anytime_effect(running: RunningSequence) -> tuple[Effect, tuple[Note, ...]]:
    """The effect of a running confidence sequence, once it is bounded and the pairs vary.

    An empty running interval is said by the verdict (``verdict.moved``), so its
    note is not repeated.
    """
    needed = first_bounded_n(running.alpha, running.t_opt)
    if running.n < needed:
        raise NotEnoughData(
            f"too few rounds for an anytime-valid interval at alpha {running.alpha:.3g}: "
            f"need at least {needed}, got {running.n}",
            needed=needed, got=running.n, purpose="anytime-interval", alpha=running.alpha)
    require_spread(running.values)
    cs = running.current()
    notes = tuple(w for w in cs.warnings if w.code != "running-interval-empty")
    return (Effect(cs.estimate_pct, cs.low_pct, cs.high_pct, 1.0 - running.alpha, ANYTIME_METHOD,
                   running.pvalue, "anytime-valid (confidence sequence)", running.n,
                   moved=running.low > running.high), notes)


def verdict_of(effect: Callable[[], tuple[Effect, tuple[Note, ...]]], criteria: Criteria,
               ) -> tuple[Verdict, Effect | None, tuple[Note, ...]]:
    """The verdict, the effect it rests on and the effect's notes; refused when no interval exists."""
    try:
        found, notes = effect()
    except StatisticsError as exc:
        return refuse(refusal_note(exc)), None, ()
    if found.moved:
        return moved(), found, notes
    return decide(found.low, found.high, criteria.threshold), found, notes


@dataclass(frozen=True)
class RoundsPlan:
    """How many further rounds should decide an inconclusive comparison; when none is given
    (``needed`` None) for a reason the user should hear, the ``note`` that says it."""

    needed: int | None
    note: Note | None = None


def plan_rounds(log_ratios: np.ndarray, criteria: Criteria, *, nearest: bool = False) -> RoundsPlan:
    """Further rounds after which the verdict's interval should be decisive, or why none is given.

    An interval no wider than the threshold always decides: if it holds 0 it
    lies within +-threshold. So this is the smallest total n at which the
    interval the criteria use (the sequence's ranks when adaptive, the sign
    test's otherwise) spans at most ln(1 + threshold) in the distribution of
    the log-ratios seen so far, and never less than the n at which that
    interval first exists. That distribution is the sample's quantile function
    (linear between order statistics), except between two values that each
    occur more than once: ties at a timer's resolution have nothing between
    them, so the quantile steps there instead of sliding.

    Not given (None) with fewer than 3 pairs or no spread (the refusal says
    why), and with a note when more rounds cannot be expected to decide: the
    median falls between two tied values further apart than the threshold (the
    interval then never narrows below that step), or it would take more than
    ``MAX_ROUNDS_PLANNED`` rounds. Cost: O(m log m) for m pairs, then
    O(log MAX_ROUNDS_PLANNED) evaluations of the interval's ranks, each closed
    form (fixed rounds) or a bisection (adaptive): nothing steps through
    binomial CDFs.

    ``nearest``: the smallest n at which that interval, placed where the values
    so far put it, gets a verdict by the verdict rules (``verdict.decide``: it
    excludes zero, or lies within +-threshold, here +-ln(1 + threshold) so that
    the estimate is the same with the sides swapped), whichever comes first. That
    is never more than the width's n and up to four times fewer near zero or near
    +-threshold (an interval around 0 decides once about 2 x threshold wide): what
    a suite's spending asks, to tell a benchmark near a verdict from one far from it.
    """
    r = np.sort(np.asarray(log_ratios, dtype=np.float64))
    if r.size < 3 or r[0] == r[-1]:
        return RoundsPlan(None)
    level, target = criteria.level_alpha, math.log1p(criteria.threshold / 100.0)
    quantile = _TiedQuantile(r)
    gap = quantile.gap_at_median()
    if gap is not None and gap[1] - gap[0] > target:
        return RoundsPlan(None, Note("no-rounds-estimate", {
            "reason": "ties", "values_pct": [float(100.0 * np.expm1(v)) for v in gap],
            "threshold": criteria.threshold}))
    floor = (first_bounded_n(level, criteria.t_opt) if criteria.anytime
             else smallest_n_for_median_interval(1.0 - level))

    def decisive(n: int) -> bool:
        low_rank, high_rank = _interval_ranks(n, level, criteria.t_opt if criteria.anytime else None)
        if low_rank < 1:
            return False
        low, high = quantile((low_rank - 0.5) / n), quantile((high_rank - 0.5) / n)
        if nearest:  # it excludes 0, or lies within +-target: the verdict rules, symmetric in log-ratios
            return low > 0.0 or high < 0.0 or (-target <= low and high <= target)
        return high - low <= target

    if not decisive(MAX_ROUNDS_PLANNED):
        return RoundsPlan(None, Note("no-rounds-estimate", {"reason": "too-many", "limit": MAX_ROUNDS_PLANNED}))
    lo, hi = floor - 1, MAX_ROUNDS_PLANNED  # decisive(hi); bisection on the (nearly monotone) width
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mid >= floor and decisive(mid) else (mid, hi)
    return RoundsPlan(max(hi - int(r.size), 1))


class _TiedQuantile:
    """The quantile function of sorted values, linear between order statistics (numpy's default),
    except between two distinct values that are each tied: there it steps where the empirical
    distribution does, at the fraction of the values at or below the lower one."""

    def __init__(self, ordered: np.ndarray):
        self.x = ordered
        values, counts = np.unique(ordered, return_counts=True)
        self.tied = np.repeat(counts > 1, counts)  # per order statistic: its value occurs twice or more

    def __call__(self, p: float) -> float:
        x, last = self.x, self.x.size - 1
        h = min(max(p, 0.0), 1.0) * last
        i = min(int(h), last - 1)
        low, high = float(x[i]), float(x[i + 1])
        if low != high and self.tied[i] and self.tied[i + 1]:  # i is low's last copy
            return low if p < (i + 1) / x.size else high
        return low + (h - i) * (high - low)

    def gap_at_median(self) -> tuple[float, float] | None:
        """The two tied values the median falls between (half the values at or below the first),
        or None: where more rounds converge on one value."""
        x, m = self.x, self.x.size
        if m % 2:
            return None
        i = m // 2 - 1
        if x[i] != x[i + 1] and self.tied[i] and self.tied[i + 1]:
            return float(x[i]), float(x[i + 1])
        return None


@functools.lru_cache(maxsize=65536)  # pure; the comparisons of one run share their level and most n
def _interval_ranks(n: int, level: float, t_opt: int | None) -> tuple[int, int]:
    """1-based ranks (low, high) of the interval at n pairs, for planning; low 0 while unbounded.

    Adaptive (``t_opt``, the sequence's tuning): its ranks (``stats.sequential.upper_ranks``, a
    bisection). Fixed (``t_opt`` None): the
    sign test's, k the largest with P(Binom(n, 1/2) <= k - 1) <= level/2 (Conover, *Practical
    Nonparametric Statistics*, 3rd ed., section 3.2), found by bisection on k: O(log n) CDFs at
    any level, where stepping from a quantile could walk millions of CDFs once 1 - level rounds to 1.
    """
    if t_opt is not None:
        high = int(upper_ranks(np.array([n]), level, t_opt, "beta-binomial")[0])
        return n + 1 - high, high
    lo, hi = 0, (n + 1) // 2 + 1  # the condition holds at lo (k = 0: unbounded), fails at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _sps.binom.cdf(mid - 1, n, 0.5) <= level / 2.0 else (lo, mid)
    return lo, n + 1 - lo


# --------------------------------------------------------------------------- one comparison


def compare(pairing: Pairing, criteria: Criteria) -> tuple[Comparison, ComparisonFigure]:
    """One candidate against the baseline: verdict, effect, secondary statistics, notes, chart data."""
    metric, chosen_by = metric_of(pairing, criteria)
    base, cand = paired_values(pairing.base, pairing.cand, metric)
    r = _log_ratios(base, cand) if base.size else np.zeros(0)
    blocks = paired_blocks(pairing.base, pairing.cand, metric)
    grouped = None if blocks is None else rounds_by_block(r, blocks)
    decided_on = r if grouped is None else block_medians(grouped)
    never = never_succeeded(pairing) or _no_cpu_time(pairing, metric)
    if never is not None:  # nothing to compare, and more rounds of the same would not help
        verdict, effect, notes, plan = refuse(never), None, (), RoundsPlan(None)
    else:
        verdict, effect, notes = verdict_of(lambda: effect_of(decided_on, criteria), criteria)
        plan = (plan_rounds(r, criteria) if verdict.verdict == "inconclusive" and not (effect and effect.moved)
                and blocks is None else RoundsPlan(None))
        notes = [*notes, *metric_notes(pairing, metric, effect, criteria, chosen_by)]
    notes = [*notes, *([plan.note] if plan.note else [])]
    if blocks is not None and r.size:
        notes.append(Note("process-blocks", {"blocks": int(decided_on.size), "rounds": int(r.size)}))
        differ = blocks_differ(grouped, decided_on)
        notes.extend([differ] if differ is not None else [])
    repeated = repetitions_note(pairing.base)
    if repeated is not None and r.size:
        notes.append(repeated)
    secondary = secondary_statistics(base, cand, r, 1.0 - criteria.level_alpha, notes)
    lost = failed_rounds(pairing.base, pairing.cand)
    if lost:
        notes.append(Note("failed-rounds", {"count": lost}))
    figure = figure_of(base, cand, r, 1.0 - criteria.level_alpha, notes)
    comparison = Comparison(
        benchmark=pairing.benchmark, baseline=pairing.baseline, candidate=pairing.candidate,
        self_check=pairing.self_check, verdict=verdict, effect=effect,
        pvalue=effect.pvalue if effect else None, pvalue_unadjusted=effect.pvalue if effect else None,
        adjustment="none", alpha=criteria.alpha, threshold=criteria.threshold, rounds=int(r.size),
        rounds_needed=plan.needed, secondary=secondary, notes=tuple(_merged(notes)), metric=metric,
    )
    return comparison, figure


def repetitions_note(samples: Samples) -> Note | None:
    """The note that says what a round of invocations that repeated their benchmark was: how many
    repetitions each process ran, and how many of them were warmups (None: they did not repeat)."""
    if REPETITION_METRIC not in samples.metrics:
        return None
    ok = samples.select(samples["status"] == 0)
    numbers = ok[REPETITION_METRIC]
    repeated = numbers > 0  # the pilot's and validation's invocations ran once: no number
    if not repeated.any():
        return None
    warm = numbers[repeated & (ok["warmup"] == 1)]
    return Note("repeated-invocations", {"repetitions": int(numbers.max()),
                                         "warmups": int(warm.max()) if warm.size else 0})


# --------------------------------------------------------------------------- wall and CPU time


def _no_cpu_time(pairing: Pairing, metric: str) -> Note | None:
    """The refusal of a CPU-time verdict on samples that recorded no CPU time (an imported result)."""
    if metric != "cpu":
        return None
    missing = [name for name, s in ((pairing.candidate, pairing.cand), (pairing.baseline, pairing.base))
               if not s.measured().has_cpu_time()]
    return Note("no-cpu-time", {"sides": missing}) if missing else None


def metric_notes(pairing: Pairing, metric: str, effect: Effect | None, criteria: Criteria,
                 chosen_by: CpuUse | None = None) -> list[Note]:
    """What the other time says: a note when its interval (the sign test's, at the comparison's level)
    lies apart from the verdict's, and, for a verdict on CPU time, when the benchmark is not CPU-bound
    (``rules.cpu_use``), with which time to trust; with ``--metric auto``, which time it chose and why."""
    if pairing.benchmark.unit != "ns":
        return []
    b, c, b_index, c_index = usable_rounds(pairing.base, pairing.cand)
    use = cpu_use_of((b, b_index), (c, c_index))
    how = ({"kind": use.kind, "off_cpu_share": use.off_cpu_share, "cpu_over_wall": use.cpu_over_wall}
           if use is not None else {"kind": "unknown"})
    notes = []
    if criteria.metric == "auto" and chosen_by is not None:  # (no CPU time recorded: wall, said by nothing)
        notes.append(Note("metric-chosen", {"metric": metric, "rounds": min(CHOICE_ROUNDS, int(b_index.size)),
                                            "kind": chosen_by.kind, "off_cpu_share": chosen_by.off_cpu_share,
                                            "cpu_over_wall": chosen_by.cpu_over_wall}))
    if metric == "cpu" and how["kind"] in ("off-cpu", "threads", "waits"):
        notes.append(Note("cpu-time-partial", how))
    other = "wall" if metric == "cpu" else "cpu"
    if effect is None or (other == "cpu" and _no_cpu_time(pairing, "cpu")):
        return notes
    base, cand = paired_values(pairing.base, pairing.cand, other)
    try:
        seen = stats.paired_effect(base, cand, 1.0 - criteria.level_alpha)
    except StatisticsError:
        return notes
    if seen.low_pct > effect.high or seen.high_pct < effect.low:
        notes.append(Note("metrics-disagree", {
            **how, "metric": metric, "other": other, "estimate": effect.estimate, "low": effect.low,
            "high": effect.high, "other_estimate": seen.estimate_pct, "other_low": seen.low_pct,
            "other_high": seen.high_pct}))
    return notes


def cpu_use_of(*chosen: tuple[Samples, np.ndarray]) -> CpuUse | None:
    """``rules.cpu_use`` of the samples at the indices given, of every series given, together."""
    def column(name: str) -> np.ndarray:
        return np.concatenate([s[name][index] for s, index in chosen])

    return cpu_use(column("wall_ns"), column("user_ns") + column("sys_ns"), column("involuntary_cs"),
                   column("voluntary_cs"))


def never_succeeded(pairing: Pairing) -> Note | None:
    """The note of a side with no successful measured sample (the candidate first), or None.

    Under --ignore-failure a command may fail in every round; its comparison then has no
    verdict at all, which ``--fail-on`` must not pass (``cli.measuring``). ``status`` is the
    failures' most common status (None: the side never ran, e.g. Ctrl-C in the first round).
    """
    for role, name, samples in (("candidate", pairing.candidate, pairing.cand),
                                ("baseline", pairing.baseline, pairing.base)):
        if len(samples.measured()):
            continue
        statuses = samples.failed()["status"]
        values, counts = np.unique(statuses, return_counts=True)
        status = int(values[np.argmax(counts)]) if statuses.size else None
        return Note("no-successful-samples", {"role": role, "side": name, "failed": int(statuses.size),
                                              "status": status})
    return None


def bonferroni(comparisons: list[Comparison], family: int) -> list[Comparison]:
    """p-values times the family size (at most 1), for every candidate but the self-check.

    The intervals are built at alpha/m, so only Bonferroni keeps "p <= alpha"
    and "the interval excludes 0" the same statement; Holm would reject more
    than the intervals show (a candidate could read "equivalent, p = 0.005").
    """
    if family < 2:
        return comparisons
    return [c if c.self_check or c.pvalue is None else
            dataclasses.replace(c, pvalue=min(1.0, family * c.pvalue), adjustment="bonferroni")
            for c in comparisons]


def _merged(notes: list[Note]) -> list[Note]:
    """Notes with the rank tests' ties notes merged into one naming every test that had them."""
    ties = [n for n in notes if n.code == "rank-ties"]
    if len(ties) < 2:
        return notes
    tests = [t for n in ties for t in n.data.get("tests", [])]
    merged = Note("rank-ties", {"tests": list(dict.fromkeys(tests))}, message=ties[0].message)
    first = notes.index(ties[0])
    rest = [n for n in notes if n.code != "rank-ties"]
    return rest[:first] + [merged] + rest[first:]
