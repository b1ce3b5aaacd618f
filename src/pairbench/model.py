"""The data pairbench measures and stores: benchmarks, sides, samples and runs.

* A :class:`BenchmarkKey` is what a benchmark *is* (name, parameters, unit),
  apart from how it runs. A whole command is one benchmark, ``command``.
* A :class:`Side` is what runs it: the baseline, a candidate, the A/A
  self-check copy, or (in ``pairbench run``) one of several commands.
* A *sample* is one timed execution of one benchmark on one side. Samples are
  kept columnar per series (benchmark, side): one int64 array per column of
  ``SAMPLE_COLUMNS`` and one float64 array per extra metric, so a million of
  them load and analyse fast.
* A :class:`Run` is one invocation: what was measured, where, with which
  settings, the samples, and the notes taken while measuring.

A sample's ``wall_ns`` covers ``iterations`` operations: the time of one
operation is ``wall_ns / iterations`` (:meth:`Samples.values`). Derived
results (summaries, verdicts) are not part of the model; ``analysis`` computes
them from the samples. Nothing here does I/O.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pairbench.command import STATUS_TIMEOUT, Command, ExecutorInfo, describe_status
from pairbench.frozen import frozen
from pairbench.harness_registry import PAIRBENCH
from pairbench.limits import MAX_SAMPLE_VALUE  # one limit, for every writer and reader of a result
from pairbench.notes import Note
from pairbench.settings import Settings

if TYPE_CHECKING:  # numpy loads with the first Samples built, after a run's last sample
    import numpy as np

__all__ = [
    "COMMAND_BENCHMARK", "CPU_METRIC", "FIXED_CPU_METRIC", "MAX_SAMPLE_VALUE", "METRICS", "PRIMARY_METRIC",
    "RESIDENT_METRIC", "COUNT_METRICS", "CYCLES_MODEL_METRIC", "INSTRUCTIONS_METRIC", "TIME_METRICS", "RUN_STATES",
    "SAMPLE_COLUMNS", "SIDE_LABELS", "STATUS_TIMEOUT", "VALIDATION_METRIC", "BenchmarkKey", "Command",
    "Run", "Sample", "Samples", "Side", "append_metrics", "describe_status", "json_safe", "metric_total",
]

# Column name -> meaning. All columns are int64; order is the document's order.
SAMPLE_COLUMNS: dict[str, str] = {
    "wall_ns": "wall-clock duration of the sample (all its iterations), monotonic clock, ns",
    "user_ns": "user CPU time of the sample (rusage), nanoseconds",
    "sys_ns": "system CPU time of the sample (rusage), nanoseconds",
    "max_rss_kib": "peak resident set size (rusage), KiB",
    "voluntary_cs": "voluntary context switches during the sample",
    "involuntary_cs": "involuntary context switches during the sample",
    "status": "exit code (>= 0), -signal number, or STATUS_TIMEOUT",
    "start_ns": "start of the sample, nanoseconds after the run began",
    "seq": "global execution order across all series, from 0",
    "pair": "round the sample belongs to, -1 if unpaired",
    "slot": "position of its side inside the round: 0 ran first",
    "iterations": "operations in the sample (1 for a command)",
    "warmup": "1 for a warmup sample (stored, never analysed), else 0",
}
PRIMARY_METRIC = "value"
"""A float metric column of this name replaces ``wall_ns`` as the series' measured total
(a harness's own report, or a unit that is not time)."""
VALIDATION_METRIC = "validation"
"""On a ``bench`` validation sample (a warmup), the share of a full sample it is (1/8, 1/4, 1/2, 1);
0 on every other sample. The analysis judges these samples (``analysis.validation``)."""
REPETITION_METRIC = "repetition"
"""On a sample of a harness invocation that repeated its benchmark (Go's ``-test.count``), the number
of its repetition (from 1): the invocation's samples share its round (``pair``) and its execution,
and the round's value of the side is their median (``analysis.comparison``)."""
RESIDENT_METRIC = "resident_kib"
"""On a worker's validation sample, the worker's resident memory right after it (0: unreadable)."""
CPU_METRIC = "cpu_ns"
"""A float metric column of this name is the CPU time a harness measured around its own loop
(Google Benchmark's ``cpu_time``, total over the iterations): the sample's CPU time when present."""
FIXED_CPU_METRIC = "fixed_cpu_ns"
"""On a sample of an invocation whose CPU time is its process's own (a Go test binary's rusage, whose
runtime threads leave it no CPU time of its own to report), the CPU time the invocation costs besides
its loops, estimated from the benchmark's validation samples of both sides together and taken out of
its ``cpu_ns`` (``measure.harnesses.target``)."""
INSTRUCTIONS_METRIC = "instructions"
"""A float metric column of this name is the instructions the sample executed in user space (total
over its iterations), counted by Callgrind or a hardware counter (``measure.callgrind``)."""
CYCLES_MODEL_METRIC = "cycles_model"
"""A float metric column of this name is Callgrind's cache-simulation estimate of the sample's cycles
(total over its iterations; ``measure.callgrind.Counts.cycles_model``): a model, not a measurement."""
TIME_METRICS = ("wall", "cpu")
COUNT_METRICS = {"instructions": INSTRUCTIONS_METRIC, "cycles-model": CYCLES_MODEL_METRIC}
"""The metrics that are counts, not times, by their ``--metric`` name: the column each reads."""
METRICS = (*TIME_METRICS, *COUNT_METRICS)
"""What a comparison decides on (``--metric``): the elapsed time of one operation, its CPU time,
the instructions it executed, or the cycles Callgrind's cache model estimates for it."""

SIDE_LABELS = ("baseline", "candidate", "self-check", "anchor", "")
"""A side's role: the baseline the others are compared with, a candidate, the A/A copy of the baseline,
an anchor (a second baseline the candidates are also compared with, in the same rounds: a paired
history's window start, so a record gets the change since it with an interval of its own), or none."""
ANCHOR_LABEL = "anchor"
RUN_STATES = ("complete", "interrupted", "failed", "running")


@dataclass(frozen=True, order=True)
class BenchmarkKey:
    """What a benchmark is: its name, its parameters (sorted name=value pairs) and its unit.

    ``unit`` is the unit of one operation's value: ``"ns"`` for time; a harness
    may report bytes (``"B"``), allocations (``"allocs"``) or any other count.
    """

    name: str
    params: tuple[tuple[str, str], ...] = ()
    unit: str = "ns"

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a benchmark needs a name, got {self.name!r}")
        if list(self.params) != sorted(self.params) or len({k for k, _ in self.params}) != len(self.params):
            raise ValueError(f"benchmark parameters must be sorted and distinct, got {self.params!r}")

    @property
    def label(self) -> str:
        """``name`` with its parameters: ``sort[n=1000,kind=random]``."""
        if not self.params:
            return self.name
        return f"{self.name}[{','.join(f'{k}={v}' for k, v in self.params)}]"

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "unit": self.unit}


COMMAND_BENCHMARK = BenchmarkKey("command")
"""The one benchmark of a whole-command run: the command's wall time."""


@frozen
class Side:
    """What runs the benchmarks: a named command, with its role in a comparison (``label``)."""

    name: str
    command: Command
    label: str = ""

    def __post_init__(self):
        if self.label not in SIDE_LABELS:
            raise ValueError(f"a side's label must be one of {SIDE_LABELS}, got {self.label!r}")


@frozen
class Sample:
    """One timed execution: a row of :class:`Samples` (its metrics apart)."""

    wall_ns: int
    user_ns: int = 0
    sys_ns: int = 0
    max_rss_kib: int = 0
    voluntary_cs: int = 0
    involuntary_cs: int = 0
    status: int = 0
    start_ns: int = 0
    seq: int = 0
    pair: int = -1
    slot: int = 0
    iterations: int = 1
    warmup: int = 0

    @property
    def ok(self) -> bool:
        return self.status == 0


def utc_now() -> str:
    """The time now, in UTC, as a run stores it (ISO 8601 to the second)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def metric_total(metric: str, wall_ns, user_ns, sys_ns, metrics: Mapping):
    """What a sample (or columns of samples: numpy arrays) measured over all its iterations, by
    ``metric`` (one of ``METRICS``):

    * ``wall``: the ``value`` metric when a harness reported one (the time around its loop), else
      ``wall_ns``;
    * ``cpu``: the harness's own CPU time of its loop (``cpu_ns``) when it reported one; else, for a
      harness that timed its loop (``value``), that time times the share of its process's life the
      process had a CPU (user + system over ``wall_ns``): its start-up's CPU time would otherwise
      dilute a change of the loop; else the user + system time: a command's whole process tree
      (``wait4``), a worker's thread around its loop;
    * ``instructions``, ``cycles-model``: the counted column (``COUNT_METRICS``), 0 on a sample
      that has none (a failed one's), which has no ratio, as a time of 0 has none.
    """
    if metric == "wall":
        return metrics.get(PRIMARY_METRIC, wall_ns)
    if metric in COUNT_METRICS:
        return metrics.get(COUNT_METRICS[metric], 0.0 * wall_ns)
    if metric != "cpu":
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if CPU_METRIC in metrics:
        return metrics[CPU_METRIC]
    if PRIMARY_METRIC in metrics:
        return metrics[PRIMARY_METRIC] * (user_ns + sys_ns) / wall_ns
    return user_ns + sys_ns


def append_metrics(columns: dict[str, list[float]], rows_before: int, metrics: Mapping[str, float]) -> None:
    """Append one sample's ``metrics`` to a series' metric ``columns`` (each ``rows_before`` long), so
    that they stay as long as its rows: a metric the sample lacks (a failed sample's) is 0 for it, one
    new with it is 0 for the samples before."""
    for name in metrics.keys() - columns.keys():
        columns[name] = [0.0] * rows_before
    for name, values in columns.items():
        values.append(float(metrics.get(name, 0.0)))


def _int_columns(rows: list[Sample]) -> dict[str, np.ndarray]:
    import numpy as np

    return {name: np.fromiter((getattr(r, name) for r in rows), dtype=np.int64, count=len(rows))
            for name in SAMPLE_COLUMNS}


@frozen
class Samples:
    """The samples of one series as columns: int64 ``columns``, float64 ``metrics``, equal lengths."""

    columns: Mapping[str, np.ndarray]
    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        missing = [name for name in SAMPLE_COLUMNS if name not in self.columns]
        if missing:
            raise ValueError(f"samples lack column(s) {', '.join(missing)}")
        lengths = {len(a) for a in (*self.columns.values(), *self.metrics.values())}
        if len(lengths) > 1:
            raise ValueError(f"sample columns have different lengths: {sorted(lengths)}")

    @classmethod
    def empty(cls) -> Samples:
        import numpy as np

        return cls({name: np.zeros(0, dtype=np.int64) for name in SAMPLE_COLUMNS})

    @classmethod
    def from_rows(cls, rows: Iterable[Sample], metrics: Mapping[str, Iterable[float]] | None = None) -> Samples:
        import numpy as np

        rows = list(rows)
        floats = {name: np.fromiter(values, dtype=np.float64, count=len(rows))
                  for name, values in (metrics or {}).items()}
        return cls(_int_columns(rows), floats)

    def __len__(self) -> int:
        return len(self.columns["wall_ns"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name] if name in self.columns else self.metrics[name]

    def rows(self) -> list[Sample]:
        return [Sample(**{name: int(self.columns[name][i]) for name in SAMPLE_COLUMNS})
                for i in range(len(self))]

    def select(self, mask: np.ndarray) -> Samples:
        return Samples({name: col[mask] for name, col in self.columns.items()},
                       {name: col[mask] for name, col in self.metrics.items()})

    def in_order(self) -> Samples:
        """These samples in execution order (``seq``)."""
        import numpy as np

        return self.select(np.argsort(self["seq"], kind="stable"))

    def measured(self) -> Samples:
        """The samples that count: not warmups, and successful."""
        return self.select((self["warmup"] == 0) & (self["status"] == 0))

    def failed(self) -> Samples:
        """Non-warmup samples that did not succeed (kept, never analysed)."""
        return self.select((self["warmup"] == 0) & (self["status"] != 0))

    def totals(self) -> np.ndarray:
        """The measured quantity of each sample over all its iterations (float64): the
        ``value`` metric when there is one, else ``wall_ns``."""
        import numpy as np

        if PRIMARY_METRIC in self.metrics:
            return np.asarray(self.metrics[PRIMARY_METRIC], dtype=np.float64)
        return self.columns["wall_ns"].astype(np.float64)

    def values(self) -> np.ndarray:
        """Each sample's value for one operation: its total divided by its iterations (float64)."""
        return self.totals() / self.columns["iterations"]

    def metric_values(self, metric: str) -> np.ndarray:
        """Each sample's value for one operation by ``metric`` (``metric_total``), float64."""
        import numpy as np

        total = metric_total(metric, self.columns["wall_ns"], self.columns["user_ns"], self.columns["sys_ns"],
                             self.metrics)
        return np.asarray(total, dtype=np.float64) / self.columns["iterations"]

    def invocations(self) -> int:
        """How many executions these samples came from: one each, but one per invocation whose
        repetitions they are (``REPETITION_METRIC``: each invocation's first repetition among them)."""
        import numpy as np

        if REPETITION_METRIC not in self.metrics or not len(self):
            return len(self)
        numbers = self.metrics[REPETITION_METRIC]
        return int(np.count_nonzero(numbers == numbers.min()))

    def has_cpu_time(self) -> bool:
        """Whether these samples recorded any CPU time (an imported result may not have)."""
        import numpy as np

        return CPU_METRIC in self.metrics or bool(np.any(self.columns["user_ns"] + self.columns["sys_ns"] > 0))

    def per_operation(self, column: str) -> np.ndarray:
        """``column`` of each sample divided by its iterations (float64)."""
        import numpy as np

        return self[column].astype(np.float64) / self.columns["iterations"]


@frozen
class ShellOverhead:
    """The start-up of the shell the commands ran through (``--shell``): in every sample, not the
    command's own."""

    median_ns: float
    min_ns: float
    n: int
    shell: str = "sh"  # results of pairbench 0.2 ran sh and did not say so


@frozen
class SuiteInfo:
    """The suite a ``bench`` run belongs to: how many benchmarks it compares (the family its error
    rate is split over), a digest of their names, the harness, the shard [K, N] this run measured;
    for a merged run the shards it joins and where each ran (``store.merge``)."""

    benchmarks: int
    digest: str
    shard: tuple[int, int] | None = None
    harness: str = PAIRBENCH
    merged: tuple[int, ...] | None = None
    shards: tuple[Mapping, ...] | None = None

    def to_dict(self) -> dict:
        record = {"benchmarks": self.benchmarks, "digest": self.digest,
                  "shard": list(self.shard) if self.shard else None, "harness": self.harness}
        if self.merged is not None:
            record.update(merged=list(self.merged), shards=[dict(m) for m in self.shards or ()])
        return record


@frozen
class Run:
    """One invocation of pairbench: what was measured, where, how, and how it ended.

    ``samples[(b, s)]`` is the series of benchmark ``benchmarks[b]`` on side
    ``sides[s]``; a series never measured is absent (``series`` gives it empty).
    ``notes`` are what was noticed while measuring (a renamed command, processes
    left behind); everything derived from the samples is ``analysis``'s. ``suite``
    (bench) says which suite the run measured: how many benchmarks it compares
    (the family its error rate is split over), a digest of their names, the shard
    this run measured of it, and for a merged run which shards it joins.
    """

    kind: str  # one of settings.KINDS
    sides: tuple[Side, ...]
    settings: Settings
    tool_version: str
    started_at: str  # ISO 8601, UTC
    benchmarks: tuple[BenchmarkKey, ...] = (COMMAND_BENCHMARK,)
    samples: Mapping[tuple[int, int], Samples] = field(default_factory=dict)
    finished_at: str = ""
    state: str = "running"
    stopped_because: str = ""
    environment: Mapping = field(default_factory=dict)
    shell_overhead: ShellOverhead | None = None
    notes: tuple[Note, ...] = ()
    suite: SuiteInfo | None = None  # bench: the whole suite this run belongs to (``store.shards``)
    executor: ExecutorInfo | None = None  # what measured (stored as ``environment.executor``)

    def __post_init__(self):
        if self.state not in RUN_STATES:
            raise ValueError(f"run state must be one of {RUN_STATES}, got {self.state!r}")
        if not self.sides or not self.benchmarks:
            raise ValueError("a run has at least one side and one benchmark")
        for b, s in self.samples:
            if not (0 <= b < len(self.benchmarks) and 0 <= s < len(self.sides)):
                raise ValueError(f"samples of benchmark {b}, side {s}: no such benchmark or side")

    @classmethod
    def imported(cls, settings: Settings, sides: tuple[Side, ...], benchmarks: tuple[BenchmarkKey, ...],
                 samples: Mapping[tuple[int, int], Samples], *, tool: str, measured_at: str, source: Mapping,
                 notes: tuple[Note, ...] = ()) -> Run:
        """A run of samples another tool measured and saved (``pairbench convert``): complete, measured
        at ``measured_at`` (ISO 8601), with what the file said of it (``source``: its format, the
        tool's words, the file, the tool's metadata, the resource columns it recorded) as
        ``environment["import"]``; ``tool`` names the tool to users."""
        from pairbench import __version__

        return cls(kind="import", sides=sides, settings=settings, tool_version=__version__, started_at=measured_at,
                   finished_at=measured_at, benchmarks=benchmarks, samples=dict(samples), state="complete",
                   stopped_because=f"imported from {tool}", environment={"import": dict(source)}, notes=notes)

    def replace(self, **changes) -> Run:
        return dataclasses.replace(self, **changes)

    def series(self, benchmark: int, side: int) -> Samples:
        """The samples of ``benchmarks[benchmark]`` on ``sides[side]`` (empty if none)."""
        return self.samples.get((benchmark, side)) or Samples.empty()

    def all_series(self) -> Iterator[tuple[int, int, Samples]]:
        """(benchmark, side, samples) of every benchmark on every side, benchmarks first."""
        for b in range(len(self.benchmarks)):
            for s in range(len(self.sides)):
                yield b, s, self.series(b, s)

    def stored_environment(self) -> dict:
        """The machine's metadata with what measured on it, as a result document keeps them."""
        return {**self.environment, **({"executor": self.executor.to_dict()} if self.executor else {})}

    def metadata(self) -> dict:
        """Everything but the samples, JSON-ready: what a document's or a report's header holds."""
        return {
            "kind": self.kind,
            "tool": {"name": "pairbench", "version": self.tool_version},
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "state": self.state,
            "stopped_because": self.stopped_because,
            "environment": self.stored_environment(),
            "settings": self.settings.stored(),
            "shell_overhead": dataclasses.asdict(self.shell_overhead) if self.shell_overhead else None,
            "sides": [{"name": s.name, "label": s.label, "command": s.command.to_dict()} for s in self.sides],
            "benchmarks": [key.to_dict() for key in self.benchmarks],
            "notes": [note.to_dict() for note in self.notes],
            **({"suite": self.suite.to_dict()} if self.suite is not None else {}),
        }

    @property
    def rounds(self) -> int:
        """Measured rounds: the most of any series (``Samples.invocations`` of its measured samples)."""
        return max((s.measured().invocations() for _, _, s in self.all_series()), default=0)


def json_safe(value):
    """``value`` with every non-finite float (NaN, ±inf) replaced by None, recursively.

    Derived records pass through this before they are written, because result
    and report documents never hold NaN or infinity.
    """
    import numpy as np

    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, np.floating):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value
