"""Comparisons of constructed runs: the Bonferroni family, the running interval, rounds needed, notes."""

from __future__ import annotations

import numpy as np
import pytest
from runs import compare_run, series

from pairbench.analysis import analyse
from pairbench.analysis.comparison import Criteria, effect_of, rounds_needed, verdict_of
from pairbench.stats._order import smallest_n_for_median_interval
from pairbench.stats.sequential import first_bounded_n
from pairbench.verdict import MOVED_REASON

ROUNDS = 60
BASE = 10_000_000 + np.random.default_rng(3).integers(0, 200_000, ROUNDS)


def verdict_for(log_ratios, criteria):
    verdict, effect, _ = verdict_of(lambda: effect_of(np.asarray(log_ratios), criteria), criteria)
    return verdict, effect


def comparisons(walls, **options):
    return {c.candidate: c for c in analyse(compare_run(walls, **options)).comparisons}


def test_a_refused_candidate_still_counts_in_the_bonferroni_family():
    found = comparisons({"base": BASE, "slower": BASE * 1.05, "same": BASE}, runs=ROUNDS)
    assert found["same"].verdict.refused and found["same"].pvalue is None
    assert found["same"].verdict.refusal.code == "no-variance"
    raw = found["slower"].pvalue_unadjusted
    assert found["slower"].pvalue == pytest.approx(min(1.0, 2 * raw))
    assert found["slower"].adjustment == "bonferroni"


@pytest.mark.parametrize("runs", [ROUNDS, None])
@pytest.mark.parametrize("seed", range(12))
def test_an_adjusted_pvalue_below_alpha_always_goes_with_an_interval_that_excludes_zero(runs, seed):
    rng = np.random.default_rng(seed)
    shifts = rng.choice([1.0, 1.002, 1.004, 1.006, 1.05], 3)
    walls = {"base": BASE, **{f"c{i}": BASE * s * np.exp(rng.normal(0, 0.01, ROUNDS)) for i, s in enumerate(shifts)}}
    for c in comparisons(walls, runs=runs).values():
        excludes_zero = c.effect.low > 0 or c.effect.high < 0
        assert (c.pvalue <= 0.01) == excludes_zero == (c.verdict.verdict in ("slower", "faster"))


def test_a_change_that_vanishes_mid_run_is_inconclusive_and_says_the_change_moved():
    rng = np.random.default_rng(5)
    r = np.concatenate([0.05 + rng.normal(0, 0.001, 22), rng.normal(0, 0.003, 200)])
    verdict, effect = verdict_for(r, Criteria())
    assert verdict.verdict == "inconclusive" and verdict.reason == MOVED_REASON
    assert effect.moved and effect.pvalue < 0.01


@pytest.mark.parametrize("anytime", [False, True])
def test_a_constant_nonzero_ratio_is_refused_naming_it(anytime):
    verdict, effect = verdict_for(np.full(30, np.log(2.0)), Criteria(anytime=anytime))
    assert verdict.refused and effect is None
    assert verdict.refusal.code == "no-variance"
    assert verdict.refusal.data["change_pct"] == pytest.approx(100.0)


def test_too_few_rounds_are_refused_with_how_many_an_interval_needs():
    verdict, _ = verdict_for(np.random.default_rng(1).normal(0, 0.01, 5), Criteria())
    assert verdict.refusal.code == "not-enough-data"
    assert verdict.refusal.data == {"needed": first_bounded_n(0.01), "got": 5, "purpose": "anytime-interval",
                                    "alpha": 0.01}


@pytest.mark.parametrize("anytime", [False, True])
def test_rounds_needed_never_undercuts_the_rounds_an_interval_needs(anytime):
    criteria = Criteria(anytime=anytime)
    floor = first_bounded_n(0.01) if anytime else smallest_n_for_median_interval(0.99)
    for sd in (1e-4, 1e-3, 3e-3):
        r = np.random.default_rng(1).normal(0, sd, 4)
        assert 4 + rounds_needed(r, criteria) >= floor


def test_rounds_needed_is_at_least_one_for_an_inconclusive_adaptive_verdict():
    rng = np.random.default_rng(2)
    for _ in range(50):
        r = rng.normal(0.006, 0.01, 40)
        if verdict_for(r, Criteria())[0].verdict == "inconclusive":
            assert rounds_needed(r, Criteria()) >= 1


def test_a_fixed_run_of_the_suggested_length_usually_decides():
    rng = np.random.default_rng(3)
    criteria = Criteria(anytime=False)
    pilot = rng.normal(0.004, 0.01, 40)
    while verdict_for(pilot, criteria)[0].verdict != "inconclusive":
        pilot = rng.normal(0.004, 0.01, 40)
    total = 40 + rounds_needed(pilot, criteria)
    decided = sum(verdict_for(rng.normal(0.004, 0.01, total), criteria)[0].decided for _ in range(200))
    assert total > 40 and decided >= 150, (total, decided)


def test_rounds_needed_is_not_given_without_spread_or_with_too_few_pairs():
    assert rounds_needed(np.zeros(30), Criteria()) is None
    assert rounds_needed(np.array([0.01, 0.02]), Criteria()) is None


def test_failed_samples_are_counted_as_lost_rounds_but_an_interrupted_last_round_is_not():
    status = [0] * ROUNDS
    status[5] = status[9] = 1
    run = compare_run({"base": BASE, "failed": BASE * 1.05}, runs=ROUNDS)
    run = run.replace(samples={**run.samples, (0, 1): series(BASE * 1.05, status=status)})
    (found,) = analyse(run).comparisons
    assert [n.data for n in found.notes if n.code == "failed-rounds"] == [{"count": 2}]

    # Ctrl-C after the candidate ran in round 60 and before the baseline did
    run = run.replace(samples={**run.samples, (0, 1): series(np.append(BASE, BASE[0]) * 1.05)})
    (found,) = analyse(run).comparisons
    assert not any(n.code == "failed-rounds" for n in found.notes) and found.rounds == ROUNDS


def test_a_fixed_run_keeps_the_sign_test_notes_tied_pairs_among_them():
    walls = BASE.astype(float)
    cand = walls * 1.03
    cand[:8] = walls[:8]  # eight tied pairs
    (found,) = comparisons({"base": walls, "cand": cand}, runs=ROUNDS).values()
    assert {"code": "tied-pairs", "data": {"tied": 8, "n": ROUNDS}} in [
        {"code": n.code, "data": dict(n.data)} for n in found.notes]


def test_ties_among_the_rank_tests_are_one_note_naming_each_test():
    walls = np.repeat(10_000_000 + np.arange(15) * 1000, 2)  # every value twice: ties
    (found,) = comparisons({"base": walls, "cand": walls + 20_000}, runs=30).values()
    ties = [n for n in found.notes if n.code == "rank-ties"]
    assert len(ties) == 1 and set(ties[0].data["tests"]) >= {"hodges-lehmann", "mann-whitney"}
