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
