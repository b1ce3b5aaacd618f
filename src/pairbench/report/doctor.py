"""The doctor's reports in words: the machine's findings, a benchmark's, as terminal text or JSON.

A finding is one line, its status first; a warning or a failure adds why it
matters and the fix. A benchmark's report shows the machine's troubles in
brief (``pairbench doctor`` alone says why and how to fix them). Returns
strings; the CLI prints them.
"""

from __future__ import annotations

import json

from pairbench.environment.findings import STATUSES, Finding, Report
from pairbench.report.findings import TITLES, WHY, fix
from pairbench.report.safe import markup
from pairbench.report.text import render_markup
from pairbench.report.wording import word
from pairbench.settings import ValidationPlan

_STYLE = {"ok": "green", "unknown": "dim", "warn": "yellow", "fail": "bold red"}


def render_machine(machine: Report, *, color: bool) -> str:
    """``pairbench doctor``: every finding on the machine, then the overall status."""
    return render_markup(machine_lines(machine), color=color)


def render_benchmark(report: Report, machine: Report, plan: ValidationPlan, *, color: bool) -> str:
    """``pairbench doctor COMMAND``: how it was run, the machine's troubles, every finding on the benchmark."""
    return render_markup(benchmark_lines(report, machine, plan), color=color)


def render_json(report: Report, *, machine: Report | None = None, plan: ValidationPlan | None = None) -> str:
    """The report as JSON (``--json``); a benchmark's carries its command, its seed and the machine's report."""
    document = report_dict(report, {"command": plan.command} if plan is not None else {})
    if plan is not None:
        document["seed"] = plan.seed
    if machine is not None:
        document["machine"] = report_dict(machine)
    return json.dumps(document, indent=2, allow_nan=False, default=_jsonable)


def report_dict(report: Report, first: dict | None = None) -> dict:
    """A report as JSON-ready data: its status, counts, each finding in words and as its note, and the
    details (after ``first``)."""
    return {"kind": report.kind, "status": report.status, "counts": report.counts(),
            "findings": [finding_dict(f) for f in report.findings], **(first or {}), **dict(report.details)}


def reading(finding: Finding) -> str:
    """What was read or measured, and where: the finding's note in words."""
    return word(finding.note)


def finding_dict(finding: Finding) -> dict:
    """A finding as JSON: its check, title, status, words, and its note (``code`` and ``data``)."""
    return {"check": finding.check, "title": TITLES[finding.check], "status": finding.status,
            "reading": reading(finding), "why": WHY[finding.check], "fix": fix(finding), "code": finding.note.code,
            "data": finding.data}


def finding_lines(finding: Finding, *, detail: bool = True) -> list[str]:
    """The verdict line; for a warning or failure also why it matters and the fix (with ``detail``)."""
    style = _STYLE[finding.status]
    lines = [f"[{style}]{finding.status.upper():<7}[/{style}] [bold]{markup(TITLES[finding.check])}[/bold]: "
             f"{markup(reading(finding))}"]
    if detail and finding.status in ("warn", "fail"):
        lines.append(f"        why: {markup(WHY[finding.check])}")
        if remedy := fix(finding):
            lines.append(f"        fix: {markup(remedy)}")
    return lines


def overall_line(report: Report) -> str:
    """``Overall: WARN (1 warn, 2 unknown, 7 ok)``: the worst status, and how many of each."""
    counts = report.counts()
    parts = ", ".join(f"{counts[s]} {s}" for s in reversed(STATUSES) if counts[s])
    style = _STYLE[report.status]
    return f"Overall: [{style}]{report.status.upper()}[/{style}] ({parts})"


def machine_lines(report: Report) -> list[str]:
    """The machine's report as rich-markup lines: a header naming the machine, then every finding."""
    env = report.details.get("environment", {})
    online = env.get("online_cpus")
    cpus = (len(online) if isinstance(online, list) else 0) or env.get("logical_cpus")
    header = " · ".join(str(x) for x in (env.get("host"), env.get("os"), env.get("kernel"),
                                         env.get("cpu_model"), f"{cpus} CPUs" if cpus else "") if x)
    lines = [f"[bold]pairbench doctor[/bold]{' · ' + markup(header) if header else ''}", ""]
    for finding in report.findings:
        lines += finding_lines(finding)
    return lines + ["", overall_line(report)]


def benchmark_lines(report: Report, machine: Report, plan: ValidationPlan) -> list[str]:
    """A benchmark's report as rich-markup lines: how it ran, the machine in brief, every finding."""
    details = report.details
    lines = [f"[bold]pairbench doctor[/bold] · {markup(plan.command)}"]
    counts = details.get("iteration_counts")
    if plan.iterated and counts:
        lines.append(f"{plan.runs} runs at each of {', '.join(map(str, counts))} iterations, "
                     f"interleaved in random order (seed {plan.seed}); the samples' shape is "
                     f"judged at {details['judged_at_iterations']} iterations.")
    elif counts:
        lines.append(f"{plan.runs} runs after {plan.warmup} warmup (seed {plan.seed}).")
    troubles = [f for f in machine.findings if f.status in ("warn", "fail")]
    if troubles:
        lines += ["", "Machine (run `pairbench doctor` for why and how to fix):"]
        for finding in troubles:
            lines += ["  " + line for line in finding_lines(finding, detail=False)]
    lines += ["", "Benchmark:"]
    for finding in report.findings:
        lines += finding_lines(finding)
    return lines + ["", overall_line(report)]


def _jsonable(value):
    """numpy scalars in the details, as JSON values."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
