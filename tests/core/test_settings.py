"""Settings: every option parsed and validated once, with one default each, and stored typed."""

from __future__ import annotations

import re

import pytest

from pairbench.errors import UsageError
from pairbench.parsers import parse_settings, settings_from_stored
from pairbench.settings import DEFAULTS, KIND_DEFAULTS, default


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
    ("alpha", "0", "--alpha must lie between 1e-06 and 0.5"),
    ("alpha", "1", "--alpha must lie between 1e-06 and 0.5"),
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


def test_new_runs_tune_the_interval_at_30_rounds_and_results_stored_before_keep_their_200():
    # Results stored before the tuning was a setting were decided with the sequence tuned at 200
    # rounds (pairbench 0.1 and 0.2): show must give them the intervals they were decided with.
    settings = parse()
    assert settings.decision.tuned_rounds == 30 and settings.stored()["decision"]["tuned_rounds"] == 30
    before = {"sampling": settings.stored()["sampling"],
              "decision": {k: v for k, v in settings.stored()["decision"].items() if k != "tuned_rounds"}}
    assert settings_from_stored("compare", ("a", "b"), (), before).decision.tuned_rounds == 200


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

    (alpha,) = [p for p in cli.get_command(None, "compare").params if p.name == "alpha"]
    assert isinstance(alpha.type, click.types.StringParamType) and alpha.callback is None
    assert alpha.default in (None, getattr(click.core, "UNSET", None)) and "[default: 0.01]" in alpha.help


def test_the_command_line_says_a_bad_alpha_in_the_settings_words_and_exits_2():
    from cli_runner import invoke

    result = invoke("compare", "--alpha", "1.5", "sleep 0.1", "sleep 0.2")
    assert result.code == 2 and result.err == "error: --alpha must lie between 1e-06 and 0.5 (inclusive), got '1.5'\n"


@pytest.mark.parametrize("value", ["1e-30", "1e-7", "0.51", "0.9"])
def test_alpha_outside_its_documented_range_is_refused_naming_the_range(value):
    with pytest.raises(UsageError, match=r"--alpha must lie between 1e-06 and 0\.5 \(inclusive\), got"):
        parse(alpha=value)


@pytest.mark.parametrize("value", ["1e-6", "0.5", "0.05"])
def test_alpha_at_the_ends_of_its_range_is_accepted(value):
    assert parse(alpha=value).decision.alpha == float(value)


def test_settings_stored_by_pairbench_0_2_read_back_shell_and_prepare_as_they_were_meant():
    old = {"sampling": {"warmup": 1, "max_time_ns": None, "prepare": "sync", "shell": True, "seed": 3}}
    sampling = settings_from_stored("compare", ("a", "b"), (), old).sampling
    assert (sampling.prepare, sampling.shell, sampling.conclude, sampling.parameters) == (("sync",), "sh", (), ())
    old["sampling"].update(shell=False, prepare=None)
    assert settings_from_stored("compare", ("a", "b"), (), old).sampling.shell == "none"


def test_parameters_and_per_command_helpers_are_stored_and_read_back_equal():
    settings = parse(commands=("a {n} {m}", "b {n} {m}"), parameter_scan=(("n", "1", "3"),),
                     parameter_list=(("m", "x,y"),), prepare=("pa", "pb"), conclude=("c",), shell="bash --norc")
    assert settings.sampling.parameters == (("n", ("1", "2", "3")), ("m", ("x", "y")))
    assert settings.sampling.combinations()[:2] == [(("n", "1"), ("m", "x")), (("n", "1"), ("m", "y"))]
    assert [settings.sampling.helper_for("prepare", i) for i in (0, 1)] == ["pa", "pb"]
    assert settings.sampling.helper_for("conclude", 1) == "c"
    import json

    stored = json.loads(json.dumps(settings.stored()))
    back = settings_from_stored("compare", settings.commands, (), stored)
    assert back.sampling == settings.sampling


@pytest.mark.parametrize(("options", "problem"), [
    ({"shell": "sleep 0.1"}, "--shell takes the shell that runs the commands"),
    ({"shell": "bash", "no_shell": True}, "-N (no shell) and --shell bash contradict"),
    ({"shell": "'bash"}, "cannot split it into words"),
    ({"sort": "median"}, "--sort must be one of auto, command, mean-time"),
    ({"time_unit": "minute"}, "--time-unit must be one of"),
    ({"json_path": "-", "export_json": "-"}, "--json and --export-json both write to standard output"),
    ({"json_path": "-", "export_csv": "-"}, "--json and --export-csv both write to standard output"),
    ({"input": "/no/such/file"}, "--input '/no/such/file' does not exist"),
])
def test_the_hyperfine_options_are_validated_once_here(options, problem):
    with pytest.raises(UsageError, match=re.escape(problem)):
        parse(**options)


def test_no_shell_is_the_default_and_a_shell_may_be_given_by_path():
    assert parse().sampling.shell == "none" and parse(no_shell=True).sampling.shell == "none"
    assert parse(shell="/opt/bin/mysh -e").sampling.shell == "/opt/bin/mysh -e"


def test_bench_repeats_a_go_benchmark_eight_times_a_round_unless_told_and_stores_it():
    settings = parse("bench", ("a.test", "b.test"))
    assert settings.workers.repetitions == DEFAULTS["repetitions"] == 8
    told = parse("bench", ("a.test", "b.test"), repetitions="3")
    back = settings_from_stored("bench", ("a.test", "b.test"), (), told.stored())
    assert back.workers.repetitions == 3


def test_a_bench_result_stored_before_repetitions_existed_reads_back_with_one():
    stored = parse("bench", ("a.test", "b.test")).stored()
    stored["workers"] = {k: v for k, v in stored["workers"].items() if k != "repetitions"}
    assert settings_from_stored("bench", ("a.test", "b.test"), (), stored).workers.repetitions == 1


@pytest.mark.parametrize("value", ["0", "-1", "1001", "many"])
def test_repetitions_outside_one_to_a_thousand_are_a_usage_error_naming_the_option(value):
    with pytest.raises(UsageError, match="--repetitions"):
        parse("bench", ("a.test", "b.test"), repetitions=value)
