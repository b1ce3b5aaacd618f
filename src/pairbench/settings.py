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

import itertools
import math
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

from pairbench.errors import UsageError
from pairbench.harnesses import HARNESS_CHOICES, WORKER_HARNESSES
from pairbench.limits import MAX_SHARDS, MAX_SIDES
from pairbench.outputs import JOURNAL_SUFFIX
from pairbench.parameters import parse_parameters
from pairbench.units import parse_duration_ns
from pairbench.verdict import FAIL_ON_CHOICES

KINDS = ("run", "compare", "bench", "import")
STDOUT = "-"  # a file name that means standard output, as in hyperfine

# option -> default; where run and compare differ, per kind. The help text reads these.
DEFAULTS: dict[str, object] = {
    "runs": None, "min_runs": 10, "max_runs": None, "timeout": None, "prepare": None,
    "setup": None, "cleanup": None, "conclude": None, "shell": "none", "no_shell": False, "input": "null",
    "output": "null", "ignore_failure": False, "seed": None, "parameter_scan": None,
    "parameter_step_size": None, "parameter_list": None, "alpha": 0.01, "threshold": 1.0,
    "fail_on": "never", "self_check": False, "json_path": None, "export_json": None, "sort": "auto", "time_unit": None,
    "quiet": False, "filter": None, "sample_time": None, "against": None, "harness": None, "jobs": 1,
    "shard": None, "suite_time": None, "balance": None, "metric": "auto", "fail_on_metric": (),
    "repetitions": 8,  # bench, Go: the repetitions of a round's invocation (Workers.repetitions says why)
    "tuned_rounds": 30,  # no option: the tuning of the confidence sequence (analysis.criteria.T_OPT says why)
}
METRIC_CHOICES = ("auto", "wall", "cpu")
"""--metric: what a comparison decides on (``model.metric_total``); auto: CPU time for a benchmark
whose first rounds show it CPU-bound, else wall time (``analysis.rules.chosen_metric``)."""
LEGACY_METRIC = "wall"
"""What results stored before --metric existed (pairbench 0.2) were decided on."""
LEGACY_REPETITIONS = 1
"""The repetitions per invocation of results stored before --repetitions existed (pairbench 0.3)."""
LEGACY_TUNED_ROUNDS = 200
"""The tuning of results stored before it was a setting (pairbench 0.1 and 0.2): ``show`` gives them
the intervals they were decided with."""
KIND_DEFAULTS: dict[str, dict[str, object]] = {
    "run": {"warmup": 0, "max_time": "3s"},
    "compare": {"warmup": 1, "max_time": "60s"},
    # bench: --max-time is per benchmark; a round of two 1 ms samples makes rounds cheap
    "bench": {"warmup": 16, "max_time": "5s", "min_runs": 32, "timeout": "60s"},
    # import: samples another tool measured; nothing is sampled, so no budget
    "import": {"warmup": 0, "max_time": None},
}

USE_DEFAULTS: dict[str, dict[str, object]] = {
    # compare_functions: two functions in this process, no process to start: a longer budget than bench's
    "functions": {"max_time": "10s", "sample_time": "1ms"},
    # the pytest fixture measuring one function alone, and --pairbench-against's blocks of pytest workers
    "pytest": {"max_time": "1s"},
    "pytest-against": {"max_time": "60s"},
}
"""The defaults of the Python entry points (``bench`` settings made outside the command line)."""


HARNESS_DEFAULTS: dict[str, dict[str, object]] = {
    # each block of rounds starts two pytest sessions (a second or two each), and a verdict needs
    # about a dozen blocks, as the pytest fixture's comparison does (benchmarks/RESULTS.md)
    "pytest-benchmark": {"max_time": "60s"},
    # what the peers' users spend by default on one benchmark, both sides: benchstat's recommended
    # -count 10 at Go's 1 s -test.benchtime is 10 s a side; criterion's 3 s warm-up and 5 s of
    # measurement, 8 s a side. A round of a Go benchmark repeated in its processes (--repetitions)
    # costs about 0.3 s and a criterion invocation about 0.1 s, so 5 s stopped most at the 32 rounds
    # of --min-runs, short of the rounds a verdict of equivalence within +-1% needs (RESULTS.md,
    # "Budgets that follow the peers' (issue 24)"); a benchmark still stops once decided
    "go": {"max_time": "20s"},
    "criterion": {"max_time": "16s"},
}
"""bench's defaults that differ with the harness of the benchmarks (unless the option is given)."""


def default(option: str, kind: str = "compare", harness: str | None = None) -> object:
    """The default of ``option`` (its click name: ``max_time``) for a command of ``kind``, and for
    ``bench`` of benchmarks of ``harness`` when given."""
    if kind == "bench" and option in HARNESS_DEFAULTS.get(harness, {}):
        return HARNESS_DEFAULTS[harness][option]
    return KIND_DEFAULTS[kind].get(option, DEFAULTS.get(option))


def harness_defaults(option: str) -> dict[str, object]:
    """The harnesses whose ``bench`` default of ``option`` is their own, with it."""
    return {harness: values[option] for harness, values in HARNESS_DEFAULTS.items() if option in values}


@dataclass(frozen=True)
class Sampling:
    """How samples are taken: rounds, budgets, helper commands, failures, order."""

    warmup: int
    max_time_ns: int | None
    runs: int | None = None  # a fixed number of rounds: adaptive stopping off
    min_runs: int = DEFAULTS["min_runs"]
    max_runs: int | None = None
    timeout_ns: int | None = None
    prepare: tuple[str, ...] = ()  # none, one for every command, or one per command
    setup: str | None = None
    cleanup: str | None = None
    conclude: tuple[str, ...] = ()  # like prepare, run after every sample
    shell: str = "none"  # the shell commands run through ("sh", "bash --norc"), or "none"
    input: str | None = None  # a file every command reads as standard input (None: /dev/null)
    output: str = "null"  # "null", "inherit", "pipe" or a file path
    ignore_failure: bool = False
    seed: int = 0
    parameters: tuple[tuple[str, tuple[str, ...]], ...] = ()  # -P/-L: (name, values), in order given

    @property
    def adaptive(self) -> bool:
        return self.runs is None

    def combinations(self) -> list[tuple[tuple[str, str], ...]]:
        """Every combination of the parameters' values ((name, value) pairs, in the order the
        parameters were given, the last varying fastest); one empty combination without any."""
        return [tuple(zip((name for name, _ in self.parameters), values, strict=True))
                for values in itertools.product(*(values for _, values in self.parameters))]

    def helper_for(self, option: str, command: int) -> str | None:
        """The --prepare or --conclude text of command number ``command`` (given once: for all)."""
        texts = self.prepare if option == "prepare" else self.conclude
        if not texts:
            return None
        return texts[0] if len(texts) == 1 else texts[command]


@dataclass(frozen=True)
class Decision:
    """How a comparison decides: its error rate, the smallest change that matters, the CI gate."""

    alpha: float = DEFAULTS["alpha"]  # family-wise, over the candidates
    threshold: float = DEFAULTS["threshold"]  # percent
    fail_on: str = DEFAULTS["fail_on"]
    self_check: bool = False
    tuned_rounds: int = DEFAULTS["tuned_rounds"]  # the rounds at which the adaptive interval is tightest
    metric: str = DEFAULTS["metric"]  # what the verdict is on: "wall" (elapsed) or "cpu" (user + system) time, or "auto"
    fail_on_metric: tuple[str, ...] = ()  # --fail-on-metric: the harness's units (B/op) a worse verdict fails, or "all"


WORKER_SAMPLE_TIME_NS = 1_000_000
"""--sample-time of pairbench's own workers: a round trip costs microseconds, so samples can be short."""
HARNESS_SAMPLE_TIME_NS = 10_000_000
"""--sample-time of a harness's invocations: each is a process (milliseconds to start), so a sample of
10 ms keeps the start-up from dominating a round while rounds stay many."""
MAX_JOBS = 64
MAX_REPETITIONS = 1000


@dataclass(frozen=True)
class Workers:
    """How ``bench`` drives a suite: which benchmarks, how long a sample lasts, the git revision
    Python benchmarks are compared against, the harness, the jobs, the shard and the suite's budget."""

    filter: str | None = None  # -k: a regular expression searched for in each benchmark's name
    sample_time_ns: int | None = None  # a sample lasts about this (None: the harness's default)
    against: str | None = None  # --against REV (Python benchmarks): the baseline is this revision
    harness: str | None = None  # --harness; None: detected from the programs
    jobs: int = DEFAULTS["jobs"]  # benchmarks measured at once
    shard: tuple[int, int] | None = None  # --shard K/N: this invocation measures share K of N
    suite_time_ns: int | None = None  # --suite-time: the budget of the whole suite
    balance: str | None = None  # --balance RESULT: shards balanced by the measuring times in RESULT
    repetitions: int = DEFAULTS["repetitions"]
    """--repetitions: a Go benchmark's repetitions in each invocation of a round (``-test.count``; the
    first a warmup, the round's value the median of the rest); harnesses that take no count run once.
    A fresh Go process's one 10 ms repetition spread about 20% round to round under load, eight in one
    process 2.5% (benchmarks/RESULTS.md, issue 24)."""

    def sample_time(self, harness: str) -> int:
        """The sample time: --sample-time, else the default of ``harness``'s kind."""
        if self.sample_time_ns is not None:
            return self.sample_time_ns
        return WORKER_SAMPLE_TIME_NS if harness in WORKER_HARNESSES else HARNESS_SAMPLE_TIME_NS


@dataclass(frozen=True)
class Outputs:
    """Where this invocation writes (not stored in the result)."""

    json_path: str | None = None  # "-" is standard output; pairbench's result document
    exported: tuple[tuple[str, str], ...] = ()  # the --export-WORD files: (WORD, path); the format of
    # each WORD is report.exports.EXPORT_OPTIONS' (--export-json is hyperfine's JSON schema)
    quiet: bool = False
    sort: str = DEFAULTS["sort"]  # the order of summaries and comparisons: "auto"/"command" (as given), "mean-time"
    time_unit: str | None = None  # every duration in this unit ("ms"); None: a unit that suits each

    def exports(self) -> dict[str, str]:
        """The ``--export-WORD`` files asked for: WORD -> path (``-``, standard output, apart)."""
        return {fmt: path for fmt, path in self.exported if path != STDOUT}

    @property
    def to_stdout(self) -> str | None:
        """What writes to standard output: ``json_path``, an export's WORD, or None."""
        return "json_path" if self.json_path == STDOUT else next(
            (fmt for fmt, path in self.exported if path == STDOUT), None)


@dataclass(frozen=True)
class Settings:
    """Every option of one ``run`` or ``compare``; ``names`` are the sides' names, one per command."""

    kind: str
    commands: tuple[str, ...]
    names: tuple[str, ...]
    sampling: Sampling
    decision: Decision = field(default_factory=Decision)
    outputs: Outputs = field(default_factory=Outputs)
    workers: Workers | None = None  # bench only

    def stored(self) -> dict:
        """The settings a result document keeps (JSON-ready): sampling and decision (and workers,
        for bench). What was not given (no --prepare, no parameters) is null, as pairbench 0.2
        stored it."""
        sampling = {key: None if value == () else value for key, value in asdict(self.sampling).items()}
        decision = asdict(self.decision)
        if not decision["fail_on_metric"]:  # as results before --fail-on-metric stored it
            del decision["fail_on_metric"]
        stored = {"sampling": sampling, "decision": decision}
        if self.workers is not None:
            stored["workers"] = asdict(self.workers)
        return stored


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


ALPHA_RANGE = (1e-6, 0.5)
"""The values --alpha may take. Below 1e-6 the level 1 - alpha/m (m candidates, up to 1000) is no
longer shown apart from 100% and the intervals need rounds no benchmark affords; above 0.5 a
verdict would be wrong more often than right."""


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
NO_SHELL = "none"


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


SORT_CHOICES = ("auto", "command", "mean-time")
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
