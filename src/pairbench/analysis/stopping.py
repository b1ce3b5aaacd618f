"""Adaptive stopping: after each round, has every comparison reached a verdict?

The :class:`StoppingRule` is a sink of the sampler: it reads each finished
round's samples, keeps each comparison's log-ratios (in one
``RunningSequence`` when adaptive, so one more round costs O(n)), and decides
through the analysis's own :func:`~pairbench.analysis.comparison.verdict_of`,
so the verdict that stopped a run is the one ``analyse`` reports from the
stored samples. With ``--runs`` nothing stops early; the progress line asks
:meth:`StoppingRule.current` for the sign-test interval instead.

The rule looks only once the statistics are loaded (``pairbench.preload``):
until then it keeps the log-ratios and says nothing. Skipping looks leaves the
anytime-valid verdict valid; it can only stop a few rounds later.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pairbench import preload
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.records import Effect
from pairbench.measure.sampler import Measured, RoundEnd, Sink
from pairbench.model import metric_total
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
        # one store of each comparison's log-ratios: the running sequence when adaptive (made once the
        # statistics are loaded, fed what waited in _pending), a list with --runs
        self._running: dict = {}
        self._pending: dict[tuple[int, int], list[float]] = {key: [] for key in self.keys}
        self._ratios: dict[tuple[int, int], list[float]] = {key: [] for key in self.keys}
        self._block: dict[tuple[int, int], list[float]] = {key: [] for key in self.keys}
        self.latest: dict[tuple[int, int], tuple[Verdict, Effect | None]] = {}

    def on_round(self, end: RoundEnd) -> None:
        if end.warmup:
            return
        values = {(m.benchmark, m.side): self._value(m) for m in end.samples if m.sample.ok}
        fresh: dict[tuple[int, int], float] = {}
        for benchmark, candidate in self.keys:
            base, cand = values.get((benchmark, self.baseline)), values.get((benchmark, candidate))
            if base is not None and cand is not None and base > 0 and cand > 0:  # as comparison.paired_values
                fresh[(benchmark, candidate)] = math.log1p((cand - base) / base)
        self._block_ended = self.block_rounds is not None and end.rounds % self.block_rounds == 0
        for key, ratio in fresh.items():
            if self.block_rounds is not None:
                self._block[key].append(ratio)
                if not self._block_ended:
                    continue
                ratio, self._block[key] = float(np.median(self._block[key])), []
            (self._pending if self.criteria.anytime else self._ratios)[key].append(ratio)
        if preload.ready():
            self._catch_up()

    def _value(self, measured: Measured) -> float:
        """One operation's value of a sample by the criteria's metric, as ``Samples.metric_values``
        gives it for stored samples (every benchmark measured is a time)."""
        sample = measured.sample
        total = metric_total(self.criteria.metric, sample.wall_ns, sample.user_ns, sample.sys_ns,
                             measured.metrics)
        return float(total) / sample.iterations

    def _catch_up(self) -> None:
        """Feed the running sequences the log-ratios that waited for the statistics to load."""
        from pairbench.stats.sequential import RunningSequence  # loaded (preload.ready)

        for key, waiting in self._pending.items() if self.criteria.anytime else ():
            if key not in self._running:
                self._running[key] = RunningSequence(self.criteria.level_alpha, self.criteria.t_opt)
            if waiting:
                self._running[key].extend(waiting)
                self._pending[key] = []

    def decide(self) -> str | None:
        """A reason to stop when every comparison has a verdict, else None (updates ``latest``).
        In blocks, only right after a block has ended: the stored samples then hold whole blocks."""
        if (self.block_rounds is not None and not self._block_ended) or not preload.ready():
            return None
        self._catch_up()
        verdicts = [self._verdict(key) for key in self.keys]
        if all(v.decided for v in verdicts):
            if len(verdicts) == 1:
                return f"the verdict was decided ({verdicts[0].verdict})"
            return "every comparison reached a verdict"
        return None

    def values(self, key: tuple[int, int] | None = None) -> np.ndarray:
        """What the verdict of ``key`` (the first comparison by default) is drawn from so far: the
        per-round log-ratios, or one median per block of rounds."""
        key = self.keys[0] if key is None else key
        kept = self._running[key].values if key in self._running else np.zeros(0)
        waiting = self._pending.get(key, []) if self.criteria.anytime else self._ratios[key]
        return np.concatenate([kept, np.asarray(waiting, dtype=np.float64)])

    def current(self) -> list[Effect | None]:
        """Each comparison's effect now (None while no interval exists, or while the statistics
        load), for the progress line."""
        if not preload.ready():
            return [self.latest[key][1] if key in self.latest else None for key in self.keys]
        self._catch_up()
        for key in self.keys:
            if key not in self.latest or not self.criteria.anytime:
                self._verdict(key)
        return [self.latest[key][1] for key in self.keys]

    def _verdict(self, key: tuple[int, int]) -> Verdict:
        from pairbench.analysis.comparison import (  # loaded (ready)
            anytime_effect,
            effect_of,
            verdict_of,
        )

        if self.criteria.anytime:
            running = self._running[key]
            found = verdict_of(lambda: anytime_effect(running), self.criteria)
        else:
            ratios = np.asarray(self._ratios[key])
            found = verdict_of(lambda: effect_of(ratios, self.criteria), self.criteria)
        self.latest[key] = found[:2]
        return found[0]
