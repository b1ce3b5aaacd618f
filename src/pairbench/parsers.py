"""The parsers of every option: text as typed (or values as stored) to the records of ``settings``.

The command line hands the options it read to :func:`parse_settings`, which
turns them into a frozen ``Settings`` or raises ``UsageError`` naming the
option and the value received; nothing below the CLI validates an option
again. :func:`settings_from_stored` reads a result's stored settings back
through the same parsers. One parser per kind of value (a count, a duration,
a shell, a time unit, a shard) serves every command.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import fields

from pairbench.errors import UsageError
from pairbench.harness_registry import HARNESS_CHOICES
from pairbench.limits import MAX_SHARDS, MAX_SIDES
from pairbench.outputs import JOURNAL_SUFFIX
from pairbench.parameters import parse_parameters
from pairbench.settings import (
    ALPHA_RANGE,
    DEFAULT_COUNTS,
    DOCTOR_FAIL_ON_CHOICES,
    KINDS,
    METRIC_CHOICES,
    NO_SHELL,
    PLACEHOLDER,
    PLAN_OPTIONS,
    SORT_CHOICES,
    STDOUT,
    Decision,
    Outputs,
    Sampling,
    Settings,
    ValidationPlan,
    Workers,
    default,
    doctor_default,
)
from pairbench.units import parse_duration_ns
from pairbench.verdict import FAIL_ON_CHOICES

LEGACY_METRIC = "wall"
"""What results stored before --metric existed (pairbench 0.2) were decided on."""
LEGACY_REPETITIONS = 1
"""The repetitions per invocation of results stored before --repetitions existed (pairbench 0.3)."""
LEGACY_TUNED_ROUNDS = 200
"""The tuning of results stored before it was a setting (pairbench 0.1 and 0.2): ``show`` gives them
the intervals they were decided with."""
MAX_JOBS = 64
MAX_REPETITIONS = 1000


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

    sampling = _sampling(given, tuple(commands))
    decision = Decision(alpha=parse_alpha(given("alpha")), threshold=parse_threshold(given("threshold")),
                        fail_on=_choice("--fail-on", given("fail_on"), FAIL_ON_CHOICES),
                        self_check=_flag("--self-check", given("self_check")),
                        tuned_rounds=parse_count("tuned_rounds", given("tuned_rounds"), 1),
                        metric=_choice("--metric", given("metric"), METRIC_CHOICES),
                        fail_on_metric=parse_fail_on_metric(given("fail_on_metric")))
    if len(commands) + decision.self_check > MAX_SIDES:
        raise UsageError(f"a result holds at most {MAX_SIDES} sides (commands, and the --self-check copy); "
                         f"got {len(commands)} commands{' and the copy' if decision.self_check else ''}")
    outputs = Outputs(json_path=_result_path("--json", given("json_path")),
                      exported=tuple((key.removeprefix("export_"), _result_path("--" + key.replace("_", "-"), value))
                                     for key, value in options.items()
                                     if key.startswith("export_") and value is not None),
                      quiet=_flag("--quiet", given("quiet")),
                      sort=_choice("--sort", given("sort"), SORT_CHOICES),
                      time_unit=parse_time_unit(given("time_unit")))
    _one_to_stdout(outputs)
    workers = _workers(given) if kind == "bench" else None
    return Settings(kind, tuple(commands), _names(options.get("names") or (), len(commands)),
                    sampling, decision, outputs, workers)


def _workers(given) -> Workers:
    sample_time = _duration_or_none("--sample-time", given("sample_time"))
    if sample_time is not None and not 1_000 <= sample_time <= 10_000_000_000:
        raise UsageError(f"--sample-time must lie between 1us and 10s, got {given('sample_time')!r}")
    harness = given("harness")
    if harness is not None and harness not in HARNESS_CHOICES:
        raise UsageError(f"--harness must be one of {', '.join(HARNESS_CHOICES)}, got {harness!r}")
    against = _words_or_none("--against", given("against"), "name a git revision (a branch, a tag, a commit)")
    return Workers(filter=_regex("-k/--filter", given("filter")), sample_time_ns=sample_time, against=against,
                   harness=harness, jobs=parse_count("--jobs", given("jobs"), 1, MAX_JOBS),
                   shard=parse_shard(given("shard")), suite_time_ns=_duration_or_none("--suite-time", given("suite_time")),
                   balance=_text_or_none("--balance", given("balance")),
                   repetitions=parse_count("--repetitions", given("repetitions"), 1, MAX_REPETITIONS))


def parse_shard(value) -> tuple[int, int] | None:
    """--shard K/N (1 <= K <= N <= ``MAX_SHARDS``), or a stored [K, N]; None: the whole suite."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        value = f"{value[0]}/{value[1]}"
    match = re.fullmatch(r"\s*(\d{1,5})\s*/\s*(\d{1,5})\s*", value) if isinstance(value, str) else None
    if not match:
        raise UsageError(f"--shard must be K/N (this is share K of N, 1 <= K <= N), got {value!r}")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n <= MAX_SHARDS:
        raise UsageError(f"--shard K/N needs 1 <= K <= N <= {MAX_SHARDS}, got {value!r}")
    return k, n


def _regex(option: str, value) -> str | None:
    """A regular expression (Python's syntax), checked; None: no filter."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(f"{option} must be a regular expression, got {value!r}")
    try:
        re.compile(value)
    except re.error as exc:
        raise UsageError(f"{option} {value!r} is not a regular expression: {exc}") from None
    return value


def _sampling(given, commands: tuple[str, ...]) -> Sampling:
    runs = _count_or_none("--runs", given("runs"), 1)
    min_runs = parse_count("--min-runs", given("min_runs"), 1)
    max_runs = _count_or_none("--max-runs", given("max_runs"), 1)
    if max_runs is not None and max_runs < min_runs:
        raise UsageError(f"--max-runs ({max_runs}) must not be below --min-runs ({min_runs})")
    seed = given("seed")
    return Sampling(
        warmup=parse_count("--warmup", given("warmup"), 0),
        max_time_ns=_duration_or_none("--max-time", given("max_time")),
        runs=runs, min_runs=min_runs, max_runs=max_runs,
        timeout_ns=_duration_or_none("--timeout", given("timeout")),
        prepare=_per_command("--prepare", given("prepare"), len(commands)),
        setup=_words_or_none("--setup", given("setup")),
        cleanup=_words_or_none("--cleanup", given("cleanup")),
        conclude=_per_command("--conclude", given("conclude"), len(commands)),
        shell=parse_shell(given("shell"), no_shell=_flag("-N", given("no_shell"))),
        input=_input(given("input")),
        output=_output(given("output")),
        ignore_failure=_flag("--ignore-failure", given("ignore_failure")),
        seed=int.from_bytes(os.urandom(4), "big") if seed is None else parse_count("--seed", seed, 0),
        parameters=parse_parameters(given, commands),
    )


def settings_from_stored(kind: str, commands: Sequence[str], names: Sequence[str],
                         stored: Mapping) -> Settings:
    """The settings a result document stored, read through the same parsers (``UsageError`` if bad)."""
    for group in ("sampling", "decision", "workers"):
        if not isinstance(stored.get(group, {}), Mapping):
            raise UsageError(f"settings.{group} must be an object")
    sampling, decision, workers = (stored.get(group, {}) for group in ("sampling", "decision", "workers"))
    unknown = (set(sampling) - {f.name for f in fields(Sampling)}) | (
        set(decision) - {f.name for f in fields(Decision)}) | (set(workers) - {f.name for f in fields(Workers)})
    if unknown:
        raise UsageError(f"unknown setting(s) {', '.join(sorted(map(str, unknown)))}")
    options = {**{_OPTION_OF.get(k, k): v for k, v in sampling.items()}, **decision,
               **{_OPTION_OF.get(k, k): v for k, v in workers.items()}}
    if "max_time_ns" in sampling and sampling["max_time_ns"] is None:
        options["max_time"] = _NO_LIMIT
    options.setdefault("tuned_rounds", LEGACY_TUNED_ROUNDS)
    options.setdefault("metric", LEGACY_METRIC)
    if kind == "bench":
        options.setdefault("repetitions", LEGACY_REPETITIONS)
    return parse_settings(kind, commands, {**options, "names": tuple(names)})


_OPTION_OF = {"max_time_ns": "max_time", "timeout_ns": "timeout", "sample_time_ns": "sample_time",
              "suite_time_ns": "suite_time"}
_NO_LIMIT = "none"  # a stored run without a time budget


# --------------------------------------------------------------------------- one parser per kind of value


def parse_alpha(value) -> float:
    """--alpha: a number in ``ALPHA_RANGE`` (1e-6 to 0.5, inclusive)."""
    number = _number("--alpha", value)
    low, high = ALPHA_RANGE
    if not low <= number <= high:
        raise UsageError(f"--alpha must lie between {low:g} and {high:g} (inclusive), got {value!r}")
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


def parse_count(option: str, value, minimum: int, maximum: int | None = None, *,
                shown: str | None = None) -> int:
    """A whole number from ``minimum`` to ``maximum`` (None: no bound), typed as text or given as an
    int (never a bool or a float); errors show ``shown`` (the whole value typed) when given."""
    if isinstance(value, (bool, float)):
        raise UsageError(f"{option} must be a whole number, got {shown or repr(value)}")
    try:
        number = int(str(value).strip(), 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{option} must be a whole number, got {shown or repr(value)}") from None
    if number < minimum:
        raise UsageError(f"{option} must be at least {minimum}, got {shown or number}")
    if maximum is not None and number > maximum:
        raise UsageError(f"{option} must be at most {maximum}, got {number}")
    return number


def _count_or_none(option: str, value, minimum: int) -> int | None:
    return None if value is None else parse_count(option, value, minimum)


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


MAX_UNIT_CHARS = 64


def parse_fail_on_metric(values) -> tuple[str, ...]:
    """--fail-on-metric UNIT (repeated): units as a harness reports them (``B/op``, ``allocs/op``,
    ``MB/s``), or ``all``; printable, no spaces, at most ``MAX_UNIT_CHARS`` characters each."""
    if isinstance(values, str) or not isinstance(values, (list, tuple)):
        raise UsageError(f"--fail-on-metric must be a list of units, got {values!r}")
    for unit in values:
        if not isinstance(unit, str) or not unit or len(unit) > MAX_UNIT_CHARS or not unit.isprintable() \
                or any(c.isspace() for c in unit):
            raise UsageError(f"--fail-on-metric takes a unit as the harness reports it (B/op, allocs/op, MB/s) "
                             f"or all; got {unit!r}"[:200])
    return tuple(dict.fromkeys(values))


def _choice(option: str, value, choices: Sequence[str]) -> str:
    if value not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _result_path(option: str, value) -> str | None:
    """An output file's path: not a journal's name, which would replace another run's live journal."""
    path = _text_or_none(option, value)
    if path is not None and path.endswith(JOURNAL_SUFFIX):
        raise UsageError(f"{option} must not end in {JOURNAL_SUFFIX}, got {path!r}: that names the journal "
                         f"of a run with --json {path.removesuffix(JOURNAL_SUFFIX)!r}; choose another name")
    return path


def _text_or_none(option: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(f"{option} must be a non-empty path, got {value!r}")
    return value


def _words_or_none(option: str, value, must: str = "be a command") -> str | None:
    """Text that is not blank (a command, a revision), or None; ``must`` says what it must be."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise UsageError(f"{option} must {must}, got {value!r}")
    return value


def _output(value) -> str:
    """--output: null, inherit, pipe (hyperfine's: read through a pipe and discarded) or a file
    path (``./pipe`` for a file named pipe)."""
    if not isinstance(value, str) or not value:
        raise UsageError(f"--output must be null, inherit, pipe or a file path, got {value!r}")
    return value


def _input(value) -> str | None:
    """--input: null (``/dev/null``, the default) or a readable regular file, as hyperfine's."""
    if value is None or value == "null":
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(f"--input must be null or a file to read, got {value!r}")
    if not os.path.isfile(value) or not os.access(value, os.R_OK):
        why = "is not a readable file" if os.path.exists(value) else "does not exist"
        raise UsageError(f"--input {value!r} {why}; give a file for the commands' standard input, or null")
    return value


# --------------------------------------------------------------------------- shells


KNOWN_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "oksh", "pdksh", "yash", "ash",
                          "busybox", "fish", "tcsh", "csh", "nu", "elvish", "xonsh", "pwsh", "osh", "rc", "es"})
"""Shells --shell takes by name; any other program must be given by its path (``-S /opt/my/sh``)."""


def parse_shell(value, *, no_shell: bool = False) -> str:
    """-S/--shell SHELL (a shell's name or path, with its options: ``bash --norc``) or ``none``;
    -N is ``none``. A stored ``true``/``false`` (pairbench 0.2's flag) is ``sh``/``none``."""
    if isinstance(value, bool):
        value = "sh" if value else NO_SHELL
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"--shell must name a shell (sh, bash, ...) or none, got {value!r}")
    text = value.strip()
    if no_shell and text != NO_SHELL:
        raise UsageError(f"-N (no shell) and --shell {text} contradict; give one of them")
    if text == NO_SHELL:
        return NO_SHELL
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--shell {text!r}: cannot split it into words ({exc})") from None
    program = words[0] if words else ""
    if "/" not in program and program not in KNOWN_SHELLS:
        raise UsageError(
            f"--shell takes the shell that runs the commands ({', '.join(sorted(KNOWN_SHELLS)[:6])}, ... "
            f"or none, as hyperfine's -S), got {text!r}; it is no longer a flag: write --shell sh 'CMD', "
            "or give another shell by its path")
    return text


# --------------------------------------------------------------------------- outputs


TIME_UNITS = {"ns": "ns", "nanosecond": "ns", "us": "µs", "µs": "µs", "microsecond": "µs", "ms": "ms",
              "millisecond": "ms", "s": "s", "second": "s"}


def parse_time_unit(value) -> str | None:
    """-u/--time-unit: nanosecond, microsecond, millisecond or second (or ns, us, ms, s); None:
    each number in the unit that suits it."""
    if value is None:
        return None
    if value not in TIME_UNITS:
        raise UsageError(f"--time-unit must be one of nanosecond, microsecond, millisecond, second "
                         f"(or ns, us, ms, s), got {value!r}")
    return TIME_UNITS[value]


def _one_to_stdout(outputs: Outputs) -> None:
    """At most one output may be ``-`` (standard output): two would be mixed into one stream."""
    names = ["--json"] * (outputs.json_path == STDOUT) + [f"--export-{fmt}" for fmt, path in outputs.exported
                                                         if path == STDOUT]
    if len(names) > 1:
        raise UsageError(f"{' and '.join(names)} both write to standard output (-); write all but one to a file")


# --------------------------------------------------------------------------- helper commands


def _per_command(option: str, value, n_commands: int) -> tuple[str, ...]:
    """--prepare and --conclude: none, once (for every command) or once per command, like hyperfine."""
    if value is None:
        return ()
    texts = (value,) if isinstance(value, str) else tuple(value)
    if len(texts) not in (0, 1, n_commands):
        raise UsageError(f"{option} was given {len(texts)} times for {n_commands} commands: give it once "
                         "(for every command) or once per command, in the commands' order")
    return tuple(_words_or_none(option, text) for text in texts)


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


# --------------------------------------------------------------------------- doctor COMMAND


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
        runs=parse_count("--runs", given["runs"], 2) if given["runs"] is not None else doctor_default("runs"),
        counts=counts,
        warmup=parse_count("--warmup", given["warmup"], 0) if given["warmup"] is not None else doctor_default("warmup"),
        seed=int.from_bytes(os.urandom(4), "big") if seed is None else parse_count("--seed", seed, 0),
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


def parse_doctor_fail_on(value: str | None) -> str:
    """--fail-on: the finding status from which the doctor exits 1 (``never`` when not given)."""
    if value is None:
        return doctor_default("fail_on")
    if value not in DOCTOR_FAIL_ON_CHOICES:
        raise UsageError(f"--fail-on must be one of {', '.join(DOCTOR_FAIL_ON_CHOICES)}; got {value!r}")
    return value
