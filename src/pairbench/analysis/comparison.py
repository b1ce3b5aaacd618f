"""Paired comparisons: a candidate side against the baseline, round by round, with a verdict.

The two sides' values are paired by round (``analysis.pairing``). The effect
is the median per-round log-ratio ln(candidate / baseline) of one
operation's value, as a percent change, with one of two intervals
(``analysis.effect``, which the stopping rule runs after every round):

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
decides through ``analysis.effect.verdict_of`` too, so what stopped a run is what the
analysis reports. The numbers shown beside the verdict are
``analysis.secondary``'s.

A count (``--metric instructions``, ``cycles-model``) may be the same in every round on each side:
then, from ``stats.counts.exact_rounds`` rounds on, the effect is exact (the ratio of the two
counts, an interval of one point) and the verdict follows from it (``exact_or_interval``). The
exact rule and the interval each get half the comparison's alpha (``Criteria.split``), so a
count's verdict errs at most alpha whichever decides. Pure.

"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from pairbench import stats
from pairbench.analysis.blocks import block_medians, blocks_differ, rounds_by_block
from pairbench.analysis.counts import count_notes
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.effect import RoundsPlan, exact_or_interval, plan_rounds, verdict_of
from pairbench.analysis.pairing import (
    Pairing,
    failed_rounds,
    paired_blocks,
    paired_values,
    usable_rounds,
)
from pairbench.analysis.records import Comparison, ComparisonFigure, Effect
from pairbench.analysis.rules import CHOICE_ROUNDS, CpuUse, chosen_metric, cpu_use, is_recheck
from pairbench.analysis.secondary import figure_of, secondary_statistics
from pairbench.errors import StatisticsError
from pairbench.model import COUNT_METRICS, FIXED_CPU_METRIC, REPETITION_METRIC, Samples
from pairbench.notes import Note
from pairbench.stats.paired import log_ratios as _log_ratios
from pairbench.verdict import refuse

# --------------------------------------------------------------------------- the metric


def metric_of(pairing: Pairing, criteria: Criteria) -> tuple[str, CpuUse | None]:
    """What a comparison decides on, and (for ``--metric auto``) the ``cpu_use`` it was chosen by: the
    criteria's metric for a time, else its value (bytes, allocations: there is no CPU time of a
    count); auto chooses by ``rules.chosen_metric`` from the first ``CHOICE_ROUNDS`` rounds both sides
    measured, and a choice of CPU time is checked again at each ``rules.is_recheck``, as the stopping
    rule does (the ``CpuUse`` then is of the rounds that chose wall time)."""
    if pairing.benchmark.unit != "ns":
        return "wall", None
    if criteria.metric != "auto":
        return criteria.metric, None
    b, c, b_index, c_index = usable_rounds(pairing.base, pairing.cand)
    use = cpu_use_of((b, b_index[:CHOICE_ROUNDS]), (c, c_index[:CHOICE_ROUNDS]))
    metric = chosen_metric(use)
    if metric != "cpu":  # only a choice of CPU time is checked again
        return metric, use
    for rounds in range(2 * CHOICE_ROUNDS, int(b_index.size) + 1, CHOICE_ROUNDS):
        if is_recheck(rounds):
            later = cpu_use_of((b, b_index[:rounds]), (c, c_index[:rounds]))
            if chosen_metric(later) == "wall":
                return "wall", later
    return metric, use


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
        verdict, effect, notes = verdict_of(lambda: exact_or_interval(base, cand, decided_on, criteria), criteria)
        plan = (planned(r, decided_on, criteria) if verdict.verdict == "inconclusive"
                and not (effect and effect.moved) else RoundsPlan(None))
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
        rounds_needed_span=plan.span,
    )
    return comparison, figure


def planned(log_ratios: np.ndarray, decided_on: np.ndarray, criteria: Criteria) -> RoundsPlan:
    """``plan_rounds`` of the values a verdict is drawn from: the rounds' log-ratios, or, where rounds
    come in blocks of fresh worker processes, the blocks' medians, whose further blocks are as many
    rounds as a block has had (on average, rounded up)."""
    if decided_on.size == log_ratios.size:
        return plan_rounds(log_ratios, criteria)
    plan = plan_rounds(decided_on, criteria)
    if plan.needed is None or not decided_on.size:
        return plan
    per_block = math.ceil(log_ratios.size / decided_on.size)
    span = None if plan.span is None else (plan.span[0] * per_block, plan.span[1] * per_block)
    return dataclasses.replace(plan, needed=plan.needed * per_block, span=span)


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
    fixed = ok[FIXED_CPU_METRIC][repeated] if FIXED_CPU_METRIC in ok.metrics else np.zeros(0)
    return Note("repeated-invocations", {"repetitions": int(numbers.max()),
                                         "warmups": int(warm.max()) if warm.size else 0,
                                         **({"fixed_cpu_ns": float(np.median(fixed))} if fixed.size else {})})


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
    if metric in COUNT_METRICS:
        return count_notes(pairing, metric, effect, criteria)
    b, c, b_index, c_index = usable_rounds(pairing.base, pairing.cand)
    use = cpu_use_of((b, b_index), (c, c_index))
    how = ({"kind": use.kind, "off_cpu_share": use.off_cpu_share, "cpu_over_wall": use.cpu_over_wall}
           if use is not None else {"kind": "unknown"})
    notes = []
    if criteria.metric == "auto" and chosen_by is not None:  # (no CPU time recorded: wall, said by nothing)
        rechecked = {"first_rounds": CHOICE_ROUNDS} if chosen_by.n // 2 > CHOICE_ROUNDS else {}
        notes.append(Note("metric-chosen", {"metric": metric, "rounds": chosen_by.n // 2, **rechecked,
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
    """``rules.cpu_use`` of the samples at the indices given, of every series given, together; without
    their voluntary context switches where their CPU time is their process's own (``FIXED_CPU_METRIC``:
    a Go test binary's runtime threads park and wake hundreds of times an invocation, whatever its
    benchmark does, so those switches do not say that the benchmark waits)."""
    def column(name: str) -> np.ndarray:
        return np.concatenate([s[name][index] for s, index in chosen])

    runtime_switches = any(FIXED_CPU_METRIC in s.metrics for s, _ in chosen)
    return cpu_use(column("wall_ns"), column("user_ns") + column("sys_ns"), column("involuntary_cs"),
                   None if runtime_switches else column("voluntary_cs"))


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
