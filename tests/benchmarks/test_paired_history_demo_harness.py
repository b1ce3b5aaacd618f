"""The pure parts of benchmarks/paired_history_demo.py: the links and steps read off ``history -f json``
documents by commit position, and the step scored at link 6 -> 7 only (fake documents, no processes)."""

from __future__ import annotations

from scripts import benchmark_script

demo = benchmark_script("paired_history_demo")
COMMITS = [f"{k:02d}" * 20 for k in range(1, 13)]


def _link(before: int, after: int, change: float, decided: str | None = None, kind: str = "predecessor") -> dict:
    return {"kind": kind, "before": COMMITS[before - 1], "after": COMMITS[after - 1], "change_pct": change,
            "low_pct": change - 0.5, "high_pct": change + 0.5, "decided": decided, "alpha": 1e-3, "rounds": 90}


def _repetition(decided_at: dict[int, str], unpaired_steps: list[tuple[int, int]]) -> dict:
    links = [_link(k - 1, k, 6.0 if k == 7 else 0.1, decided_at.get(k)) for k in range(2, 13)]
    anchor = _link(1, 9, 6.0, "slower", kind="anchor")
    paired = {"paired": [{"metric": "cpu", "links": links, "cumulative": [anchor], "drifts": []}]}
    steps = [{"before": COMMITS[a - 1], "after": COMMITS[b - 1], "change_pct": 6.0, "low_pct": 5.0,
              "high_pct": 7.0} for a, b in unpaired_steps]
    unpaired = {"benchmarks": [{"steps": steps}]}
    rows = [{"commit": k, "load_before": 3.0, "load_after": 4.0, "record_seconds": 5.0, "record_exit": 0,
             "run_wall_median_ms": 6.0, "run_cpu_median_ms": 5.0} for k in range(1, 13)]
    return {"repetition": 0, "busy": 2, "record_time": "30s", "commits": COMMITS, "rows": rows,
            "paired": paired, "wall": unpaired, "cpu": unpaired}


def test_a_step_counts_only_at_the_link_from_commit_6_to_7_and_any_other_is_false():
    assert demo.exact([(6, 7, "slower")]) == (True, 0)
    assert demo.exact([(6, 7, "slower"), (2, 3, "faster")]) == (True, 1)
    assert demo.exact([(5, 7, "slower")]) == (False, 1)  # a step over 5 -> 7 does not name commit 7's link
    assert demo.exact([]) == (False, 0)


def test_the_paired_links_are_placed_by_commit_and_their_steps_read_from_decided():
    figures = demo.paired_figures(_repetition({7: "slower", 10: "faster"}, []))
    assert [k for k, _ in figures["links"]] == list(range(2, 13))
    assert figures["steps"] == [(6, 7, "slower"), (9, 10, "faster")]
    assert figures["cumulative"]["change_pct"] == 6.0 and figures["metric"] == ["cpu"]


def test_the_report_counts_found_and_false_steps_each_way_per_load():
    text = demo.report([_repetition({7: "slower"}, [(6, 7)]), _repetition({7: "slower", 3: "slower"}, [(8, 9)])])
    assert "## 2 busy loops: 2 repetition(s), 22 links each way" in text
    assert "paired: step found at 6->7 in 2/2; false steps at the other 20 links: 1" in text
    assert "wall: step found at 6->7 in 1/2; false steps at the other 20 links: 1" in text
