"""Adaptive stopping: after each round, has every comparison reached a verdict?

The :class:`StoppingRule` is a sink of the sampler: it reads each finished
round's samples, keeps each comparison's log-ratios (in one
``RunningSequence`` when adaptive, so one more round costs O(n)), and decides
through the analysis's own :func:`~pairbench.analysis.comparison.verdict_of`,
so the verdict that stopped a run is the one ``analyse`` reports from the
stored samples. With ``--runs`` nothing stops early; the progress line asks
:meth:`StoppingRule.current` for the sign-test interval instead. The statistics
it uses are loaded before the first sample (``pairbench.preload``), so a look
costs no import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pairbench.analysis.criteria import Criteria
from pairbench.analysis.records import Effect
from pairbench.measure.sampler import RoundEnd, Sink
from pairbench.verdict import Verdict


class StoppingRule(Sink):
    """Follows the rounds and says when every comparison (candidate side x benchmark) is decided."""

    def __init__(self, criteria: Criteria, baseline: int, candidates: Sequence[int],
                 benchmarks: int = 1, *, benchmark_ids: Sequence[int] | None = None,
                 block_rounds: int | None = None):
        """Follows every candidate on benchmarks ``0 .. benchmarks - 1``, or on ``benchmark_ids``
        only (bench measures its benchmarks one at a time, a rule each). With ``block_rounds``
        (bench's blocks of fresh worker processes) each block of that many rounds is one value,
        its median log-ratio, as ``analysis.comparison.block_effects`` makes it, and the rule
        decides only when a block has just ended."""
        self.criteria = criteria
        self.baseline = baseline
        self.block_rounds = block_rounds
        self._block_ended = False
        ids = range(benchmarks) if benchmark_ids is None else benchmark_ids
        self.keys = [(b, c) for b in ids for c in candidates]
        # one store of each comparison's log-ratios: the running sequence when adaptive, a list with --runs
        self._running: dict = {}
        self._ratios: dict[tuple[int, int], list[float]] = {key: [] for key in self.keys}
        self._block: dict[tuple[int, int], list[float]] = {key: [] for key in self.keys}
        self.latest: dict[tuple[int, int], tuple[Verdict, Effect | None]] = {}

    def on_round(self, end: RoundEnd) -> None:
        if end.warmup:
            return
        # a time of 0 (a harness whose timer did not advance) has no ratio: the analysis refuses it too
        values = {(m.benchmark, m.side): m.value for m in end.samples if m.sample.ok and m.value > 0}
        fresh: dict[tuple[int, int], float] = {}
        for benchmark, candidate in self.keys:
            base, cand = values.get((benchmark, self.baseline)), values.get((benchmark, candidate))
            if base is not None and cand is not None:
                fresh[(benchmark, candidate)] = math.log1p((cand - base) / base)
        self._block_ended = self.block_rounds is not None and end.rounds % self.block_rounds == 0
        for key, ratio in fresh.items():
            if self.block_rounds is not None:
                self._block[key].append(ratio)
                if not self._block_ended:
                    continue
                ratio, self._block[key] = float(np.median(self._block[key])), []
            if self.criteria.anytime:
                self._sequence(key).extend([ratio])
            else:
                self._ratios[key].append(ratio)

    def _sequence(self, key: tuple[int, int]):
        """The running confidence sequence of comparison ``key``, made at its first value."""
        from pairbench.stats.sequential import RunningSequence

        if key not in self._running:
            self._running[key] = RunningSequence(self.criteria.level_alpha, self.criteria.t_opt)
        return self._running[key]

    def decide(self) -> str | None:
        """A reason to stop when every comparison has a verdict, else None (updates ``latest``).
        In blocks, only right after a block has ended: the stored samples then hold whole blocks."""
        if self.block_rounds is not None and not self._block_ended:
            return None
        verdicts = [self._verdict(key) for key in self.keys]
        if all(v.decided for v in verdicts):
            if len(verdicts) == 1:
                return f"the verdict was decided ({verdicts[0].verdict})"
            return "every comparison reached a verdict"
        return None

    def current(self) -> list[Effect | None]:
        """Each comparison's effect now (None while no interval exists), for the progress line."""
        for key in self.keys:
            if key not in self.latest or not self.criteria.anytime:
                self._verdict(key)
        return [self.latest[key][1] for key in self.keys]

    def _verdict(self, key: tuple[int, int]) -> Verdict:
        from pairbench.analysis.comparison import (  # loaded before the first sample (preload)
            anytime_effect,
            effect_of,
            verdict_of,
        )

        if self.criteria.anytime:
            running = self._sequence(key)
            found = verdict_of(lambda: anytime_effect(running), self.criteria)
        else:
            ratios = np.asarray(self._ratios[key])
            found = verdict_of(lambda: effect_of(ratios, self.criteria), self.criteria)
        self.latest[key] = found[:2]
        return found[0]
