"""Settings: what each measuring command was asked to do, typed, with one default each.

``Settings(kind, commands, names, sampling, decision, outputs, workers)`` is
every option of ``run``, ``compare`` and ``bench``; ``ValidationPlan`` is
``doctor COMMAND``'s. ``DEFAULTS`` is the only place a default lives (the
help text shows it from here); ``Sampling``, ``Decision``, ``Workers`` and
``Outputs`` are what the rest of pairbench reads. The records are made by the
parsers (``pairbench.parsers``), which validate each option once.

A result document stores the ``sampling`` and ``decision`` groups
(:meth:`Settings.stored`); ``parsers.settings_from_stored`` reads them back
through the same parsers. ``outputs`` (where this invocation writes) is not stored.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, field, fields

from pairbench.frozen import frozen
from pairbench.harness_registry import REGISTRY, WORKER_HARNESSES
from pairbench.harness_registry import harness as harness_entry

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
METRIC_CHOICES = ("auto", "wall", "cpu", "instructions", "cycles-model")
"""--metric: what a comparison decides on (``model.metric_total``); auto: CPU time for a benchmark
whose first rounds show it CPU-bound, else wall time (``analysis.rules.chosen_metric``);
instructions: the user-space instructions executed, counted by a hardware counter or Callgrind;
cycles-model: Callgrind's cache-model estimate of the cycles (``measure.callgrind``)."""
COUNT_METRIC_CHOICES = ("instructions", "cycles-model")
"""The --metric choices that count instead of timing (``model.COUNT_METRICS``)."""
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


COUNT_DEFAULTS: dict[str, dict[str, object]] = {
    # counts need no warm-up of the machine, and identical counts decide in a few rounds
    # (stats.counts.exact_rounds: 8 at alpha 0.01); Callgrind runs a program 20-100 times slower,
    # and an interpreter's start-up under it takes seconds, so the budget is larger
    "compare": {"warmup": 0, "min_runs": 2, "max_time": "300s"},
    "bench": {"warmup": 0, "min_runs": 2, "max_time": "120s"},
}
"""The defaults that differ when the metric is a count (``--metric instructions`` or ``cycles-model``)."""


def default(option: str, kind: str = "compare", harness: str | None = None, metric: str | None = None) -> object:
    """The default of ``option`` (its click name: ``max_time``) for a command of ``kind``, for
    ``bench`` of benchmarks of ``harness`` when given (its own budget: ``Harness.max_time``), and
    with a count ``metric`` (``COUNT_DEFAULTS``)."""
    if metric in COUNT_METRIC_CHOICES and option in COUNT_DEFAULTS.get(kind, {}):
        return COUNT_DEFAULTS[kind][option]
    if kind == "bench" and option == "max_time" and harness is not None and harness_entry(harness).max_time:
        return harness_entry(harness).max_time
    return KIND_DEFAULTS[kind].get(option, DEFAULTS.get(option))


def harness_defaults(option: str) -> dict[str, object]:
    """The harnesses whose ``bench`` default of ``option`` is their own, with it."""
    return {h.name: h.max_time for h in REGISTRY.values() if option == "max_time" and h.max_time}


@frozen
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


@frozen
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


@frozen
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


@frozen
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


@frozen
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


ALPHA_RANGE = (1e-6, 0.5)
"""The values --alpha may take. Below 1e-6 the level 1 - alpha/m (m candidates, up to 1000) is no
longer shown apart from 100% and the intervals need rounds no benchmark affords; above 0.5 a
verdict would be wrong more often than right."""
NO_SHELL = "none"
SORT_CHOICES = ("auto", "command", "mean-time")


# --------------------------------------------------------------------------- doctor COMMAND


PLACEHOLDER = "{iterations}"
DEFAULT_COUNTS = (1, 2, 4, 8)
DOCTOR_FAIL_ON_CHOICES = ("never", "warn", "fail")
"""``doctor --fail-on``: the finding status from which the doctor exits 1."""
PLAN_OPTIONS = ("runs", "iterations", "warmup", "shell", "no_shell", "name", "seed", "timeout")


@frozen
class ValidationPlan:
    """How ``pairbench doctor COMMAND`` validates one benchmark command.

    ``runs`` samples are taken at every iteration count of ``counts`` (once,
    at 1, without a ``{iterations}`` placeholder), after ``warmup`` untimed
    rounds; with ``probe_startup`` every round also runs ``true`` (through
    ``SHELL -c`` when ``shell`` names one, as ``parsers.parse_shell`` gives it: ``sh``,
    ``bash --norc``, or ``none``), whose time is process start-up, measured under
    the same conditions as the command. ``seed`` seeds the order of each
    round; ``name`` defaults to the command text. Built by ``parsers.parse_plan``
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


def doctor_default(option: str) -> object:
    """The default of a ``doctor COMMAND`` option (its click name: ``runs``, ``iterations``), for the help."""
    if option == "iterations":
        return ",".join(map(str, DEFAULT_COUNTS))
    if option == "fail_on":
        return DOCTOR_FAIL_ON_CHOICES[0]
    return {f.name: f.default for f in fields(ValidationPlan)}[option]
