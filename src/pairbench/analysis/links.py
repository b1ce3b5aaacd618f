"""A paired history: each recorded commit measured against its predecessor (a *link*) and, every
few records, against its window's anchor; its steps and drifts, with an error rate stated over the
whole stream of commits and every benchmark of the suite.

**The test of a link.** A record measures the two commits in interleaved, randomized rounds; the
test of "no change" is the anytime-valid p-value of the median paired log-ratio
(``stats.sequential``: a mixture supermartingale and Ville's inequality), so it holds at whatever
round the record stopped. Its interval is the confidence sequence at the same level.

**The level: a constant rate per commit.** Every link is tested at ``level = rate / m``, ``m`` the
benchmarks the record compared and ``rate`` the false steps allowed per commit of the whole suite
(``STEP_RATE``: 1 per 1,000 commits). By linearity of expectation, the expected number of false
steps in any N commits is at most N x rate, however the links depend on each other, and the level
never decays: the 10,000th commit is tested as strictly as the 10th. The alternatives studied
(``benchmarks/paired_history_errors.py``, ``benchmarks/results/paired_history.md``) bound other
things: alpha-spending per benchmark and the online FDR rules (LORD++, e-LOND) test the i-th
link at a level that falls with i, so their power to see a step fades along an unbounded CI stream
unless discoveries keep funding it, and an FDR says nothing of false steps per commit when few
real ones happen. The record chooses ``level`` before it measures and stores it with the link;
the history judges each link at its own level.

**A step** is a predecessor link whose interval at its level lies on one side of zero and not
wholly within +-its threshold (``verdict.decide``: slower or faster, not negligible), and whose
estimate lies beyond the threshold (each link keeps the threshold and the rate it was recorded
with, and is judged by them). A record's rounds do not stop on such a change until its size is
known within a factor of two (``analysis.criteria.SizedChange``): when something of the machine
hit one side of a record for a while, a link of two commits of the same Python function stopped
after a few blocks of rounds with -0.39% [-4.05%, -0.01%], a change of no size that matters by its
estimate but named a step by its interval's far end (measured again, the two commits did not differ:
``benchmarks/results/paired_history.md`` §3f). A step whose
link spans several commits (CI skipped some) names the span and the ``bisect`` that finds its commit.

**Drift.** Small changes that no single link decides add up; chaining links would widen the
interval with every commit. So a record also measures the commit against a pinned *anchor* (the
window's first commit, or a named release): that link's effect is the cumulative change since the
anchor, with an interval of its own. A *drift* is an anchor link that decides a change (the same
rule as a step, at the same level: false drifts are at most ``rate`` per commit too) while no step
of the benchmark lies between the anchor and it; it is reported once per window, with the window's
latest anchor link as its cumulative change. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pairbench.analysis.history import Bisect, bisect_filter
from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey
from pairbench.verdict import decide, within

STEP_RATE = 1e-3
"""False steps allowed per commit of the whole suite (in expectation): 1 per 1,000 commits."""
ANCHOR_EVERY = 4
"""A record measures its window's anchor every this many records (and the window's last)."""
WINDOW = 40
"""Records in a window: then the anchor moves to the latest recorded commit."""


def link_level(family: int, rate: float = STEP_RATE) -> float:
    """The error rate each of a record's ``family`` links is tested at: ``rate / family``."""
    if family < 1:
        raise ValueError(f"a record compares at least 1 benchmark, got {family!r}")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"the rate of false steps per commit must lie in (0, 1), got {rate!r}")
    return rate / family


@frozen
class Decided:
    """A link judged: its row (``store.links.Link``), whether it decides a change at its level
    (``direction`` "slower" or "faster", else None), and what its span of commits leaves to bisect."""

    link: object
    direction: str | None
    bisect: Bisect | None = None

    @property
    def unrecorded(self) -> int:
        """Commits between the link's two that were never recorded (0 when adjacent or unknown)."""
        commits = self.link.commits
        return commits - 1 if commits else 0


@frozen
class Drift:
    """A change since ``anchor`` that no step explains: first decided at commit ``first``; the
    window's latest anchor link (``latest``) gives the cumulative change with its interval."""

    anchor: str
    first: str
    latest: object  # store.links.Link
    direction: str


@frozen
class LinkHistory:
    """One benchmark's paired history on one metric: its predecessor links (``chain``, in commit
    order, each judged), the anchor links (``cumulative``), its steps and its drifts."""

    benchmark: BenchmarkKey
    metric: str
    chain: tuple[Decided, ...]
    cumulative: tuple[Decided, ...]
    drifts: tuple[Drift, ...]

    @property
    def steps(self) -> tuple[Decided, ...]:
        return tuple(d for d in self.chain if d.direction is not None)

    @property
    def unrecorded(self) -> int:
        return sum(d.unrecorded for d in self.chain)


def judged(link, threshold: float) -> str | None:
    """"slower" or "faster" when ``link`` decides a change at its own level beyond its own threshold
    (the one the record judged it by; ``threshold`` percent for a link stored without one), else None:
    its interval excludes zero and reaches beyond the threshold, and its estimate lies beyond it too
    (a link whose estimate is a negligible change is not named a step on the strength of its
    interval's far end)."""
    if link.effect is None or link.effect_low is None or link.effect_high is None or link.pvalue > link.level:
        return None
    own = threshold if link.threshold is None else link.threshold
    verdict = decide(link.effect_low, link.effect_high, own)
    if verdict.verdict in ("slower", "faster") and not verdict.negligible and not within(link.effect, own):
        return verdict.verdict
    return None


def link_histories(benchmark: BenchmarkKey, links: Iterable, threshold: float) -> list[LinkHistory]:
    """The paired histories of ``benchmark``, one per metric its links used (never mixed), from its
    stored links in commit order; a pair of commits recorded more than once counts by its latest."""
    by_metric: dict[str, list] = {}
    for link in links:
        by_metric.setdefault(link.metric, []).append(link)
    return [_history(benchmark, metric, rows, threshold) for metric, rows in sorted(by_metric.items())]


def _latest_of_each_pair(links: Sequence) -> list:
    latest: dict[tuple, object] = {}
    for link in links:  # in recording order within a commit: the last one wins, kept in place
        latest.pop((link.kind, link.before, link.after), None)
        latest[(link.kind, link.before, link.after)] = link
    order = {id(link): i for i, link in enumerate(links)}
    return sorted(latest.values(), key=lambda link: order[id(link)])


def _history(benchmark: BenchmarkKey, metric: str, links: Sequence, threshold: float) -> LinkHistory:
    rows = _latest_of_each_pair(links)
    chain = tuple(_decided(benchmark, link, threshold) for link in rows if link.kind == "predecessor")
    cumulative = tuple(Decided(link, judged(link, threshold)) for link in rows if link.kind == "anchor")
    return LinkHistory(benchmark, metric, chain, cumulative, _drifts(chain, cumulative))


def _decided(benchmark: BenchmarkKey, link, threshold: float) -> Decided:
    direction = judged(link, threshold)
    bisect = None
    if direction is not None and link.commits and link.commits > 1:
        bisect = Bisect(link.before, link.after, bisect_filter(benchmark), link.commits)
    return Decided(link, direction, bisect)


def _drifts(chain: Sequence[Decided], cumulative: Sequence[Decided]) -> tuple[Drift, ...]:
    """One drift per window (anchor) whose anchor link decided a change with no step of the chain
    between the anchor and that link's commit (module docstring)."""
    position = {}
    for i, d in enumerate(chain):
        position.setdefault(d.link.before, i)
        position[d.link.after] = i + 1
    drifts, seen = [], set()
    windows: dict[str, list[Decided]] = {}
    for d in cumulative:
        windows.setdefault(d.link.before, []).append(d)
    for anchor, window in windows.items():
        for d in window:
            if d.direction is None or anchor in seen:
                continue
            start, end = position.get(anchor, 0), position.get(d.link.after)  # a release: from the start
            if end is not None and not any(c.direction for c in chain[start:end]):
                seen.add(anchor)
                drifts.append(Drift(anchor, d.link.after, window[-1].link, d.direction))
    return tuple(drifts)


@frozen
class Plan:
    """What the next record measures: the commit against ``predecessor`` (None: a first record, one
    side), and against ``anchor`` when ``measure_anchor`` (when the anchor is the predecessor, one
    comparison gives both links)."""

    predecessor: str | None
    anchor: str | None
    measure_anchor: bool


def plan_record(chain: Sequence[str], anchors: Sequence[str], *, against: str | None = None,
                anchor: str | None = None, every: int = ANCHOR_EVERY, window: int = WINDOW) -> Plan:
    """The plan of a record after the recorded commits ``chain`` (oldest first) whose anchor links
    had the anchors ``anchors`` (oldest first). The window's anchor is the latest of them, else the
    first recorded commit, or ``anchor`` when given (a release); its records are counted from it,
    and once ``window`` are done the anchor moves to the predecessor. The anchor is measured every
    ``every`` records of the window and at its last."""
    if every < 1 or window < 1:
        raise ValueError(f"the anchor's period and the window must be at least 1, got {every!r}, {window!r}")
    predecessor = against or (chain[-1] if chain else None)
    if predecessor is None:
        return Plan(None, None, False)
    current = anchor or (anchors[-1] if anchors else chain[0] if chain else predecessor)
    since = len(chain) - chain.index(current) if current in chain else len(chain)
    if anchor is None and since > window:
        current, since = predecessor, 1
    measure = since % every == 0 or since == window or current == predecessor
    return Plan(predecessor, current, measure)


@frozen
class Measured:
    """One comparison of a record's run, judged at the link level: ``benchmark``, the sides compared
    (``before`` the predecessor or the anchor, ``after`` the commit recorded), and the comparison
    (effect with its interval at ``level``, unadjusted p-value, metric, rounds)."""

    benchmark: BenchmarkKey
    before: int
    after: int
    comparison: object  # analysis.records.Comparison
    level: float
    threshold: float


def measured_links(run) -> list[Measured]:
    """Every comparison of a record's ``run`` (the predecessor against the commit, and the anchor
    against it when the run has an anchor side: ``analysis.comparison_pairs``) at the run's own
    Bonferroni level, alpha over its benchmarks: the level each link is tested at. Not the suite's
    Holm steps, whose intervals lie at other levels: a link's interval is at the level it stores."""
    from pairbench.analysis import compares, comparison_pairs, criteria_of
    from pairbench.analysis.comparison import compare
    from pairbench.analysis.pairing import Pairing

    if not compares(run):
        return []
    criteria = criteria_of(run)
    found = []
    for b, key in enumerate(run.benchmarks):
        for base, cand in comparison_pairs(run):
            pairing = Pairing(key, run.sides[base].name, run.sides[cand].name, run.series(b, base),
                              run.series(b, cand))
            comparison = compare(pairing, criteria)[0]
            found.append(Measured(key, base, cand, comparison, criteria.level_alpha, criteria.threshold))
    return found
