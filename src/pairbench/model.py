"""The data pairbench measures and stores: samples, variants, runs.

A *sample* is one timed execution of one command. Samples of a variant are kept
columnar (one numpy array per column) so that a million of them load and analyse
fast. Nothing here does I/O; ``resultfile`` reads and writes these records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from pairbench.command import STATUS_TIMEOUT, Command, describe_status

__all__ = [
    "SAMPLE_COLUMNS", "STATUS_TIMEOUT", "Command", "Run", "Sample", "Samples", "Variant",
    "describe_status", "json_safe",
]

# Column name -> meaning. All columns are int64; order is the document's order.
SAMPLE_COLUMNS: dict[str, str] = {
    "wall_ns": "wall-clock duration, monotonic clock, nanoseconds",
    "user_ns": "user CPU time of the command (wait4 rusage), nanoseconds",
    "sys_ns": "system CPU time of the command (wait4 rusage), nanoseconds",
    "max_rss_kib": "peak resident set size of the command (wait4 rusage), KiB",
    "voluntary_cs": "voluntary context switches of the command",
    "involuntary_cs": "involuntary context switches of the command",
    "status": "exit code (>= 0), -signal number, or STATUS_TIMEOUT",
    "start_ns": "start of the sample, nanoseconds after the run began",
    "seq": "global execution order across all variants, from 0",
    "pair": "round (pair/block) id the sample belongs to, -1 if unpaired",
    "slot": "position inside its round: 0 ran first",
    "iterations": "work units in the sample (1 for a command)",
    "warmup": "1 for a warmup sample (stored, never analysed), else 0",
}

@dataclass(frozen=True)
class Sample:
    """One timed execution: a row of :class:`Samples`."""

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


@dataclass(frozen=True)
class Samples:
    """The samples of one variant, stored as columns (int64 numpy arrays of equal length)."""

    columns: Mapping[str, np.ndarray]

    def __post_init__(self):
        missing = [name for name in SAMPLE_COLUMNS if name not in self.columns]
        if missing:
            raise ValueError(f"samples lack column(s) {', '.join(missing)}")
        lengths = {len(self.columns[name]) for name in SAMPLE_COLUMNS}
        if len(lengths) > 1:
            raise ValueError(f"sample columns have different lengths: {sorted(lengths)}")

    @classmethod
    def empty(cls) -> Samples:
        return cls({name: np.zeros(0, dtype=np.int64) for name in SAMPLE_COLUMNS})

    @classmethod
    def from_rows(cls, rows: Iterable[Sample]) -> Samples:
        rows = list(rows)
        return cls(
            {
                name: np.fromiter((getattr(r, name) for r in rows), dtype=np.int64, count=len(rows))
                for name in SAMPLE_COLUMNS
            }
        )

    def __len__(self) -> int:
        return len(self.columns["wall_ns"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def rows(self) -> list[Sample]:
        return [
            Sample(**{name: int(self.columns[name][i]) for name in SAMPLE_COLUMNS})
            for i in range(len(self))
        ]

    def select(self, mask: np.ndarray) -> Samples:
        return Samples({name: col[mask] for name, col in self.columns.items()})

    def measured(self) -> Samples:
        """The samples that count: not warmups, and exited successfully."""
        return self.select((self["warmup"] == 0) & (self["status"] == 0))

    def failed(self) -> Samples:
        """Non-warmup samples that did not exit successfully (kept, never analysed)."""
        return self.select((self["warmup"] == 0) & (self["status"] != 0))

    def wall_seconds(self) -> np.ndarray:
        return self["wall_ns"].astype(np.float64) / 1e9


@dataclass(frozen=True)
class Variant:
    """A benchmark variant: a named command and its samples."""

    name: str
    command: Command
    label: str = ""
    samples: Samples = field(default_factory=Samples.empty)

    def with_samples(self, samples: Samples) -> Variant:
        return dataclasses.replace(self, samples=samples)


def json_safe(value):
    """``value`` with every non-finite float (NaN, ±inf) replaced by None, recursively.

    Derived records (summaries, comparisons) pass through this before they are
    stored, because the result file never holds NaN or infinity.
    """
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, np.floating):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


RUN_STATES = ("complete", "interrupted", "failed", "running")


@dataclass(frozen=True)
class Run:
    """One invocation of pairbench: what was measured, where, how, and what came of it.

    ``comparisons`` and ``summaries`` are derived records (plain JSON-ready dicts)
    written by the analysis layer; ``show`` recomputes them from the samples.
    """

    kind: str  # "run" or "compare"
    variants: tuple[Variant, ...]
    tool_version: str
    started_at: str  # ISO 8601, UTC
    finished_at: str = ""
    state: str = "running"
    stopped_because: str = ""
    environment: Mapping = field(default_factory=dict)
    options: Mapping = field(default_factory=dict)
    shell_overhead: Mapping | None = None
    warnings: tuple[str, ...] = ()
    summaries: tuple[Mapping, ...] = ()
    comparisons: tuple[Mapping, ...] = ()

    def __post_init__(self):
        if self.state not in RUN_STATES:
            raise ValueError(f"run state must be one of {RUN_STATES}, got {self.state!r}")

    def replace(self, **changes) -> Run:
        return dataclasses.replace(self, **changes)

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)
