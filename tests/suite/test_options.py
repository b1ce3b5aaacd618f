"""The suite options of ``pairbench bench`` are checked before anything runs, each error naming the
option and the value."""

from __future__ import annotations

import pytest
from cli_runner import invoke

from pairbench.errors import UsageError
from pairbench.parsers import parse_settings
from pairbench.settings import default


@pytest.mark.parametrize(("options", "problem"), [
    (("--shard", "3/2"), "--shard K/N needs 1 <= K <= N <= 10000, got '3/2'"),
    (("--shard", "half"), "--shard must be K/N"),
    (("--jobs", "0"), "--jobs must be at least 1, got 0"),
    (("--jobs", "65"), "--jobs must be at most 64, got 65"),
    (("--harness", "jmh"), "--harness must be one of gbench, go, criterion, pytest-benchmark, pytest-benchmark-processes, pairbench"),
    (("--suite-time", "soon"), "--suite-time"),
    (("--against", ""), "--against must name a git revision (a branch, a tag, a commit), got ''"),
])
def test_a_bad_suite_option_is_a_usage_error_naming_it(options, problem):
    code, _, err = invoke("bench", *options, "/bin/true")
    assert code == 2 and problem in err


def test_the_suite_settings_are_stored_and_read_back():
    settings = parse_settings("bench", ["./a", "./b"], {"shard": "2/5", "jobs": "2", "harness": "go",
                                                        "suite_time": "10m", "seed": 1})
    stored = settings.stored()["workers"]
    assert stored["shard"] == (2, 5) and stored["jobs"] == 2 and stored["suite_time_ns"] == 600_000_000_000
    again = parse_settings("bench", ["./a", "./b"], {**{k: v for k, v in stored.items() if k != "suite_time_ns"},
                                                     "suite_time": stored["suite_time_ns"], "seed": 1})
    assert again.workers == settings.workers


def test_the_sample_time_defaults_to_the_harness_kind():
    workers = parse_settings("bench", ["./a"], {"seed": 1}).workers
    assert workers.sample_time("pairbench") == 1_000_000 and workers.sample_time("gbench") == 10_000_000
    assert parse_settings("bench", ["./a"], {"seed": 1, "sample_time": "3ms"}).workers.sample_time("go") == 3_000_000
    with pytest.raises(UsageError):
        parse_settings("bench", ["./a"], {"seed": 1, "sample_time": "20s"})


def test_merge_import_and_diff_say_what_they_need():
    assert invoke("merge", "a.json")[0] == 2
    code, _, err = invoke("convert", "--json", "out.json", "--format", "jmh", "x.json")
    assert code == 2 and "jmh" in err
    code, _, err = invoke("diff", "--alpha", "2", "a.json", "b.json")
    assert code == 2 and "--alpha must lie between" in err


def test_bench_help_gives_the_budgets_of_pytest_benchmark_go_and_criterion_beside_its_own():
    code, out, _ = invoke("bench", "--help")
    assert code == 0 and "[default: 5s; 20s for go; 16s for criterion; 60s for pytest-benchmark]" in " ".join(out.split()).replace("- ", "-")  # wrapped at a hyphen
    assert default("max_time", "bench", "pytest-benchmark") == "60s"
    assert default("max_time", "bench", "gbench") == default("max_time", "bench") == "5s"
    assert default("max_time", "compare", "pytest-benchmark") == "60s" == default("max_time", "compare")


@pytest.mark.parametrize(("command", "first"), [("confirm", ""), ("record", "; a branch's first record's 3s")])
def test_recipe_commands_help_gives_a_commands_paired_budget_beside_a_bench_targets(command, first):
    """confirm and record measure a bench target as bench does and a [confirm] command as compare
    does; a first record (one side) stops at run's budget."""
    code, out, _ = invoke(command, "--help")
    shown = " ".join(out.split()).replace("- ", "-")  # wrapped at a hyphen
    assert code == 0 and ("[default: a bench target's 5s per benchmark; 20s for go; 16s for criterion; "
                          f"60s for pytest-benchmark; a [confirm] command's 60s{first}]") in shown
    assert default("max_time", "run") == "3s"
