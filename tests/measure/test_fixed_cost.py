"""A sample's fixed cost and the floor it sets on the iteration count (``measure.fixed_cost``).

The rule is pure and tested on given figures; the expected values come from the ratio
(a*N + c)/(b*N + c) itself, computed here, never from the module."""

from __future__ import annotations

import pytest

from pairbench.measure.fixed_cost import (
    FIXED_COST_SHARE,
    FixedCost,
    ProbeTimes,
    effect_pull,
    fixed_cost,
    floor_sample,
    floored_iterations,
    measure_fixed_cost,
)
from pairbench.notes import Subject
from pairbench.report.wording import word


def measured_effect(a_ns: float, b_ns: float, n: int, c_ns: float) -> float:
    """The effect a comparison of calls of a_ns against b_ns measures with c_ns added to each sample."""
    return (a_ns * n + c_ns) / (b_ns * n + c_ns) - 1


@pytest.mark.parametrize(("a_ns", "b_ns", "n", "c_ns"), [(35_000, 10_000, 1, 12_000), (31_500, 9_000, 4, 1_100),
                                                         (9_000, 31_500, 4, 1_100), (1_000, 1_000, 8, 900)])
def test_a_fixed_cost_pulls_the_effect_towards_zero_by_its_share_of_the_baselines_sample(a_ns, b_ns, n, c_ns):
    """The effect a/b - 1 against the baseline b; the pull the quicker side's sample gives bounds it."""
    true = a_ns / b_ns - 1
    assert measured_effect(a_ns, b_ns, n, c_ns) == pytest.approx(true * (1 - effect_pull(c_ns, b_ns * n)),
                                                                 rel=1e-12, abs=1e-15)
    bound = effect_pull(c_ns, min(a_ns, b_ns) * n)
    assert abs(measured_effect(a_ns, b_ns, n, c_ns)) >= abs(true) * (1 - bound) - 1e-15


def test_the_reported_bias_reproduces_last_sessions_short_sample_failure():
    """+252% measured as +89% at 1 call a sample: a fixed cost of about 12 us against a 10 us call."""
    assert 2.52 * (1 - effect_pull(12_000, 10_000)) == pytest.approx(2.52 * 10 / 22)
    assert 2.52 * (1 - effect_pull(12_000, 10_000)) < 1.2


def test_the_count_is_doubled_until_the_fixed_cost_is_at_most_one_percent_of_the_quicker_sample():
    # 4 calls of 9 us on the quicker side, 1.1 us a sample: 1.1 <= 0.01 * 9 * n needs n >= 12.2, so 16
    assert floored_iterations(4, 36_000, 1_100) == 16
    assert FIXED_COST_SHARE * 9_000 * 16 >= 1_100 and FIXED_COST_SHARE * 9_000 * 8 < 1_100


def test_a_count_whose_samples_are_long_enough_is_kept():
    assert floored_iterations(128, 128 * 9_000, 1_100) == 128
    assert floored_iterations(64, 1_000_000, 0.0) == 64


def test_the_floor_stops_at_the_protocols_largest_count():
    assert floored_iterations(1, 0.001, 1e9) == 1 << 40


def test_the_fixed_cost_is_the_larger_median_of_wall_and_cpu_time_so_one_preempted_sample_does_not_move_it():
    empty = [(270, 960), (280, 1_000), (260, 980), (5_000_000, 5_000_000), (275, 990)]
    assert fixed_cost(empty) == FixedCost(275, 990) and fixed_cost(empty).ns == 990
    assert fixed_cost([]).ns == 0.0


def test_the_probes_give_the_quicker_side_at_the_largest_count_probed():
    probes = ProbeTimes()
    for side, n, ns in [(0, 1, 50_000), (1, 1, 20_000), (0, 4, 36_000), (1, 4, 126_000), (0, 4, 38_000)]:
        probes.keep(side, n, ns)
    assert probes.quickest_at(4) == 36_000 and probes.quickest_at(16) == 144_000
    assert probes.quickest_at(4, wall_fixed_ns=300) == 35_700  # its calls, without the clock reads
    assert probes.quickest_at(4, wall_fixed_ns=30_000) == 18_000  # a cost beyond half a probe: half of it
    assert ProbeTimes().quickest_at(4) is None


def test_a_raised_sample_is_noted_with_the_pull_at_the_length_asked_and_at_the_new_one():
    probes = ProbeTimes()
    probes.keep(0, 1, 9_000)
    probes.keep(1, 1, 31_500)
    floor = floor_sample(1, probes, FixedCost(0, 1_100), 10_000)
    assert floor.raised and floor.iterations == 16
    note = floor.note(Subject(benchmark="parse"))
    assert note.code == "sample-time-raised" and note.subject.benchmark == "parse"
    assert note.data["pull_asked"] == pytest.approx(1_100 / 10_100)
    assert note.data["pull"] == pytest.approx(1_100 / (16 * 9_000 + 1_100)) and note.data["pull"] <= 0.01
    text = word(note, "ns")
    assert "--sample-time 10.0 µs was raised" in text and "16 iterations, not 1" in text and "10.9%" in text


def test_a_sample_long_enough_is_not_raised_and_nothing_probed_keeps_the_count():
    probes = ProbeTimes()
    probes.keep(0, 64, 1_000_000)
    assert not floor_sample(64, probes, FixedCost(300, 1_100), 1_000_000).raised
    assert floor_sample(8, ProbeTimes(), FixedCost(300, 1_100), 10_000).iterations == 8


def test_the_python_workers_timed_loop_has_a_fixed_cost_to_measure():
    """Reading two clocks costs something on any machine; the figure itself is not asserted."""
    assert measure_fixed_cost(5).ns > 0
