"""Parameters of ``run`` and ``compare``: ``-P/--parameter-scan`` (with ``-D``) and
``-L/--parameter-list``, read as hyperfine reads them, or as a result stores them.

Each parameter is a name and its values (text); every combination of the values is one benchmark
of the run (``Settings.sampling.parameters``). Wrong input raises ``UsageError`` naming the option
and the value received."""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Sequence

from pairbench.errors import UsageError

MAX_COMBINATIONS = 1000
"""The most parameter combinations a run takes: every round runs each on every side."""
_PARAMETER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def parse_parameters(given, commands: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """-P/--parameter-scan NAME MIN MAX (with -D/--parameter-step-size STEP) and -L/--parameter-list
    NAME VALUES, as hyperfine reads them; or the stored ``parameters``. Every name distinct and
    written as {NAME} in some command; all combinations together at most ``MAX_COMBINATIONS``."""
    stored = given("parameters")
    if stored is not None:
        parameters = _stored_parameters(stored)
    else:
        scans = tuple(given("parameter_scan") or ())
        steps = tuple(given("parameter_step_size") or ())
        if steps and not scans:
            raise UsageError("-D/--parameter-step-size needs -P/--parameter-scan (the range it steps through)")
        if len(steps) not in (0, 1, len(scans)):
            raise UsageError(f"-D/--parameter-step-size was given {len(steps)} times for {len(scans)} "
                             "-P/--parameter-scan: give it once, or once per scan")
        parameters = tuple(_scan(scan, steps[0] if len(steps) == 1 else steps[i] if steps else None)
                           for i, scan in enumerate(scans))
        parameters += tuple(_listed(item) for item in (given("parameter_list") or ()))
    names = [name for name, _ in parameters]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise UsageError(f"the parameter {name!r} is given twice; give each parameter once")
        if not any("{" + name + "}" in command for command in commands):
            raise UsageError(f"the parameter {name!r} appears in no command (write {{{name}}} where its value goes)")
    total = math.prod(len(values) for _, values in parameters)
    if total > MAX_COMBINATIONS:
        raise UsageError(f"{total} parameter combinations are more than {MAX_COMBINATIONS}: every round runs "
                         "each of them on every command; scan fewer values (a larger -D step)")
    return parameters


def _parameter_name(option: str, name) -> str:
    if not isinstance(name, str) or not _PARAMETER_NAME.match(name):
        raise UsageError(f"{option}: a parameter name is a letter or _ then letters, digits, _ or -, got {name!r}")
    return name


def _scan(scan, step) -> tuple[str, tuple[str, ...]]:
    """The values of -P NAME MIN MAX: MIN, MIN + STEP, ... up to MAX (STEP 1 without -D: whole
    numbers), exact in decimal, so -P d 0.3 0.7 -D 0.2 gives 0.3, 0.5, 0.7."""
    option = "-P/--parameter-scan"
    name, low, high = (tuple(scan) + (None, None, None))[:3]
    name = _parameter_name(option, name)
    bounds = []
    for what, text in (("MIN", low), ("MAX", high)):
        try:
            value = decimal.Decimal(str(text).strip())
        except decimal.InvalidOperation:
            raise UsageError(f"{option} {name}: {what} must be a number, got {text!r}") from None
        if not value.is_finite():
            raise UsageError(f"{option} {name}: {what} must be a finite number, got {text!r}")
        bounds.append(value)
    low_value, high_value = bounds
    if step is None:
        if low_value != low_value.to_integral_value() or high_value != high_value.to_integral_value():
            raise UsageError(f"{option} {name}: without -D, MIN and MAX must be whole numbers, got {low!r} "
                             f"and {high!r}; give -D/--parameter-step-size for decimal steps")
        low_value, high_value, delta = (low_value.to_integral_value(), high_value.to_integral_value(),
                                        decimal.Decimal(1))
    else:
        try:
            delta = decimal.Decimal(str(step).strip())
        except decimal.InvalidOperation:
            delta = decimal.Decimal(0)
        if not delta.is_finite() or delta <= 0:
            raise UsageError(f"-D/--parameter-step-size must be a positive number, got {step!r}")
    if low_value > high_value:
        raise UsageError(f"{option} {name}: MIN ({low}) must not be above MAX ({high})")
    count = int((high_value - low_value) / delta) + 1
    if count > MAX_COMBINATIONS:
        raise UsageError(f"{count} parameter combinations are more than {MAX_COMBINATIONS}: every round runs "
                         "each of them on every command; scan fewer values (a larger -D step)")
    return name, tuple(str(low_value + i * delta) for i in range(count))


def _listed(item) -> tuple[str, tuple[str, ...]]:
    """-L NAME VALUES: VALUES comma-separated, each once."""
    option = "-L/--parameter-list"
    name, values = (tuple(item) + (None, None))[:2]
    name = _parameter_name(option, name)
    if not isinstance(values, str) or not values:
        raise UsageError(f"{option} {name}: give the values separated by commas, got {values!r}")
    return name, _distinct_values(option, name, values.split(","))


def _distinct_values(option: str, name: str, values) -> tuple[str, ...]:
    values = tuple(values)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise UsageError(f"{option} {name}: values are text, got {value!r}")
        if value in values[:i]:
            raise UsageError(f"{option} {name}: the value {value!r} is given twice")
    return values


def _stored_parameters(value) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Parameters as a result stores them: a list of [name, [values...]]."""
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"parameters must be a list of [name, values], got {value!r}")
    parameters = []
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], (list, tuple)) \
                or not item[1]:
            raise UsageError(f"each stored parameter must be [name, [values...]], got {item!r}")
        name = _parameter_name("parameters", item[0])
        parameters.append((name, _distinct_values("parameters", name, item[1])))
    return tuple(parameters)
