"""The pure parts of bench: the iteration count, the blocks a verdict is drawn from, the stopping rule."""

from __future__ import annotations

import numpy as np
import pytest

from pairbench.analysis.comparison import Criteria
from pairbench.analysis.pairing import block_effects
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.sampler import Measured, RoundEnd
from pairbench.measure.worker import (
    PROBE_SAMPLES,
    PROBE_SAMPLES_MOST,
    choose_iterations,
    quickest_probe,
)
from pairbench.model import Sample
from pairbench.sessions.lanes import block_rounds
from pairbench.worker.protocol import MAX_ITERATIONS


@pytest.mark.parametrize(("ns_per_iteration", "expected"), [
    (1.0, 1 << 20),  # 1 ns: 2^20 iterations make 1.05 ms, the power of two nearest 1 ms
    (1000.0, 1024),  # 1 µs
    (3000.0, 256),  # 3 µs: 333 is nearer 256 than 512 on a log scale
    (2_000_000.0, 1),  # slower than the sample time: one iteration
])
def test_the_iteration_count_is_the_power_of_two_nearest_the_sample_time(ns_per_iteration, expected):
    probes = []

    def probe(n):
        probes.append(n)
        return int(n * ns_per_iteration)

    assert choose_iterations(probe, 1_000_000) == expected
    assert len(probes) <= 6  # a 1 ns body needs a few probes, not twenty doublings


def test_a_body_the_timer_cannot_see_gets_the_largest_count_without_looping_forever():
    assert choose_iterations(lambda n: 0, 1_000_000) == MAX_ITERATIONS


def scripted(*samples):
    """A probe's ``take`` returning ``samples`` (time, interrupted) in turn; ``taken`` counts them."""
    given = iter(samples)

    def take():
        take.taken += 1
        return next(given)

    take.taken = 0
    return take


def test_a_probe_counts_its_quickest_sample_so_a_preempted_one_does_not_size_the_samples():
    take = scripted((4_036_000, True), (36_000, False), (35_000, False))
    assert quickest_probe(take) == 36_000 and take.taken == PROBE_SAMPLES


def test_a_probe_takes_more_samples_while_every_one_was_interrupted_and_stops_at_the_first_quiet_one():
    take = scripted((4_000_000, True), (3_000_000, True), (900_000, True), (40_000, False), (1, False))
    assert quickest_probe(take) == 40_000 and take.taken == 4


def test_a_probe_whose_every_sample_is_interrupted_stops_after_the_most_it_takes():
    take = scripted(*[(1_000_000 - i, True) for i in range(PROBE_SAMPLES_MOST + 5)])
    assert quickest_probe(take) == 1_000_000 - (PROBE_SAMPLES_MOST - 1) and take.taken == PROBE_SAMPLES_MOST


def test_block_effects_are_each_blocks_median_in_the_order_the_blocks_ran():
    ratios = np.array([0.1, 0.3, 0.2, -1.0, -2.0, 5.0, 5.0, 5.0])
    blocks = np.array([2, 2, 2, 0, 0, 1, 1, 1])
    assert block_effects(ratios, blocks).tolist() == [0.2, -1.5, 5.0]


def test_a_block_lasts_about_64_ms_of_samples_within_bounds():
    assert block_rounds(2, 1_000_000) == 32
    assert block_rounds(2, 10_000) == 256
    assert block_rounds(2, 100_000_000) == 8


def _round(number: int, base: float, cand: float) -> RoundEnd:
    samples = tuple(Measured(side, 0, Sample(wall_ns=int(value), pair=number - 1))
                    for side, value in ((0, base), (1, cand)))
    return RoundEnd(number - 1, False, samples, number, 2 * number, 0)


def test_in_blocks_the_rule_decides_only_when_a_block_has_just_ended():
    rule = StoppingRule(Criteria(alpha=0.01, anytime=True), 0, [1], benchmark_ids=(0,), block_rounds=4)
    decisions = []
    for number in range(1, 4 * 40 + 1):
        rule.on_round(_round(number, 1000.0, 2000.0))  # twice as slow: decided once the sequence is bounded
        decisions.append(rule.decide())
    stops = [i + 1 for i, reason in enumerate(decisions) if reason]
    assert stops and all(n % 4 == 0 for n in stops)
    assert all(reason is None for i, reason in enumerate(decisions) if (i + 1) % 4)
