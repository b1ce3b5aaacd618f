"""What the analysis of a run produces: summaries, comparisons, notes and the data charts plot.

Every record is frozen and holds numbers, not text: values per operation in
the benchmark's unit (``ns`` for time; None where undefined), effects in
percent, and :class:`~pairbench.notes.Note` records for caveats. Renderers
read these and compute nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import field

import numpy as np

from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey
from pairbench.notes import Note
from pairbench.verdict import Verdict

CONFIDENCE = 0.95  # of a series' median and mean intervals


@frozen
class Summary:
    """What can be said of one series (a benchmark on one side): location with its uncertainty,
    shape, serial dependence and resource usage.

    Location and spread are of one operation's value, in ``benchmark.unit``.
    CPU times are per operation too; max RSS is the median over samples (KiB),
    ``max_rss_at_floor`` when that is at the executor's floor (the true peak is
    at most this); context switches per second of sampling.
    """

    benchmark: BenchmarkKey
    side: str
    label: str
    command: str
    n: int
    n_failed: int
    n_warmup: int
    min: float | None = None
    q1: float | None = None
    median: float | None = None
    median_low: float | None = None
    median_high: float | None = None
    q3: float | None = None
    max: float | None = None
    mean: float | None = None
    mean_se: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    mean_method: str = ""
    n_eff: float | None = None
    sd: float | None = None
    cv: float | None = None
    confidence: float = CONFIDENCE
    lower_fence: float | None = None
    upper_fence: float | None = None
    beyond_upper_fence: int = 0
    beyond_lower_fence: int = 0
    mean_min_gap: float | None = None
    max_sigma: float | None = None
    grubbs_critical: float | None = None
    skewness: float | None = None
    mvalue: float | None = None
    modality: str | None = None
    lag1_autocorrelation: float | None = None
    ljung_box_pvalue: float | None = None
    user_ns: float | None = None
    sys_ns: float | None = None
    max_rss_kib: float | None = None
    max_rss_at_floor: bool = False
    cs_per_s: float | None = None
    involuntary_cs_per_s: float | None = None
    notes: tuple[Note, ...] = ()

    @property
    def unit(self) -> str:
        return self.benchmark.unit


@frozen
class Effect:
    """The paired effect in percent with the interval the verdict rests on."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    pvalue: float
    pvalue_method: str
    n: int
    moved: bool = False  # the running interval became empty: no single change fits every round


@frozen
class MinMean:
    """The report table of paired benchmarking: the minimum and mean of each side over the
    paired rounds, and the mean paired difference (absolute, in the unit, and in percent)."""

    baseline_min: float
    candidate_min: float
    min_delta_pct: float
    baseline_mean: float
    candidate_mean: float
    paired_difference: float
    paired_difference_pct: float


@frozen
class PairCounts:
    candidate_faster: int
    candidate_slower: int
    tied: int


@frozen
class Shift:
    """The Hodges-Lehmann shift candidate - baseline, in the unit, with its interval."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float


@frozen
class Lag1:
    """Lag-1 autocorrelation of the pair differences against the white-noise band."""

    lag1: float
    band: float
    significant: bool


@frozen
class OutlierCounts:
    """Outliers of the pair differences above (slow) and below (fast) the median; nothing removed."""

    slow: int
    fast: int
    pvalue: float
    enabled: bool


@frozen
class Secondary:
    """The numbers shown beside a verdict and never used to reach it (None: not computable)."""

    min_mean: MinMean | None = None
    pairs: PairCounts | None = None
    hodges_lehmann: Shift | None = None
    mann_whitney_pvalue: float | None = None
    signed_rank_pvalue: float | None = None
    autocorrelation: Lag1 | None = None
    outlier_balance: OutlierCounts | None = None


@frozen
class Comparison:
    """One candidate side against the baseline on one benchmark: the verdict and what it rests on.

    ``pvalue`` is Bonferroni-adjusted over the candidates when ``adjustment``
    says so (``pvalue_unadjusted`` is the comparison's own); ``alpha`` is the
    family's, the interval's level ``effect.confidence`` its per-comparison share.
    """

    benchmark: BenchmarkKey
    baseline: str
    candidate: str
    self_check: bool
    verdict: Verdict
    effect: Effect | None
    pvalue: float | None
    pvalue_unadjusted: float | None
    adjustment: str
    alpha: float
    threshold: float
    rounds: int
    rounds_needed: int | None
    secondary: Secondary
    notes: tuple[Note, ...] = ()
    metric: str = "wall"  # what the verdict is on: wall or CPU time of one operation (``model.metric_total``)
    rounds_needed_span: tuple[int, int] | None = None  # ``rounds_needed``'s own 90% interval while it is
    # unsteady (``analysis.effect.rounds_span``: fewer than 256 values), else None


@frozen
class SeriesFigure:
    """A series' samples for charts: measured samples in execution order, and its correlogram."""

    benchmark: int
    side: int
    seq: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)  # per operation, in the benchmark's unit
    resources: Mapping[str, np.ndarray] = field(repr=False)  # max_rss_kib, voluntary_cs, involuntary_cs
    correlogram: object | None = None  # stats.Correlogram, None below 3 samples or without spread
    by_metric: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)  # per operation, by
    # each other time the samples recorded (``model.METRICS``: "cpu"), in the order of ``values``

    def has(self, metric: str) -> bool:
        """Whether the samples' values by ``metric`` are here ("wall" always)."""
        return metric == "wall" or metric in self.by_metric

    def of(self, metric: str) -> np.ndarray:
        """The samples' values by ``metric``: ``values`` for wall time (``has`` says which others)."""
        return self.values if metric == "wall" else self.by_metric[metric]


@frozen
class ComparisonFigure:
    """A comparison's data for charts: the pairs in round order, their correlogram, the shift function."""

    log_ratios: np.ndarray = field(repr=False)
    baseline: np.ndarray = field(repr=False)  # values of the paired rounds, in round order
    candidate: np.ndarray = field(repr=False)
    correlogram: object | None = None  # stats.Correlogram of the log-ratios
    shift: object | None = None  # stats.ShiftFunction at the comparison's confidence


@frozen
class Analysis:
    """Everything computed from a run's samples: every renderer's one source.

    ``summaries`` has one record per (benchmark, side), benchmarks first;
    ``comparisons`` one per candidate side and benchmark; ``notes`` are the
    run's own (measuring, the machine, the self-check, the RSS floor); the
    summaries and comparisons carry theirs. ``series_figures`` and
    ``comparison_figures`` parallel ``summaries`` and ``comparisons``. ``suite`` is the
    summary of a bench suite (``analysis.suite``); ``relative`` how much longer each series
    of a ``run`` of several took than its fastest (``analysis.relative``); ``doctor`` the findings
    on the command a ``doctor COMMAND`` run measured (``analysis.doctor``).
    """

    summaries: tuple[Summary, ...]
    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[Note, ...] = ()
    series_figures: tuple[SeriesFigure, ...] = ()
    comparison_figures: tuple[ComparisonFigure, ...] = ()
    suite: object | None = None  # analysis.suite.SuiteSummary of a bench suite, else None
    relative: tuple = ()  # analysis.relative.Relative: a run's series against its fastest
    doctor: object | None = None  # environment.findings.Report of a doctor run, else None
    metric_tables: tuple = ()  # analysis.metrics.MetricTable: a harness's own units (B/op), one per unit

    def all_notes(self) -> Iterator[Note]:
        """Every note, run first, then each summary's and each comparison's, each note once."""
        seen: set = set()
        for group in (self.notes, *(s.notes for s in self.summaries),
                      *(c.notes for c in self.comparisons)):
            for note in group:
                marker = (note.code, repr(note.data), note.subject)
                if marker not in seen:
                    seen.add(marker)
                    yield note

    def summary_of(self, benchmark: BenchmarkKey, side: str) -> Summary | None:
        """The summary of ``side`` on ``benchmark``; O(1) (an index built on first use)."""
        return self._summary_index.get((benchmark, side))

    @functools.cached_property
    def _summary_index(self) -> dict[tuple[BenchmarkKey, str], Summary]:
        index: dict[tuple[BenchmarkKey, str], Summary] = {}
        for s in self.summaries:
            index.setdefault((s.benchmark, s.side), s)
        return index

    @property
    def real_comparisons(self) -> tuple[Comparison, ...]:
        """The comparisons of candidates (the A/A self-check excluded)."""
        return tuple(c for c in self.comparisons if not c.self_check)
