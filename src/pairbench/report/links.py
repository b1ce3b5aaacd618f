"""A paired history as text: terminal, Markdown, JSON records and an HTML section.

Takes the ``analysis.links.LinkHistory`` of each benchmark and computes nothing: each benchmark's
metric, its links (steps marked, with their intervals at the level each link was tested at), the
cumulative change against its window's anchor, its drifts, and the commits never recorded (a link
spanning several commits, with the ``bisect`` command that finds the one of a step). Commits and
names come from a store others write: every text goes through ``safe.visible`` (Markdown's and
HTML's own escaping on top).
"""

from __future__ import annotations

from pairbench.report.metric_names import metric_words
from pairbench.report.safe import escape, visible
from pairbench.units import format_percent

LATEST = 5  # links listed per benchmark in the terminal
SHORT = 10  # characters of a commit hash shown, as in the unpaired history


def bisect_command(bisect, short: bool = True) -> str:
    """``report.history.bisect_command`` (imported when used: that module renders the unpaired part)."""
    from pairbench.report.history import bisect_command as command

    return command(bisect, short)


def _commit(commit: str) -> str:
    return visible(commit[:SHORT])


def link_range(link) -> str:
    """``before..after``, with the commits skipped between them when there are any."""
    skipped = f" ({link.commits - 1} unrecorded between)" if link.commits and link.commits > 1 else ""
    return f"{_commit(link.before)}..{_commit(link.after)}{skipped}"


def link_size(link) -> str:
    """``+8.1% [+6.9%, +9.4%] at 99.995%``: the effect with its interval and the interval's level."""
    interval = "" if link.effect_low is None else \
        f" [{format_percent(link.effect_low)}, {format_percent(link.effect_high)}]"
    return f"{format_percent(link.effect)}{interval} at {_confidence(link.level)}"


def _confidence(level: float) -> str:
    text = f"{100.0 * (1.0 - level):.6f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _marker(decided) -> str:
    return {"slower": "step (slower)", "faster": "step (faster)"}.get(decided.direction, "")


def paired_lines(histories) -> list[str]:
    """The terminal's paired history: per benchmark and metric, its steps, drifts and latest links."""
    if not histories:
        return []
    lines = [f"paired history · {len(histories)} benchmark(s) recorded in links "
             "(each commit against its predecessor in the same rounds)"]
    for h in histories:
        lines += ["", f"{visible(h.benchmark.label)} · {metric_words(h.metric)} · {len(h.chain)} link(s), "
                      f"{len(h.steps)} step(s), {h.unrecorded} unrecorded commit(s)"]
        lines += [f"  step at {link_range(d.link)}: {link_size(d.link)} {d.direction}" for d in h.steps]
        lines += [f"    find its commit: {visible(bisect_command(d.bisect))}" for d in h.steps if d.bisect]
        lines += [f"  drift since anchor {_commit(d.anchor)}: {d.direction}, first decided at {_commit(d.first)}; "
                  f"cumulative change at {_commit(d.latest.after)}: {link_size(d.latest)}" for d in h.drifts]
        if h.cumulative:
            latest = h.cumulative[-1].link
            lines.append(f"  cumulative since anchor {_commit(latest.before)}: at {_commit(latest.after)} "
                         f"{link_size(latest)}")
        lines.append("  latest links:")
        lines += [f"    {link_range(d.link)}  {link_size(d.link)}  {d.link.rounds} rounds  {_marker(d)}".rstrip()
                  for d in h.chain[-LATEST:]]
    return lines


def paired_markdown(histories) -> list[str]:
    """A pull-request comment's paired part: steps with intervals, drifts, then one row per benchmark."""
    if not histories:
        return []
    lines = ["#### Paired history (each commit against its predecessor in the same rounds)", ""]
    steps = [(h, d) for h in histories for d in h.steps]
    if steps:
        lines += ["| commits | benchmark | metric | change | |", "|---|---|---|---|---|"]
        lines += [f"| {escape(link_range(d.link))} | {escape(h.benchmark.label)} | {escape(metric_words(h.metric))} | "
                  f"{escape(link_size(d.link))} | {d.direction} |" for h, d in steps]
    else:
        lines.append("No steps.")
    bisects = [d.bisect for _, d in steps if d.bisect]
    if bisects:
        lines += ["", "To find the commit of a step over unrecorded commits:", "", "```sh",
                  *(visible(bisect_command(b)) for b in bisects), "```"]
    drifts = [(h, d) for h in histories for d in h.drifts]
    lines += ["", *(f"- drift: {escape(h.benchmark.label)} since {escape(_commit(d.anchor))}: "
                    f"{escape(link_size(d.latest))} at {escape(_commit(d.latest.after))}" for h, d in drifts)]
    lines += ["| benchmark | metric | links | steps | cumulative since anchor | unrecorded |",
              "|---|---|---|---|---|---|"]
    for h in histories:
        cumulative = escape(link_size(h.cumulative[-1].link)) if h.cumulative else "—"
        lines.append(f"| {escape(h.benchmark.label)} | {escape(metric_words(h.metric))} | {len(h.chain)} | "
                     f"{len(h.steps)} | {cumulative} | {h.unrecorded} |")
    for h in histories:
        anchor_at = {d.link.after: d.link for d in h.cumulative}
        lines += ["", f"Latest links of {escape(h.benchmark.label)} ({escape(metric_words(h.metric))}):", "",
                  "| commits | against its predecessor | rounds | | cumulative against the anchor |",
                  "|---|---|---|---|---|"]
        lines += [f"| {escape(link_range(d.link))} | {escape(link_size(d.link))} | {d.link.rounds} | {_marker(d)} | "
                  f"{escape(link_size(anchor_at[d.link.after])) if d.link.after in anchor_at else ''} |"
                  for d in h.chain[-LATEST:]]
    return [*lines, ""]


def link_record(decided) -> dict:
    """The JSON record of one judged link."""
    link = decided.link
    return {"kind": link.kind, "before": link.before, "after": link.after, "commits": link.commits,
            "unrecorded": decided.unrecorded, "metric": link.metric, "rounds": link.rounds, "level": link.level, "threshold_pct": link.threshold,
            "alpha": link.alpha, "change_pct": link.effect,
            "low_pct": link.effect_low, "high_pct": link.effect_high, "pvalue": link.pvalue,
            "decided": decided.direction, "result_uid": link.result_uid,
            "bisect": None if decided.bisect is None else bisect_command(decided.bisect, short=False)}


def paired_records(histories) -> list[dict]:
    return [{"benchmark": h.benchmark.to_dict(), "label": h.benchmark.label, "metric": h.metric,
             "unrecorded": h.unrecorded, "steps": len(h.steps), "links": [link_record(d) for d in h.chain], "cumulative": [link_record(d) for d in h.cumulative],
             "drifts": [{"anchor": d.anchor, "first": d.first, "direction": d.direction,
                         "latest": link_record(next(c for c in h.cumulative if c.link is d.latest))}
                        for d in h.drifts]} for h in histories]


def paired_tables(histories) -> tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    """The HTML page's paired sections (the template escapes every text): per benchmark, its title,
    its drifts' lines, and its links as rows: the commits, the change against the predecessor, the
    rounds, the step marker, and the cumulative change against the anchor measured at that commit."""
    sections = []
    for h in histories:
        drifts = tuple(f"drift since {_commit(d.anchor)}: {link_size(d.latest)} at {_commit(d.latest.after)}"
                       for d in h.drifts)
        anchor_at = {d.link.after: d.link for d in h.cumulative}
        rows = tuple((link_range(d.link), link_size(d.link), str(d.link.rounds), _marker(d),
                      link_size(anchor_at[d.link.after]) if d.link.after in anchor_at else "")
                     for d in h.chain)
        sections.append((f"{visible(h.benchmark.label)} · {metric_words(h.metric)}", drifts, rows))
    return tuple(sections)


def render_text(history) -> str:
    """The terminal's history: the paired history of the benchmarks recorded in links, then the
    unpaired history of the others (``report.history``)."""
    from pairbench.report.history import render_history

    if not history.paired:
        return render_history(history)
    lines = [f"pairbench history · machine {visible(history.machine)}", "", *paired_lines(history.paired)]
    if history.histories:
        lines += ["", "unpaired history · benchmarks recorded one commit at a time", render_history(history)]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_markdown(history) -> str:
    """A pull-request comment: the paired history, then the unpaired one of the other benchmarks."""
    from pairbench.report.history import render_history_markdown

    if not history.paired:
        return render_history_markdown(history)
    lines = [f"### pairbench history · machine {escape(history.machine)}", "", *paired_markdown(history.paired)]
    if history.histories:
        lines.append(render_history_markdown(history))
    return "\n".join(lines).rstrip("\n") + "\n"


def render_json(history) -> str:
    """The history's JSON document (``report.history``) with ``paired``: every link, judged."""
    import json

    from pairbench.model import json_safe
    from pairbench.report.history import history_document

    document = history_document(history)
    document["paired"] = json_safe(paired_records(history.paired))
    return json.dumps(document, indent=1, allow_nan=False) + "\n"
