"""Verdict rules: the only place that turns an effect interval into words a CI system can gate on.

Given the interval [low, high] of the relative change of a candidate against its
baseline (percent; positive = candidate slower) and the smallest change that
matters, ``threshold`` (percent, > 0):

=============  ==========================================================
``slower``     low > 0: the interval excludes zero on the slow side
``faster``     high < 0: the interval excludes zero on the fast side
``equivalent`` the interval includes zero and lies within ±threshold
``inconclusive`` anything else (or a verdict refused: too few rounds, no variance)
=============  ==========================================================

``slower``/``faster`` are flagged ``negligible`` when the whole interval lies
within ±threshold: real, but smaller than what matters. ``--fail-on`` gates on
verdicts that are not negligible.
"""

from __future__ import annotations

from dataclasses import dataclass

from pairbench.notes import Note

VERDICTS = ("faster", "slower", "equivalent", "inconclusive")
FAIL_ON_CHOICES = ("slower", "faster", "change", "never")


MOVED_REASON = ("the change itself moved during the run: no single change fits every round "
                "(the running interval is empty), so the interval of the last round is shown")


@dataclass(frozen=True)
class Verdict:
    """The decision for one comparison, with the rule that gave it in words.

    A verdict that could not honestly be given is ``inconclusive`` with the
    ``refusal`` that says why (a note: too few rounds, no variance).
    """

    verdict: str
    negligible: bool = False
    reason: str = ""
    refusal: Note | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def refused(self) -> bool:
        return self.refusal is not None

    @property
    def decided(self) -> bool:
        """True for any verdict other than inconclusive."""
        return self.verdict != "inconclusive"


def decide(low: float, high: float, threshold: float) -> Verdict:
    """Apply the verdict rules to an interval ``[low, high]`` in percent."""
    if not low <= high:
        raise ValueError(f"interval bounds out of order: low {low!r} > high {high!r}")
    if not threshold > 0:
        raise ValueError(f"threshold must be positive, got {threshold!r}")
    within = -threshold <= low and high <= threshold
    if low > 0:
        return Verdict("slower", negligible=within, reason="the interval lies above zero")
    if high < 0:
        return Verdict("faster", negligible=within, reason="the interval lies below zero")
    if within:
        return Verdict("equivalent", reason=f"the interval includes zero and lies within ±{threshold:g}%")
    return Verdict("inconclusive", reason=f"the interval includes zero and reaches beyond ±{threshold:g}%")


def refuse(why: Note) -> Verdict:
    """An ``inconclusive`` verdict given because no verdict can honestly be given, and ``why``."""
    return Verdict("inconclusive", refusal=why)


def moved() -> Verdict:
    """``inconclusive``: the running interval became empty, so no single change fits every round."""
    return Verdict("inconclusive", reason=MOVED_REASON)


def matches_fail_on(verdict: Verdict, fail_on: str) -> bool:
    """Whether ``verdict`` should fail a CI job run with ``--fail-on fail_on``."""
    if fail_on not in FAIL_ON_CHOICES:
        raise ValueError(f"fail_on must be one of {FAIL_ON_CHOICES}, got {fail_on!r}")
    if verdict.negligible or fail_on == "never":
        return False
    if fail_on == "change":
        return verdict.verdict in ("slower", "faster")
    return verdict.verdict == fail_on
