"""A paired history's steps and drifts, judged from its links (``analysis.links``)."""

from __future__ import annotations

import pytest

from pairbench.analysis.links import link_histories, link_level
from pairbench.model import BenchmarkKey
from pairbench.store.links import Link

KEY = BenchmarkKey("parse")
LEVEL = link_level(20)


def commit(k: int) -> str:
    return f"{k:040x}"


def link(before: int, after: int, effect: float = 0.0, half: float = 0.5, *, kind: str = "predecessor",
         pvalue: float = 0.5, metric: str = "cpu", commits: int | None = None, at: int = 0) -> Link:
    return Link(1, f"u{after}-{at}", kind, commit(before), commit(after), f"2026-01-01T00:{after:02d}:00", "main",
                commits if commits is not None else after - before, metric, 40, LEVEL, effect, effect - half,
                effect + half, pvalue, f"2026-01-01T00:{after:02d}:{at:02d}")


def decided(effect: float) -> dict:
    return {"effect": effect, "pvalue": LEVEL / 10}


def chain_of(effects: dict[int, dict], n: int = 10) -> list[Link]:
    return [link(k - 1, k, **effects.get(k, {})) for k in range(2, n + 1)]


def test_the_level_of_a_link_is_the_rate_per_commit_shared_by_the_suite():
    assert link_level(20) == pytest.approx(1e-3 / 20)
    assert link_level(1, 0.01) == 0.01
    with pytest.raises(ValueError, match="at least 1 benchmark"):
        link_level(0)


def test_a_link_that_decides_a_change_beyond_the_threshold_is_the_one_step():
    [history] = link_histories(KEY, chain_of({7: decided(8.0)}), threshold=1.0)
    assert [(d.link.after, d.direction) for d in history.steps] == [(commit(7), "slower")]
    assert history.drifts == () and history.unrecorded == 0


def test_a_change_within_the_threshold_or_above_the_level_is_no_step():
    negligible = {"effect": 0.3, "half": 0.2, "pvalue": LEVEL / 10}  # interval [0.1, 0.5] inside +-1%
    undecided = {"effect": 8.0, "pvalue": LEVEL * 2}  # the p-value misses the link's level
    [history] = link_histories(KEY, chain_of({4: negligible, 6: undecided}), threshold=1.0)
    assert history.steps == ()


def test_a_change_decided_with_a_negligible_estimate_is_no_step_however_far_its_interval_reaches():
    # two commits of the same Python function: a link stopped at 19 blocks of rounds (measured)
    small = chain_of({5: decided(-0.39)})
    [history] = link_histories(KEY, [_interval(x, -4.05, -0.01) if x.after == commit(5) else x for x in small],
                               threshold=1.0)
    assert history.steps == ()
    large = chain_of({5: decided(-2.0)})
    [history] = link_histories(KEY, [_interval(x, -4.05, -0.01) if x.after == commit(5) else x for x in large],
                               threshold=1.0)
    assert [d.direction for d in history.steps] == ["faster"]  # its estimate beyond -1%: a step


def _interval(found: Link, low: float, high: float) -> Link:
    from dataclasses import replace

    return replace(found, effect_low=low, effect_high=high)


def test_a_step_over_a_span_of_unrecorded_commits_leads_to_bisect():
    links = [link(1, 2), link(2, 6, **decided(-5.0)), link(6, 7)]
    [history] = link_histories(KEY, links, threshold=1.0)
    [step] = history.steps
    assert step.direction == "faster" and history.unrecorded == 3
    assert (step.bisect.good, step.bisect.bad, step.bisect.commits, step.bisect.filter) == (
        commit(2), commit(6), 4, "^parse$")


def test_an_anchor_that_decides_a_change_no_link_decided_is_a_drift_with_the_latest_cumulative_change():
    anchors = [link(1, k, kind="anchor", effect=0.1 * k, pvalue=LEVEL / 10 if k >= 6 else 0.5)
               for k in (3, 6, 9)]
    [history] = link_histories(KEY, chain_of({}) + anchors, threshold=0.2)
    [drift] = history.drifts
    assert (drift.anchor, drift.first, drift.latest.after, drift.direction) == (commit(1), commit(6), commit(9),
                                                                                  "slower")
    assert history.steps == ()


def test_an_anchor_change_that_a_step_explains_is_no_drift():
    anchors = [link(1, 9, kind="anchor", **decided(8.0))]
    [history] = link_histories(KEY, chain_of({5: decided(8.0)}) + anchors, threshold=1.0)
    assert len(history.steps) == 1 and history.drifts == ()


def test_links_of_two_metrics_are_two_histories_never_mixed():
    links = chain_of({3: decided(5.0)}, n=4) + [link(k - 1, k, metric="wall") for k in (5, 6)]
    histories = link_histories(KEY, links, threshold=1.0)
    assert [(h.metric, len(h.chain), len(h.steps)) for h in histories] == [("cpu", 3, 1), ("wall", 2, 0)]


def test_a_pair_recorded_twice_counts_by_its_latest_link():
    links = [link(1, 2, **decided(5.0)), link(1, 2, at=1)]
    [history] = link_histories(KEY, links, threshold=1.0)
    assert len(history.chain) == 1 and history.steps == ()


def test_a_first_record_measures_one_side():
    from pairbench.analysis.links import plan_record

    assert plan_record([], []) == plan_record([], [], every=2)
    assert plan_record([], []).predecessor is None


def test_the_anchor_is_the_first_recorded_commit_measured_every_few_records_and_moves_when_a_window_ends():
    from pairbench.analysis.links import plan_record

    chain = [commit(k) for k in range(1, 11)]
    assert plan_record(chain[:1], [], every=4) == plan_record(chain[:1], [], every=4)  # the anchor is the predecessor
    plans = [plan_record(chain[:k], [], every=4, window=40) for k in range(1, 11)]
    assert all(p.predecessor == chain[k - 1] and p.anchor == chain[0] for k, p in enumerate(plans, 1))
    assert [k + 1 for k, p in enumerate(plans, 1) if p.measure_anchor] == [2, 5, 9]
    moved = plan_record(chain, [chain[0]], every=4, window=5)
    assert (moved.anchor, moved.measure_anchor) == (chain[-1], True)
    release = plan_record(chain, [], anchor="v1.0", every=100)
    assert release.anchor == "v1.0" and not release.measure_anchor


def test_each_link_is_judged_by_the_threshold_it_was_recorded_with():
    from dataclasses import replace

    from pairbench.analysis.links import judged

    two = link(1, 2, effect=2.0, half=0.5, pvalue=LEVEL / 10)  # +2% [+1.5%, +2.5%]
    assert judged(two, 1.0) == "slower"
    assert judged(replace(two, threshold=3.0), 1.0) is None  # within its own ±3%: negligible
    assert judged(replace(two, threshold=1.0), 5.0) == "slower"  # its own 1%, not the reader's 5%


def _record_run(effects: dict[str, float], n: int = 40, alpha: float = 1e-3):
    """A record's run: predecessor (baseline), commit (candidate), anchor; the commit's time is the
    predecessor's times (1 + effect), the anchor's the predecessor's times (1 + anchor effect)."""
    import numpy as np
    from runs import make_run, series, side

    rng = np.random.default_rng(3)
    base = 1e6 * rng.uniform(0.99, 1.01, n)
    walls = {"pred": base, "commit": base * (1 + effects["commit"]) * rng.uniform(0.999, 1.001, n),
             "anchor": base * (1 + effects["anchor"]) * rng.uniform(0.999, 1.001, n)}
    sides = [side("pred", "baseline"), side("commit", "candidate"), side("anchor", "anchor")]
    samples = {(0, s): series(np.round(walls[x.name]), start_seq=s, stride=3) for s, x in enumerate(sides)}
    return make_run("compare", sides, samples, runs=n, alpha=alpha, metric="wall")


def test_a_record_compares_the_commit_with_its_predecessor_and_with_the_anchor_of_the_same_rounds():
    from pairbench.analysis import comparison_pairs, family_size
    from pairbench.analysis.links import measured_links

    run = _record_run({"commit": 0.10, "anchor": 0.0})  # +10% since the predecessor, which is the anchor's level
    assert comparison_pairs(run) == [(0, 1), (2, 1)]
    assert family_size(run) == 1  # the anchor's comparison is a drift's, not a second candidate of the family
    found = {(m.before, m.after): m for m in measured_links(run)}
    step, cumulative = found[(0, 1)], found[(2, 1)]
    assert step.level == cumulative.level == 1e-3 and step.threshold == 1.0
    assert step.comparison.effect.low > 8.0 and cumulative.comparison.effect.low > 8.0
    assert step.comparison.baseline == "pred" and cumulative.comparison.baseline == "anchor"
    assert step.comparison.candidate == cumulative.comparison.candidate == "commit"


def test_the_stopping_rule_follows_the_anchors_comparison_too():
    from pairbench.analysis import comparison_pairs, criteria_of
    from pairbench.analysis.stopping import StoppingRule

    run = _record_run({"commit": 0.0, "anchor": 0.0})
    rule = StoppingRule(criteria_of(run), pairs=comparison_pairs(run))
    assert rule.keys == [(0, 0, 1), (0, 2, 1)]


def test_a_record_s_rounds_go_on_until_a_change_s_size_is_known_within_a_factor_of_two():
    from pairbench.analysis.criteria import SizedChange
    from pairbench.analysis.records import Effect
    from pairbench.verdict import decide

    def settles(estimate: float, low: float, high: float, threshold: float = 1.0) -> bool:
        effect = Effect(estimate, low, high, 0.999, "anytime", 1e-4, "anytime-valid", 100)
        return SizedChange().settles(decide(low, high, threshold), effect)

    assert not settles(-0.39, -4.05, -0.01)  # a change, of any size from nothing to 4%
    assert settles(2.0, 1.2, 2.9) and settles(-2.0, -2.9, -1.2)  # known within a factor of two
    assert not settles(1.7, 0.1, 3.9)
    assert settles(0.3, 0.1, 0.5)  # negligible: within +-1%, whatever its size
    assert settles(0.1, -0.5, 0.6)  # equivalent
    assert not settles(0.5, -0.5, 3.0)  # inconclusive
