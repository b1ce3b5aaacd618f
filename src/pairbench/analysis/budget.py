"""What budget would decide a suite's undecided benchmarks, from what measuring them cost so far, and
which of them no budget a user would pay decides on this machine at this load.

An inconclusive comparison with a rounds-needed estimate (``effect.plan_rounds``) would need
about that many more rounds, each as long as its rounds took. Past ``AFFORDABLE_FACTOR`` times the
time its rounds took, and past ``AFFORDABLE_FLOOR_NS`` (``affordable_ns``), it is **out of reach**:
four doublings of its budget, or ten minutes of one comparison, is the most a user is asked to pay,
and an estimate from a few dozen rounds is only a guide that far out. There the advice is no
count ("about 220000 s more sampling" was 61 hours): the machine's load and each side's spread say
why (``out_of_reach_note``). One with a ``no-rounds-estimate`` note (ties a timer's step apart, more
than ``MAX_ROUNDS_PLANNED`` rounds) will not be decided by more rounds of the same; one with no
estimate and no such note (a refused verdict) is counted apart, as not known. A benchmark the suite's
budget never reached would cost what a measured one cost (the median, pilot and validation
included). The time is sampling time, shared over the jobs. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pairbench.analysis.records import Comparison
from pairbench.frozen import frozen
from pairbench.model import Run
from pairbench.notes import Note
from pairbench.stats._order import middle  # np.median's, without loading numpy.ma while sampling

AFFORDABLE_FACTOR = 16
"""More sampling is advised up to this many times the time a comparison's rounds took (four doublings)
or ``AFFORDABLE_FLOOR_NS``, whichever is more; past both the comparison is out of reach here."""
AFFORDABLE_FLOOR_NS = 600_000_000_000
"""Ten minutes: a comparison that quick rounds leave undecided may be given this much whatever it took."""
OUT_OF_REACH = "budget-out-of-reach"
NO_ESTIMATE = "no-rounds-estimate"


@frozen
class Spread:
    """How much one comparison's sides varied from round to round, in the time its verdict is on: each
    side's coefficient of variation (SD over mean, %), baseline then candidate."""

    benchmark: str
    metric: str
    sides: tuple[tuple[str, float], ...]


@frozen
class BudgetNeeded:
    """Sampling time that would decide what a suite left undecided: ``more_ns`` for the
    ``decidable`` inconclusive comparisons and the ``not_measured`` benchmarks, over the jobs;
    ``undecidable`` inconclusive ones more rounds would not decide; ``out_of_reach`` those more rounds
    would decide only past ``AFFORDABLE_FACTOR`` times their rounds (with their sides' ``spreads``,
    at the ``load`` the run started at); ``unknown`` those without an estimate; ``spent_ns`` the
    sampling the run took (first sample to last, over the jobs)."""

    decidable: int
    undecidable: int
    not_measured: int
    more_ns: int
    spent_ns: int
    out_of_reach: int = 0
    unknown: int = 0
    spreads: tuple[Spread, ...] = ()
    load: float | None = None

    @property
    def suite_ns(self) -> int:
        """The --suite-time that would have given the run the time it needs."""
        return self.spent_ns + self.more_ns


def affordable_ns(spent_ns: float) -> float:
    """The most sampling a comparison whose rounds took ``spent_ns`` is advised to take in all."""
    return max(AFFORDABLE_FACTOR * spent_ns, AFFORDABLE_FLOOR_NS)


def within_reach(c: Comparison) -> bool:
    """Whether ``c`` has a rounds-needed estimate that is not out of reach (``out_of_reach_note``)."""
    return bool(c.rounds_needed) and not _coded(c, OUT_OF_REACH)


def budget_needed(run: Run, comparisons: Sequence[Comparison], not_measured: int) -> BudgetNeeded | None:
    """The budget that would decide ``run``'s inconclusive ``comparisons`` (of ``run.benchmarks``, by
    key) and its ``not_measured`` benchmarks; None when nothing is left undecided."""
    inconclusive = [c for c in comparisons if c.verdict.verdict == "inconclusive" and not c.self_check and c.rounds]
    if not inconclusive and not not_measured:
        return None
    index = {key: b for b, key in enumerate(run.benchmarks)}
    decidable = [c for c in inconclusive if within_reach(c) and c.benchmark in index]
    beyond = [c for c in inconclusive if _coded(c, OUT_OF_REACH)]
    undecidable = [c for c in inconclusive if not c.rounds_needed and _coded(c, NO_ESTIMATE)]
    more = sum(c.rounds_needed * round_ns(run, index[c.benchmark]) for c in decidable)
    spans = [span_ns(run, b) for b in range(len(run.benchmarks))]
    measured = [s for s in spans if s > 0]
    if not_measured and measured:
        more += not_measured * middle(np.asarray(measured, dtype=np.float64))
    jobs = run.settings.workers.jobs if run.settings.workers else 1
    spreads = tuple(spread for c in beyond for spread in [_spread(c)] if spread is not None)
    return BudgetNeeded(len(decidable), len(undecidable), not_measured, int(more / jobs), int(sum(measured) / jobs),
                        len(beyond), len(inconclusive) - len(decidable) - len(beyond) - len(undecidable), spreads,
                        load_of(run.environment))


def out_of_reach_note(c: Comparison, baseline: np.ndarray, candidate: np.ndarray, environment: Mapping,
                      round_ns: float) -> Note | None:
    """The note of an inconclusive comparison that more rounds (of ``round_ns`` each) would decide only
    past ``affordable_ns`` of the time its rounds took: the load the run started at and the spread (CV)
    of each side's values per round in the time compared (``baseline``, ``candidate``), which say
    why; None for any other (and where the rounds' time is not known)."""
    if c.verdict.verdict != "inconclusive" or not c.rounds_needed or not baseline.size or round_ns <= 0:
        return None
    if (c.rounds + c.rounds_needed) * round_ns <= affordable_ns(c.rounds * round_ns):
        return None
    return Note(OUT_OF_REACH, {
        "load": load_of(environment), "metric": c.metric, "rounds": c.rounds, "needed": c.rounds_needed,
        "factor": AFFORDABLE_FACTOR, "minutes": AFFORDABLE_FLOOR_NS / 60e9,
        "spreads": [[c.baseline, _cv(baseline)], [c.candidate, _cv(candidate)]]})


def _cv(values: np.ndarray) -> float:
    """The coefficient of variation of ``values`` in percent (sample SD over mean)."""
    return float(100.0 * np.std(values, ddof=1) / np.mean(values)) if values.size > 1 else 0.0


def _spread(c: Comparison) -> Spread | None:
    note = next((n for n in c.notes if n.code == OUT_OF_REACH), None)
    if note is None:
        return None
    return Spread(c.benchmark.label, str(note.data["metric"]),
                  tuple((str(side), float(cv)) for side, cv in note.data["spreads"]))


def _coded(c: Comparison, code: str) -> bool:
    return any(n.code == code for n in c.notes)


def load_of(environment: Mapping) -> float | None:
    """The 1-minute load average the run's metadata holds (when it started), None if it holds none."""
    loads = environment.get("load_average")
    first = loads[0] if isinstance(loads, (list, tuple)) and loads else None
    return float(first) if isinstance(first, (int, float)) and not isinstance(first, bool) else None


def round_ns(run: Run, benchmark: int) -> float:
    """How long a measured round of ``benchmark`` took: its rounds' span over their number."""
    measured = [s.measured() for _, s in _series(run, benchmark)]
    rounds = len({int(p) for s in measured for p in s["pair"] if p >= 0})
    starts = np.concatenate([s["start_ns"] for s in measured]) if measured else np.zeros(0)
    if rounds < 2 or not starts.size:
        return 0.0
    ends = np.concatenate([s["start_ns"] + s["wall_ns"] for s in measured])
    return float(ends.max() - starts.min()) / rounds


def span_ns(run: Run, benchmark: int) -> int:
    """The time from ``benchmark``'s first sample to its last (pilot and validation included), 0 if none."""
    series = [s for _, s in _series(run, benchmark) if len(s)]
    if not series:
        return 0
    starts = np.concatenate([s["start_ns"] for s in series])
    ends = np.concatenate([s["start_ns"] + s["wall_ns"] for s in series])
    return int(ends.max() - starts.min())


def _series(run: Run, benchmark: int):
    return [(side, run.series(benchmark, side)) for side in range(len(run.sides))]
