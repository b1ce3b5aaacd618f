"""Verdict rules: every case of the mapping from an interval to words, and --fail-on."""

import math

import numpy as np
import pytest

from pairbench.notes import Note
from pairbench.verdict import Verdict, decide, matches_fail_on, moved, refuse, within

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
        (-0.99, 1.0, "equivalent", False),  # the threshold itself is inside: +1%, and -0.990% (1/1.01)
        (-1.0, 1.0, "inconclusive", False),  # -1% is a factor 1/0.99 = 1.0101 away: beyond 1.01
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


MIRROR = {"slower": "faster", "faster": "slower", "equivalent": "equivalent", "inconclusive": "inconclusive"}


def mirrored(low: float, high: float) -> tuple[float, float]:
    """The interval of the same comparison with the sides swapped: the log-ratios negated."""
    return 100.0 * math.expm1(-math.log1p(high / 100.0)), 100.0 * math.expm1(-math.log1p(low / 100.0))


def test_swapping_the_sides_mirrors_every_verdict_near_the_edges_of_the_window():
    # Before the window was judged on log-ratios, (-0.995%, +0.6%) was equivalent and its mirror
    # (-0.596%, +1.005%) inconclusive: a window of +-1% in percent is [ln 0.99, ln 1.01], not symmetric.
    assert decide(-0.995, 0.6, THRESHOLD).verdict == decide(*mirrored(-0.995, 0.6), THRESHOLD).verdict
    rng = np.random.default_rng(43)
    ends = np.concatenate([rng.uniform(-1.02, -0.98, 300), rng.uniform(0.98, 1.02, 300), rng.uniform(-3, 3, 300),
                           [-1.0, -100 / 101, 1.0, 0.0]])
    for threshold in (THRESHOLD, 0.5, 5.0):
        for low, high in zip(rng.choice(ends, 3000), rng.choice(ends, 3000), strict=True):
            low, high = min(low, high), max(low, high)
            one, other = decide(low, high, threshold), decide(*mirrored(low, high), threshold)
            assert (MIRROR[one.verdict], one.negligible) == (other.verdict, other.negligible), (low, high, threshold)


def test_a_change_is_within_the_threshold_by_its_factor_either_way():
    assert within(1.0, 1.0) and within(-100 / 101, 1.0) and within(-0.99, 1.0)
    assert not within(-1.0, 1.0) and not within(1.001, 1.0) and not within(-100.0, 1.0)
