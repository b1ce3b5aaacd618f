"""Verdict rules: every case of the mapping from an interval to words, and --fail-on."""

import pytest

from pairbench.notes import Note
from pairbench.verdict import Verdict, decide, matches_fail_on, moved, refuse

THRESHOLD = 1.0


@pytest.mark.parametrize(
    ("low", "high", "verdict", "negligible"),
    [
        (2.4, 3.8, "slower", False),       # excludes zero, beyond the threshold
        (0.2, 0.8, "slower", True),        # excludes zero, inside ±threshold: real but negligible
        (0.5, 1.5, "slower", False),       # excludes zero, straddles the threshold
        (-3.8, -2.4, "faster", False),
        (-0.8, -0.2, "faster", True),
        (-0.5, 0.5, "equivalent", False),  # includes zero, inside ±threshold
        (-1.0, 1.0, "equivalent", False),  # the threshold itself is inside
        (-0.5, 2.0, "inconclusive", False),
        (-3.0, 3.0, "inconclusive", False),
        (0.0, 0.5, "equivalent", False),   # touching zero is including it
    ],
)
def test_decide_maps_each_interval_to_its_verdict(low, high, verdict, negligible):
    result = decide(low, high, THRESHOLD)
    assert (result.verdict, result.negligible) == (verdict, negligible)
    assert result.reason


def test_decide_rejects_reversed_bounds_and_non_positive_thresholds():
    with pytest.raises(ValueError, match="out of order"):
        decide(2.0, 1.0, THRESHOLD)
    with pytest.raises(ValueError, match="threshold"):
        decide(-1.0, 1.0, 0.0)


def test_refused_verdict_is_inconclusive_and_keeps_why_as_a_note():
    why = Note("not-enough-data", {"needed": 8, "got": 3, "purpose": "paired-interval"})
    verdict = refuse(why)
    assert verdict.verdict == "inconclusive" and verdict.refused and verdict.refusal == why
    assert not verdict.decided


def test_a_moved_change_is_inconclusive_and_not_refused():
    verdict = moved()
    assert verdict.verdict == "inconclusive" and not verdict.refused and "moved" in verdict.reason


@pytest.mark.parametrize(
    ("verdict", "fail_on", "fails"),
    [
        (Verdict("slower"), "slower", True),
        (Verdict("slower"), "faster", False),
        (Verdict("slower"), "change", True),
        (Verdict("slower"), "never", False),
        (Verdict("faster"), "faster", True),
        (Verdict("faster"), "change", True),
        (Verdict("slower", negligible=True), "slower", False),
        (Verdict("equivalent"), "change", False),
        (Verdict("inconclusive"), "change", False),
    ],
)
def test_fail_on_matches_only_verdicts_that_matter(verdict, fail_on, fails):
    assert matches_fail_on(verdict, fail_on) is fails
