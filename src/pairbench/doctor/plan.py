"""What ``pairbench doctor COMMAND`` runs: a :class:`ValidationPlan`, and the one parser of its options.

The command line hands the options it read, as typed, to :func:`parse_plan`,
which returns a frozen plan or raises ``UsageError`` naming the option and
the value received; nothing below validates them again. The plan's field
defaults are the only defaults (the help shows them from here).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from pairbench.errors import UsageError
from pairbench.measure.commandline import parse_command, resolve_shell
from pairbench.model import Command
from pairbench.parsers import parse_count, parse_shell
from pairbench.settings import NO_SHELL
from pairbench.units import parse_duration_ns

PLACEHOLDER = "{iterations}"
DEFAULT_COUNTS = (1, 2, 4, 8)
FAIL_ON_CHOICES = ("never", "warn", "fail")
PLAN_OPTIONS = ("runs", "iterations", "warmup", "shell", "no_shell", "name", "seed", "timeout")


@dataclass(frozen=True)
class ValidationPlan:
    """How to validate one benchmark command.

    ``runs`` samples are taken at every iteration count of ``counts`` (once,
    at 1, without a ``{iterations}`` placeholder), after ``warmup`` untimed
    rounds; with ``probe_startup`` every round also runs ``true`` (through
    ``SHELL -c`` when ``shell`` names one, as ``parsers.parse_shell`` gives it: ``sh``,
    ``bash --norc``, or ``none``), whose time is process start-up, measured under
    the same conditions as the command. ``seed`` seeds the order of each
    round; ``name`` defaults to the command text. Built by :func:`parse_plan`
    from the options, or directly by code that has typed values.
    """

    command: str
    shell: str = NO_SHELL
    name: str = ""
    runs: int = 20
    counts: tuple[int, ...] = DEFAULT_COUNTS
    warmup: int = 1
    probe_startup: bool = True
    seed: int = 0
    timeout_ns: int | None = None

    @property
    def iterated(self) -> bool:
        return PLACEHOLDER in self.command

    @property
    def benchmark_name(self) -> str:
        return self.name or self.command

    @property
    def measured_counts(self) -> tuple[int, ...]:
        """The iteration counts measured: ``counts``, or just 1 without a placeholder."""
        return self.counts if self.iterated else (1,)

    def command_for(self, count: int) -> Command:
        """The command with ``{iterations}`` replaced by ``count`` (the command itself if none)."""
        return parse_command(self.command.replace(PLACEHOLDER, str(count)), shell=resolve_shell(self.shell))


def default(option: str) -> object:
    """The default of a plan option (its click name: ``runs``, ``iterations``), for the help."""
    if option == "iterations":
        return ",".join(map(str, DEFAULT_COUNTS))
    if option == "fail_on":
        return FAIL_ON_CHOICES[0]
    return {f.name: f.default for f in dataclasses.fields(ValidationPlan)}[option]


# --------------------------------------------------------------------------- parsing


def parse_plan(command: str, options: Mapping[str, object]) -> ValidationPlan:
    """Turn ``COMMAND`` and the options as typed into a :class:`ValidationPlan`; ``UsageError`` on any
    bad value.

    ``options`` maps the option names of ``PLAN_OPTIONS`` to the text given, or
    None when not given (then the plan's defaults apply; ``no_shell`` is -N, a flag).
    A missing seed is drawn at random here, so the report can say which was used.
    """
    if not isinstance(command, str) or not command.strip():
        raise UsageError(f"COMMAND must be a non-empty command, got {command!r}")
    given = {option: options.get(option) for option in PLAN_OPTIONS}
    counts = parse_counts(given["iterations"]) if given["iterations"] is not None else DEFAULT_COUNTS
    if PLACEHOLDER in command and len(counts) < 2:
        raise UsageError(f"--iterations: a {PLACEHOLDER} command needs at least 2 distinct counts, "
                         f"got {given['iterations']!r}")
    seed = given["seed"]
    return ValidationPlan(
        command=command,
        shell=parse_shell(NO_SHELL if given["shell"] is None else given["shell"],
                          no_shell=bool(given["no_shell"])),
        name=given["name"] or "",
        runs=parse_count("--runs", given["runs"], 2) if given["runs"] is not None else default("runs"),
        counts=counts,
        warmup=parse_count("--warmup", given["warmup"], 0) if given["warmup"] is not None else default("warmup"),
        seed=secrets.randbits(32) if seed is None else parse_count("--seed", seed, 0),
        timeout_ns=parse_duration_ns(given["timeout"], option="--timeout") if given["timeout"] else None,
    )


def parse_counts(text: str) -> tuple[int, ...]:
    """--iterations: distinct whole numbers >= 1, comma-separated ("1,2,4,8")."""
    parts = [part.strip() for part in str(text).split(",") if part.strip()]
    if not parts:
        raise UsageError(f"--iterations: expected iteration counts like 1,2,4,8, got {text!r}")
    counts = tuple(parse_count("--iterations", part, 1, shown=repr(text)) for part in parts)
    if len(set(counts)) != len(counts):
        raise UsageError(f"--iterations: the counts must be distinct, got {text!r}")
    return counts


def parse_fail_on(value: str | None) -> str:
    """--fail-on: the finding status from which the doctor exits 1 (``never`` when not given)."""
    if value is None:
        return default("fail_on")
    if value not in FAIL_ON_CHOICES:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON_CHOICES)}; got {value!r}")
    return value
