"""--fail-on-metric: units as a harness reports them or all; a bad one is a usage error naming the option;
kept in the stored settings only when given (results without it read as before)."""

from __future__ import annotations

import pytest
from cli_runner import invoke

from pairbench.errors import EXIT_USAGE, UsageError
from pairbench.parsers import parse_settings, settings_from_stored


def test_units_are_kept_once_each_in_the_order_given():
    settings = parse_settings("bench", ["./a"], {"fail_on_metric": ("allocs/op", "B/op", "allocs/op")})
    assert settings.decision.fail_on_metric == ("allocs/op", "B/op")
    assert settings.stored()["decision"]["fail_on_metric"] == ("allocs/op", "B/op")
    back = settings_from_stored("bench", ["./a"], [], settings.stored())
    assert back.decision.fail_on_metric == ("allocs/op", "B/op")


def test_not_given_it_is_not_stored_so_older_results_read_the_same():
    settings = parse_settings("bench", ["./a"], {})
    assert settings.decision.fail_on_metric == () and "fail_on_metric" not in settings.stored()["decision"]


@pytest.mark.parametrize("unit", ["", "allocs op", "B/op\x1b[31m", "x" * 65])
def test_a_unit_that_no_harness_can_report_is_a_usage_error(unit):
    with pytest.raises(UsageError, match="--fail-on-metric"):
        parse_settings("bench", ["./a"], {"fail_on_metric": (unit,)})


def test_on_the_command_line_a_bad_unit_exits_2_before_anything_runs(tmp_path):
    result = invoke("bench", "--fail-on-metric", "allocs op", str(tmp_path))
    assert result.code == EXIT_USAGE and "--fail-on-metric" in result.err
    assert "--fail-on-metric UNIT" in invoke("bench", "--help").out
