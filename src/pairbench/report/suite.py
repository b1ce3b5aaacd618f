"""A suite's summary in words and tables: the same lines for the terminal and for Markdown.

Everything comes from ``analysis.suite.SuiteSummary``; nothing is computed here.
Cells are plain text: the terminal shows them through ``safe.markup``, Markdown
through its ``escape``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from pairbench.analysis import Analysis, Comparison
from pairbench.analysis.budget import BudgetNeeded
from pairbench.analysis.metrics import MetricComparison, MetricTable
from pairbench.analysis.suite import GeometricMean, Listed, SuiteSummary
from pairbench.harness_registry import PAIRBENCH, WORKER_HARNESSES, words
from pairbench.model import Run
from pairbench.report.sentences import change_text, format_pvalue, verdict_label
from pairbench.report.tables import Table
from pairbench.report.wording import subject_text, word
from pairbench.settings import default
from pairbench.units import format_duration, format_level, format_percent

GROUPS = (("Regressions", "regressions"), ("Improvements", "improvements"), ("Equivalent", "equivalent"),
          ("Inconclusive", "inconclusive"))


def correction_sentence(summary: SuiteSummary) -> str:
    """Which multiple-testing control, over how many comparisons, at which level."""
    return (f"Holm's step-down procedure over the suite's {summary.family} comparison"
            f"{'s' if summary.family != 1 else ''}: the chance of any wrong slower or faster verdict "
            f"in the suite is at most alpha = {summary.alpha:g}; intervals are simultaneous at "
            f"{100 * (1 - summary.alpha):g}% (Bonferroni).")


def harness_sentence(run: Run) -> str:
    """How the samples were taken, for the run's harness."""
    harness = run.suite.harness if run.suite else PAIRBENCH
    seed = run.settings.sampling.seed
    if harness in WORKER_HARNESSES:
        return (f"Each round asked every worker for one sample of a benchmark, in a fresh random order (seed "
                f"{seed}); fresh workers were started for each block of rounds.")
    return (f"Each round ran one benchmark once on every side, each run a fresh {words(harness)} "
            f"process filtered to that benchmark, in a fresh random order (seed {seed}).")


def rounds_sentence(run: Run) -> str:
    """How many rounds each benchmark of a ``bench`` took at least and at most, and its warm-up, with
    the options that set them; where they are bench's own defaults, compare's beside them (a user of
    compare expects those)."""
    sampling = run.settings.sampling
    harness = run.suite.harness if run.suite else PAIRBENCH
    in_workers = harness in WORKER_HARNESSES
    warmup = sampling.warmup if in_workers else 0
    if sampling.runs is not None:
        rounds = f"{sampling.runs} rounds (--runs)"
    else:
        budget = f", up to {_budget(sampling.max_time_ns)} (--max-time)" if sampling.max_time_ns else ""
        rounds = f"at least {sampling.min_runs} rounds (--min-runs){budget}"
    warm = (f", after {plural(warmup, 'warm-up round')} (--warmup)" if warmup else
            "; no warm-up rounds: the harness warms up in every run" if not in_workers else "")
    bench_defaults = (sampling.runs is None and sampling.min_runs == default("min_runs", "bench")
                      and (not in_workers or warmup == default("warmup", "bench")))
    compared = (f" (bench's defaults; compare's are at least {default('min_runs', 'compare')} rounds"
                + (f" after {default('warmup', 'compare')} warm-up round" if in_workers else "") + ")"
                if bench_defaults else "")
    return f"Each benchmark: {rounds}{warm}{compared}."


def _budget(ns: int) -> str:
    """A budget as an option gives it: "5 s", "1.5 s", "500 ms" (no trailing zeros)."""
    number, unit = format_duration(ns).split(" ")
    return f"{number.rstrip('0').rstrip('.') if '.' in number else number} {unit}"


def imported_sentence(run: Run) -> str:
    """Where an imported run's samples came from, and that pairbench did not measure them."""
    imported = run.environment.get("import") or {}
    tool = imported.get("tool", "another tool")
    return (f"Imported from {tool} ({imported.get('source', 'a file')}): the samples are as {tool} recorded "
            "them, one side after another, not interleaved by pairbench.")


def shard_sentence(run: Run) -> str | None:
    """ "Shard 2 of 4 of a suite of 50 benchmarks." or "Merged from shards 1-4 ...", or None."""
    suite = run.suite
    if suite and suite.shard:
        k, n = suite.shard
        return f"Shard {k} of {n} of a suite of {suite.benchmarks} benchmarks."
    if suite and suite.merged:
        return f"Merged from {len(suite.merged)} shards of a suite of {suite.benchmarks} benchmarks."
    return None


def group_table(comparisons: Sequence[Comparison]) -> Table:
    """One row per comparison: benchmark, change with its interval, verdict, Holm p, rounds."""
    rows = tuple((c.benchmark.label, change_text(c), verdict_label(c),
                  format_pvalue(c.pvalue).removeprefix("p ").removeprefix("= "), str(c.rounds))
                 for c in comparisons)
    return Table(("Benchmark", "Change [interval]", "Verdict", "p (Holm)", "Rounds"), rows)


def geometric_mean_line(g: GeometricMean | None) -> str:
    if g is None:
        return "Geometric mean: no benchmark has an estimate."
    interval = (f" [{format_percent(g.low)}, {format_percent(g.high)}] ({format_level(g.confidence)} {g.method})"
                if g.low is not None else " (no interval: a benchmark has fewer than 2 rounds, or none vary)")
    return f"Geometric mean of the changes over {g.benchmarks} benchmarks: {format_percent(g.estimate)}{interval}."


def listed_line(title: str, listed: Listed) -> str | None:
    if not listed.count:
        return None
    more = f" and {listed.count - len(listed.names)} more" if listed.count > len(listed.names) else ""
    return f"{title} ({listed.count}): {', '.join(listed.names)}{more}."


def membership_lines(summary: SuiteSummary) -> list[str]:
    lines = [listed_line("Added, only the candidate has them", summary.added),
             listed_line("Removed, only the baseline has them", summary.removed),
             listed_line("Not measured, --suite-time was spent", summary.not_measured)]
    return [line for line in lines if line]


def finding_lines(summary: SuiteSummary, run: Run) -> list[str]:
    """Each validation finding as the doctor shows one: "WARN  BM_x · new: ..."."""
    units = {key.label: key.unit for key in run.benchmarks}
    return [f"WARN  {subject_text(n)}: {word(n, units.get(n.subject.benchmark, 'ns'))}" for n in summary.findings]


_COUNTED = {"regressions": ("regression", "regressions"), "improvements": ("improvement", "improvements"),
            "equivalent": ("equivalent", "equivalent"), "inconclusive": ("inconclusive", "inconclusive")}


def counts_line(summary: SuiteSummary) -> str:
    """ "1 regression, 0 improvements, 2 equivalent, 3 inconclusive, 22 not measured." (the last only
    when some were not: a benchmark is counted once), and what budget would decide the rest."""
    counts = [(key, len(getattr(summary, key))) for _, key in GROUPS]
    unmeasured = f", {len(summary.unmeasured)} not measured" if summary.unmeasured else ""
    text = ", ".join(f"{n} {_COUNTED[key][n != 1]}" for key, n in counts) + unmeasured + "."
    return text + (f" {budget_sentence(summary.budget)}" if summary.budget else "")


def budget_sentence(b: BudgetNeeded) -> str:
    """What more sampling would decide: "About 2m 10s more ... would decide 12 of them; 8 ..."."""
    parts = []
    if b.decidable:
        parts.append(f"decide about {b.decidable} of the {b.decidable + b.undecidable} inconclusive")
    if b.not_measured:
        parts.append(f"measure the {b.not_measured} not measured")
    text = ""
    if parts and b.more_ns > 0:
        text = (f"About {format_duration(b.more_ns, digits=2)} more sampling (--suite-time "
                f"{math.ceil(b.suite_ns / 1e9)}s) would {' and '.join(parts)}.")
    if b.undecidable:
        text += (f" More rounds would not decide {b.undecidable} of the inconclusive (ties, or far too many "
                 "rounds needed).")
    return text.strip()


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------- a harness's own units


_UNIT_VERDICTS = ("higher", "lower", "same", "equivalent", "inconclusive")


def metric_blocks(analysis: Analysis) -> list[tuple[str, Table | None]]:
    """One (heading, table) block per unit a harness reported (``analysis.metrics``), as benchstat
    prints one table per unit; nothing when there is none."""
    if not analysis.metric_tables:
        return []
    blocks: list[tuple[str, Table | None]] = [(
        "The harness's own units, one table each, each its own family in Holm's procedure (the time "
        "verdicts above keep theirs); --fail-on-metric UNIT gates on one.", None)]
    return blocks + [(metric_heading(t), metric_table(t)) for t in analysis.metric_tables]


def metric_heading(t: MetricTable) -> str:
    """ "B/op (Holm over 12 comparisons, alpha 0.05; higher is worse): 1 higher, 11 same"."""
    return unit_heading_text(t.unit, plural(t.family, "comparison"), t.alpha, t.worse,
                             [c.verdict for c in t.comparisons])


def unit_heading_text(unit: str, family: str, alpha: float, worse: str, verdicts: list[str]) -> str:
    """A unit table's heading: the unit, its Holm family (``family``, counted in words), which way is
    worse, and how many of each verdict in ``_UNIT_VERDICTS``' order (``bench``'s tables and ``diff``'s)."""
    counts = Counter(verdicts)
    said = ", ".join(f"{counts[v]} {v}" for v in _UNIT_VERDICTS if counts[v])
    return f"{unit} (Holm over {family}, alpha {alpha:g}; {worse} is worse): {said}"


def metric_table(t: MetricTable) -> Table:
    """Benchmark, both sides' medians per operation, the change, the verdict, Holm's p and the rounds."""
    first = t.comparisons[0].comparison
    several = len({c.comparison.candidate for c in t.comparisons}) > 1
    rows = tuple((c.comparison.benchmark.label + (f" · {c.comparison.candidate}" if several else ""),
                  number_text(c.base_median), number_text(c.cand_median), metric_change_text(c),
                  c.verdict + (" (negligible)" if c.negligible else ""),
                  format_pvalue(c.comparison.pvalue).removeprefix("p ").removeprefix("= "), str(c.comparison.rounds))
                 for c in t.comparisons)
    return Table(("Benchmark", first.baseline, first.candidate if not several else "Candidate", "Change", "Verdict",
                  "p (Holm)", "Rounds"), rows)


def metric_change_text(c: MetricComparison) -> str:
    """ "+20.1% [+18.0%, +22.3%]" (the time's interval), "+50.0% (sign test)", "+2 (from 0)",
    "0 (equal in every round)", or "0 (3 of 16 rounds differ)" when the medians are equal."""
    if c.method == "equal":
        return "0 (equal in every round)"
    if c.comparison.effect is not None:
        return change_text(c.comparison)
    if c.difference == 0:
        return f"0 ({c.differing} of {c.comparison.rounds} rounds differ)"
    if c.change_pct is None:
        return "—" if math.isnan(c.difference) else f"{number_text(c.difference, signed=True)} (from 0)"
    return f"{format_percent(c.change_pct)} (sign test)"


def number_text(value: float, *, signed: bool = False) -> str:
    """A count as a count ("16", "1,024"), else 4 significant digits; "—" when there is none."""
    if not math.isfinite(value):
        return "—"
    sign = "+" if signed and value > 0 else ""
    if value == int(value) and abs(value) < 1e15:
        return f"{sign}{int(value):,}"
    return f"{sign}{value:.4g}"


def suite_blocks(run: Run, analysis: Analysis) -> list[tuple[str, Table | None]]:
    """The summary as (heading, table) blocks in reading order; a heading without a table is a line."""
    summary: SuiteSummary = analysis.suite
    blocks: list[tuple[str, Table | None]] = [(correction_sentence(summary), None), (counts_line(summary), None)]
    for title, key in GROUPS:
        group = getattr(summary, key)
        if group:
            blocks.append((f"{title} ({len(group)})", group_table(group)))
    blocks.append((geometric_mean_line(summary.geometric_mean), None))
    blocks += [(line, None) for line in membership_lines(summary)]
    return blocks + metric_blocks(analysis)
