"""Settings: every option of ``run`` and ``compare``, typed, validated once, with one default each.

The command line hands the options it read to :func:`parse_settings`, which
turns them into a frozen :class:`Settings` or raises ``UsageError`` naming the
option and the value received. Nothing below the CLI validates an option again
or keeps a default of its own: ``DEFAULTS`` is the only place a default lives
(the help text shows it from here), and ``Sampling``, ``Decision`` and
``Outputs`` are what the rest of pairbench reads.

A result document stores the ``sampling`` and ``decision`` groups
(:meth:`Settings.stored`); :func:`settings_from_stored` reads them back through
the same parsers. ``outputs`` (where this invocation writes) is not stored.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

from pairbench.errors import UsageError
from pairbench.units import parse_duration_ns
from pairbench.verdict import FAIL_ON_CHOICES

KINDS = ("run", "compare")

# option -> default; where run and compare differ, per kind. The help text reads these.
DEFAULTS: dict[str, object] = {
    "runs": None, "min_runs": 10, "max_runs": None, "timeout": None, "prepare": None,
    "setup": None, "cleanup": None, "shell": False, "output": "null", "ignore_failure": False,
    "seed": None, "alpha": 0.01, "threshold": 1.0, "fail_on": "never", "self_check": False,
    "json_path": None, "export_markdown": None, "export_csv": None, "export_html": None,
    "quiet": False,
}
KIND_DEFAULTS: dict[str, dict[str, object]] = {
    "run": {"warmup": 0, "max_time": "3s"},
    "compare": {"warmup": 1, "max_time": "60s"},
}


def default(option: str, kind: str = "compare") -> object:
    """The default of ``option`` (its click name: ``max_time``) for a command of ``kind``."""
    return KIND_DEFAULTS[kind].get(option, DEFAULTS.get(option))


@dataclass(frozen=True)
class Sampling:
    """How samples are taken: rounds, budgets, helper commands, failures, order."""

    warmup: int
    max_time_ns: int | None
    runs: int | None = None  # a fixed number of rounds: adaptive stopping off
    min_runs: int = 10
    max_runs: int | None = None
    timeout_ns: int | None = None
    prepare: str | None = None
    setup: str | None = None
    cleanup: str | None = None
    shell: bool = False
    output: str = "null"  # "null", "inherit" or a file path
    ignore_failure: bool = False
    seed: int = 0

    @property
    def adaptive(self) -> bool:
        return self.runs is None


@dataclass(frozen=True)
class Decision:
    """How a comparison decides: its error rate, the smallest change that matters, the CI gate."""

    alpha: float = 0.01  # family-wise, over the candidates
    threshold: float = 1.0  # percent
    fail_on: str = "never"
    self_check: bool = False


@dataclass(frozen=True)
class Outputs:
    """Where this invocation writes (not stored in the result)."""

    json_path: str | None = None  # "-" is standard output
    export_markdown: str | None = None
    export_csv: str | None = None
    export_html: str | None = None
    quiet: bool = False

    def exports(self) -> dict[str, str]:
        """The ``--export-*`` files asked for: option key -> path."""
        return {key: value for key in ("export_markdown", "export_csv", "export_html")
                if (value := getattr(self, key))}


@dataclass(frozen=True)
class Settings:
    """Every option of one ``run`` or ``compare``; ``names`` are the sides' names, one per command."""

    kind: str
    commands: tuple[str, ...]
    names: tuple[str, ...]
    sampling: Sampling
    decision: Decision = field(default_factory=Decision)
    outputs: Outputs = field(default_factory=Outputs)

    def stored(self) -> dict:
        """The settings a result document keeps (JSON-ready): sampling and decision."""
        return {"sampling": asdict(self.sampling), "decision": asdict(self.decision)}


# --------------------------------------------------------------------------- parsing


def parse_settings(kind: str, commands: Sequence[str], options: Mapping[str, object]) -> Settings:
    """Turn the options the CLI read into :class:`Settings`; raise ``UsageError`` on any bad value.

    ``options`` maps click's option names (``max_time``, ``json_path``) to the
    value given, or None when not given (then ``DEFAULTS`` apply). Values may be
    text as typed or already typed (stored settings). A missing seed is drawn
    at random here, so the stored settings always hold the seed that was used.
    """
    if kind not in KINDS:
        raise UsageError(f"kind must be one of {KINDS}, got {kind!r}")
    if not commands:
        raise UsageError("give at least one command to measure")

    def given(option: str):
        value = options.get(option)
        return default(option, kind) if value is None else value

    sampling = _sampling(given)
    decision = Decision(alpha=parse_alpha(given("alpha")), threshold=parse_threshold(given("threshold")),
                        fail_on=_choice("--fail-on", given("fail_on"), FAIL_ON_CHOICES),
                        self_check=_flag("--self-check", given("self_check")))
    outputs = Outputs(json_path=_text_or_none("--json", given("json_path")),
                      export_markdown=_text_or_none("--export-markdown", given("export_markdown")),
                      export_csv=_text_or_none("--export-csv", given("export_csv")),
                      export_html=_text_or_none("--export-html", given("export_html")),
                      quiet=_flag("--quiet", given("quiet")))
    return Settings(kind, tuple(commands), _names(options.get("names") or (), len(commands)),
                    sampling, decision, outputs)


def _sampling(given) -> Sampling:
    runs = _count_or_none("--runs", given("runs"), 1)
    min_runs = _count("--min-runs", given("min_runs"), 1)
    max_runs = _count_or_none("--max-runs", given("max_runs"), 1)
    if max_runs is not None and max_runs < min_runs:
        raise UsageError(f"--max-runs ({max_runs}) must not be below --min-runs ({min_runs})")
    seed = given("seed")
    return Sampling(
        warmup=_count("--warmup", given("warmup"), 0),
        max_time_ns=_duration_or_none("--max-time", given("max_time")),
        runs=runs, min_runs=min_runs, max_runs=max_runs,
        timeout_ns=_duration_or_none("--timeout", given("timeout")),
        prepare=_command_or_none("--prepare", given("prepare")),
        setup=_command_or_none("--setup", given("setup")),
        cleanup=_command_or_none("--cleanup", given("cleanup")),
        shell=_flag("--shell", given("shell")),
        output=_output(given("output")),
        ignore_failure=_flag("--ignore-failure", given("ignore_failure")),
        seed=secrets.randbits(32) if seed is None else _count("--seed", seed, 0),
    )


def settings_from_stored(kind: str, commands: Sequence[str], names: Sequence[str],
                         stored: Mapping) -> Settings:
    """The settings a result document stored, read through the same parsers (``UsageError`` if bad)."""
    for group in ("sampling", "decision"):
        if not isinstance(stored.get(group, {}), Mapping):
            raise UsageError(f"settings.{group} must be an object")
    sampling, decision = stored.get("sampling", {}), stored.get("decision", {})
    unknown = (set(sampling) - {f.name for f in fields(Sampling)}) | (
        set(decision) - {f.name for f in fields(Decision)})
    if unknown:
        raise UsageError(f"unknown setting(s) {', '.join(sorted(map(str, unknown)))}")
    options = {**{_OPTION_OF.get(k, k): v for k, v in sampling.items()}, **decision}
    if "max_time_ns" in sampling and sampling["max_time_ns"] is None:
        options["max_time"] = _NO_LIMIT
    return parse_settings(kind, commands, {**options, "names": tuple(names)})


_OPTION_OF = {"max_time_ns": "max_time", "timeout_ns": "timeout"}
_NO_LIMIT = "none"  # a stored run without a time budget


# --------------------------------------------------------------------------- one parser per kind of value


def parse_alpha(value) -> float:
    """--alpha: a number in (0, 1)."""
    number = _number("--alpha", value)
    if not 0.0 < number < 1.0:
        raise UsageError(f"--alpha must lie between 0 and 1 (exclusive), got {value!r}")
    return number


def parse_threshold(value) -> float:
    """--threshold: a percentage in (0, 100), typed as ``1``, ``0.5`` or ``0.5%``."""
    text = str(value).strip().rstrip("%") if isinstance(value, str) else value
    number = _number("--threshold", text, shown=value)
    if not 0.0 < number < 100.0:
        raise UsageError(f"--threshold must be between 0 and 100 percent, got {value!r}")
    return number


def _number(option: str, value, *, shown=None) -> float:
    if isinstance(value, bool):
        raise UsageError(f"{option} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{option} must be a number, got {shown if shown is not None else value!r}") from None
    if not math.isfinite(number):
        raise UsageError(f"{option} must be a finite number, got {value!r}")
    return number


def _count(option: str, value, minimum: int) -> int:
    """A whole number >= ``minimum``, typed as text or given as an int (never a bool or a float)."""
    if isinstance(value, (bool, float)):
        raise UsageError(f"{option} must be a whole number, got {value!r}")
    try:
        number = int(str(value).strip(), 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{option} must be a whole number, got {value!r}") from None
    if number < minimum:
        raise UsageError(f"{option} must be at least {minimum}, got {number}")
    return number


def _count_or_none(option: str, value, minimum: int) -> int | None:
    return None if value is None else _count(option, value, minimum)


def _duration_or_none(option: str, value) -> int | None:
    """A duration in whole ns: typed text ("30s", "500ms"), or stored ns (an int); "none" for no limit."""
    if value is None or value == _NO_LIMIT:
        return None
    if isinstance(value, (bool, float)):
        raise UsageError(f"{option} must be a duration, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise UsageError(f"{option} must be at least 1 ns, got {value}")
        return value
    return parse_duration_ns(value, option=option)


def _flag(option: str, value) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{option} is a flag (true or false), got {value!r}")
    return value


def _choice(option: str, value, choices: Sequence[str]) -> str:
    if value not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _text_or_none(option: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(f"{option} must be a non-empty path, got {value!r}")
    return value


def _command_or_none(option: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{option} must be a command, got {value!r}")
    return value


def _output(value) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"--output must be null, inherit or a file path, got {value!r}")
    return value


def _names(names: Sequence[str], n_commands: int) -> tuple[str, ...]:
    """--name values: none, or one per command, all distinct."""
    names = tuple(names)
    if names and len(names) != n_commands:
        raise UsageError(f"--name was given {len(names)} time(s) for {n_commands} command(s)")
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise UsageError(f"--name must be text, got {name!r}")
        if name in names[:i]:
            raise UsageError(f"two commands are both named {name!r}; give distinct --name values")
    return names
