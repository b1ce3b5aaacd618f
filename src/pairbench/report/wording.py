"""Every note in words: one sentence per note code, with values in their units.

The analysis and the statistics hand over notes as data (``pairbench.notes``);
this module is where they become text, once, for every output format (each
renderer escapes the plain text for its own format). ``WORDINGS`` has an entry
for every code in ``notes.CODES``; a test holds them equal.

A few notes qualify a number shown elsewhere rather than stand alone:
``INLINE`` lists them, and the renderers put them beside that number (the
Tukey-fence counts in every summary, the outlier line, the interval line,
the shift function) instead of among the numbered notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pairbench.command import describe_status
from pairbench.harness_registry import PAIRBENCH, REGISTRY, harness
from pairbench.notes import Note
from pairbench.report.findings import READINGS, autocorrelation, worded
from pairbench.report.metric_names import NAMES, metric_words
from pairbench.units import format_kib, format_level, format_percent, format_rate, format_value

# shown beside the number they qualify, not among the numbered notes
INLINE = frozenset({"tukey-fence", "few-outliers", "outlier-check-disabled", "interval-conservative",
                    "shift-unbounded"})


def word(note: Note, unit: str = "ns") -> str:
    """``note`` as one plain-text sentence; values in ``unit`` (the subject's benchmark's).

    A note read from a file may lack a figure its words need, or hold one of the
    wrong type: it is shown as its code and figures, as a note of an unknown code is.
    """
    try:
        text = WORDINGS[note.code](note.data, unit)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        text = None
    if isinstance(text, str):
        return text
    figures = repr(dict(note.data))
    return f"{note.code}: {figures if len(figures) <= 300 else figures[:299] + '…'}"


def subject_text(note: Note) -> str:
    """Who a note is about, as a prefix reads it: "new vs old", "sort[n=10] · new", "" for the run."""
    s = note.subject
    who = f"{s.side} vs {s.baseline}" if s.baseline else s.side
    return " · ".join(part for part in (s.benchmark, who) if part)


def with_subject(note: Note, unit: str = "ns") -> str:
    """``note`` in words, prefixed by its subject when it has one ("new: ...")."""
    who = subject_text(note)
    return f"{who}: {word(note, unit)}" if who else word(note, unit)


# --------------------------------------------------------------------------- the machine


def consequence(kind: str, sides: int) -> str:
    """What machine noise does to this kind of measurement."""
    if kind in ("compare", "bench"):
        return "compare's interleaved rounds cancel what the variants share, but its intervals widen"
    if sides > 1:
        return "the commands were interleaved, so they shared it alike, but each summary absorbs it"
    return ("a single command's summary absorbs all of it (compare's interleaving would cancel "
            "what variants share)")


def _machine(text: Callable[[Mapping], str]) -> Callable[[Mapping, str], str]:
    """A machine note's words and what the condition does to the timings (not to a count's verdict)."""
    return lambda d, unit: (text(d) if d.get("metric") else
                            f"{text(d)}; {consequence(d.get('kind', 'run'), d.get('sides', 1))}")


def _load(d: Mapping) -> str:
    load, busy, cpus = d.get("load_average"), d.get("busy_cpus_now"), d.get("cpus")
    if busy is not None and (load is None or busy > load):
        level = f"{busy:.1f} CPUs busy just now" + (f" (load average {load:.1f})" if load is not None else "")
    else:
        level = f"load average {load:.1f}"
    busiest = d.get("busiest")
    who = f" (busiest: {busiest['name']} {busiest['cpu_percent']:.0f}%)" if busiest else ""
    if d.get("metric"):  # a count's verdict: load does not move what it counts
        return (f"{level} on {cpus} CPUs{who}: the verdicts are on {metric_words(d['metric'])}, which load "
                "does not move; the times shown beside them will be noisy")
    return f"{level} on {cpus} CPUs{who}: timings will be noisy"


def _read(d: Mapping) -> str:
    """The doctor's reading of the machine that a machine note carries (``finding``: its note)."""
    return READINGS[d["finding"]["code"]](d["finding"]["data"], "ns")


_TUNING_WORDS = {
    "governor": lambda item: "governor " + "/".join(item.get("governors", [])),
    "turbo": lambda item: "turbo boost on",
    "smt": lambda item: "SMT siblings active",
    "aslr": lambda item: "ASLR not fully randomized",
    "virtualization": lambda item: "a virtual machine",
}


def _untuned(d: Mapping, unit: str) -> str:
    items = ", ".join(_TUNING_WORDS[item["check"]](item) for item in d["items"])
    return (f"this machine is not set up for benchmarking ({items}): `pairbench doctor` says what "
            "each costs and how to fix it")


# --------------------------------------------------------------------------- helpers


def _needed(d: Mapping, unit: str) -> str:
    what = {"median-interval": f"a {format_level(d.get('confidence', 0.95))} interval of the median",
            "paired-interval": f"a {format_level(d.get('confidence', 0.95))} interval of the paired effect",
            "anytime-interval": f"an anytime-valid interval at alpha {d.get('alpha', 0):.3g}",
            "unpaired-interval": "a two-sample interval of the change",
            "ljung-box": "the Ljung-Box test"}.get(d.get("purpose", ""), d.get("purpose") or "this statistic")
    noun = "rounds" if d.get("purpose") == "anytime-interval" else "samples"
    if d.get("purpose") == "paired-interval":
        noun = "pairs"
    return f"too few {noun} for {what}: need at least {d['needed']}, got {d['got']}"


def _no_variance(d: Mapping, unit: str) -> str:
    if d.get("pairs"):
        change = d.get("change_pct", 0.0)
        if change:  # a consistent change: the verdict counts the pairs' signs
            return (f"every pair has the same ratio ({format_percent(change)}), so the pairs' spread, "
                    "autocorrelation and outliers are undefined (a coarse timer?); the verdict counts "
                    "the pairs' signs and stands")
        return "no variance: every pair is identical; is the timer resolution too coarse?"
    return (f"no variance: all {d['n']} samples took exactly {format_value(d['value'], unit)}; "
            "is the timer resolution too coarse?")


def _modes(d: Mapping, unit: str) -> str:
    return f"the samples look {d['modality']}: `pairbench report` shows their histogram"


def _grubbs(d: Mapping, unit: str) -> str:
    which = "slowest" if d["side"] == "max" else "fastest"
    where = "above" if d["side"] == "max" else "below"
    advice = ": a heavy tail, so prefer the median to the mean" if d["side"] == "max" else \
        ": an unusually fast sample (a cache or a skipped step?)"
    return (f"the {which} sample lies {d['sigma']:.1f} SD {where} the mean, beyond Grubbs' 5% critical "
            f"value {d['critical']:.2f} for n = {d['n']}{advice}")


def _rank_ties(d: Mapping, unit: str) -> str:
    names = {"mann-whitney": "Mann-Whitney", "hodges-lehmann": "Hodges-Lehmann", "signed-rank": "the signed-rank test"}
    tests = [names.get(t, t) for t in d.get("tests", [])]
    who = " and ".join(filter(None, [", ".join(tests[:-1]), tests[-1] if tests else ""])) or "the rank tests"
    verb = "uses" if len(tests) == 1 else "use"
    return f"tied values: {who} {verb} the normal approximation (no exact p-value or interval)"


def _shift_unbounded(d: Mapping, unit: str) -> str:
    return (f"{d['unbounded']} of the shift function's {d['total']} decile bounds are open: too few "
            f"samples ({d['n']}) for intervals at {format_level(d['level'])} each")


def _warmup_repetitions(count: int) -> str:
    """ "the first was a warmup in each process, and" (or the first N were, or none was)."""
    if count <= 0:
        return "no repetition was a warmup, and"
    return ("the first was a warmup in each process, and" if count == 1
            else f"the first {count} were warmups in each process, and")


def _only_on(d: Mapping, what: str) -> str:
    names = ", ".join(d["names"]) + (f" and {d['count'] - len(d['names'])} more" if d["count"] > len(d["names"]) else "")
    return f"{d['count']} benchmark(s) {what} ({d['side']!r}) lists, so not compared: {names}"


def _harness(d: Mapping) -> str:
    """The harness a note's data names (a stored note is data from a file: anything but a string is none)."""
    harness = d.get("harness", PAIRBENCH)
    return harness if isinstance(harness, str) else PAIRBENCH


def _elided(d: Mapping, unit: str) -> str:
    """What the validation samples showed about the body, then the fix if the compiler removed it."""
    keep = _advice(d, "keep_advice")
    if d["growing"]:
        return (f"the time per sample grows by only {format_value(d['per_iteration_ns'], 'ns')} an iteration, "
                "about what the harness's loop alone costs: unless the body is that cheap, the compiler may have "
                f"removed it (or the loop) because its result is unused; {keep}")
    medians = ""
    if "low_median_ns" in d:
        medians = (f"; medians {format_value(d['low_median_ns'], 'ns')} at {d['low_count']:,} and "
                   f"{format_value(d['high_median_ns'], 'ns')} at {d['high_count']:,} iterations")
    return (f"the validation samples could not show that the time per sample grows with the iteration count "
            f"(Kendall's one-sided p = {d['pvalue']:.2g}{medians}): either they scatter too much to tell (a busy "
            f"machine), or the compiler removed the body (or the loop) because its result is unused; if so, {keep}")


def _advice(d: Mapping, kind: str) -> str:
    """A harness's advice (``harness_registry.REGISTRY``); pairbench's for a harness without its own."""
    return getattr(harness(_harness(d)), kind) or getattr(REGISTRY[PAIRBENCH], kind)


def _not_paired(d: Mapping, unit: str) -> str:
    hosts = ("" if d.get("old_host") == d.get("new_host") else
             f", and on different machines ({d.get('old_host') or 'unknown'}, {d.get('new_host') or 'unknown'})")
    return (f"not paired: the two results were measured at different times ({d.get('old_started') or 'unknown'} "
            f"and {d.get('new_started') or 'unknown'}){hosts}, so whatever the machine did in between (load, "
            "clock speed, temperature) is part of every difference here; for the interleaved answer measure "
            "both builds together: pairbench bench OLD_BUILD NEW_BUILD")


def _renamed(d: Mapping, unit: str) -> str:
    copies = d["copies"]
    given = (f"twice; the second is named {copies[0]!r}" if len(copies) == 1 else
             f"{len(copies) + 1} times; the others are named {', '.join(map(repr, copies))}")
    return f"the command {d['name']!r} is given {given}, so that comparisons and reports can tell them apart"


def _shell_syntax(d: Mapping, unit: str) -> str:
    shown = ", ".join(repr(w) for w in d["operators"])
    return (f"command {d['command']!r} is run without a shell, so {shown} reach the program as plain "
            "arguments; use --shell for pipes and redirections")


def _no_successful_samples(d: Mapping, unit: str) -> str:
    if not d.get("failed"):
        return f"no successful {d['role']} sample exists: {d['side']!r} never ran"
    return (f"no successful {d['role']} sample exists: all {d['failed']} of its samples failed "
            f"({describe_status(d['status'])})")


def _process_cpu(d: Mapping) -> str:
    """How a repeated invocation's CPU time was read, when it is its process's own (``process_cpu``)."""
    fixed = d.get("fixed_cpu_ns")
    if not isinstance(fixed, (int, float)):
        return ""
    return (f"; its CPU time is its process's, less the {format_value(fixed, 'ns')} an invocation costs besides "
            "its loops (read from the validation samples, both sides together), shared over the repetitions")


def out_of_reach_words(d: Mapping) -> str:
    """ "at load 7.1 this machine's noise is too high to decide this benchmark at any reasonable budget:
    ..." (the ``budget-out-of-reach`` note)."""
    spreads = " and ".join(f"{format_percent(cv, signed=False)} on {side}" for side, cv in d["spreads"])
    return (f"{_at_load(d.get('load'))}this machine's noise is too high to decide this at any reasonable "
            f"budget: it would take about {d['needed']:,} more rounds, over {d['factor']} times the "
            f"{d['rounds']} it took and over {d.get('minutes', 10):g} minutes, since from round to round its "
            f"{metric_words(d['metric'])} varied by "
            f"{spreads} (coefficient of variation); measure it on a quieter machine or at a quieter time")


def _at_load(load) -> str:
    """ "at load 7.1, " (the 1-minute load average the run started at), or nothing when unknown."""
    return f"at load {load:.1f}, " if isinstance(load, (int, float)) else ""


def _no_rounds_estimate(d: Mapping, unit: str) -> str:
    if d.get("reason") == "ties":
        low, high = d["values_pct"]
        return (f"more rounds would not decide: the ratios near the median are ties at {format_percent(low)} "
                f"and {format_percent(high)}, further apart than the ±{d['threshold']:g}% threshold, and "
                "nothing lies between them (a coarse timer's steps), so the interval cannot narrow; make "
                "each sample take more timer steps")
    return (f"more than {d['limit']:,} further rounds would be needed to decide: the change is too small "
            "for this much noise")


METRIC_WORDS = {metric: words for metric, (words, _) in NAMES.items()}
"""Each metric in a sentence (``metric_names``, the one place they are named)."""


TRUST = {
    "off-cpu": ("trust wall time: the samples no other task interrupted spend {share} of their time off the CPU "
                "(sleeping, reading, or waiting for a child or a lock), which CPU time leaves out"),
    "threads": ("CPU time adds up every thread and child that ran at once ({ratio:.2f}x the wall time): trust wall "
                "time for how long it takes, CPU time for how much work it does"),
    "cpu-bound": ("the benchmark is CPU-bound, so other tasks' time slices are the likely difference: trust CPU "
                  "time, and run `pairbench doctor` on the machine"),
    "unknown": ("other tasks interrupted every sample, or all but a few (fewer than a quarter ran uninterrupted), so "
                "which is right cannot be told: run `pairbench doctor`"),
    "waits": ("trust wall time: other tasks interrupted nearly every sample, but each also gave up the CPU itself "
              "(sleeping, reading, or waiting for a child or a lock), which CPU time leaves out"),
}


def _interval(estimate: float, low: float, high: float) -> str:
    return f"{format_percent(estimate)} [{format_percent(low)}, {format_percent(high)}]"


def _trust(d: Mapping) -> str:
    """Which time to trust, by how the benchmark spends its time (``analysis.rules.CpuUse.kind``)."""
    return TRUST[d["kind"]].format(share=format_percent(100 * (d.get("off_cpu_share") or 0), signed=False),
                                   ratio=d.get("cpu_over_wall") or 0)


def _disagree(d: Mapping, unit: str) -> str:
    first, other = metric_words(d["metric"]), metric_words(d["other"])
    return (f"{first} changed by {_interval(d['estimate'], d['low'], d['high'])} but {other} by "
            f"{_interval(d['other_estimate'], d['other_low'], d['other_high'])}: {_trust(d)}")


COUNTS_WHY = ("instructions are not of equal cost: the change moves memory traffic (cache misses the instruction "
              "count does not see), system calls (only user space is counted) or slow instructions for fast ones; "
              "instructions say how much work the code does, time how long it takes")


def _counts_disagree(d: Mapping, unit: str) -> str:
    first, other = METRIC_WORDS[d["metric"]], METRIC_WORDS[d["other"]]
    how = "the other way" if d["how"] == "direction" else "by a different amount"
    return (f"{first} changed by {_interval(d['estimate'], d['low'], d['high'])} but {other} {how}, by "
            f"{_interval(d['other_estimate'], d['other_low'], d['other_high'])}: {COUNTS_WHY}")


def _counted_by(d: Mapping, unit: str) -> str:
    if d["counter"] == "hardware":
        return f"instructions counted by the processor's counter (user space, {d['program']} {d['version']})".strip()
    low, high = d.get("slowdown") or (20, 100)
    return (f"counted by Callgrind ({d['version'] or d['program']}), which runs each program {low} to {high} times "
            "slower on a simulated CPU; the counts do not depend on the machine's load")


def _cpu_partial(d: Mapping, unit: str) -> str:
    return f"the verdict is on CPU time, but {_trust(d)}; decide on wall time with --metric wall"


CHOSEN_WHY = {
    "cpu-bound": "they show it CPU-bound ({share} of its time off the CPU when nothing interrupted it), so other "
                 "tasks' time slices are left out",
    "unknown": "other tasks interrupted every sample, or all but a few (fewer than a quarter ran uninterrupted, too "
               "few to read its own time off the CPU), so it counts as CPU-bound (a benchmark that waits is seldom "
               "interrupted while it waits), and their time slices are left out",
    "off-cpu": "they spend {share} of their time off the CPU (sleeping, reading, or waiting for a child or a lock), "
               "which CPU time would leave out",
    "threads": "its CPU time is {ratio:.2f}x its wall time (several threads or processes at once)",
    "waits": "other tasks interrupted nearly every sample, but each also gave up the CPU itself (sleeping, reading, or "
             "waiting for a child or a lock), which CPU time would leave out",
}


def _chosen(d: Mapping, unit: str) -> str:
    why = CHOSEN_WHY[d["kind"]].format(share=format_percent(100 * (d.get("off_cpu_share") or 0), signed=False),
                                       ratio=d.get("cpu_over_wall") or 0)
    rechecked = f" (its first {d['first_rounds']} had looked CPU-bound)" if d.get("first_rounds") else ""
    return (f"the verdict is on {metric_words(d['metric'])} (--metric auto), from its first {d['rounds']} "
            f"rounds{rechecked}: {why}")


def _cleanup(d: Mapping, unit: str) -> str:
    by = d.get("signal", "Ctrl-C")  # SIGTERM and SIGHUP are handled like Ctrl-C
    if d.get("command") is None:
        return f"cleanup interrupted ({by}) while the commands' executor was being closed"
    return f"cleanup interrupted ({by}): the --cleanup command {d['command']!r} may not have finished"


WORDINGS: dict[str, Callable[[Mapping, str], str]] = {
    "single-value": lambda d, u: "only 1 sample: no spread, shape or interval to give",
    "no-variance": _no_variance,
    "nonpositive-min": lambda d, u: f"the minimum is {format_value(d['min'], u)}: the mean-min gap is undefined",
    "grubbs-tail": _grubbs,
    "tukey-fence": lambda d, u: (f"{d['count']} sample(s) {d['side']} the Tukey fence "
                                 f"({format_value(d['fence'], u)}); reported, not removed"),
    "modes": _modes,
    "median-interval-tied": lambda d, u: (f"the median's interval has equal ends ({format_value(d['value'], u)}): "
                                          "is the timer resolution too coarse?"),
    "not-enough-data": _needed,
    "zero-standard-error": lambda d, u: f"the {d['method']} standard error is 0, which is not credible",
    "autocorrelated-mean": lambda d, u: (
        f"effective sample size {d['n_eff']:.1f} is less than half of n = {d['n']}: the samples are "
        f"autocorrelated and s/sqrt(n) would understate the error {d['factor']:.1f}-fold"),
    "mean-error-fallback": lambda d, u: ("the truncated-lag variance of the mean was not positive, so the "
                                         "error of the mean is by batch means"),
    "effective-sample-too-small": lambda d, u: (
        f"no interval for the mean: the samples are so autocorrelated that their {d['n']} values are "
        f"worth about {d['n_eff']:.1f} independent ones (at least {d['needed']:g} are needed); "
        "measure longer, or compare variants with interleaved rounds"),
    "negatively-autocorrelated": lambda d, u: (
        f"effective sample size {d['n_eff']:.1f} is above n = {d['n']}: neighbouring samples alternate "
        f"(lag-1 autocorrelation {d['lag1']:+.2f}), so their deviations partly cancel in the mean"),
    "rank-ties": _rank_ties,
    "rank-no-variance": lambda d, u: "no variance in either side: the Hodges-Lehmann shift has no interval",
    "rank-interval-undefined": lambda d, u: ("every non-zero difference is tied: the signed-rank test "
                                             "gives no interval"),
    "interval-at-edge": lambda d, u: (f"the Hodges-Lehmann interval reaches the {d['edge']} difference: too "
                                      "few samples for its confidence"),
    "zero-differences": lambda d, u: (f"{d['zeros']} pair(s) with no difference are left out of the "
                                      "signed-rank test (no exact p-value)"),
    "confidence-not-achievable": lambda d, u: (
        f"a {format_level(d['requested'])} rank interval is not possible with so few samples; its exact level "
        f"is {format_level(d['achieved'])}"),
    "interval-conservative": lambda d, u: (
        f"the closest a sign-test interval gets to {format_level(d['requested'])} with {d['n']} pairs"),
    "tied-pairs": lambda d, u: (f"{d['tied']} of {d['n']} pairs are tied (candidate == baseline): the sign "
                                "test's p-value leaves them out, the interval counts them conservatively"),
    "coarse-ratios": lambda d, u: (f"only {d['distinct']} distinct ratios among {d['n']} pairs: the timer "
                                   "looks coarse; the interval stays valid but is conservative"),
    "outlier-check-disabled": lambda d, u: "the outlier check is off: at least half the pairs have the same ratio",
    "few-outliers": lambda d, u: f"too few ({d['total']}) for their balance to be significant",
    "sequence-unbounded": lambda d, u: f"no interval yet: {d['n']} pairs, at least {d['needed']} needed",
    "running-interval-empty": lambda d, u: ("the running interval became empty: the change itself moved "
                                            "during the run"),
    "median-outside-running-interval": lambda d, u: (
        f"the median over the whole run, {format_percent(d['median_pct'])}, lies outside the interval "
        f"[{format_percent(d['low_pct'])}, {format_percent(d['high_pct'])}] kept over the rounds: the change "
        "moved during the run, or lies near an end of the interval; the change shown is its nearer end"),
    "shift-unbounded": _shift_unbounded,
    "bootstrap-bca-too-large": lambda d, u: (f"percentile bootstrap interval: BCa is O(n²) and n = {d['n']} "
                                             f"exceeds {d['limit']}"),
    "bootstrap-bca-undefined": lambda d, u: "BCa is undefined for these data; the percentile interval is given",
    "bootstrap-warning": lambda d, u: f"the bootstrap warned: {d['text']}",
    "failed-samples": lambda d, u: f"{d['count']} failed sample(s) are stored but left out of these statistics",
    "no-samples": lambda d, u: "no successful samples to analyse",
    "no-successful-samples": _no_successful_samples,
    "failed-rounds": lambda d, u: f"{d['count']} round(s) left out because a sample in them failed",
    "no-rounds-estimate": _no_rounds_estimate,
    "budget-out-of-reach": lambda d, u: out_of_reach_words(d),
    "pairs-autocorrelated": lambda d, u: (
        f"the pair differences are autocorrelated (lag-1 r = {d['lag1']:.2f}, outside ±{d['band']:.2f}): "
        "consecutive rounds are not independent; run `pairbench doctor` to see why"),
    "self-check-found-change": lambda d, u: (
        "the A/A self-check (the baseline against a copy of itself) found a difference: this machine's "
        "noise is not what the method assumes; run `pairbench doctor`"),
    "involuntary-switches": lambda d, u: (
        f"{format_rate(d['rate'])} involuntary context switches beyond its quietest sample's, in "
        f"{d['affected']} of {d['n']} samples: other tasks took its CPU mid-sample, and those samples "
        "include their time slices"),
    "no-cpu-time": lambda d, u: (f"no verdict on CPU time: {', '.join(d['sides'])} recorded no CPU time (an "
                                 "imported result has none); decide on wall time with --metric wall"),
    "cpu-time-partial": _cpu_partial,
    "metrics-disagree": _disagree,
    "counts-disagree": _counts_disagree,
    "counts-beside": lambda d, u: (  # what the report shows beside a count's verdict
        f"{METRIC_WORDS[d['other']]} changed by {_interval(d['other_estimate'], d['other_low'], d['other_high'])} "
        f"over the same rounds, in agreement with {METRIC_WORDS[d['metric']]}"),
    "counted-by": _counted_by,
    "times-under-callgrind": lambda d, u: (
        "the times of these samples are of the program slowed under Callgrind, not its own: no time is compared "
        "(measure time in a run of its own, --metric cpu or wall)"),
    "metric-chosen": _chosen,
    "rss-at-floor": lambda d, u: (
        f"max RSS of {', '.join(d['sides'])} is at the smallest value the executor can report "
        f"(about {format_kib(d['floor_kib'])}, the size of the process that spawns commands, which Linux "
        "charges to a child at exec): the commands' own peak is at most the value shown"),
    "machine-busy": _machine(_load),
    "machine-memory-short": _machine(lambda d: (f"memory is short ({_read(d)}): samples that wait for "
                                                "memory are slow and erratic")),
    "machine-power-limited": _machine(lambda d: f"{_read(d)}: clock speeds follow the power limits, "
                                                "so timings drift"),
    "machine-paused": _machine(lambda d: (f"{_read(d)}: the hypervisor or the cgroup quota "
                                          f"{'paused' if d.get('paused_now') else 'can pause'} the benchmark")),
    "machine-clock-coarse": _machine(lambda d: f"{_read(d)}: short samples are quantized"),
    "machine-untuned": _untuned,
    "renamed": _renamed,
    "shell-syntax": _shell_syntax,
    "leftover-processes": lambda d, u: (
        f"{d['side']!r} left {d['count']} process(es) running after it exited; pairbench killed them so "
        "they could not disturb later samples"),
    "containment-partial": lambda d, u: (
        f"{d['side']!r} left processes that kept starting new ones faster than pairbench could stop them: "
        f"{d['count']} may still run. Without a cgroup of its own for each command (pairbench doctor says "
        "why this machine gives none), pairbench ends what a command leaves by scanning for it"),
    "executor-fallback": lambda d, u: (
        f"the small spawner process could not be started ({d['reason']}), so commands are started from "
        f"pairbench itself and a max RSS below ~{d['floor_kib'] // 1024} MB (pairbench's own size) is "
        "pairbench's, not the command's"),
    "spawner-fallback": lambda d, u: (
        f"the native spawner could not be started ({d['reason']}), so commands ran from the Python spawner "
        f"and a max RSS below ~{d['floor_kib'] // 1024} MiB (its size) is the spawner's, not the command's"),
    "cleanup-interrupted": _cleanup,
    "warmup-cut-short": lambda d, u: (
        f"the time budget (--max-time) ended warmup after {d['done']} of the {d['asked']} warmup rounds "
        "asked for; raise --max-time or lower --warmup to warm up fully"),
    "import-zero-times": lambda d, u: (
        f"{d['tool']} wrote {d['count']} run(s) of this command as 0 s (shorter than its shell's start-up, which "
        "it subtracts from every run); they are kept as 1 ns, so its low times say only: too short to time"),
    "journal-cut-short": lambda d, u: f"the journal's last line was cut short; {d['recovered']} samples recovered",
    "unrenamed-result": lambda d, u: (
        f"{d['path']} holds this run's complete result document (the run was killed just before "
        f"renaming it): rename it to {d['result']}"),
    "recorded": lambda d, u: d["text"],
    "benchmarks-added": lambda d, u: _only_on(d, "added: only the candidate"),
    "benchmarks-removed": lambda d, u: _only_on(d, "removed: only the baseline"),
    "process-blocks": lambda d, u: (
        f"the verdict is drawn from {d['blocks']} blocks of rounds ({d['rounds']} rounds in all), each "
        "measured by freshly started workers, so that what differs between two processes of one program "
        "(memory layout, hash seeds) counts as noise, not as an effect of the code"),
    "blocks-differ": lambda d, u: (
        f"the blocks disagree: their effects ran from {format_percent(d['low_pct'])} to "
        f"{format_percent(d['high_pct'])} (10th to 90th percentile of {d['blocks']}), where their rounds' noise "
        f"explains about {format_percent(d['noise_pct'], signed=False)}: this machine runs two processes "
        "of one program at different speeds (docs/doctor.md, \"Getting reliable numbers\"), so the size of the "
        "change depends on which processes ran and a rerun may give another; the interval covers the "
        "blocks' median"),
    "repeated-invocations": lambda d, u: (
        f"a round ran each side's process once, repeating the benchmark {d['repetitions']} times in it "
        f"(-test.count); {_warmup_repetitions(d['warmups'])} the round's value of a side is the median of the "
        "others, so each pair of processes counts once" + _process_cpu(d)),
    "benchmark-failed": lambda d, u: f"the benchmark {d['benchmark']!r} failed: {d['why']}",
    "benchmark-duration": lambda d, u: (
        f"a sample lasts {format_value(d['median_ns'], 'ns')}, under 1000 steps of the "
        f"{format_value(d['timer_resolution_ns'], 'ns')} timer, so its time is quantized; give the worker "
        "a longer --sample-time"),
    "benchmark-setup-overhead": lambda d, u: (
        f"a fixed cost of {format_value(d['setup_ns'], 'ns')} per sample is "
        f"{format_percent(100 * d['setup_share'], signed=False)} of a {d['share_at_iterations']:,}-iteration sample "
        "(fit of time on the iteration count; the Swift benchmark suite's validation rules ask for under 5%): "
        + _advice(d, "setup_advice")),
    "benchmark-elided-body": _elided,
    "benchmark-memory-growth": lambda d, u: (
        f"the worker's resident memory grew by {format_kib(d['growth_kib'])} over {d['iterations']:,} iterations "
        f"(about {d['per_iteration_bytes']:.3g} bytes each), as when the body keeps what it allocates: later "
        "samples then do more work than earlier ones"),
    "benchmark-name": lambda d, u: (
        f"the name has {d['length']} characters, over {d['max']}: long names are cut or wrap in report tables"),
    "benchmark-peak-growth": lambda d, u: (
        f"the invocation's peak memory grows by {format_kib(d['slope'])} an iteration (one-sided p = "
        f"{d['pvalue']:.2g}; {format_kib(d['growth_kib'])} over the counts tried), as when the body keeps "
        "what it allocates: longer samples then do more work than shorter ones"),
    "benchmark-too-long": lambda d, u: (
        f"one iteration takes {format_value(d['iteration_ns'], 'ns')}, so a sample cannot be as short as "
        f"--sample-time ({format_value(d['sample_time_ns'], 'ns')}): a round takes longer and the budget buys "
        "fewer of them; split the benchmark, or give it a smaller input"),
    "sample-time-raised": lambda d, u: (
        f"--sample-time {format_value(d['sample_time_ns'], 'ns', digits=3)} was raised: a sample runs "
        f"{d['iterations']:,} iterations, not {d['chosen']:,}, and lasts about "
        f"{format_value(d['sample_ns'], 'ns', digits=3)} on the quicker side, so that the fixed cost of timing "
        f"one ({format_value(d['fixed_ns'], 'ns', digits=2)}: reading the clocks) is at most "
        f"{format_percent(100 * d['share'], signed=False, digits=1)} of it; samples of "
        f"{format_value(d['quickest_ns'], 'ns', digits=3)} would have pulled the effect towards 0 by up to "
        f"{format_percent(100 * d['pull_asked'], signed=False, digits=2)} of itself"),
    "runs-not-paired": _not_paired,
    "suite-budget-spent": lambda d, u: (
        f"{d['count']} benchmark(s) were not measured: the suite's time budget (--suite-time "
        f"{format_value(d['suite_time_ns'], 'ns')}) was spent before their turn: "
        + ", ".join(d["names"]) + (f" and {d['count'] - len(d['names'])} more" if d["count"] > len(d["names"]) else "")),
    **READINGS,
    "doctor-autocorrelation": worded(lambda d: autocorrelation(d, lambda r: word(Note(r["code"], r["data"])))),
}
