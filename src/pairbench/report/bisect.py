"""What ``pairbench bisect`` found, as text: terminal, Markdown and JSON (``pairbench.bisect/1``).

Every renderer takes the search's account (``sessions.bisect.Bisected``) and computes nothing:
the table of comparisons made (each benchmark's change, its interval, the boundary it was decided
against and what it says) and the answer: the commit with its own effect, a slowdown spread over
commits, an inconclusive range, or no slowdown. Commit subjects and benchmark names come from
outside (a repository, a program's listing): every text goes through ``safe.visible`` (and
Markdown's escaping).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from pairbench.analysis.bisection import Answer, Trial
from pairbench.analysis.criteria import ABOVE, BELOW
from pairbench.model import json_safe
from pairbench.report.markdown import table as markdown_table
from pairbench.report.safe import escape, visible
from pairbench.report.tables import Table
from pairbench.units import format_duration, format_level, format_percent

BISECT_FORMAT = "pairbench.bisect/1"
SHORT = 10
SAYS = {  # (purpose, side) -> what a benchmark's interval says
    ("step", ABOVE): "a step", ("step", BELOW): "no step",
    ("middle", ABOVE): "slower by the step", ("middle", BELOW): "like GOOD",
    ("ends", ABOVE): "at least a quarter of the step", ("ends", BELOW): "less than a quarter of the step",
}
WHY = {
    "budget": "the budget (--budget) ran out",
    "interrupted": "the search was interrupted",
    "undecided": "comparison {at} could not decide within its --max-time (more time may decide it)",
    "unbuildable": "the commits between them do not build or their benchmarks fail",
    "comparisons": "the search made the most comparisons its error rate is split over",
    "no-step": "GOOD and BAD could not be told apart by the threshold and by half their difference within "
               "--max-time",
}


def commit_label(commits: Sequence[str], index: int) -> str:
    """A commit as shown: its short hash, "(GOOD)" or "(BAD)" for the two given."""
    role = {0: " (GOOD)", len(commits) - 1: " (BAD)"}.get(index, "")
    return visible(commits[index][:SHORT]) + role


def trial_table(bisected) -> Table:
    """One row per benchmark of each comparison: what was compared, the change, the interval, the
    boundary and what the interval says."""
    rows = []
    for done in bisected.done:
        t = done.trial
        for k, ((name, effect), (_, bound), (_, side)) in enumerate(zip(t.effects, t.boundaries, t.sides,
                                                                          strict=True)):
            first = k == 0
            rows.append((str(t.number) if first else "", _pair(bisected.session.commits, t) if first else "", visible(name),
                         format_percent(effect.estimate) if effect else "—", _interval(effect),
                         _boundary(t, bound), SAYS.get((t.pair.purpose, side), "inconclusive")))
    return Table(("#", "compared", "benchmark", "change", "interval", "boundary", "says"), tuple(rows))


def _pair(commits: Sequence[str], t: Trial) -> str:
    return f"{commit_label(commits, t.pair.cand)} vs {commit_label(commits, t.pair.base)}"


def _interval(effect) -> str:
    if effect is None:
        return "no interval"
    return f"[{format_percent(effect.low)}, {format_percent(effect.high)}] at {format_level(effect.confidence)}"


def _boundary(t: Trial, bound) -> str:
    if t.pair.purpose == "step":
        return f"> {format_percent(bound.at)} and half the change"
    return format_percent(bound.at)


# --------------------------------------------------------------------------- the answer


def answer_lines(bisected) -> list[str]:
    """The answer in sentences (plain text, visible)."""
    a: Answer = bisected.answer
    step = _step_effects(bisected)
    if a.kind == "found":
        ends = _ends_trial(bisected, a.commit)
        subject = f" ({visible(bisected.subject)})" if bisected.subject else ""
        lines = [f"Found: commit {visible(bisected.session.commits[a.commit][:SHORT])}{subject}."]
        for name, effect in (ends.effects if ends else ()):
            if name in a.benchmarks:
                lines.append(f"  {visible(name)}: {format_percent(effect.estimate)} [{format_percent(effect.low)}, "
                             f"{format_percent(effect.high)}] against its parent, at least a quarter of the "
                             f"{_step_size(step, name)} step from GOOD to BAD")
        return lines
    span = _span(bisected, a)
    if a.kind == "spread":
        return [f"No single commit explains the slowdown: it is spread over commits {span}.",
                "  Where it passes a quarter of the step, the commits add less than a quarter of it; bisect a "
                "drift's ends with history, or look at the commits of the range."]
    if a.kind == "no-slowdown":
        sizes = ", ".join(f"{visible(n)} {_step_size(step, n)}" for n in a.benchmarks)
        return [f"No slowdown: BAD is not slower than GOOD by the threshold ({sizes}); nothing to bisect."]
    why = WHY.get(a.why or "", a.why or "").format(at=a.at)
    return [f"Inconclusive: the commit that made it slower is one of {span}; {why}.",
            "  No commit is named; the range above is what the comparisons made so far show."]


def _span(bisected, a: Answer) -> str:
    commits = bisected.session.commits
    count = a.last - a.first + 1
    if count == 1:
        return f"{commits[a.first][:SHORT]} (1 commit)"
    return f"{commits[a.first][:SHORT]}..{commits[a.last][:SHORT]} ({count} commits)"


def _step_effects(bisected) -> dict:
    first = bisected.done[0].trial if bisected.done else None
    return dict(first.effects) if first and first.pair.purpose == "step" else {}


def _step_size(step: dict, name: str) -> str:
    effect = step.get(name)
    return "—" if effect is None else format_percent(effect.estimate)


def _ends_trial(bisected, commit: int) -> Trial | None:
    return next((d.trial for d in reversed(bisected.done) if d.trial.pair.cand == commit), None)


def summary_line(bisected) -> str:
    seconds = sum(d.seconds for d in bisected.done)
    made = len(bisected.session.cache.built_now)
    reused = len(bisected.session.cache.reused)
    skipped = f"; {len(bisected.skipped)} skipped (they do not build or measure)" if bisected.skipped else ""
    return (f"{len(bisected.done)} of at most {bisected.search.limit} comparisons in "
            f"{format_duration(seconds * 1e9)}; {made} built, {reused} from the build cache{skipped}.")


def header_line(session, search) -> str:
    """What is searched: the commits, the most comparisons, each one's share of alpha."""
    n = len(search.commits) - 1
    good, bad = (visible(session.revision(i).short) for i in (0, n))
    return (f"Bisecting {n} commit{'s' if n != 1 else ''} after GOOD {good} up to BAD {bad}: at most "
            f"{search.limit} comparisons, each at alpha {search.alpha:g}/{search.limit} = {search.level:.3g}.")


def trial_line(commits: Sequence[str], done) -> str:
    """One comparison as it ends, for the progress on standard error."""
    t = done.trial
    effects = "; ".join(f"{visible(name)} {format_percent(e.estimate) if e else '—'}: "
                        f"{SAYS.get((t.pair.purpose, side), 'inconclusive')}"
                        for (name, e), (_, side) in zip(t.effects, t.sides, strict=True))
    stored = f" (not stored: {visible(done.store_error)})" if done.store_error else ""
    return f"[{t.number}] {_pair(commits, t)}: {effects}{stored}"


# --------------------------------------------------------------------------- formats


def render_bisect_text(bisected) -> str:
    """The terminal's report: the header, the comparisons, the answer, the costs."""
    lines = [header_line(bisected.session, bisected.search), ""]
    if bisected.done:
        lines += [*aligned(trial_table(bisected)), ""]
    lines += [*(f"skipped {visible(bisected.session.commits[i][:SHORT])}: {visible(_first_line(why))}"
                for i, why in sorted(bisected.skipped.items()))]
    lines += [f"comparison {d.trial.number} was not stored: {visible(d.store_error)}"
              for d in bisected.done if d.store_error]
    lines += [*answer_lines(bisected), summary_line(bisected)]
    return "\n".join(lines) + "\n"


def render_bisect_markdown(bisected) -> str:
    """The report for a pull request or an issue: the answer first, then the comparisons."""
    lines = [f"### {escape(header_line(bisected.session, bisected.search))}", "", *(escape(line.strip()) for line in answer_lines(bisected))]
    if bisected.done:
        lines += ["", markdown_table(trial_table(bisected))]
    lines += ["", escape(summary_line(bisected))]
    return "\n".join(lines) + "\n"


def bisect_document(bisected) -> dict:
    """The JSON document (``pairbench.bisect/1``): every comparison, the skipped commits, the answer."""
    search, commits, a = bisected.search, bisected.session.commits, bisected.answer
    return json_safe({
        "format": BISECT_FORMAT,
        "good": commits[0], "bad": commits[-1], "commits": len(commits) - 1,
        "alpha": search.alpha, "level": search.level, "most_comparisons": search.limit,
        "threshold_pct": search.threshold,
        "comparisons": [_trial_record(commits, d) for d in bisected.done],
        "skipped": [{"commit": commits[i], "why": why} for i, why in sorted(bisected.skipped.items())],
        "answer": {"kind": a.kind, "commit": commits[a.commit] if a.commit is not None else None,
                   "subject": bisected.subject, "first": commits[a.first], "last": commits[a.last],
                   "range_commits": a.last - a.first + 1, "benchmarks": list(a.benchmarks), "why": a.why,
                   "undecided_comparison": a.at},
        "builds": {"built": len(bisected.session.cache.built_now), "reused": len(bisected.session.cache.reused)},
        "interrupted": bisected.interrupted is not None,
    })


def render_bisect_json(bisected) -> str:
    return json.dumps(bisect_document(bisected), indent=2, allow_nan=False) + "\n"


def _trial_record(commits: Sequence[str], d) -> dict:
    t = d.trial
    return {"number": t.number, "purpose": t.pair.purpose, "base": commits[t.pair.base],
            "candidate": commits[t.pair.cand], "outcome": t.outcome, "seconds": d.seconds, "result": d.result,
            "store_error": d.store_error,
            "benchmarks": [{"benchmark": name, "change_pct": e.estimate if e else None,
                            "low_pct": e.low if e else None, "high_pct": e.high if e else None,
                            "confidence": e.confidence if e else None, "boundary_pct": bound.at,
                            "boundary_share": bound.share, "side": side}
                           for (name, e), (_, bound), (_, side) in zip(t.effects, t.boundaries, t.sides,
                                                                          strict=True)]}


def aligned(t: Table) -> Iterator[str]:
    """``t`` as text columns: the first three and the last left-aligned, the others right-aligned."""
    rows = [t.header, *t.rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(t.header))]
    last = len(widths) - 1
    for row in rows:
        cells = [cell.ljust(w) if i in (0, 1, 2, last) else cell.rjust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        yield "  ".join(cells).rstrip()


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]
