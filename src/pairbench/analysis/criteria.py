"""How strict a comparison is: the criteria every verdict is judged by.

Kept apart from :mod:`pairbench.analysis.comparison` so that what a measuring
command needs before its first sample (the stopping rule's criteria) loads no
scipy: the statistics are imported while the first rounds run
(:mod:`pairbench.preload`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pairbench.settings import ALPHA_RANGE, Settings

T_OPT = 200  # rounds at which the confidence sequence is tightest (see stats.sequential)


@dataclass(frozen=True)
class Criteria:
    """How strict a comparison is: error rate, smallest change that matters, interval kind, family."""

    alpha: float = 0.01
    threshold: float = 1.0  # percent
    anytime: bool = True  # adaptive stopping: use the confidence sequence
    family: int = 1  # candidates compared with the baseline (the self-check excluded)

    def __post_init__(self):
        low, high = ALPHA_RANGE
        if not low <= self.alpha <= high:
            raise ValueError(f"alpha must lie between {low:g} and {high:g}, got {self.alpha!r}")
        if self.family < 1:
            raise ValueError(f"the family must hold at least 1 candidate, got {self.family!r}")

    @classmethod
    def of(cls, settings: Settings, family: int) -> Criteria:
        return cls(settings.decision.alpha, settings.decision.threshold, settings.sampling.adaptive,
                   max(family, 1))

    @property
    def level_alpha(self) -> float:
        """The per-comparison alpha after the Bonferroni split over the family."""
        return self.alpha / self.family
