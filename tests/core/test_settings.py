"""Settings: every option parsed and validated once, with one default each, and stored typed."""

from __future__ import annotations

import pytest

from pairbench.errors import UsageError
from pairbench.settings import (
    DEFAULTS,
    KIND_DEFAULTS,
    default,
    parse_settings,
    settings_from_stored,
)


def parse(kind="compare", commands=("a", "b"), **options):
    return parse_settings(kind, commands, options)


def test_defaults_come_from_the_one_table_and_differ_by_kind_only_where_it_says():
    run, compare = parse("run", ("a",)), parse()
    assert (run.sampling.warmup, compare.sampling.warmup) == (0, 1)
    assert (run.sampling.max_time_ns, compare.sampling.max_time_ns) == (3 * 10**9, 60 * 10**9)
    assert compare.decision.alpha == DEFAULTS["alpha"] == 0.01 and compare.decision.threshold == 1.0
    assert set(KIND_DEFAULTS["run"]) == set(KIND_DEFAULTS["compare"]) == {"warmup", "max_time"}
    assert default("alpha") == 0.01 and default("warmup", "run") == 0


@pytest.mark.parametrize(("option", "value", "problem"), [
    ("alpha", "0", "--alpha must lie between 0 and 1"),
    ("alpha", "1", "--alpha must lie between 0 and 1"),
    ("alpha", "nan", "--alpha must be a finite number"),
    ("alpha", "often", "--alpha must be a number"),
    ("threshold", "0", "--threshold must be between 0 and 100 percent"),
    ("threshold", "lots", "--threshold must be a number"),
    ("runs", "0", "--runs must be at least 1, got 0"),
    ("runs", "2.5", "--runs must be a whole number"),
    ("warmup", "-1", "--warmup must be at least 0"),
    ("seed", "-3", "--seed must be at least 0"),
    ("max_time", "soon", "--max-time: cannot read 'soon' as a duration"),
    ("timeout", "0.1ns", "--timeout: must be at least 1 ns"),
    ("fail_on", "sometimes", "--fail-on must be one of slower, faster, change, never"),
    ("prepare", " ", "--prepare must be a command"),
])
def test_a_bad_option_is_one_usage_error_naming_it_and_the_value(option, value, problem):
    with pytest.raises(UsageError, match=problem):
        parse(**{option: value})


def test_max_runs_below_min_runs_is_refused():
    with pytest.raises(UsageError, match=r"--max-runs \(5\) must not be below --min-runs \(10\)"):
        parse(max_runs="5")


def test_names_are_one_per_command_and_distinct():
    with pytest.raises(UsageError, match="--name was given 1 time"):
        parse(names=("only",))
    with pytest.raises(UsageError, match="both named 'x'"):
        parse(names=("x", "x"))


def test_a_threshold_may_be_typed_with_a_percent_sign():
    assert parse(threshold="0.5%").decision.threshold == 0.5


def test_a_seed_not_given_is_drawn_once_and_kept_in_the_settings():
    settings = parse()
    assert isinstance(settings.sampling.seed, int) and settings.sampling.seed >= 0
    assert settings.stored()["sampling"]["seed"] == settings.sampling.seed


def test_runs_turn_adaptive_stopping_off():
    assert parse().sampling.adaptive and not parse(runs="30").sampling.adaptive


def test_stored_settings_read_back_equal_through_the_same_parsers():
    settings = parse(alpha="0.05", threshold="2", runs="40", seed="9", timeout="2s", prepare="sync",
                     names=("old", "new"), json_path="out.json")
    back = settings_from_stored("compare", ("a", "b"), ("old", "new"), settings.stored())
    assert (back.sampling, back.decision) == (settings.sampling, settings.decision)
    assert back.outputs.json_path is None  # where an invocation wrote is not part of the result


def test_a_run_stored_without_a_time_budget_reads_back_without_one():
    settings = parse(max_time=None)
    stored = {**settings.stored(), "sampling": {**settings.stored()["sampling"], "max_time_ns": None}}
    assert settings_from_stored("compare", ("a", "b"), (), stored).sampling.max_time_ns is None


@pytest.mark.parametrize("stored", [{"sampling": {"seed": True}}, {"decision": {"alpha": "x"}},
                                    {"sampling": {"colour": 1}}, {"decision": []}])
def test_bad_stored_settings_are_a_usage_error_the_reader_names(stored):
    with pytest.raises(UsageError):
        settings_from_stored("compare", ("a", "b"), (), stored)


def test_alpha_is_parsed_in_one_place_and_the_command_line_only_reads_it():
    """click declares --alpha as text without a type, range or callback: settings validates it."""
    import click

    from pairbench.cli import cli

    (alpha,) = [p for p in cli.commands["compare"].params if p.name == "alpha"]
    assert isinstance(alpha.type, click.types.StringParamType) and alpha.callback is None
    assert alpha.default in (None, getattr(click.core, "UNSET", None)) and "[default: 0.01]" in alpha.help


def test_the_command_line_says_a_bad_alpha_in_the_settings_words_and_exits_2():
    from cli_runner import invoke

    result = invoke("compare", "--alpha", "1.5", "sleep 0.1", "sleep 0.2")
    assert result.code == 2 and result.err == "error: --alpha must lie between 0 and 1 (exclusive), got '1.5'\n"
