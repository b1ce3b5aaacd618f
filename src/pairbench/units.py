"""Durations, sizes and percentages: parse what users type, format what we print. Pure."""

from __future__ import annotations

import contextlib
import math
import re
from contextvars import ContextVar

from pairbench.errors import UsageError

# (suffix, nanoseconds per unit), largest first
_TIME_UNITS = (("s", 1_000_000_000), ("ms", 1_000_000), ("µs", 1_000), ("ns", 1))
_PARSE_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "min": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zµ]*)\s*$")


def parse_duration_ns(text: str, *, option: str = "duration") -> int:
    """Parse "60s", "500ms", "2m", "1.5" (seconds) into whole nanoseconds; at least 1 ns once rounded."""
    match = _DURATION_RE.match(str(text))
    if not match:
        raise UsageError(f"{option}: cannot read {text!r} as a duration (examples: 30s, 500ms, 2m)")
    number, suffix = match.groups()
    scale = _PARSE_UNITS.get(suffix or "s")
    if scale is None:
        known = ", ".join(sorted(_PARSE_UNITS))
        raise UsageError(f"{option}: unknown unit {suffix!r} in {text!r} (use one of {known})")
    value = float(number) * scale
    if not value > 0 or not math.isfinite(value):
        raise UsageError(f"{option}: must be a positive duration, got {text!r}")
    if round(value) < 1:
        raise UsageError(f"{option}: must be at least 1 ns (durations are whole nanoseconds), got {text!r}")
    return int(round(value))


_FIXED_TIME_UNIT: ContextVar[tuple[str, int] | None] = ContextVar("pairbench_time_unit", default=None)


@contextlib.contextmanager
def fixed_time_unit(suffix: str | None):
    """Within the block every duration is shown in ``suffix`` (``ns``, ``µs``, ``ms``, ``s``): the
    command line's --time-unit, for the renderers it calls. None changes nothing."""
    if suffix is None:
        yield
        return
    token = _FIXED_TIME_UNIT.set(next(unit for unit in _TIME_UNITS if unit[0] == suffix))
    try:
        yield
    finally:
        _FIXED_TIME_UNIT.reset(token)


def time_unit_for(ns: float, digits: int = 4) -> tuple[str, int]:
    """The unit that shows ``ns`` with 1 to 3 digits before the decimal point (after rounding),
    unless :func:`fixed_time_unit` chose one."""
    fixed = _FIXED_TIME_UNIT.get()
    if fixed is not None:
        return fixed
    magnitude = max(abs(float(_significant(ns, digits))), abs(round(ns))) if ns else 0.0
    for suffix, scale in _TIME_UNITS:
        if magnitude >= scale:
            return suffix, scale
    return "ns", 1


def format_duration(ns: float | None, *, unit: tuple[str, int] | None = None, digits: int = 4) -> str:
    """Format nanoseconds with ``digits`` significant digits: 1.234 ms, 12.35 s, 950 ns."""
    if ns is None or (isinstance(ns, float) and not math.isfinite(ns)):
        return "—"
    suffix, scale = unit or time_unit_for(ns, digits)
    if scale == 1:
        return f"{_nanoseconds(ns, digits)} ns"
    return f"{_significant(ns / scale, digits)} {suffix}"


def _nanoseconds(ns: float, digits: int) -> str:
    """Whole nanoseconds from 100 up (950); below, up to 3 significant digits without trailing
    zeros (13.5, 0.523, 30), as a microbenchmark's time per iteration needs."""
    if abs(ns) >= 99.5:
        return f"{round(ns):d}"
    text = _significant(ns, min(digits, 3))
    return text.rstrip("0").rstrip(".") if "." in text else text


_BYTE_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))


def value_scale(unit: str, typical: float | None) -> tuple[str, float]:
    """The (suffix, size) that shows values of ``unit`` near ``typical`` with 1 to 3 digits before
    the point: a time unit for ``ns``, a binary multiple for ``B``, the unit itself otherwise."""
    if typical is None or not math.isfinite(typical):
        return (unit, 1)
    if unit == "ns":
        return time_unit_for(typical)
    if unit == "B":
        return next(((suffix, size) for suffix, size in _BYTE_UNITS if abs(typical) >= size), ("B", 1))
    return (unit, 1)


def format_value(value: float | None, unit: str = "ns", *, scale: tuple[str, float] | None = None,
                 digits: int = 4) -> str:
    """One value in its benchmark unit: durations (``ns``) as 1.234 ms, bytes (``B``) as 1.21 KiB,
    any other unit as a number and the unit ("3.5 allocs"); "—" for None or a non-finite value.
    ``scale`` (from :func:`value_scale`) shows several values in one unit."""
    if value is None or not math.isfinite(value):
        return "—"
    suffix, size = scale or value_scale(unit, value)
    if unit == "ns" and size == 1:
        return f"{_nanoseconds(value, digits)} ns"
    if unit == "B":
        digits = min(digits, 3)  # sizes to 3 digits, as format_kib shows them
    return f"{_significant(value / size, digits)} {suffix}"


def value_formatter(unit: str, typical: float | None, *, digits: int = 4):
    """A formatter showing values of ``unit`` alike, in the one scale that suits ``typical``
    (a table row's values all in ms, all in KiB)."""
    scale = value_scale(unit, typical)
    return lambda value: format_value(value, unit, scale=scale, digits=digits)


def format_kib(kib: float | None) -> str:
    """Format a size given in KiB: 812 KiB, 12.3 MiB, 1.20 GiB."""
    if kib is None or (isinstance(kib, float) and not math.isfinite(kib)):
        return "—"
    value = float(kib)
    for suffix in ("KiB", "MiB", "GiB"):
        if abs(value) < 1024 or suffix == "GiB":
            return f"{_significant(value, 3)} {suffix}"
        value /= 1024
    raise AssertionError("unreachable")


def format_percent(value: float | None, *, signed: bool = True, digits: int = 2) -> str:
    """Format a percentage: +3.1%, -0.25%, 0.0%."""
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        text = "0.0"
    else:
        magnitude = int(math.floor(math.log10(abs(value))))
        text = f"{value:.{max(1, digits - 1 - magnitude)}f}"
    if signed and value > 0:
        text = "+" + text
    return text + "%"


def format_level(confidence: float) -> str:
    """A confidence level in percent to two decimals at most ("95%", "99.8%", "99.36%"), or as many
    more as keep it below 100% ("99.9999%": alpha 1e-6 is not a 100% interval)."""
    for digits in range(2, 13):
        text = f"{100.0 * confidence:.{digits}f}".rstrip("0").rstrip(".")
        if float(text) < 100.0 or confidence >= 1:
            return text + "%"
    return f"{100.0 * confidence:.12f}%"


def format_rate(per_second: float | None) -> str:
    """Format an event rate: 12.3/s."""
    if per_second is None or not math.isfinite(per_second):
        return "—"
    return f"{_significant(per_second, 3)}/s"


def _significant(value: float, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits, without exponent notation."""
    if value == 0:
        return "0"
    rounded = float(f"{value:.{digits}g}")
    magnitude = int(math.floor(math.log10(abs(rounded))))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{rounded:.{decimals}f}"
