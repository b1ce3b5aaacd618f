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

"Within ±threshold" is judged on the log-ratio: a change of p percent lies within
when |ln(1 + p/100)| <= ln(1 + threshold/100) (:func:`within`), so ±1% is the window
[-0.990%, +1%], a factor of 1.01 either way. The rule is the same with the sides swapped:
the candidate 1% slower is the baseline 0.990% faster, and both are within. A window
of ±1% in percent would not be, and an A/A comparison whose interval ends between -1%
and -0.990% would be ``equivalent`` one way and ``inconclusive`` the other. Every
threshold of the tool is applied through this rule (verdicts, negligible flags, the
rounds-needed plan, the boundaries of ``bisect``).
"""

from __future__ import annotations

import math

from pairbench.frozen import frozen
from pairbench.notes import Note

VERDICTS = ("faster", "slower", "equivalent", "inconclusive")
FAIL_ON_CHOICES = ("slower", "faster", "change", "never")


MOVED_REASON = ("the change itself moved during the run: no single change fits every round "
                "(the running interval is empty), so the interval of the last round is shown")


@frozen
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


def log_change(pct: float) -> float:
    """The log-ratio of a change of ``pct`` percent: ln(1 + pct/100); -inf at -100% and below."""
    return math.log1p(pct / 100.0) if pct > -100.0 else -math.inf


def within(pct: float, threshold: float) -> bool:
    """Whether a change of ``pct`` percent lies within ±``threshold`` percent, judged on the
    log-ratio (module docstring): |ln(1 + pct/100)| <= ln(1 + threshold/100). The same answer for
    the change seen from either side."""
    return abs(log_change(pct)) <= math.log1p(threshold / 100.0)


def decide(low: float, high: float, threshold: float) -> Verdict:
    """Apply the verdict rules to an interval ``[low, high]`` in percent."""
    if not low <= high:
        raise ValueError(f"interval bounds out of order: low {low!r} > high {high!r}")
    if not threshold > 0:
        raise ValueError(f"threshold must be positive, got {threshold!r}")
    inside = within(low, threshold) and within(high, threshold)
    if low > 0:
        return Verdict("slower", negligible=inside, reason="the interval lies above zero")
    if high < 0:
        return Verdict("faster", negligible=inside, reason="the interval lies below zero")
    if inside:
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
