"""The pure parts of benchmarks/sequential_power.py and benchmarks/symmetric_betting.py: the
vectorised decision rules agree with pairbench's own sequence, the betting sequence keeps its
error rate, the fixed-n intervals use the exact ranks. Small seeded simulations only; the study
itself is in benchmarks/RESULTS.md ("Fewer rounds at the same error rate")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scripts import benchmark_script

from pairbench.stats import confidence_sequence
from pairbench.stats._order import median_interval_ranks
from pairbench.stats.sequential import running_bounds

power = benchmark_script("sequential_power")
betting = benchmark_script("symmetric_betting")


def test_the_vectorised_sign_rule_decides_where_the_running_sequence_itself_first_decides():
    rng = np.random.default_rng(3)
    d = rng.normal(0.01, 0.02, (20, 150))
    found = power.sign_decisions(d, 0.01, 30, truth=0.01)
    for run, rounds, verdict in zip(d, found["rounds"], found["verdict"], strict=True):
        for t in range(1, d.shape[1] + 1):
            low, high = running_bounds(run[:t], 0.01, 30)
            decided = low > 0 or high < 0 or (low >= -power.THRESHOLD and high <= power.THRESHOLD)
            if decided:
                assert t == rounds and verdict == ("slower" if low > 0 else "faster" if high < 0 else "equivalent")
                break
        else:
            assert verdict == "inconclusive"


def test_a_mixture_of_one_tuning_has_that_tunings_ranks():
    from pairbench.stats.sequential import upper_ranks

    t = np.arange(1, 400)
    assert np.array_equal(power.mixed_upper_ranks(t, 0.01, (30,)), upper_ranks(t, 0.01, 30, "beta-binomial"))


def test_the_betting_sequence_rarely_excludes_the_centre_of_symmetric_noise():
    # alpha 0.05: 2.5% a side at most; 400 heavy-tailed runs looked at after each of 500 rounds
    rng = np.random.default_rng(11)
    d = rng.standard_t(2, (400, 500)) * 0.02 + 0.004
    above, below = betting.SymmetricBetting(0.05).excluded(d, [0.004])
    ever = float(np.mean(above[:, -1, 0] | below[:, -1, 0]))
    assert ever <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)


def test_the_betting_sequence_finds_a_clear_shift_and_its_exclusions_only_grow():
    rng = np.random.default_rng(12)
    d = rng.normal(0.03, 0.02, (50, 200))
    above, below = betting.SymmetricBetting(0.01).excluded(d, [0.0, 0.06])
    assert above[:, -1, 0].all() and below[:, -1, 1].all()  # 0 below the centre, 6% above it
    assert not below[:, :, 0].any()
    assert np.all(np.diff(above[:, :, 0].astype(int), axis=1) >= 0)


def test_bets_use_only_the_rounds_before_them():
    rng = np.random.default_rng(13)
    d = rng.normal(0.0, 0.02, (1, 100))
    changed = d.copy()
    changed[0, 70:] *= 50  # later rounds must not change an earlier round's scale
    assert np.array_equal(betting.scales(d)[:, :70], betting.scales(changed)[:, :70], equal_nan=True)
    assert np.isnan(betting.scales(d)[0, : betting.WARMUP]).all()


@pytest.mark.parametrize("n", [8, 10, 30, 100])
def test_the_fixed_sign_interval_uses_the_exact_sign_test_ranks(n):
    d = np.arange(n, dtype=float)[None, :]
    low, high = power.fixed_interval(d, "sign", 0.01)
    ranks = median_interval_ranks(n, 0.99)
    assert (low[0], high[0]) == (ranks.low - 1, ranks.high - 1)


def test_too_few_rounds_give_no_fixed_sign_interval():
    low, high = power.fixed_interval(np.zeros((1, 7)), "sign", 0.01)
    assert low[0] == -math.inf and high[0] == math.inf


def test_the_sign_rule_counts_a_miss_where_the_sequence_excludes_the_truth():
    d = np.full((1, 40), 0.05)  # every round 5% slower: the sequence soon lies above 0
    found = power.sign_decisions(d, 0.01, 30, truth=0.0)
    assert found["missed"][0] and found["verdict"][0] == "slower"
    assert confidence_sequence(d[0], 0.01, 30).low > 0
