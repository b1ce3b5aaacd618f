"""The pure parts of benchmarks/bisect_study.py: the hidden position, the plan, the generated
repository and the scoring. No timing happens here; the study is run by hand (benchmarks/RESULTS.md,
"Bisect: from a step to its commit")."""

from __future__ import annotations

import subprocess

import pytest
from scripts import benchmark_script

study = benchmark_script("bisect_study")


def test_the_position_is_one_of_the_commits_after_good_and_the_same_for_a_seed():
    positions = [study.position_of(seed) for seed in range(2000)]
    assert min(positions) == 1 and max(positions) == study.COMMITS - 1
    assert [study.position_of(seed) for seed in range(50)] == positions[:50]


def test_the_plan_gives_both_designs_each_repository_then_the_budget_trials():
    planned = study.plan(3, 2, ["quiet", "phased"], 7)
    assert len(planned) == 2 * (3 * 2 + 2) and len({t.number for t in planned}) == len(planned)
    quiet = [t for t in planned if t.condition == "quiet"]
    for seed in {t.seed for t in quiet if not t.budget}:
        assert sorted(t.design for t in quiet if t.seed == seed) == ["git-bisect", "pairbench"]
    budget = [t for t in quiet if t.budget]
    assert len(budget) == 2 and all(t.design == "pairbench" and t.budget == study.TOO_SMALL_BUDGET for t in budget)
    assert len({t.seed for t in planned}) == 2 * (3 + 2)
    assert study.plan(3, 2, ["quiet"], 7) == study.plan(3, 2, ["quiet"], 7)
    alone = study.plan(3, 2, ["phased"], 7)
    assert alone == [t for t in planned if t.condition == "phased"]  # a condition run on its own


@pytest.mark.e2e
def test_the_repository_has_64_commits_and_the_step_at_its_position(tmp_path):
    commits = study.make_repository(tmp_path / "repo", (1000, 1030), 17)
    assert len(commits) == study.COMMITS
    def source(k):
        return subprocess.run(["git", "show", f"{commits[k]}:prog.c"], cwd=tmp_path / "repo", check=True,
                              capture_output=True, text=True).stdout
    assert "lcg_steps(1000ULL)" in source(16) and "lcg_steps(1030ULL)" in source(17)
    assert "lcg_steps(1030ULL)" in source(63) and "revision 63" in source(63)
    assert 'command = "./prog"' in (tmp_path / "repo" / "pairbench.toml").read_text()


def test_scoring_tells_right_wrong_and_unnamed_and_whether_a_budget_trial_kept_the_step():
    assert study.score({"named_index": 17}, 17) == "right"
    assert study.score({"named_index": 18}, 17) == "wrong"
    assert study.score({}, 17) == "none"
    assert study.score({"budget": "6s", "first": 1, "last": 31}, 17) == "held"
    assert study.score({"budget": "6s", "first": 32, "last": 63}, 17) == "lost"
    assert study.score({"budget": "6s", "named_index": 17}, 17) == "right"


def test_the_summary_counts_per_condition_and_design():
    records = [
        {"seed": 1, "condition": "quiet", "design": "pairbench", "named_index": 5, "comparisons": 8, "seconds": 20.0,
         "load_before": 1.0},
        {"seed": 2, "condition": "quiet", "design": "pairbench", "named_index": 9, "comparisons": 9, "seconds": 24.0,
         "load_before": 1.2},
        {"seed": 1, "condition": "quiet", "design": "git-bisect", "named_index": 6, "steps": 6, "seconds": 25.0,
         "load_before": 1.0},
    ]
    rows = study.summarize(records, {"1": 5, "2": 9})
    pairbench, git_bisect = rows
    assert (pairbench["right"], pairbench["wrong"], pairbench["within_goal"], pairbench["max_comparisons"]) == (2, 0, 1, 9)
    assert (git_bisect["right"], git_bisect["wrong"], git_bisect["median_comparisons"]) == (0, 1, 8)


def test_a_plan_of_one_design_keeps_that_designs_trials_and_their_numbers():
    both = study.plan(4, 2, ["quiet", "phased"], 2040)
    alone = study.plan(4, 2, ["quiet", "phased"], 2040, designs=("pairbench",))
    assert alone == [t for t in both if t.design == "pairbench"]
    assert [t for t in study.plan(4, 2, ["phased"], 2040, designs=("git-bisect",)) if t.budget] == []


def test_what_a_comparison_decided_on_is_read_from_its_result_file(tmp_path):
    result = tmp_path / "01.json"
    result.write_text('{"comparisons": [{"metric": "cpu", "rounds": 14}]}')
    assert study.decided_on(str(result)) == {"metric": "cpu", "rounds": 14}
    assert study.decided_on(str(tmp_path / "gone.json")) == {} and study.decided_on(None) == {}


def test_the_heavy_condition_has_seeds_of_its_own_and_two_more_busy_loops_beside_the_phases():
    heavy, phased = study.plan(3, 0, ["heavy"], 7), study.plan(3, 0, ["phased"], 7)
    assert {t.seed for t in heavy}.isdisjoint({t.seed for t in phased})
    assert {t.number for t in heavy}.isdisjoint({t.number for t in phased})
    assert study.LOADS == {"quiet": {}, "phased": {}, "heavy": {"extra": 2}}
