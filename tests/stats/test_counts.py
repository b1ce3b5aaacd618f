"""The exact rule of counts that do not vary (``stats.counts``): when it decides, what it says, and
the bound it rests on, checked by exact enumeration (no value taken from our own code)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from pairbench.stats.counts import exact_effect, exact_rounds


@pytest.mark.parametrize("alpha, rounds", [(0.01, 7), (0.005, 8), (0.05, 5), (0.5, 2), (0.25, 2), (0.0078125, 7),
                                           (0.0005, 11)])
def test_the_rounds_are_the_fewest_whose_chance_of_misleading_is_at_most_alpha(alpha, rounds):
    # by hand: the least k with 2^-k <= alpha, at least 2 (0.01 -> 1/128 = 0.0078; 0.005 -> 1/256)
    assert exact_rounds(alpha) == rounds


def test_identical_counts_give_the_exact_ratio_once_there_are_enough_rounds():
    effect = exact_effect(np.full(8, 1000.0), np.full(8, 1005.0), 0.005)
    assert effect.estimate_pct == pytest.approx(0.5, rel=1e-12)
    assert (effect.rounds, effect.baseline, effect.candidate) == (8, 1000.0, 1005.0)
    assert exact_effect(np.full(7, 1000.0), np.full(7, 1005.0), 0.005) is None


def test_one_round_that_differs_leaves_the_exact_rule_out():
    base = np.full(20, 1000.0)
    base[13] = 1001.0
    assert exact_effect(base, np.full(20, 1000.0), 0.01) is None


def test_a_count_of_zero_has_no_ratio():
    assert exact_effect(np.zeros(10), np.full(10, 3.0), 0.01) is None


def test_unpaired_sides_are_refused():
    with pytest.raises(ValueError, match="paired rounds"):
        exact_effect(np.ones(8), np.ones(9), 0.01)


def misleading_chance(p: list[Fraction], x: list[int], q: list[Fraction], y: list[int], k: int) -> Fraction:
    """Exactly: the chance that k independent rounds all show one (baseline, candidate) pair whose
    ratio lies on another side of 1 than the median ratio's."""
    pairs = [(Fraction(y[j], x[i]), p[i] * q[j]) for i, j in itertools.product(range(len(p)), range(len(q)))]
    pairs.sort()
    total, median = Fraction(0), None
    for ratio, mass in pairs:
        total += mass
        if total >= Fraction(1, 2):
            median = ratio
            break

    def side(r):
        return (r > 1) - (r < 1)

    return sum(mass ** k for ratio, mass in pairs if side(ratio) != side(median))


@pytest.mark.parametrize("k", [2, 5, 7, 8])
def test_no_distribution_on_a_grid_misleads_the_exact_rule_more_often_than_two_to_the_minus_k(k):
    # exact enumeration over two-valued sides with masses in steps of 1/20 (Fractions, no rounding)
    worst = Fraction(0)
    for a, b in itertools.product(range(1, 20), repeat=2):
        p, q = [Fraction(a, 20), Fraction(20 - a, 20)], [Fraction(b, 20), Fraction(20 - b, 20)]
        for x, y in (([100, 100], [100, 105]), ([100, 95], [100, 100]), ([100, 104], [99, 103])):
            worst = max(worst, misleading_chance(p, x, q, y, k))
    assert worst <= Fraction(1, 2 ** k)
    assert worst >= Fraction(1, 2 ** k) * Fraction(9, 10) ** k  # the bound is nearly reached: q = 0.45


def test_an_aa_comparison_shows_two_different_constants_with_chance_at_most_two_four_to_the_minus_k():
    # both sides one distribution: P(each side constant, the two different) = (sum p^k)^2 - sum p^(2k),
    # at most 2 * 4^-k (two values of 1/2 each), by enumeration over a grid of three-valued distributions
    for k in (3, 5, 8):
        worst = 0.0
        for a, b in itertools.product(range(1, 20), repeat=2):
            if a + b >= 20:
                continue
            p = np.array([a, b, 20 - a - b]) / 20
            worst = max(worst, float(np.sum(p ** k) ** 2 - np.sum(p ** (2 * k))))
        assert worst <= 2 * 4.0 ** -k + 1e-15
        assert math.isclose(2 * 4.0 ** -k, 2 * (0.5 ** k) ** 2)
