"""compare_run on constructed runs: the Bonferroni family, the running interval, rounds needed, settings."""

from __future__ import annotations

import numpy as np
import pytest

from pairbench.comparison import (
    MOVED_REASON,
    DecisionSettings,
    compare_run,
    rounds_needed,
    settings_for_run,
    verdict_for,
)
from pairbench.errors import ResultFileError
from pairbench.model import Command, Run, Sample, Samples, Variant
from pairbench.stats._order import smallest_n_for_median_interval
from pairbench.stats.sequential import first_bounded_n


def _variant(name: str, label: str, walls, status=None, pairs=None) -> Variant:
    status = status or [0] * len(walls)
    pairs = pairs or list(range(len(walls)))
    rows = (Sample(wall_ns=int(w), status=s, pair=p, seq=i)
            for i, (w, s, p) in enumerate(zip(walls, status, pairs, strict=True)))
    return Variant(name, Command(name, (name,)), label=label, samples=Samples.from_rows(rows))


def _run(*variants: Variant, **options) -> Run:
    return Run("compare", variants, "0.1.0", "2026-11-22T00:00:00+00:00", state="complete", options=options)


ROUNDS = 60
BASE = 10_000_000 + np.random.default_rng(3).integers(0, 200_000, ROUNDS)


def test_a_refused_candidate_still_counts_in_the_bonferroni_family():
    slower = _variant("slower", "candidate", BASE * 1.05)
    same = _variant("same", "candidate", BASE)  # every pair identical: refused, "no variance"
    settings = DecisionSettings(family=2, anytime=False)
    results = {r.candidate: r for r in compare_run(_run(_variant("base", "baseline", BASE), slower, same), settings)}
    assert results["same"].verdict.refused and results["same"].pvalue is None
    raw = results["slower"].pvalue_unadjusted
    assert results["slower"].pvalue == pytest.approx(min(1.0, 2 * raw))


@pytest.mark.parametrize("anytime", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_an_adjusted_pvalue_below_alpha_always_goes_with_an_interval_that_excludes_zero(anytime, seed):
    rng = np.random.default_rng(seed)
    noise = lambda: np.exp(rng.normal(0, 0.01, ROUNDS))  # noqa: E731
    shifts = rng.choice([1.0, 1.002, 1.004, 1.006, 1.05], 3)
    candidates = [_variant(f"c{i}", "candidate", BASE * s * noise()) for i, s in enumerate(shifts)]
    settings = DecisionSettings(family=3, anytime=anytime)
    for r in compare_run(_run(_variant("base", "baseline", BASE), *candidates), settings):
        excludes_zero = r.effect.low > 0 or r.effect.high < 0
        assert (r.pvalue <= settings.alpha) == excludes_zero == (r.verdict.verdict in ("slower", "faster"))


def test_a_change_that_vanishes_mid_run_is_inconclusive_and_says_the_change_moved():
    rng = np.random.default_rng(5)
    r = np.concatenate([0.05 + rng.normal(0, 0.001, 22), rng.normal(0, 0.003, 200)])
    verdict, effect = verdict_for(r, DecisionSettings())
    assert verdict.verdict == "inconclusive" and verdict.reason == MOVED_REASON
    assert effect.moved and effect.pvalue < 0.01


def test_a_constant_nonzero_ratio_is_refused_naming_it_in_both_modes():
    for anytime in (False, True):
        verdict, effect = verdict_for(np.full(30, np.log(2.0)), DecisionSettings(anytime=anytime))
        assert verdict.refused and effect is None
        assert "same log-ratio" in verdict.reason and "+100%" in verdict.reason


@pytest.mark.parametrize("anytime", [False, True])
def test_rounds_needed_never_undercuts_the_rounds_an_interval_needs(anytime):
    settings = DecisionSettings(anytime=anytime)
    floor = first_bounded_n(0.01) if anytime else smallest_n_for_median_interval(0.99)
    for sd in (1e-4, 1e-3, 3e-3):
        r = np.random.default_rng(1).normal(0, sd, 4)
        assert 4 + rounds_needed(r, settings) >= floor


def test_rounds_needed_is_at_least_one_for_an_inconclusive_adaptive_verdict():
    rng = np.random.default_rng(2)
    for _ in range(50):
        r = rng.normal(0.006, 0.01, 40)
        verdict, _ = verdict_for(r, DecisionSettings())
        if verdict.verdict == "inconclusive":
            assert rounds_needed(r, DecisionSettings()) >= 1


def test_a_fixed_run_of_the_suggested_length_usually_decides():
    rng = np.random.default_rng(3)
    settings = DecisionSettings(anytime=False)
    pilot = rng.normal(0.004, 0.01, 40)
    while verdict_for(pilot, settings)[0].verdict != "inconclusive":
        pilot = rng.normal(0.004, 0.01, 40)
    total = 40 + rounds_needed(pilot, settings)
    decided = sum(verdict_for(rng.normal(0.004, 0.01, total), settings)[0].decided for _ in range(200))
    assert total > 40 and decided >= 150, (total, decided)


def test_rounds_needed_is_not_given_without_spread_or_with_too_few_pairs():
    assert rounds_needed(np.zeros(30), DecisionSettings()) is None
    assert rounds_needed(np.array([0.01, 0.02]), DecisionSettings()) is None


def test_failed_samples_are_counted_as_lost_rounds_but_an_interrupted_last_round_is_not():
    status = [0] * ROUNDS
    status[5] = status[9] = 1
    failed = _variant("failed", "candidate", BASE * 1.05, status=status)
    result = compare_run(_run(_variant("base", "baseline", BASE), failed), DecisionSettings(anytime=False))[0]
    assert "2 round(s) left out because a sample in them failed" in result.warnings

    # Ctrl-C after the candidate ran in round 60 and before the baseline did
    cut = _variant("cut", "candidate", np.append(BASE, BASE[0]) * 1.05, pairs=list(range(ROUNDS + 1)))
    result = compare_run(_run(_variant("base", "baseline", BASE), cut), DecisionSettings(anytime=False))[0]
    assert not any("left out" in w for w in result.warnings)
    assert result.rounds == ROUNDS


@pytest.mark.parametrize("options", [{"threshold": 0}, {"threshold": -1}, {"alpha": 1.5},
                                     {"alpha": "nan"}, {"threshold": "lots"}])
def test_stored_settings_out_of_range_are_a_result_file_error(options):
    run = _run(_variant("base", "baseline", BASE), _variant("cand", "candidate", BASE), **options)
    with pytest.raises(ResultFileError, match="do not describe a comparison"):
        settings_for_run(run)
