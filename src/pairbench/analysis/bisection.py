"""The search of ``pairbench bisect``: which two commits to compare next, what each paired
comparison says, and what the search found. Pure: the session (``sessions/bisect.py``) builds
and measures; this module only decides.

**The search.** The commits ``c0 .. cn`` run from GOOD (``c0``) to BAD (``cn``) along BAD's
first parents; ``c1 .. cn`` are the n candidates. Each comparison is paired and interleaved (the
machinery of ``compare`` and ``bench``), and each benchmark's interval says where its change lies
against a *boundary* (``criteria.Boundary``):

1. *The step*: BAD against GOOD. A benchmark has a step when its interval lies above the
   threshold (``--threshold``) and above half its own estimate, so that the step's size is known
   within a factor of two; its boundary ``h`` is then a quarter of the estimate (of its log-ratio,
   as every threshold: ``verdict.within``). A benchmark whose interval lies below the threshold has
   no step. Without a benchmark that has one the search ends: "no slowdown" when every interval
   lies below the threshold, else inconclusive.
2. *Narrowing*: the range ``(lo, hi]`` starts as ``(0, n]``. Its middle commit ``m`` is compared
   with GOOD. It is "slower by the step" when, for a benchmark with a step, the interval lies above
   ``h`` (then ``hi = m``), "like GOOD" when every interval lies below its ``h`` (``lo = m``), and
   inconclusive otherwise, which ends the narrowing. A commit that does not build is skipped: the
   commit nearest the middle that builds is compared instead; so is one that lacks a benchmark
   with a step, unless another lies above its ``h`` (:meth:`Search.lacking`).
3. *The ends* of what remains, ``lo`` against ``hi`` (not measured again when ``lo`` is GOOD: that
   comparison was made). When ``hi`` is ``lo``'s child and its interval lies above ``h``, commit
   ``hi`` is named. When it lies below ``h``, the commits of the range add less than ``h`` although
   the slowdown passes ``h`` inside it: no single commit explains it, the slowdown is spread over
   the commits of GOOD..BAD. Otherwise the answer is inconclusive and the range is returned.

**Why a quarter.** The step's measured size varies between comparisons: on a loaded machine the
same commits' change can read 0.6 times one comparison's and 1.4 times another's (start-up work
that grows with the load dilutes it, a busy sibling CPU inflates it). Given that the step's
interval covers, ``h`` = est / 4 lies below half the step's true size in that comparison (its low
end, above est / 2, is below the truth). So every later comparison reads the step correctly while
the step there is at least half the size it was when first measured. At half the estimate (this
module before), ``h`` could reach the step's full size, and a later comparison that saw the step
a little smaller read the commits after it as "like GOOD": the search then walked past the step
and answered a false "spread" in up to 18% of searches with the step scaled by U(0.5, 1.5) per
comparison, 0 at a quarter (``benchmarks/bisect_varying_step.py``). The price: a commit that adds
a quarter of the step or more is named, so of two commits that each add half, the first is named
as where the slowdown passes a quarter; and "like GOOD" must be shown below a quarter of the step
rather than half, which takes more rounds (a 2% step with 1% noise: about 430 rounds a search
instead of 260).

**The error rate over the whole search.** Each comparison's intervals are computed at level
``alpha / K`` (and split again over its benchmarks, Bonferroni), where ``K`` bounds the comparisons
the search can make: one for the step, at most ``ceil(log2 n)`` to narrow, one for the ends. The
narrowing needs no more: comparing ``m = lo + floor(s / 2)`` leaves a range of ``floor(s / 2)`` or
``ceil(s / 2)`` of the ``s = hi - lo`` candidates, so ``t`` comparisons leave at most
``ceil(n / 2**t)``, which is 1 at ``t = ceil(log2 n)``; the search stops narrowing at that many
comparisons whatever happens (skipped commits can make it stop early, inconclusive). For n = 1 the
step comparison is also the ends', so ``K = 1``. Which comparison comes next depends only on the
earlier ones, measured on other rounds, so each interval covers its true change with probability
``1 - alpha / K`` given everything before it, and by Bonferroni's inequality every interval the
search relied on covers its true change with probability at least ``1 - alpha``. When they all do:

* a named commit ``k`` is slower than its parent by at least ``h`` (the ends' interval lies above
  ``h``), which lies below half the GOOD..BAD step because the step's interval covers it;
* it is where the slowdown passes ``h``: ``k - 1`` is less slow than GOOD plus ``h``, ``k`` is at
  least that slow;
* "spread" and the range of an inconclusive answer hold likewise.

These hold when each commit's true change is the same in every comparison. When the step's size
varies between comparisons (load), they hold while it stays above half its size in the step
comparison (see "Why a quarter"); beyond that a search can end inconclusive or, rarely, "spread".

So a wrong commit is named with probability at most alpha, under any noise the intervals hold for
(the paired median's confidence sequence: any continuous distribution of the per-round ratios).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairbench.analysis.criteria import ABOVE, BELOW, UNDECIDED, Boundary
from pairbench.analysis.records import Effect
from pairbench.frozen import frozen
from pairbench.verdict import log_change

KINDS = ("found", "spread", "inconclusive", "no-slowdown")
STEP_SHARE = 0.5
"""The share of its own estimate a step's interval must lie above: the step's size is then known
within a factor of two."""
BOUNDARY_SHARE = 0.25
"""Where each stepped benchmark's boundary ``h`` lies, as a share of the step's estimate."""


def share_of(change_pct: float, share: float) -> float:
    """``share`` of a change in percent, taken of its log-ratio as every threshold is
    (``verdict.within``): half of +10% is +4.88%, the change that done twice makes +10%."""
    return 100.0 * math.expm1(share * log_change(change_pct))


def most_comparisons(n: int) -> int:
    """``K``: the most comparisons a search of ``n`` candidate commits makes (module docstring)."""
    if n < 1:
        raise ValueError(f"a search needs at least 1 candidate commit, got {n}")
    return 1 if n == 1 else math.ceil(math.log2(n)) + 2


@frozen
class Pair:
    """Two commits to compare (indices into the search's commits), and why."""

    base: int
    cand: int
    purpose: str  # "step", "middle" or "ends"


@frozen
class Trial:
    """One comparison the search made: the pair, each benchmark's effect (percent, candidate against
    base) and where it lies against that benchmark's boundary, and what the search read from it."""

    number: int
    pair: Pair
    effects: tuple[tuple[str, Effect | None], ...]
    boundaries: tuple[tuple[str, Boundary], ...]
    sides: tuple[tuple[str, str], ...]
    outcome: str


@frozen
class Answer:
    """What the search found: ``kind`` (``KINDS``), the commit named (``found``), the range of
    commits ``first .. last`` (indices) the slowdown lies in, the benchmarks that say so, and
    ``why`` an answer is inconclusive (``budget``, ``undecided``, ``unbuildable``, ``comparisons``,
    ``no-step``)."""

    kind: str
    first: int
    last: int
    commit: int | None = None
    benchmarks: tuple[str, ...] = ()
    why: str | None = None
    at: int | None = None  # the comparison that could not decide, when one ended the search


@dataclass
class Search:
    """The bisection of ``n = len(commits) - 1`` candidates (module docstring). ``threshold`` is the
    smallest step that matters (percent). Ask :meth:`next` for a pair, measure it, :meth:`record`
    what it found; :meth:`skip` a commit that does not build, :meth:`stop` when the budget is spent;
    :meth:`answer` says what the search found."""

    commits: Sequence[str]
    alpha: float
    threshold: float
    trials: list[Trial] = field(default_factory=list)
    skipped: set[int] = field(default_factory=set)
    stopped: str | None = None
    lo: int = 0
    hi: int = -1
    steps: dict[str, Boundary] = field(default_factory=dict)  # benchmark -> its boundary h

    def __post_init__(self):
        if len(self.commits) < 2:
            raise ValueError("a search needs GOOD and BAD: at least 2 commits")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha!r}")
        if not self.threshold > 0:
            raise ValueError(f"threshold must be positive, got {self.threshold!r}")
        self.hi = len(self.commits) - 1

    @property
    def limit(self) -> int:
        return most_comparisons(len(self.commits) - 1)

    @property
    def level(self) -> float:
        """Each comparison's share of alpha (split again over its benchmarks by the measuring)."""
        return self.alpha / self.limit

    def boundaries(self) -> Mapping[str, Boundary] | Boundary:
        """What the next comparison decides against: the step's rule for every benchmark, then each
        stepped benchmark's ``h``."""
        return dict(self.steps) if self.trials else Boundary(self.threshold, STEP_SHARE)

    def next(self) -> Pair | None:
        """The pair to compare next; None when the search has ended (see :meth:`answer`)."""
        planned = self._plan()
        return planned if isinstance(planned, Pair) and not self.stopped else None

    def answer(self) -> Answer:
        """What the search found (module docstring); while it could go on (stopped early), the
        range that remains, inconclusive."""
        planned = self._plan()
        if isinstance(planned, Answer):
            return planned
        why = self.stopped or "budget"
        return Answer("inconclusive", self.lo + 1, self.hi, benchmarks=tuple(self.steps), why=why)

    # ------------------------------------------------------------------ choosing

    def _plan(self) -> Pair | Answer:
        if not self.trials:
            return Pair(0, self.hi, "step")
        if not self.steps:
            return self._no_step(dict(self.trials[0].sides))
        last = self.trials[-1]
        if last.pair.purpose == "ends":
            return self._conclude(last)
        middles = sum(1 for t in self.trials if t.pair.purpose == "middle")
        if last.outcome != UNDECIDED and self.hi - self.lo > 1 and middles < self.limit - 2:
            middle = self._middle()
            if middle is not None:
                return Pair(0, middle, "middle")
        if self.lo == 0:
            return self._conclude(self._ends_trial())
        return Pair(self.lo, self.hi, "ends")

    def _middle(self) -> int | None:
        """The candidate nearest the range's middle that has not been skipped (the lower first)."""
        middle = self.lo + (self.hi - self.lo) // 2
        inside = [c for c in range(self.lo + 1, self.hi) if c not in self.skipped]
        return min(inside, key=lambda c: (abs(c - middle), c)) if inside else None

    def _ends_trial(self) -> Trial | None:
        """The comparison of GOOD with ``hi``: the step's, or the one that made ``hi`` the upper end."""
        return next((t for t in reversed(self.trials) if (t.pair.base, t.pair.cand) == (self.lo, self.hi)), None)

    # ------------------------------------------------------------------ recording

    def record(self, pair: Pair, effects: Mapping[str, Effect | None]) -> Trial:
        """What the comparison of ``pair`` found: each benchmark's effect (None: no interval)."""
        expected = self.next()
        if pair != expected:
            raise ValueError(f"the search asked for {expected}, not {pair}")
        boundaries = self.boundaries()
        bounds = ({name: boundaries for name in effects} if isinstance(boundaries, Boundary)
                  else dict(boundaries))
        sides = {name: bound.side(effects.get(name)) for name, bound in bounds.items()}
        trial = Trial(len(self.trials) + 1, pair, tuple((name, effects.get(name)) for name in bounds),
                      tuple(bounds.items()), tuple(sides.items()), _outcome(sides))
        self.trials.append(trial)
        if pair.purpose == "step":
            self.steps = {name: Boundary(share_of(effects[name].estimate, BOUNDARY_SHARE))
                          for name, side in sides.items() if side == ABOVE}
        elif pair.purpose == "middle" and trial.outcome == ABOVE:
            self.hi = pair.cand
        elif pair.purpose == "middle" and trial.outcome == BELOW:
            self.lo = pair.cand
        return trial

    def lacking(self, pair: Pair, effects: Mapping[str, Effect | None]) -> tuple[str, ...]:
        """The benchmarks with a step that a middle commit's comparison does not have (the commit has
        no such benchmark), when none it has lies above its boundary: that commit cannot say which
        side of the step it is on, and is skipped like one that does not build. Empty otherwise."""
        missing = tuple(name for name in self.steps if name not in effects)
        if pair.purpose != "middle" or not missing:
            return ()
        above = any(bound.side(effects[name]) == ABOVE for name, bound in self.steps.items() if name in effects)
        return () if above else missing

    def skip(self, commit: int) -> None:
        """Commit ``commit`` (a middle one) does not build: never compare it."""
        if commit in (0, len(self.commits) - 1):
            raise ValueError("GOOD and BAD must build: a search cannot skip them")
        self.skipped.add(commit)

    def stop(self, why: str = "budget") -> None:
        """End the search now (the budget is spent): the answer is the range that remains."""
        self.stopped = why

    # ------------------------------------------------------------------ answering

    def _no_step(self, sides: Mapping[str, str]) -> Answer:
        if sides and all(side == BELOW for side in sides.values()):
            return Answer("no-slowdown", 1, self.hi, benchmarks=tuple(sides))
        return Answer("inconclusive", 1, self.hi, benchmarks=tuple(sides), why="no-step", at=1)

    def _conclude(self, ends: Trial | None) -> Answer:
        """The answer once the ends of what remains are compared (module docstring)."""
        stepped, lo, hi = tuple(self.steps), self.lo, self.hi
        undecided = next((t for t in self.trials if t.outcome == UNDECIDED), None)
        if ends is None or ends.outcome == UNDECIDED:
            at = ends if ends is not None else undecided
            return Answer("inconclusive", lo + 1, hi, benchmarks=stepped, why="undecided",
                          at=at.number if at else None)
        if ends.outcome == BELOW:
            return Answer("spread", 1, len(self.commits) - 1, benchmarks=stepped)
        above = tuple(name for name, side in ends.sides if side == ABOVE)
        if hi - lo == 1:
            return Answer("found", hi, hi, commit=hi, benchmarks=above)
        why = "undecided" if undecided else ("unbuildable" if self._all_skipped() else "comparisons")
        return Answer("inconclusive", lo + 1, hi, benchmarks=above, why=why,
                      at=undecided.number if undecided else None)

    def _all_skipped(self) -> bool:
        return all(c in self.skipped for c in range(self.lo + 1, self.hi))


def _outcome(sides: Mapping[str, str]) -> str:
    """A comparison's outcome from its benchmarks': above when one lies above, below when all lie
    below, else inconclusive."""
    if any(side == ABOVE for side in sides.values()):
        return ABOVE
    if sides and all(side == BELOW for side in sides.values()):
        return BELOW
    return UNDECIDED


def effects_of(run, label_of=None) -> dict[str, Effect | None]:
    """Each benchmark's effect in ``run`` (a baseline and one candidate), by label (``label_of``
    renames a key), at the run's own Bonferroni level, alpha over its benchmarks: the level the
    search's error rate rests on (a Holm step's interval is not)."""
    from pairbench.analysis import baseline_and_candidates, criteria_of
    from pairbench.analysis.comparison import compare
    from pairbench.analysis.pairing import Pairing

    criteria = criteria_of(run)
    base, candidates = baseline_and_candidates(run)
    if len(candidates) != 1:
        raise ValueError(f"a bisection compares one candidate with its baseline, got {len(candidates)}")
    cand = candidates[0]
    found: dict[str, Effect | None] = {}
    for b, key in enumerate(run.benchmarks):
        pairing = Pairing(key, run.sides[base].name, run.sides[cand].name, run.series(b, base), run.series(b, cand))
        found[label_of(key) if label_of else key.label] = compare(pairing, criteria)[0].effect
    return found
