"""How strict a comparison is: the criteria every verdict is judged by.

Kept apart from :mod:`pairbench.analysis.comparison`, which loads the statistics:
the settings' checks and a session's set-up need the criteria, not the statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from pairbench import stats
from pairbench.frozen import frozen
from pairbench.settings import ALPHA_RANGE, COUNT_METRIC_CHOICES, DEFAULTS, METRIC_CHOICES, Settings
from pairbench.stats.sequential import first_bounded_n
from pairbench.verdict import log_change

T_OPT = DEFAULTS["tuned_rounds"]
"""The rounds at which the confidence sequence's mixture is tuned to be tightest (``stats.sequential``),
for new runs (a result stores its tuning: ``settings.Decision.tuned_rounds``).

Chosen by ``benchmarks/sequential_power.py`` (RESULTS.md, "Fewer rounds at the
same error rate"): tuned at 30 rounds rather than 200, the sequence is bounded
from 11 rounds instead of 18 at alpha 0.01 and at most one or two ranks wider
from 100 rounds on (69 against 68 of 100), so a 3% change is decided in about
two thirds of the rounds, a 1% change in up to 30% fewer, at the same error rate."""


def tuning_rounds(alpha: float, tuned: int = T_OPT) -> int:
    """``tuned``, or more at a level so small (a large family's share of alpha) that the mixture
    could not be tuned below twice the rounds that level needs at the very least (log2 1/alpha)."""
    return max(tuned, math.ceil(2.0 * math.log2(1.0 / alpha)))


@frozen
class Criteria:
    """How strict a comparison is: error rate, smallest change that matters, interval kind, family."""

    alpha: float = DEFAULTS["alpha"]
    threshold: float = DEFAULTS["threshold"]  # percent
    anytime: bool = True  # adaptive stopping: use the confidence sequence
    family: int = 1  # candidates compared with the baseline (the self-check excluded)
    tuned: int = T_OPT  # the rounds at which the confidence sequence is tightest
    holm_level: float | None = None  # a Holm step's own level, above alpha / family (``analysis.suite``)
    metric: str = "wall"  # what is compared: "wall" or "cpu" time, "instructions", "cycles-model", or "auto"

    def __post_init__(self):
        low, high = ALPHA_RANGE
        if not low <= self.alpha <= high:
            raise ValueError(f"alpha must lie between {low:g} and {high:g}, got {self.alpha!r}")
        if self.family < 1:
            raise ValueError(f"the family must hold at least 1 candidate, got {self.family!r}")
        if self.metric not in METRIC_CHOICES:
            raise ValueError(f"metric must be one of {METRIC_CHOICES}, got {self.metric!r}")

    @classmethod
    def of(cls, settings: Settings, family: int) -> Criteria:
        return cls(settings.decision.alpha, settings.decision.threshold, settings.sampling.adaptive,
                   max(family, 1), settings.decision.tuned_rounds, metric=settings.decision.metric)

    @property
    def counts(self) -> bool:
        """Whether the metric is a count (instructions, modelled cycles), which may be exact."""
        return self.metric in COUNT_METRIC_CHOICES

    @property
    def split(self) -> int:
        """How many rules share a comparison's alpha: two for a count (the exact rule of identical
        counts, ``stats.counts``, and the interval when they vary: each gets half, so the two together
        err at most alpha), else one."""
        return 2 if self.counts else 1

    @property
    def level_alpha(self) -> float:
        """The per-comparison alpha after the Bonferroni split over the family (and, for a count,
        its half the interval gets: ``split``)."""
        return self.alpha / self.family / self.split

    @property
    def level(self) -> float:
        """The level an interval (or the exact rule of counts) is computed at: ``level_alpha``, or a
        Holm step's (halved for a count)."""
        return self.level_alpha if self.holm_level is None else self.holm_level / self.split

    def at_holm_step(self, level: float) -> Criteria:
        """These criteria at a step of Holm's procedure: the interval at ``level``, from the same
        mixture (tuned at ``level_alpha``), whose p-value Holm adjusted."""
        return replace(self, holm_level=level)

    @property
    def t_opt(self) -> int:
        """The rounds the confidence sequence at ``level_alpha`` is tuned for (``tuning_rounds``)."""
        return tuning_rounds(self.level_alpha, self.tuned)

    def exact_rounds(self) -> int:
        """The rounds of identical counts that decide a count exactly (``stats.counts.exact_rounds``
        at ``level``)."""
        from pairbench.stats.counts import exact_rounds

        return exact_rounds(self.level)

    def first_verdict_round(self) -> int:
        """The values (rounds, or blocks) before which no verdict can be reached: the confidence
        sequence is unbounded below ``stats.sequential.first_bounded_n`` of them; 0 for fixed rounds.
        A bracket of rounds below it would stop every benchmark undecided."""
        if not self.anytime:
            return 0
        return first_bounded_n(self.level_alpha, self.t_opt)

ABOVE, BELOW, UNDECIDED = "above", "below", "inconclusive"


@frozen
class Boundary:
    """What a comparison of ``pairbench bisect`` decides instead of a verdict: whether the change
    lies above or below ``at`` percent (``analysis.bisection``). With ``share`` > 0, lying above
    also needs the interval's low end above ``share`` times its own estimate, which bounds the
    estimate by the true change over ``share`` (the step's rule: its size known within a factor of
    two at ``share`` 0.5). The stopping rule stops a comparison as soon as its side is decided.
    Changes are compared as log-ratios (``verdict.log_change``), like every threshold: "half the
    estimate" is half its log-ratio, the same share of the change seen from either side."""

    at: float  # percent
    share: float = 0.0

    def __post_init__(self):
        if not math.isfinite(self.at) or not 0.0 <= self.share < 1.0:
            raise ValueError(f"a boundary needs a finite change and a share in [0, 1), got {self.at!r}, "
                             f"{self.share!r}")

    def side(self, effect) -> str:
        """``above``, ``below`` or ``inconclusive``: where ``effect``'s interval (an ``Effect``, or
        None when there is none) lies; an interval that moved decides nothing."""
        if effect is None or effect.moved:
            return UNDECIDED
        at, low, high = log_change(self.at), log_change(effect.low), log_change(effect.high)
        if low > max(at, self.share * log_change(effect.estimate)):
            return ABOVE
        return BELOW if high < at else UNDECIDED


@frozen
class SizedChange:
    """What a link of ``pairbench record`` waits for besides its verdict: a change it decides (slower
    or faster, not negligible) stops its rounds only once the change's size is known within a factor
    of ``1 / share``: the interval's end nearest zero lies beyond ``share`` times the estimate (the
    rule of a bisect step's boundary, on log-ratios). A history names a step from one link, so an
    interval that excludes zero but reaches from a negligible change to a large one says too little:
    a Python function's link of two commits of the same code, one side of which something of the
    machine hit for a while, stopped at 19 blocks of rounds with -0.39% [-4.05%, -0.01%], which more
    rounds would have told from a step. Equivalent and negligible verdicts stop as they are."""

    share: float = 0.5

    def __post_init__(self):
        if not 0.0 < self.share < 1.0:
            raise ValueError(f"a share in (0, 1) is needed, got {self.share!r}")

    def settles(self, verdict, effect) -> bool:
        """Whether ``verdict`` (a ``verdict.Verdict``) on ``effect`` may stop the rounds."""
        if not verdict.decided:
            return False
        if verdict.verdict not in ("slower", "faster") or verdict.negligible:
            return True
        estimate = log_change(effect.estimate)
        if verdict.verdict == "slower":
            return log_change(effect.low) > self.share * estimate
        return log_change(effect.high) < self.share * estimate


def holm_steps(pvalues: Sequence[float], m: int, alpha: float) -> list[tuple[float, float]]:
    """Each of ``pvalues``' Holm-adjusted p-value in a family of ``m`` (the members not given count
    with p = 1), with the level of its step of Holm's procedure: alpha / (m - its rank)."""
    raw = np.array([*pvalues, *[1.0] * (m - len(pvalues))])
    adjusted = stats.holm(raw)
    rank = np.empty(raw.size, dtype=np.int64)
    rank[np.argsort(raw, kind="stable")] = np.arange(raw.size)
    return [(float(adjusted[i]), alpha / (m - int(rank[i]))) for i in range(len(pvalues))]
