"""The doctor's options become a ValidationPlan once, with a UsageError naming the option and the value."""

from __future__ import annotations

import pytest

from pairbench.errors import UsageError
from pairbench.parsers import parse_doctor_fail_on, parse_plan
from pairbench.settings import ValidationPlan


def test_options_not_given_take_the_plans_defaults():
    plan = parse_plan("echo {iterations}", {"seed": "7"})
    assert plan == ValidationPlan("echo {iterations}", seed=7)
    assert (plan.runs, plan.counts, plan.warmup, plan.shell, plan.timeout_ns) == (20, (1, 2, 4, 8), 1, "none", None)


def test_options_typed_as_text_become_typed_values():
    plan = parse_plan("./bench {iterations}", {"runs": "5", "iterations": " 1, 10,100 ", "warmup": "0",
                                              "shell": "bash --norc", "name": "bench", "seed": "3", "timeout": "2s"})
    assert plan == ValidationPlan("./bench {iterations}", shell="bash --norc", name="bench", runs=5,
                                  counts=(1, 10, 100), warmup=0, seed=3, timeout_ns=2_000_000_000)


def test_without_a_seed_one_is_drawn_and_kept_in_the_plan():
    seeds = {parse_plan("echo x", {}).seed for _ in range(5)}
    assert len(seeds) > 1 and all(isinstance(s, int) and s >= 0 for s in seeds)


@pytest.mark.parametrize(("options", "message"), [
    ({"runs": "1"}, "--runs must be at least 2, got 1"),
    ({"runs": "many"}, "--runs must be a whole number, got 'many'"),
    ({"warmup": "-1"}, "--warmup must be at least 0, got -1"),
    ({"seed": "1.5"}, "--seed must be a whole number, got '1.5'"),
    ({"iterations": "4"}, "needs at least 2 distinct counts, got '4'"),
    ({"iterations": "1,1,2"}, "--iterations: the counts must be distinct, got '1,1,2'"),
    ({"iterations": "0,1"}, "--iterations must be at least 1, got '0,1'"),
    ({"iterations": "1,x"}, "--iterations must be a whole number, got '1,x'"),
    ({"iterations": ","}, "--iterations: expected iteration counts like 1,2,4,8, got ','"),
    ({"timeout": "soon"}, "--timeout: cannot read 'soon' as a duration"),
])
def test_an_unusable_option_is_a_usage_error_naming_it_and_its_value(options, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_plan("echo {iterations}", options)


def test_a_command_without_a_placeholder_may_be_given_one_count():
    assert parse_plan("echo x", {"iterations": "4"}).measured_counts == (1,)


def test_an_empty_command_is_a_usage_error():
    with pytest.raises(UsageError, match="COMMAND must be a non-empty command"):
        parse_plan("  ", {})


@pytest.mark.parametrize(("value", "expected"), [(None, "never"), ("warn", "warn"), ("fail", "fail")])
def test_fail_on_defaults_to_never(value, expected):
    assert parse_doctor_fail_on(value) == expected


def test_fail_on_refuses_an_unknown_status():
    with pytest.raises(UsageError, match="--fail-on must be one of never, warn, fail; got 'slower'"):
        parse_doctor_fail_on("slower")
