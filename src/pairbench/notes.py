"""Notes: the caveats pairbench attaches to a measurement, as typed records.

A Note is one caveat: a ``code`` naming what happened (``"tied-pairs"``), the
``data`` behind it (numbers, names; values with a unit carry ``"unit"``), the
``subject`` it is about (a side of a benchmark, or a comparison) and, when a
statistic made it, that statistic's own unit-less ``message`` for library
users (``str(note)``). The statistics and the analysis return notes; the
renderers word them, with units, once per output format
(``report.wording``). Nothing here formats a note for a user.

``CODES`` lists every code, with what it means; a note with any other code is
refused, so a renderer can word every note it is given. Standard library only:
``stats`` imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from pairbench.frozen import frozen

# code -> what it means (for contributors; the words users read are in report.wording)
CODES: dict[str, str] = {
    # what a statistic found in one sample of values
    "single-value": "only one value: spread and shape are undefined",
    "no-variance": "every value is identical: no interval or test is meaningful",
    "nonpositive-min": "the minimum is zero or negative, so the mean-min gap is undefined",
    "grubbs-tail": "the max (or min) lies beyond Grubbs' 5% critical distance from the mean",
    "tukey-fence": "values beyond a Tukey fence, reported and kept (shown in the summaries)",
    "modes": "the lowland detector found more than one mode",
    "median-interval-tied": "the median interval's two order statistics are equal",
    "not-enough-data": "too few values for a statistic; data says how many it needs",
    # the error of the mean
    "zero-standard-error": "the estimated standard error is 0, which is not credible",
    "autocorrelated-mean": "effective sample size below n / 2: s/sqrt(n) would understate the error",
    "mean-error-fallback": "the truncated-lag variance was negative, so batch means were used",
    "effective-sample-too-small": "effective sample size below 4: no interval of the mean is given",
    "negatively-autocorrelated": "effective sample size above n, because the samples alternate",
    # rank tests and Hodges-Lehmann
    "rank-ties": "ties: the exact p-value and interval are not available",
    "rank-no-variance": "both samples are constant: no interval",
    "rank-interval-undefined": "every non-zero difference is tied: no signed-rank interval",
    "interval-at-edge": "the interval reaches the smallest or largest possible difference",
    "zero-differences": "zero differences dropped by the signed-rank test",
    "confidence-not-achievable": "the requested level is not achievable with so few values",
    # paired effects and the confidence sequence
    "interval-conservative": "the sign-test interval's exact level is above the level asked for",
    "tied-pairs": "pairs with candidate == baseline",
    "coarse-ratios": "few distinct log-ratios: the timer looks coarse",
    "outlier-check-disabled": "the MAD of the differences is 0, so the outlier check is off",
    "few-outliers": "too few outliers for their sign test to reach significance",
    "sequence-unbounded": "the confidence sequence is still unbounded at this many pairs",
    "running-interval-empty": "the running interval became empty: the change moved during the run",
    "median-outside-running-interval": "the median of all rounds lies outside the running interval: the estimate is its nearer end",
    "shift-unbounded": "some shift-function bounds are unbounded (too few samples)",
    "bootstrap-bca-too-large": "BCa skipped for a large sample; percentile interval given",
    "bootstrap-bca-undefined": "BCa undefined for these data; percentile interval given",
    "bootstrap-warning": "scipy's bootstrap warned",
    # what the analysis found in a run
    "failed-samples": "failed samples are stored but left out of the statistics",
    "no-samples": "no successful samples to analyse",
    "no-successful-samples": "a side of a comparison never succeeded: no verdict, and --fail-on fails",
    # bench: benchmarks of workers
    "benchmarks-added": "benchmarks only the candidate's worker lists: not compared",
    "benchmarks-removed": "benchmarks only the baseline's worker lists: not compared",
    "process-blocks": "the verdict is drawn from blocks of rounds, each in fresh worker processes",
    "blocks-differ": "the blocks' effects spread wider than their rounds' noise explains: processes differ",
    "repeated-invocations": "a round ran each side's harness process once, repeating the benchmark in it",
    "benchmark-failed": "a benchmark failed on a side (error, crash, hang, protocol break); the others went on",
    "benchmark-duration": "a worker's sample is under 1000 timer steps",
    "benchmark-setup-overhead": "a worker's samples have a fixed cost above 5% (fit of time on iterations)",
    "benchmark-elided-body": "validation could not show a benchmark's time growing with its iterations (a removed body?)",
    "benchmark-memory-growth": "a worker's peak RSS climbs with the iterations it runs",
    "benchmark-name": "a benchmark's name is over 40 characters",
    "benchmark-peak-growth": "a harness invocation's peak RSS grows with the iterations it runs",
    "benchmark-too-long": "one iteration makes a sample far longer than --sample-time",
    "suite-budget-spent": "benchmarks not measured because --suite-time was spent",
    "sample-time-raised": "samples made longer than --sample-time so that timing one costs at most 1% of it",
    # diff: two saved results compared without pairs
    "runs-not-paired": "diff compares runs made at different times: machine drift is part of the difference",
    "failed-rounds": "rounds left out of the pairs because a sample in them failed",
    "no-rounds-estimate": "an inconclusive verdict without an estimate of the rounds still needed, and why",
    "budget-out-of-reach": "an inconclusive verdict whose rounds still needed are beyond any budget a user would "
                           "pay at this machine's noise, with the load and each side's spread",
    "pairs-autocorrelated": "the pair differences are autocorrelated",
    "self-check-found-change": "the A/A self-check found a difference",
    "involuntary-switches": "other tasks took the CPU mid-sample",
    "no-cpu-time": "a verdict on CPU time was asked of samples that recorded none",
    "cpu-time-partial": "a verdict on CPU time of a benchmark that is not CPU-bound (waits, or runs threads)",
    "metric-chosen": "--metric auto chose wall or CPU time from the first rounds, and why",
    "metrics-disagree": "wall time and CPU time changed by different amounts: which to trust, and why",
    "counted-by": "how the instructions were counted (the processor's counter or Callgrind), and what that costs",
    "counts-disagree": "instructions and time (or the cache model's cycles) changed by different amounts, and why",
    "counts-beside": "what the other measure of the same rounds (the cache model's cycles, or CPU time) says",
    "times-under-callgrind": "the samples' times are of the program slowed under Callgrind: no time is compared",
    "rss-at-floor": "max RSS is at the smallest value the executor can report",
    "machine-busy": "load on the machine while measuring",
    "machine-memory-short": "memory was short while measuring",
    "machine-power-limited": "power limits drive the clock speed",
    "machine-paused": "the hypervisor or a cgroup quota pauses the benchmark",
    "machine-clock-coarse": "the clock's step quantizes short samples",
    "machine-untuned": "the machine is not set up for benchmarking",
    # the doctor's findings (``environment.findings``): data holds the status and the figures judged
    "doctor-load": "load average and CPUs busy now, and the busiest processes",
    "doctor-governor": "the CPU frequency governors",
    "doctor-turbo": "whether turbo boost is on",
    "doctor-smt": "whether SMT siblings are active",
    "doctor-aslr": "the address-space randomization setting",
    "doctor-isolation": "the isolated CPUs and whether pairbench runs on them",
    "doctor-clock": "the clock source and the timer's measured step",
    "doctor-perf": "whether users may count hardware events",
    "doctor-virtualization": "hypervisor, container, cgroup quota and its throttling, steal time",
    "doctor-memory": "available memory, swap and memory pressure",
    "doctor-power": "power supply and platform profile",
    "doctor-thermal": "thermal throttling events since boot",
    "doctor-runs": "a run of the command being validated failed",
    "doctor-duration": "a sample's length against process start-up and the timer's step",
    "doctor-setup-overhead": "the fixed cost of every sample (fit of time on the iteration count)",
    "doctor-memory-growth": "max RSS regressed on the iteration count",
    "doctor-stability": "the samples' coefficient of variation",
    "doctor-modality": "the samples' modes",
    "doctor-autocorrelation": "the samples' serial dependence (Ljung-Box)",
    "doctor-outliers": "samples above the upper Tukey fence against what clean timings give",
    "doctor-context-switches": "involuntary context switches beyond the quietest sample's",
    "doctor-cpu-bound": "whether the command's CPU time covers its wall time",
    "doctor-mean-min-gap": "the gap between the mean and the minimum",
    "doctor-name": "the benchmark name's length",
    # what happened while measuring (stored with the run)
    "renamed": "a repeated command text was given a distinct name",
    "shell-syntax": "shell operators reach a program run without a shell",
    "leftover-processes": "a command left processes running; they were killed",
    "containment-partial": "processes a command left kept starting others faster than they could be ended",
    "executor-fallback": "the spawner could not start; commands ran from pairbench itself",
    "spawner-fallback": "the native spawner could not start; commands ran from the Python spawner",
    "cleanup-interrupted": "Ctrl-C cut --cleanup short",
    "warmup-cut-short": "the time budget ended warmup before every warmup round ran",
    "import-zero-times": "an imported tool wrote runs of 0 s: kept as 1 ns",
    "journal-cut-short": "a journal's last line was cut short by a crash",
    "unrenamed-result": "a killed run left its complete result document in a temporary file",
    "recorded": "a note stored as text by an older pairbench",
}


@frozen
class Subject:
    """What a note is about: the run (all empty), a side's series, or a comparison.

    ``side`` alone: the series of that side (of ``benchmark`` when a run has
    several); ``side`` and ``baseline``: the comparison of ``side`` against
    ``baseline``.
    """

    benchmark: str = ""
    side: str = ""
    baseline: str = ""

    @property
    def is_run(self) -> bool:
        return not (self.benchmark or self.side or self.baseline)

    def to_dict(self) -> dict:
        return {key: value for key, value in
                (("benchmark", self.benchmark), ("side", self.side), ("baseline", self.baseline))
                if value}


RUN = Subject()


@frozen
class Note:
    """One caveat: its code, the figures behind it, what it is about, and a statistic's own words.

    ``data`` holds JSON-ready values only (str, int, float, bool, None, lists and
    mappings of them). ``message`` is set by the statistics for library users;
    renderers word the note from ``code`` and ``data`` instead.
    """

    code: str
    data: Mapping = field(default_factory=dict)
    subject: Subject = RUN
    message: str = ""

    def __post_init__(self):
        if self.code not in CODES:
            raise ValueError(f"`code` must be one of the note codes in pairbench.notes.CODES, "
                             f"got {self.code!r}")

    def __str__(self) -> str:
        return self.message or self.code

    def about(self, subject: Subject) -> Note:
        """This note, said of ``subject``."""
        return Note(self.code, self.data, subject, self.message)

    def to_dict(self) -> dict:
        record = {"code": self.code, "data": dict(self.data)}
        if not self.subject.is_run:
            record["subject"] = self.subject.to_dict()
        return record


def note(code: str, message: str = "", **data) -> Note:
    """A note of ``code`` with ``data`` given as keywords (the statistics' shorthand)."""
    return Note(code, data, RUN, message)
