"""Adaptive stopping: after each round, has every comparison reached a verdict?

The :class:`StoppingRule` is a sink of the sampler: it reads each finished
round's samples, keeps each comparison's log-ratios (in one
``RunningSequence`` when adaptive, so one more round costs O(n)), and decides
through the analysis's own :func:`~pairbench.analysis.effect.verdict_of`,
so the verdict that stopped a run is the one ``analyse`` reports from the
stored samples. With ``--runs`` nothing stops early; the progress line asks
:meth:`StoppingRule.current` for the sign-test interval instead. What it computes
with (``analysis.effect``) runs on numpy and the standard library and is
imported with this module, so a look imports nothing, and scipy waits until
after the last sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pairbench.analysis.criteria import ABOVE, UNDECIDED, Boundary, Criteria, SizedChange
from pairbench.analysis.effect import anytime_effect, effect_of, exact_record, verdict_of
from pairbench.analysis.records import Effect
from pairbench.analysis.rules import CHOICE_ROUNDS, chosen_metric, cpu_use, is_recheck
from pairbench.frozen import frozen
from pairbench.measure.sampler import Measured, RoundEnd, Sink
from pairbench.model import FIXED_CPU_METRIC, Sample, metric_total
from pairbench.stats._order import middle
from pairbench.stats.counts import exact_effect
from pairbench.stats.sequential import RunningSequence
from pairbench.verdict import Verdict

Key = tuple[int, int, int]
"""A comparison the rule follows: (benchmark, its baseline side, its candidate side)."""


@frozen
class KeptRound:
    """What a comparison under ``--metric auto`` keeps of a round while its metric is still to be
    chosen (its first ``CHOICE_ROUNDS`` rounds) or may be chosen again (on CPU time:
    ``rules.is_recheck``): the round, each side's value on wall and on CPU time, and each side's
    first sample (repetitions share one process) with whether its CPU time was its process's own
    (``FIXED_CPU_METRIC``)."""

    rounds: int
    wall: tuple[float, float]
    cpu: tuple[float, float]
    firsts: tuple[Sample, Sample]
    own_cpu: bool

    def values(self, metric: str) -> tuple[float, float]:
        return self.wall if metric == "wall" else self.cpu


def _cpu_use_of(kept: Sequence[KeptRound]):
    """``rules.cpu_use`` of the rounds kept, as ``comparison.cpu_use_of`` reads the stored samples:
    without voluntary switches where CPU time is the process's own."""
    samples = [s for r in kept for s in r.firsts]
    runtime_switches = any(r.own_cpu for r in kept)
    return cpu_use([s.wall_ns for s in samples], [s.user_ns + s.sys_ns for s in samples],
                   [s.involuntary_cs for s in samples],
                   None if runtime_switches else [s.voluntary_cs for s in samples])


def _value(metric: str, taken: list[Measured]) -> float:
    """One operation's value of a side's sample in a round by ``metric``, as
    ``pairing.round_values`` gives it for stored samples: the median of an invocation's
    repetitions (every benchmark measured is a time)."""
    values = [float(metric_total(metric, m.sample.wall_ns, m.sample.user_ns, m.sample.sys_ns,
                                 m.metrics)) / m.sample.iterations for m in taken]
    return values[0] if len(values) == 1 else middle(np.asarray(values, dtype=np.float64))


def _kept_round(rounds: int, base: list[Measured], cand: list[Measured]) -> KeptRound:
    return KeptRound(rounds, (_value("wall", base), _value("wall", cand)), (_value("cpu", base), _value("cpu", cand)),
                     (base[0].sample, cand[0].sample), any(FIXED_CPU_METRIC in m.metrics for m in (base[0], cand[0])))


class StoppingRule(Sink):
    """Follows the rounds and says when every comparison (candidate side x benchmark) is decided."""

    def __init__(self, criteria: Criteria, baseline: int = 0, candidates: Sequence[int] = (),
                 benchmarks: int = 1, *, pairs: Sequence[tuple[int, int]] | None = None,
                 benchmark_ids: Sequence[int] | None = None,
                 block_rounds: int | None = None, boundary: Boundary | SizedChange | None = None):
        """Follows every candidate against ``baseline`` (or each (baseline, candidate) side of
        ``pairs``: ``analysis.comparison_pairs``, a record's anchor among them) on benchmarks
        ``0 .. benchmarks - 1``, or on ``benchmark_ids`` only (bench measures its benchmarks one
        at a time, a rule each); every comparison is decided at the criteria's level. With ``block_rounds``
        (bench's blocks of fresh worker processes) each block of that many rounds is one value,
        its median log-ratio, as ``analysis.pairing.block_effects`` makes it, and the rule
        decides only when a block has just ended. With a ``Boundary`` (``bisect``) a comparison is
        decided once its interval lies wholly above or below the boundary, not by its verdict; with a
        ``SizedChange`` (``record``) a verdict of change stops the rounds once its size is known."""
        self.criteria = criteria
        self.boundary = boundary
        self.block_rounds = block_rounds
        self._block_ended = False
        ids = range(benchmarks) if benchmark_ids is None else benchmark_ids
        pairs = [(baseline, c) for c in candidates] if pairs is None else list(pairs)
        # a comparison's key: (benchmark, its baseline side, its candidate side)
        self.keys: list[Key] = [(b, base, c) for b in ids for base, c in pairs]
        # one store of each comparison's log-ratios: the running sequence when adaptive, a list with --runs
        self._running: dict = {}
        self._ratios: dict[Key, list[float]] = {key: [] for key in self.keys}
        self._block: dict[Key, list[float]] = {key: [] for key in self.keys}
        # --metric auto: a comparison's rounds are kept to choose its metric from the first CHOICE_ROUNDS, and
        # while that is CPU time to choose again at each rules.is_recheck (``_keep``)
        fixed = None if criteria.metric == "auto" else criteria.metric
        self._metric: dict[Key, str | None] = {key: fixed for key in self.keys}
        self._kept: dict[Key, list[KeptRound]] = {key: [] for key in self.keys} if fixed is None else {}
        # a count's values while they have been one per side in every round: (baseline, candidate, rounds), or
        # None once they varied (``stats.counts``: the exact rule is then out for good)
        self._constant: dict[Key, tuple[float, float, int] | None] = {}
        self.latest: dict[Key, tuple[Verdict, Effect | None]] = {}
        criteria.first_verdict_round()  # the sequence's tuning and ranks, computed now, not between samples

    def on_round(self, end: RoundEnd) -> None:
        if end.warmup:
            return
        taken: dict[tuple[int, int], list[Measured]] = {}
        for m in end.samples:  # an invocation that repeated its benchmark: a sample per repetition
            if m.sample.ok:
                taken.setdefault((m.benchmark, m.side), []).append(m)
        self._block_ended = self.block_rounds is not None and end.rounds % self.block_rounds == 0
        for key in self.keys:
            base, cand = taken.get((key[0], key[1])), taken.get((key[0], key[2]))
            if base is None or cand is None:
                continue
            if key in self._kept:
                self._keep(key, _kept_round(end.rounds, base, cand))
            else:
                self._add(key, end.rounds, base, cand)

    def _keep(self, key: Key, kept_round: KeptRound) -> None:
        """``--metric auto``: keep a round of ``key`` and follow it on the metric chosen; choose the
        metric from the first ``CHOICE_ROUNDS`` rounds, and while it is CPU time again at each
        ``rules.is_recheck``, from every round so far (as ``comparison.metric_of``). A metric newly
        chosen is followed from the first round: its confidence sequence is the one it would have
        been all along."""
        kept = self._kept[key]
        kept.append(kept_round)
        if self._metric[key] is not None:
            self._add_values(key, kept_round.rounds, *kept_round.values(self._metric[key]))
        if len(kept) != CHOICE_ROUNDS and not is_recheck(len(kept)):
            return
        metric = chosen_metric(_cpu_use_of(kept))
        if metric != self._metric[key]:
            self._follow(key, metric, kept)
        if metric != "cpu":  # only a choice of CPU time is checked again
            del self._kept[key]

    def _follow(self, key: Key, metric: str, kept: list[KeptRound]) -> None:
        """Follow ``key`` on ``metric`` from the first of the rounds ``kept``, as if from the start."""
        self._metric[key] = metric
        self._running.pop(key, None)
        self._ratios[key], self._block[key] = [], []
        self._constant.pop(key, None)
        self.latest.pop(key, None)
        for r in kept:
            self._add_values(key, r.rounds, *r.values(metric))

    def _add(self, key: Key, rounds: int, base: list[Measured], cand: list[Measured]) -> None:
        """The log-ratio of round ``rounds`` (one of a block's when rounds come in blocks), kept."""
        metric = self._metric[key]
        self._add_values(key, rounds, _value(metric, base), _value(metric, cand))

    def _add_values(self, key: Key, rounds: int, b: float, c: float) -> None:
        """``_add`` of the round's two values."""
        if not (b > 0 and c > 0):  # a time of 0 (a timer that did not advance) has no ratio: as the analysis
            return
        if self.criteria.counts:
            self._follow_constant(key, b, c)
        ratio = math.log1p((c - b) / b)
        if self.block_rounds is not None:
            self._block[key].append(ratio)
            if rounds % self.block_rounds:
                return
            ratio, self._block[key] = middle(np.asarray(self._block[key], dtype=np.float64)), []
        if self.criteria.anytime:
            self._sequence(key).extend([ratio])
        else:
            self._ratios[key].append(ratio)

    def _follow_constant(self, key: Key, b: float, c: float) -> None:
        """Count the rounds in which a count has kept one value on each side (``_constant``)."""
        if key not in self._constant:
            self._constant[key] = (b, c, 1)
            return
        kept = self._constant[key]
        self._constant[key] = None if kept is None or (kept[0], kept[1]) != (b, c) else (b, c, kept[2] + 1)

    def _exact(self, key: Key):
        """The exact effect of a count that kept one value per side for enough rounds, else None."""
        kept = self._constant.get(key)
        if kept is None:
            return None
        b, c, rounds = kept
        return exact_effect(np.full(rounds, b), np.full(rounds, c), self.criteria.level)

    def _sequence(self, key: Key):
        """The running confidence sequence of comparison ``key``, made at its first value."""
        if key not in self._running:
            self._running[key] = RunningSequence(self.criteria.level_alpha, self.criteria.t_opt)
        return self._running[key]

    def decide(self) -> str | None:
        """A reason to stop when every comparison has a verdict, else None (updates ``latest``).
        In blocks, only right after a block has ended: the stored samples then hold whole blocks."""
        if self.block_rounds is not None and not self._block_ended:
            return None
        verdicts = [self._verdict(key) for key in self.keys]
        if isinstance(self.boundary, Boundary):
            return self._settled()
        if all(v.decided for v in verdicts) and self._sized():
            if len(verdicts) == 1:
                return f"the verdict was decided ({verdicts[0].verdict})"
            return "every comparison reached a verdict"
        return None

    def _sized(self) -> bool:
        """Whether every comparison's verdict may stop the rounds: always, unless a ``SizedChange``
        (``record``) asks a change's size to be known first."""
        return self.boundary is None or all(self.boundary.settles(*self.latest[key]) for key in self.keys)

    def _settled(self) -> str | None:
        """The reason to stop once every comparison lies on one side of the boundary, else None."""
        sides = {self.boundary.side(self.latest[key][1]) for key in self.keys}
        if UNDECIDED in sides:
            return None
        side = sides.pop() if len(sides) == 1 else "on one side or the other of"
        share = f" and {self.boundary.share:g} of its estimate" if self.boundary.share and side == ABOVE else ""
        return f"the interval lies {side} {self.boundary.at:+.3g}%{share}"

    def metric(self, key: Key | None = None) -> str | None:
        """What the verdict of ``key`` (the first comparison by default) is on; None while ``--metric
        auto`` has not chosen yet."""
        return self._metric[self.keys[0] if key is None else key]

    def values(self, key: Key | None = None) -> np.ndarray:
        """What the verdict of ``key`` (the first comparison by default) is drawn from so far: the
        per-round log-ratios, or one median per block of rounds."""
        key = self.keys[0] if key is None else key
        if self.criteria.anytime:
            return self._running[key].values if key in self._running else np.zeros(0)
        return np.asarray(self._ratios[key], dtype=np.float64)

    def current(self) -> list[Effect | None]:
        """Each comparison's effect now (None while no interval exists), for the progress line."""
        for key in self.keys:
            if key not in self.latest or not self.criteria.anytime:
                self._verdict(key)
        return [self.latest[key][1] for key in self.keys]

    def _verdict(self, key: Key) -> Verdict:
        exact = self._exact(key) if self.criteria.counts else None
        if exact is not None:
            found = verdict_of(lambda: (exact_record(exact, self.criteria), ()), self.criteria)
        elif self.criteria.anytime:
            running = self._sequence(key)
            found = verdict_of(lambda: anytime_effect(running), self.criteria)
        else:
            ratios = np.asarray(self._ratios[key])
            found = verdict_of(lambda: effect_of(ratios, self.criteria), self.criteria)
        self.latest[key] = found[:2]
        return found[0]
