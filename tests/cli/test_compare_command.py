"""`pairbench compare`: interleaving, stopping, verdicts, JSON and exit codes (scripted executor)."""

from __future__ import annotations

import errno
import json
import re

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor
from stored import comparisons, total_samples

from pairbench.errors import (
    EXIT_INTERRUPTED,
    EXIT_MEASUREMENT,
    EXIT_RESULT_FILE,
    EXIT_USAGE,
    EXIT_VERDICT,
)
from pairbench.store.journal import journal_path
from pairbench.store.resultfile import read_result

BASE, CAND = "sleep 0.1", "sleep 0.2"  # real programs, so the commands parse; durations are scripted


def noisy(ratio: float, *, sd: float = 0.01, seed: int = 0, drift: float = 0.0):
    """A script: CAND takes `ratio` times BASE, both with common-mode drift and independent noise."""
    rng = np.random.default_rng(seed)

    def duration(command, index, clock_ns):
        machine = 1.0 + drift * np.sin(clock_ns / 7e9)  # slow phases, shared by both commands
        factor = ratio if command.text == CAND else 1.0
        return 0.05 * machine * factor * float(np.exp(rng.normal(0.0, sd)))

    return duration


def test_clear_slowdown_stops_early_with_a_slower_verdict_in_words(use_executor):
    use_executor(FakeExecutor(noisy(1.05)))
    result = invoke("compare", "--seed", "1", BASE, CAND)
    assert result.code == 0, result.err
    match = re.search(rf"{CAND} is (\d+\.\d)% slower than {BASE} \[\+\d", result.out)
    assert match and 3.0 < float(match.group(1)) < 7.0, result.out
    assert "the verdict was decided (slower)" in result.out
    assert "anytime-valid" in result.out


def test_identical_commands_do_not_stop_on_noise(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.0, sd=0.05)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "2", "--max-time", "30s", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    # seeded and on the virtual clock, so exact: the 30 s budget ran out with the noise too wide for a verdict
    assert (comparison["verdict"], comparison["rounds"]) == ("inconclusive", 299), result.out
    assert "reached the time budget" in result.out


def test_tiny_noise_and_no_change_is_equivalent(use_executor):
    use_executor(FakeExecutor(noisy(1.0, sd=0.001)))
    result = invoke("compare", "--seed", "3", BASE, CAND)
    assert "is equivalent to" in result.out and "within ±1%" in result.out


def test_small_real_change_below_threshold_is_flagged_negligible(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.003, sd=0.0005)))
    out = tmp_path / "r.json"
    invoke("compare", "--seed", "4", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "slower" and comparison["negligible"] is True


def test_faster_candidate_is_reported_faster_with_a_positive_size(use_executor):
    use_executor(FakeExecutor(noisy(0.9)))
    result = invoke("compare", "--seed", "5", BASE, CAND)
    match = re.search(rf"{CAND} is (\d+\.\d)% faster than {BASE} \[-\d", result.out)
    assert match and 8.0 < float(match.group(1)) < 12.0, result.out


@pytest.mark.parametrize(
    ("ratio", "fail_on", "code"),
    [(1.05, "slower", EXIT_VERDICT), (1.05, "faster", 0), (1.05, "change", EXIT_VERDICT),
     (0.95, "faster", EXIT_VERDICT), (1.05, "never", 0), (1.0, "change", 0)],
)
def test_fail_on_sets_the_exit_code(use_executor, ratio, fail_on, code):
    use_executor(FakeExecutor(noisy(ratio, sd=0.002)))
    result = invoke("compare", "--seed", "6", "--fail-on", fail_on, BASE, CAND)
    assert result.code == code, result.out + result.err


def test_every_round_runs_each_variant_once_in_a_recorded_random_order(use_executor, tmp_path):
    fake = use_executor(FakeExecutor(noisy(1.0)))
    out = tmp_path / "r.json"
    invoke("compare", "--seed", "7", "--runs", "40", "--warmup", "2", "--json", str(out), BASE, CAND, "sleep 0.3")
    rounds = [fake.texts[i:i + 3] for i in range(0, len(fake.texts), 3)]
    assert len(rounds) == 42
    assert all(sorted(r) == sorted([BASE, CAND, "sleep 0.3"]) for r in rounds)
    assert len({tuple(r) for r in rounds}) > 3  # orders vary
    run = read_result(out)
    for _, _, samples in run.all_series():
        assert list(samples["warmup"]).count(1) == 2
        assert sorted(samples["pair"][samples["warmup"] == 0]) == list(range(40))
    seqs = np.concatenate([samples["seq"] for _, _, samples in run.all_series()])
    assert sorted(seqs) == list(range(126))


def test_fixed_runs_use_the_exact_sign_test_interval(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.05)))
    out = tmp_path / "r.json"
    invoke("compare", "--seed", "8", "--runs", "30", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["effect"]["method"] == "sign-test interval for the median"
    assert comparison["stopped_because"] == "completed the requested 30 rounds"
    assert comparison["rounds"] == 30


def test_too_few_rounds_refuses_a_verdict_and_says_what_is_needed(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.5)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "9", "--runs", "5", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "inconclusive" and comparison["refused"]
    assert comparison["refusal"]["data"] == {"needed": 8, "got": 5, "purpose": "paired-interval",
                                             "confidence": 0.99}
    assert "no verdict — too few pairs for a 99% interval of the paired effect: need at least 8, got 5" in result.out


def test_identical_timings_refuse_with_no_variance(use_executor, tmp_path):
    use_executor(FakeExecutor({BASE: 0.1, CAND: 0.1}))
    out = tmp_path / "r.json"
    result = invoke("compare", "--runs", "20", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "inconclusive"
    assert "no variance: every pair is identical; is the timer resolution too coarse?" in result.out


def test_inconclusive_verdict_estimates_the_rounds_still_needed(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.0, sd=0.06)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "10", "--runs", "30", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "inconclusive" and comparison["rounds_needed"] > 100
    low, high = comparison["rounds_needed_span"]  # from 30 rounds the estimate comes with its interval
    assert low < comparison["rounds_needed"] < high
    assert (f"more rounds needed to decide (between {low} and {high} at 90%, estimated from 30 rounds; "
            f"try --runs {30 + comparison['rounds_needed']})") in result.out


def test_json_comparisons_hold_the_documented_fields(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.05)))
    out = tmp_path / "r.json"
    invoke("compare", "--seed", "11", "--json", str(out), BASE, CAND)
    document = json.loads(out.read_text())
    (comparison,) = document["comparisons"]
    assert comparison["baseline"] == BASE and comparison["candidate"] == CAND
    assert comparison["verdict"] == "slower" and comparison["negligible"] is False
    assert set(comparison["effect"]) >= {"estimate", "low", "high"}
    assert comparison["effect"]["low"] > 0 and 4 < comparison["effect"]["estimate"] < 6
    assert 0 <= comparison["pvalue"] <= 0.01
    assert comparison["rounds"] >= 10 and comparison["stopped_because"]
    secondary = comparison["secondary"]
    assert set(secondary) >= {"min", "mean", "hodges_lehmann", "mann_whitney_pvalue",
                              "signed_rank_pvalue", "autocorrelation", "outlier_balance", "pairs"}
    assert [v["label"] for v in document["sides"]] == ["baseline", "candidate"]


def test_several_candidates_are_adjusted_for_multiplicity_and_say_so(use_executor, tmp_path):
    def script(command, index, clock):
        return {BASE: 0.1, CAND: 0.105, "sleep 0.3": 0.1}[command.text] * (1 + 0.001 * (index % 7))

    use_executor(FakeExecutor(script))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "12", "--json", str(out), BASE, CAND, "sleep 0.3")
    found = comparisons(out)
    assert [c["candidate"] for c in found] == [CAND, "sleep 0.3"]
    assert all(c["adjustment"] == "bonferroni" for c in found)
    assert found[0]["effect"]["confidence"] == pytest.approx(1 - 0.01 / 2)
    assert "alpha 0.01, bonferroni" in result.out


def test_self_check_adds_an_a_a_comparison_that_is_not_a_change(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.05, sd=0.01)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "13", "--self-check", "--json", str(out), BASE, CAND)
    run = read_result(out)
    assert [v.label for v in run.sides] == ["baseline", "candidate", "self-check"]
    self_check = [c for c in comparisons(out) if c["self_check"]][0]
    assert (self_check["verdict"], self_check["rounds"]) == ("equivalent", 91)  # seeded: exact
    assert "A/A self-check" in result.out


def test_self_check_that_finds_a_difference_warns_about_the_machine(tmp_path):
    """A scripted executor cannot tell the copy from the baseline (same command), so the stored
    samples are edited: a copy that is 5% slower than its baseline must warn, whatever the file says."""
    from runs import compare_run

    from pairbench.store.resultfile import write_result

    base = 1e8 * np.exp(np.random.default_rng(1).normal(0, 0.002, 40))
    path = tmp_path / "aa.json"
    write_result(compare_run({"a": base, "b": base, "a (copy)": base * 1.05}, runs=40), path)
    result = invoke("show", str(path))
    assert "this machine's noise is not what the method assumes" in result.out


def test_ctrl_c_during_compare_saves_and_exits_130(use_executor, tmp_path):
    items = iter([0.1] * 30 + [KeyboardInterrupt])
    use_executor(FakeExecutor(lambda c, i, clock: next(items)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "14", "--json", str(out), BASE, CAND)
    assert result.code == EXIT_INTERRUPTED
    run = read_result(out)
    assert run.state == "interrupted" and total_samples(run) == 30


def test_threshold_and_alpha_are_validated():
    assert invoke("compare", "--threshold", "0", BASE, CAND).code == EXIT_USAGE
    assert invoke("compare", "--threshold", "abc", BASE, CAND).code == EXIT_USAGE
    assert invoke("compare", "--alpha", "1.5", BASE, CAND).code == EXIT_USAGE


def test_compare_needs_a_candidate():
    result = invoke("compare", BASE)
    assert result.code == EXIT_USAGE and "Missing argument" in result.err


def test_the_same_command_given_twice_gets_a_distinct_name_and_a_note(use_executor, tmp_path):
    use_executor(FakeExecutor(noisy(1.0)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "15", "--runs", "20", "--self-check", "--json", str(out), BASE, BASE)
    run = read_result(out)
    assert [v.name for v in run.sides] == [BASE, f"{BASE} (2)", f"{BASE} (copy)"]
    assert [c["candidate"] for c in comparisons(out)] == [f"{BASE} (2)", f"{BASE} (copy)"]
    assert f"the command '{BASE}' is given twice; the second is named '{BASE} (2)'" in result.out


def test_two_commands_with_the_same_name_are_a_usage_error(use_executor):
    use_executor(FakeExecutor(noisy(1.0)))
    result = invoke("compare", "-n", "x", "-n", "x", BASE, CAND)
    assert result.code == EXIT_USAGE
    assert "two commands are both named 'x'; give distinct --name values" in result.err


@pytest.mark.parametrize("where", ["directory", "missing directory"])
def test_json_path_that_cannot_be_written_is_refused_before_measuring(use_executor, tmp_path, where):
    fake = use_executor(FakeExecutor(noisy(1.0)))
    path = tmp_path if where == "directory" else tmp_path / "nowhere" / "r.json"
    result = invoke("compare", "--runs", "20", "--json", str(path), BASE, CAND)
    assert result.code == EXIT_USAGE
    assert "--json" in result.err and ("is a directory" in result.err or "does not exist" in result.err)
    assert fake.calls == []


def test_result_that_cannot_be_written_still_prints_the_summary_and_exits_4(use_executor, tmp_path):
    out = tmp_path / "r.json"
    script = noisy(1.05)

    def occupy_the_result_path(command, index, clock_ns):
        if index == 10:
            out.mkdir()  # after the up-front check: as if another program took the name
        return script(command, index, clock_ns)

    use_executor(FakeExecutor(occupy_the_result_path))
    result = invoke("compare", "--seed", "16", "--runs", "20", "--json", str(out), BASE, CAND)
    assert result.code == EXIT_RESULT_FILE, result.err
    assert "slower than" in result.out  # the summary
    journal = journal_path(out)
    assert f"{out}: cannot write the result (Is a directory)" in result.err
    assert f"all 42 samples are in the journal {journal}" in result.err
    assert "Result written" not in result.err
    assert total_samples(journal) == 42  # 1 warmup round + 20


def test_journal_that_cannot_be_appended_to_stops_sampling_and_keeps_the_samples(
        use_executor, tmp_path, monkeypatch):
    from pairbench.store.journal import Journal

    append = Journal.on_sample

    def disk_fills_up(self, measured):
        if measured.sample.seq == 7:
            raise OSError(errno.ENOSPC, "No space left on device")
        append(self, measured)

    monkeypatch.setattr(Journal, "on_sample", disk_fills_up)
    use_executor(FakeExecutor(noisy(1.05)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--seed", "17", "--runs", "20", "--json", str(out), BASE, CAND)
    assert result.code == EXIT_RESULT_FILE
    assert "cannot append to the journal (No space left on device)" in result.err
    run = read_result(out)
    assert run.state == "failed" and total_samples(run) == 8


def test_journal_whose_header_cannot_be_written_is_a_result_file_error_and_removed(
        use_executor, tmp_path, monkeypatch):
    from pairbench.store.journal import Journal

    def disk_full(self, record):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Journal, "_write_line", disk_full)
    fake = use_executor(FakeExecutor(noisy(1.05)))
    out = tmp_path / "r.json"
    result = invoke("compare", "--runs", "20", "--json", str(out), BASE, CAND)
    assert result.code == EXIT_RESULT_FILE
    assert f"{journal_path(out)}: cannot write the journal (No space left on device)" in result.err
    assert not journal_path(out).exists() and fake.calls == []


# --------------------------------------------------------------------------- alpha's range (issue 14, item 8)


def test_an_alpha_below_the_documented_range_is_refused_before_anything_runs(use_executor):
    fake = use_executor(FakeExecutor(noisy(1.0)))
    result = invoke("compare", "--alpha", "1e-30", "--runs", "20", BASE, CAND)
    assert result.code == EXIT_USAGE
    assert result.err == "error: --alpha must lie between 1e-06 and 0.5 (inclusive), got '1e-30'\n"
    assert fake.calls == []


def test_ties_that_can_never_narrow_the_interval_give_no_rounds_estimate_but_say_why(use_executor, tmp_path):
    """The candidate takes one timer tick or two: half its pairs tie, half are exactly twice as slow."""
    use_executor(FakeExecutor({BASE: 0.001, CAND: [0.001, 0.002] * 6}))
    out = tmp_path / "r.json"
    result = invoke("compare", "--runs", "12", "--warmup", "0", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "inconclusive" and comparison["rounds_needed"] is None
    assert "try --runs" not in result.out and "more rounds needed" not in result.out
    assert ("more rounds would not decide: the ratios near the median are ties at 0.0% and +100.0%, "
            "further apart than the ±1% threshold") in result.out


def test_a_small_alpha_is_never_shown_as_a_100_percent_interval(use_executor):
    use_executor(FakeExecutor(noisy(1.05)))
    result = invoke("compare", "--alpha", "1e-6", "--runs", "40", "--seed", "3", BASE, CAND)
    assert result.code == 0, result.err
    assert "100.0" not in result.out.replace("+100.0", "")
    assert re.search(r"Interval: sign-test interval for the median, 99\.9999\d*% \(alpha 1e-06\)", result.out)


# --------------------------------------------------------------------------- a constant ratio (item 20)


def test_a_candidate_exactly_twice_as_slow_in_every_pair_is_slower_not_without_variance(use_executor):
    use_executor(FakeExecutor({BASE: 0.001, CAND: 0.002}))
    result = invoke("compare", "--runs", "12", "--warmup", "0", "--fail-on", "slower", BASE, CAND)
    assert result.code == EXIT_VERDICT, result.out + result.err
    assert f"{CAND} is 100.0% slower than {BASE} [+100.0%, +100.0%], p < 0.001" in result.out
    assert "no verdict" not in result.out and "inconclusive" not in result.out
    assert "every pair has the same ratio (+100.0%), so the pairs' spread" in result.out
    assert "1 ns" not in result.out  # a log-ratio is not a duration


def test_a_constant_ratio_stops_an_adaptive_run_once_the_sequence_is_bounded(use_executor, tmp_path):
    from pairbench.analysis.criteria import tuning_rounds
    from pairbench.stats.sequential import first_bounded_n

    use_executor(FakeExecutor({BASE: 0.001, CAND: 0.002}))
    out = tmp_path / "r.json"
    result = invoke("compare", "--warmup", "0", "--json", str(out), BASE, CAND)
    comparison = comparisons(out)[0]
    assert comparison["verdict"] == "slower" and comparison["rounds"] == first_bounded_n(0.01, tuning_rounds(0.01))
    assert "the verdict was decided (slower)" in result.out
    assert "every pair has the same ratio (+100.0%); is the timer resolution too coarse?" not in result.out


def test_every_pair_identical_is_still_no_variance_and_a_timer_too_coarse(use_executor):
    use_executor(FakeExecutor({BASE: 0.001, CAND: 0.001}))
    result = invoke("compare", "--runs", "12", BASE, CAND)
    assert "no variance: every pair is identical; is the timer resolution too coarse?" in result.out


# --------------------------------------------------------------------------- a candidate that never ran (item 19)


def test_a_candidate_that_always_fails_under_ignore_failure_is_said_and_never_passes_fail_on(use_executor):
    use_executor(FakeExecutor({BASE: 0.1, CAND: {"duration": 0.1, "status": 1}}))
    result = invoke("compare", "-i", "--runs", "12", "--fail-on", "slower", BASE, CAND)
    assert result.code == EXIT_MEASUREMENT, result.out + result.err
    assert (f"{CAND} vs {BASE}: no verdict — no successful candidate sample exists: all 12 of its samples "
            "failed (exit code 1)") in result.out
    assert (f"--fail-on slower: {CAND} has no successful sample, so its comparison cannot pass "
            "(exit 3)") in result.err


@pytest.mark.parametrize("fail_on", ["faster", "change"])
def test_a_baseline_that_always_fails_fails_every_fail_on_gate(use_executor, fail_on):
    use_executor(FakeExecutor({BASE: {"duration": 0.1, "status": 2}, CAND: 0.1}))
    result = invoke("compare", "-i", "--runs", "12", "--fail-on", fail_on, BASE, CAND)
    assert result.code == EXIT_MEASUREMENT
    assert "no successful baseline sample exists: all 12 of its samples failed (exit code 2)" in result.out


def test_without_fail_on_a_candidate_that_never_succeeded_is_said_and_exits_0(use_executor):
    use_executor(FakeExecutor({BASE: 0.1, CAND: {"duration": 0.1, "status": 1}}))
    result = invoke("compare", "-i", "--runs", "12", BASE, CAND)
    assert result.code == 0 and "no successful candidate sample exists" in result.out
