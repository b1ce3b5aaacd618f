"""Verdicts on counts (``--metric instructions``, ``cycles-model``): exact when every round gave one
count per side, the interval as for time when they vary, each at half of alpha; and the note that
says when instructions and the other measure of the same rounds disagree."""

from __future__ import annotations

import numpy as np
import pytest
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.analysis.counts import disagreement
from pairbench.analysis.criteria import Criteria
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.sampler import Measured, RoundEnd
from pairbench.model import Sample


def counted_run(base: np.ndarray, cand: np.ndarray, metric: str = "instructions", cycles=None, **options):
    """A compare run of two commands whose samples hold these instruction counts (and, as Callgrind's
    do, the cache model's cycles when ``cycles`` gives both sides')."""
    n = len(base)
    metrics = [{"instructions": np.asarray(base, float)}, {"instructions": np.asarray(cand, float)}]
    if cycles is not None:
        for m, c in zip(metrics, cycles, strict=True):
            m["cycles_model"] = np.asarray(c, float)
    times = np.full(n, 5e8)  # a program slowed under Callgrind: the same on both sides
    samples = {(0, s): series(times, start_seq=s, stride=2, user_ns=times * 0.9, metrics=metrics[s])
               for s in range(2)}
    return make_run("compare", [side("old", "baseline"), side("new", "candidate")], samples,
                    metric=metric, **options)


def only(run):
    (comparison,) = analyse(run).comparisons
    return comparison


def test_identical_counts_decide_exactly_after_the_rounds_half_alpha_needs():
    comparison = only(counted_run(np.full(8, 1000.0), np.full(8, 1005.0)))
    assert comparison.verdict.verdict == "slower" and comparison.metric == "instructions"
    assert comparison.effect.method.startswith("exact")
    assert comparison.effect.low == comparison.effect.high == pytest.approx(0.5, rel=1e-9)


def test_an_aa_comparison_of_identical_counts_is_equivalent_at_once():
    comparison = only(counted_run(np.full(8, 1000.0), np.full(8, 1000.0)))
    assert comparison.verdict.verdict == "equivalent"


def test_seven_identical_rounds_are_too_few_at_alpha_001():
    comparison = only(counted_run(np.full(7, 1000.0), np.full(7, 1005.0)))
    assert comparison.verdict.verdict == "inconclusive"


def test_counts_that_vary_take_the_interval_with_half_of_alpha():
    rng = np.random.default_rng(3)
    base = 100_000 + rng.integers(0, 50, 60)
    comparison = only(counted_run(base, (base * 1.03).round() + rng.integers(0, 50, 60)))
    assert comparison.verdict.verdict == "slower"
    assert not comparison.effect.method.startswith("exact")
    assert comparison.effect.confidence == pytest.approx(1 - 0.005)


def test_the_stopping_rule_stops_where_the_analysis_decides():
    criteria = Criteria(alpha=0.01, threshold=1.0, metric="instructions")
    rule = StoppingRule(criteria, 0, [1])
    decided_at = None
    for n in range(1, 20):
        samples = tuple(Measured(s, 0, Sample(wall_ns=1000), {"instructions": v}) for s, v in ((0, 500.0), (1, 502.0)))
        rule.on_round(RoundEnd(n, False, samples, n, 2 * n, 0))
        if rule.decide():
            decided_at = n
            break
    assert decided_at == criteria.exact_rounds() == 8
    assert rule.latest[(0, 1)][0].verdict == "slower"


def test_instructions_that_fall_while_the_cache_model_rises_carry_the_disagreement_note():
    n = 8
    comparison = only(counted_run(np.full(n, 1000.0), np.full(n, 970.0),
                                  cycles=(np.full(n, 3000.0), np.full(n, 3600.0))))
    assert comparison.verdict.verdict == "faster"
    notes = {note.code: note for note in comparison.notes}
    assert notes["counts-disagree"].data["how"] == "direction"
    assert notes["counts-disagree"].data["other"] == "cycles-model"
    assert "times-under-callgrind" in notes


def test_cycles_that_vary_a_little_still_flag_a_disagreement_in_the_rounds_an_exact_verdict_takes():
    # as a table lookup's cache misses under Callgrind: the instructions fixed, the cycles varying by a few
    n, rng = 8, np.random.default_rng(5)
    comparison = only(counted_run(np.full(n, 6150.0), np.full(n, 5127.0),
                                  cycles=(6663 + rng.integers(0, 3, n), 22050 + rng.integers(0, 25, n))))
    assert comparison.verdict.verdict == "faster" and comparison.rounds == n
    assert "counts-disagree" in {note.code for note in comparison.notes}


def test_instructions_and_cycles_that_agree_carry_no_disagreement_note():
    comparison = only(counted_run(np.full(8, 1000.0), np.full(8, 1030.0),
                                  cycles=(np.full(8, 3000.0), np.full(8, 3100.0))))
    notes = {note.code: note for note in comparison.notes}
    assert "counts-disagree" not in notes
    assert notes["counts-beside"].data["other_estimate"] == pytest.approx(100 / 30, rel=1e-9)  # shown beside


@pytest.mark.parametrize("verdict, other, expected", [
    ((-3.0, -3.0, -3.0), (12.0, 10.0, 14.0), "direction"),
    ((2.0, 1.5, 2.5), (9.0, 8.0, 10.0), "size"),
    ((2.0, 1.5, 2.5), (2.8, 2.6, 3.0), None),  # apart, but by less than the threshold
    ((2.0, -0.5, 4.0), (-1.0, -3.0, 0.5), None),  # overlapping
])
def test_disagreement_is_in_direction_or_in_size_beyond_the_threshold(verdict, other, expected):
    assert disagreement(verdict, other, threshold=1.0) == expected
