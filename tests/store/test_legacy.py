"""Format /1 (pairbench 0.1) read through the migration: the same numbers and verdicts as 0.1 gave.

``legacy/`` holds /1 results and journals written by pairbench 0.1 itself, with
what 0.1's ``show`` and ``report --format json`` said of them (``make_v1.py``
says how they were made). Expected values come from those files, not from
today's code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.analysis import analyse
from pairbench.errors import ResultFileError
from pairbench.store.legacy import derived_in_v1
from pairbench.store.resultfile import read_result

LEGACY = Path(__file__).parent / "legacy"
CASES = {"compare-adaptive": "compare-adaptive.json", "compare-fixed": "compare-fixed.json",
         "compare-family": "compare-family.json", "run-two": "run-two.json", "journal": "journal.json.partial"}
# Every summary number 0.1 gave, except the error of the mean: pairbench 0.2 estimates it with an
# autoregressive fit instead of batch means (issue 17: batch means covered 76-91% under strong
# autocorrelation), so ``mean_se``, its interval and the effective n differ by design.
SUMMARY_FIELDS = ("n", "n_failed", "n_warmup", "min", "q1", "median", "median_low", "median_high", "q3",
                  "max", "mean", "sd", "cv", "user_ns", "sys_ns", "max_rss_kib", "max_rss_at_floor",
                  "cs_per_s", "beyond_upper_fence", "beyond_lower_fence")


def recorded(case: str) -> dict:
    return json.loads((LEGACY / f"{case}.report.json").read_text())


@pytest.mark.parametrize("case", CASES)
def test_a_v1_result_gives_the_summaries_pairbench_0_1_gave(case):
    analysis = analyse(read_result(LEGACY / CASES[case]))
    old = recorded(case)["summaries"]
    assert [s.side for s in analysis.summaries] == [s["name"] for s in old]
    for new, before in zip(analysis.summaries, old, strict=True):
        for field in SUMMARY_FIELDS:
            assert getattr(new, field) == pytest.approx(before[field], rel=1e-12), (new.side, field)
        assert (before["mean_method"], new.mean_method) == ("batch-means", "autoregressive")


@pytest.mark.parametrize("case", [c for c in CASES if c != "run-two"])
def test_a_v1_comparison_gives_the_verdicts_and_effects_pairbench_0_1_gave(case):
    analysis = analyse(read_result(LEGACY / CASES[case]))
    old = recorded(case)["comparisons"]
    assert [(c.candidate, c.baseline) for c in analysis.comparisons] == [(c["candidate"], c["baseline"]) for c in old]
    for new, before in zip(analysis.comparisons, old, strict=True):
        assert (new.verdict.verdict, new.verdict.negligible) == (before["verdict"], before["negligible"])
        for key in ("estimate", "low", "high", "confidence"):
            assert getattr(new.effect, key) == pytest.approx(before["effect"][key], rel=1e-12)
        # an anytime p-value depends on the mixture's tuning, whose last digits are the minimiser's
        # noise (stats._minimize against scipy.optimize: 2e-6 relative in the mixture, 1e-7 in p)
        assert new.pvalue == pytest.approx(before["pvalue"], rel=1e-6 if "adaptive" in case else 1e-12)
        assert (new.rounds, new.self_check) == (before["rounds"], before["self_check"])
        # the rounds still needed are read from the sample's slope near the median now, not from two
        # neighbouring order statistics (benchmarks/rounds_needed_stability.py): given where 0.1 gave them
        assert (new.rounds_needed is None) == (before["rounds_needed"] is None)
        hl = before["secondary"]["hodges_lehmann"]
        assert new.secondary.hodges_lehmann.estimate == pytest.approx(hl["estimate"], rel=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_show_of_a_v1_result_prints_the_numbers_and_verdict_sentences_pairbench_0_1_printed(case):
    result = invoke("show", str(LEGACY / CASES[case]))
    assert result.code == 0, result.err
    # a confidence level is written without trailing zeros now: (99%) where 0.1 printed (99.0%)
    old = [re.sub(r"\((\d+)\.0+%\)", r"(\1%)", line) for line in (LEGACY / f"{case}.show.txt").read_text().splitlines()]
    # and the time the figures are of is named now (0.1 compared wall times only)
    old = [line.replace("  Minimum ", "  Wall time: minimum ").replace("Hodges-Lehmann shift ",
                                                                       "Hodges-Lehmann shift of wall time ")
           for line in old]
    kept = [line for line in old if line.startswith(("  median", "  min…max", "  SD", "  CPU",
                                                     "  Wall time: minimum", "  Hodges-Lehmann", "  Lag-1"))
            or " is " in line and (" slower than " in line or " faster than " in line or "equivalent to" in line)]
    assert kept and [line for line in kept if line not in result.out.splitlines()] == []
    # the mean itself is unchanged; its error is now the autoregressive estimate (see SUMMARY_FIELDS)
    means = [line.split("±")[0] for line in old if line.startswith("  mean ")]
    assert means and all(any(line.startswith(m) for line in result.out.splitlines()) for m in means)


@pytest.mark.parametrize("case", CASES)
def test_report_of_a_v1_result_renders_every_format(tmp_path, case):
    for fmt in ("markdown", "csv", "json", "html"):
        result = invoke("report", str(LEGACY / CASES[case]), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}"))
        assert result.code == 0, (fmt, result.err)


def test_v1_notes_noticed_while_measuring_are_kept_and_derived_ones_come_back_typed(tmp_path):
    document = json.loads((LEGACY / "compare-fixed.json").read_text())
    document["warnings"] += ["'sleep 0.2' left 2 process(es) running after it exited; pairbench killed them "
                             "so they could not disturb later samples"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    run = read_result(path)
    assert [n.code for n in run.notes] == ["recorded"]
    assert "left 2 process(es)" in run.notes[0].data["text"]
    codes = [n.code for n in analyse(run).all_notes()]
    assert "machine-busy" in codes and "rss-at-floor" in codes and "involuntary-switches" in codes


@pytest.mark.parametrize(("text", "derived"), [
    ("load average 1.6 on 2 CPUs: timings will be noisy; compare's interleaved rounds cancel what the "
     "variants share, but its intervals widen", True),
    ("this machine is not set up for benchmarking (a virtual machine): `pairbench doctor` says ...", True),
    ("sleep 0.1: 39.8/s involuntary context switches beyond its quietest sample's, in 16 of 18 samples: ...", True),
    ("max RSS of a, b is at the smallest value the executor can report (12.7 MiB, ...)", True),
    ("the command 'x' is given twice; the second is named 'x (2)', so that ...", False),
    ("cleanup interrupted (Ctrl-C): the --cleanup command 'rm x' may not have finished", False),
])
def test_the_migration_knows_which_v1_notes_were_derived(text, derived):
    assert derived_in_v1(text) is derived


@pytest.mark.parametrize(("mutate", "problem"), [
    (lambda d: d["variants"][0]["samples"]["wall_ns"].__setitem__(3, 0), "durations must be positive"),
    (lambda d: d.update(variants=[]), "variants is empty"),
    (lambda d: d["variants"][1].update(name=d["variants"][0]["name"]), "is the name of an earlier one"),
    (lambda d: d["options"].update(alpha=1.5), "settings are not valid: --alpha"),
    (lambda d: d["options"].update(threshold="lots"), "settings are not valid: --threshold"),
    (lambda d: d.update(warnings=[1]), "warnings must be a list of strings"),
])
def test_a_hostile_v1_document_is_refused_in_one_line(tmp_path, mutate, problem):
    document = json.loads((LEGACY / "compare-fixed.json").read_text())
    mutate(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ResultFileError, match=problem) as info:
        read_result(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
