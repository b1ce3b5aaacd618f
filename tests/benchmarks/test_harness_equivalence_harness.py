"""The pure parts of benchmarks/harness_equivalence.py: how its tables count the verdicts of
repeated runs. No benchmarking happens here; the outcomes are built by hand."""

from __future__ import annotations

from scripts import benchmark_script

study = benchmark_script("harness_equivalence")


def row(verdict: str, needed: int | None = None, out_of_reach: bool = False) -> dict:
    return {"benchmark": "BM_Sort", "verdict": verdict, "metric": "cpu", "estimate": 0.1, "low": -1.0,
            "high": 1.2, "rounds": 32, "round_s": 0.02, "needed": needed, "out_of_reach": out_of_reach,
            "iqr_wall": 0.02, "iqr_cpu": 0.01}


def outcome(*rows: dict):
    return study.Outcome("gbench", ["a", "b"], 2.0, 2.5, 4.0, 0, "r.json", list(rows))


def test_an_aa_trial_called_slower_or_faster_is_counted_wrong():
    lines = study.trials_table([outcome(row("equivalent")), outcome(row("slower")), outcome(row("faster"))],
                               change=False)
    assert "equivalent: 1 of 3; wrong: 2; inconclusive: 0." in lines


def test_a_change_found_slower_is_right_and_one_found_faster_is_wrong():
    lines = study.trials_table([outcome(row("slower")), outcome(row("slower")), outcome(row("faster")),
                                outcome(row("inconclusive", needed=400))], change=True)
    assert "slower: 2 of 4; wrong: 1; inconclusive: 1." in lines


def test_the_spread_of_rounds_needed_leaves_out_estimates_out_of_reach():
    lines = study.trials_table([outcome(row("inconclusive", needed=100)), outcome(row("inconclusive", needed=300)),
                                outcome(row("inconclusive", needed=90000, out_of_reach=True))], change=True)
    assert lines[-2].endswith("rounds-needed estimates 100–300 (3.0×).")


def test_a_suite_run_is_summarised_by_its_verdict_counts():
    assert study.summary_of([row("equivalent"), row("inconclusive"), row("equivalent")]) == \
        "2 equivalent, 1 inconclusive"
