"""Blocks of fresh worker processes that disagree about the effect are said to, with their spread;
blocks that agree, or differ by a few percent or by what their rounds' noise explains, are not."""

from __future__ import annotations

import math

import numpy as np
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.analysis.blocks import (
    _autocorrelation_factor,
    block_medians,
    blocks_differ,
    rounds_by_block,
)
from pairbench.model import BenchmarkKey
from pairbench.report.wording import word

ROUNDS = 20


def differ(values, blocks):
    """The note on these rounds, grouped by block as ``comparison.compare`` groups them."""
    groups = rounds_by_block(values, blocks)
    return blocks_differ(groups, block_medians(groups))


def rounds_of(block_effects, noise=None):
    """Per-round log-ratios: ROUNDS rounds of each block at its effect (a ratio), plus ``noise``."""
    values = np.repeat(np.log(block_effects), ROUNDS)
    blocks = np.repeat(np.arange(len(block_effects)), ROUNDS)
    return (values if noise is None else values + noise), blocks


def test_blocks_in_two_groups_are_said_to_differ_with_their_10th_and_90th_percentile():
    # five blocks measure 1.46 (one process slowed), five 2.97: sorted, the 10th percentile lies at
    # position 0.9 (both 1.46), the 90th at 8.1 (both 2.97); the rounds have no noise at all
    values, blocks = rounds_of([1.46, 2.97, 2.97, 1.46, 2.97, 1.46, 1.46, 2.97, 2.97, 1.46])
    note = differ(values, blocks)
    assert note is not None and note.code == "blocks-differ"
    assert note.data["blocks"] == 10 and note.data["noise_pct"] == 0.0
    assert math.isclose(note.data["low_pct"], 46.0) and math.isclose(note.data["high_pct"], 197.0)


def test_blocks_that_agree_are_not_said_to_differ_under_heavy_round_noise():
    rng = np.random.default_rng(3)
    values, blocks = rounds_of([3.0] * 12, rng.standard_t(3, 12 * ROUNDS) * 0.3)
    assert differ(values, blocks) is None


def test_processes_a_few_percent_apart_are_not_said_to_differ():
    # 10th..90th percentile 0.95..1.12: 18% as a ratio, under the 20% the rule asks
    values, blocks = rounds_of([0.95, 1.0, 1.05, 1.12, 0.97, 1.02, 1.12, 0.95])
    assert differ(values, blocks) is None


def test_a_spread_the_rounds_noise_explains_is_not_said_to_differ():
    # block medians 1.0 and 1.5 alternate, but each block's rounds scatter over ±60%: a median of
    # 20 such rounds is uncertain by about 1.25 * 0.6 * 1.48 / sqrt(20) in log terms
    pattern = np.tile([-0.6, -0.3, 0.0, 0.3, 0.6], ROUNDS // 5)
    values, blocks = rounds_of([1.0, 1.5] * 4, np.tile(pattern, 8))
    assert differ(values, blocks) is None
    assert differ(*rounds_of([1.0, 1.5] * 4)) is not None  # the same medians without the noise


def test_fewer_than_four_blocks_of_five_rounds_say_nothing():
    assert differ(*rounds_of([1.0, 3.0, 1.0])) is None
    values = np.log([1.0] * 4 + [3.0] * 4 + [1.0] * 4 + [3.0] * 20)
    blocks = np.repeat([0, 1, 2, 3], [4, 4, 4, 20])  # three blocks of four rounds are left out
    assert differ(values, blocks) is None


def test_rounds_in_any_order_are_grouped_by_their_block_in_round_order():
    values, blocks = rounds_of([1.46, 2.97] * 3)
    order = np.random.default_rng(5).permutation(values.size)
    shuffled = differ(values[order], blocks[order])
    assert shuffled is not None and shuffled.data == differ(values, blocks).data


def test_the_autocorrelation_factor_is_the_ar1_factor_of_the_pooled_lag1_correlation():
    # one block of deviations 1, 1, -1, -1: lag products 1, -1, 1 sum to 1 over a total of 4
    assert math.isclose(_autocorrelation_factor([np.array([1.0, 1.0, -1.0, -1.0])]), math.sqrt(1.25 / 0.75))
    assert _autocorrelation_factor([np.array([1.0, -1.0, 1.0, -1.0])]) == 1.0  # negative: no narrowing
    assert _autocorrelation_factor([np.zeros(5)]) == 1.0
    assert math.isclose(_autocorrelation_factor([np.ones(100)]), math.sqrt(1.95 / 0.05))  # at most 0.95


def test_a_bench_comparison_whose_blocks_disagree_carries_the_note_and_says_its_spread():
    base = 1_000_000.0 * np.ones(8 * ROUNDS)
    ratios = np.repeat([1.46, 2.97] * 4, ROUNDS)
    blocks = {"block": np.repeat(np.arange(8), ROUNDS)}
    samples = {(0, 0): series(base, start_seq=0, stride=2, metrics=blocks),
               (0, 1): series(base * ratios, start_seq=1, stride=2, metrics=blocks)}
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey("loop")], runs=8 * ROUNDS)
    (comparison,) = analyse(run).comparisons
    codes = [n.code for n in comparison.notes]
    assert "process-blocks" in codes and "blocks-differ" in codes
    (note,) = [n for n in comparison.notes if n.code == "blocks-differ"]
    assert "from +46.0% to +197.0%" in word(note) and "a rerun may give another" in word(note)


def test_the_normal_quantile_the_rule_uses_is_scipys():
    from scipy import stats

    from pairbench.analysis import blocks

    assert float(stats.norm.ppf(0.9)) == blocks._Z90
