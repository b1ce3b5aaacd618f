"""Parsing and formatting of durations, sizes and percentages."""

import pytest

from pairbench.errors import UsageError
from pairbench.units import (
    format_duration,
    format_kib,
    format_level,
    format_percent,
    format_value,
    parse_duration_ns,
    value_formatter,
)


@pytest.mark.parametrize("text", ["0.1ns", "0.4ns", "1e-10s", "0.0000001us"])
def test_parse_duration_refuses_what_rounds_to_zero_nanoseconds_naming_the_option(text):
    with pytest.raises(UsageError, match=r"--timeout: must be at least 1 ns"):
        parse_duration_ns(text, option="--timeout")


def test_parse_duration_rounds_half_a_nanosecond_and_more_to_a_whole_one():
    assert parse_duration_ns("0.6ns") == 1 and parse_duration_ns("1.4ns") == 1


@pytest.mark.parametrize(
    ("text", "ns"),
    [("60s", 60_000_000_000), ("500ms", 500_000_000), ("2m", 120_000_000_000), ("1.5", 1_500_000_000),
     ("250us", 250_000), ("250µs", 250_000), ("10ns", 10), ("1h", 3_600_000_000_000), (" 3 s ", 3_000_000_000)],
)
def test_parse_duration_reads_common_units(text, ns):
    assert parse_duration_ns(text) == ns


@pytest.mark.parametrize("text", ["", "abc", "10 parsecs", "-1s", "0", "1e400s"])
def test_parse_duration_rejects_nonsense_naming_the_option(text):
    with pytest.raises(UsageError, match="--max-time"):
        parse_duration_ns(text, option="--max-time")


@pytest.mark.parametrize(
    ("ns", "text"),
    [(950, "950 ns"), (1_234_567, "1.235 ms"), (12.3456e9, "12.35 s"), (999_999, "1.000 ms"),
     (10_000_000, "10.00 ms"), (1_500, "1.500 µs")],
)
def test_format_duration_picks_a_unit_with_four_significant_digits(ns, text):
    assert format_duration(ns) == text


def test_format_duration_of_none_is_a_dash():
    assert format_duration(None) == "—"



@pytest.mark.parametrize(("kib", "text"), [(812, "812 KiB"), (12_600, "12.3 MiB"), (1.3e6, "1.24 GiB")])
def test_format_kib_uses_binary_units(kib, text):
    assert format_kib(kib) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.14159, "+3.1%"), (-0.2512, "-0.25%"), (0.0, "0.0%"), (-12.345, "-12.3%"), (0.0123, "+0.012%")],
)
def test_format_percent_is_signed_with_sensible_decimals(value, text):
    assert format_percent(value) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (1_234_567, "ns", "1.235 ms"), (950, "ns", "950 ns"), (1536.0, "B", "1.50 KiB"), (5.0, "B", "5.00 B"),
    (3 * 1024**2, "B", "3.00 MiB"), (3.5, "allocs", "3.500 allocs"), (None, "B", "—"), (float("nan"), "ns", "—"),
])
def test_a_value_is_shown_in_its_benchmark_unit(value, unit, text):
    assert format_value(value, unit) == text


def test_values_of_one_row_share_the_scale_of_a_typical_one():
    fmt = value_formatter("B", 4096.0, digits=2)
    assert (fmt(4096.0), fmt(512.0)) == ("4.0 KiB", "0.50 KiB")
    assert value_formatter("ns", 2_500_000)(800) == "0.0008000 ms"


@pytest.mark.parametrize(("confidence", "text"), [
    (0.95, "95%"), (0.99, "99%"), (0.998, "99.8%"), (1 - 0.01 / 1.5625, "99.36%"), (1 - 0.01 / 36, "99.97%"),
    (1 - 1e-6, "99.9999%"), (1 - 1e-9, "99.9999999%"), (0.5, "50%"), (1.0, "100%"),
])
def test_a_confidence_level_has_two_decimals_at_most_and_is_never_rounded_up_to_100_percent(confidence, text):
    assert format_level(confidence) == text
