"""compare_run on constructed runs: the Holm family, failed rounds, and the stored settings."""

from __future__ import annotations

import numpy as np
import pytest

from pairbench.comparison import DecisionSettings, compare_run, settings_for_run
from pairbench.errors import ResultFileError
from pairbench.model import Command, Run, Sample, Samples, Variant
from pairbench.stats import holm


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


def test_a_refused_candidate_still_counts_in_the_holm_family_as_p_one():
    slower = _variant("slower", "candidate", BASE * 1.05)
    same = _variant("same", "candidate", BASE)  # every pair identical: refused, "no variance"
    settings = DecisionSettings(family=2, anytime=False)
    results = {r.candidate: r for r in compare_run(_run(_variant("base", "baseline", BASE), slower, same), settings)}
    assert results["same"].verdict.refused and results["same"].pvalue is None
    raw = results["slower"].pvalue_unadjusted
    assert results["slower"].pvalue == pytest.approx(holm([raw, 1.0])[0]) == pytest.approx(min(1.0, 2 * raw))


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
