"""The doctor's findings as footnotes for ``run``, ``compare`` and ``show``.

Pure functions of what a result document stores, so ``show`` can recompute
them: :func:`environment_footnotes` from the run's environment metadata,
:func:`sample_footnotes` from its samples. They never block a measurement;
the CLI stores them in the run's ``warnings`` and the report prints them.

Only what bears on *these* numbers becomes a footnote: conditions of the
moment (load, memory, battery, steal, a coarse clock) one line each, and the
machine's untuned settings (governor, turbo, SMT, ASLR, a VM) in one line that
points to ``pairbench doctor``. Advice that holds on nearly every machine
(isolated CPUs, perf counters) and counters since boot (thermal) stay in
``pairbench doctor``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pairbench.analysis import executor_rss_floor_kib
from pairbench.doctor import samplechecks
from pairbench.doctor.checks import evaluate
from pairbench.doctor.findings import Finding
from pairbench.model import Run
from pairbench.units import format_kib, format_rate

MOMENT_CHECKS = ("load", "memory", "power", "virtualization", "clock")
TUNING_CHECKS = ("governor", "turbo", "smt", "aslr", "virtualization")
_TUNING_WORDS = {
    "governor": lambda f: "governor " + "/".join(sorted(f.data.get("governors", {}))),
    "turbo": lambda f: "turbo boost on",
    "smt": lambda f: "SMT siblings active",
    "aslr": lambda f: "ASLR not fully randomized",
    "virtualization": lambda f: "a virtual machine",
}
_TUNED_UNLESS = {"virtualization": lambda f: not f.data.get("virtual_machine")}


def consequence(kind: str, n_variants: int) -> str:
    """What machine noise does to this kind of measurement."""
    if kind == "compare":
        return "compare's interleaved rounds cancel what the variants share, but its intervals widen"
    if n_variants > 1:
        return ("the commands were interleaved, so they shared it alike, but each summary "
                "absorbs it")
    return "a single command's summary absorbs all of it (compare's interleaving would cancel what variants share)"


def environment_footnotes(environment: Mapping, kind: str, n_variants: int) -> list[str]:
    """Footnotes for a run or comparison measured in ``environment`` (its stored metadata).

    ``kind`` is "run" or "compare"; ``n_variants`` the number of commands.
    Returns [] when nothing bears on the numbers.
    """
    findings = {f.check: f for f in evaluate(environment)}
    notes = []
    for check in MOMENT_CHECKS:
        finding = findings[check]
        line = _moment_line(finding)
        if line:
            notes.append(f"{line}; {consequence(kind, n_variants)}")
    untuned = [_TUNING_WORDS[c](findings[c]) for c in TUNING_CHECKS
               if findings[c].status == "warn" and not _TUNED_UNLESS.get(c, lambda f: False)(findings[c])]
    if untuned:
        notes.append(f"this machine is not set up for benchmarking ({', '.join(untuned)}): "
                     "`pairbench doctor` says what each costs and how to fix it")
    return notes


def _moment_line(f: Finding) -> str:
    """One line for a condition of the moment that is not ok, else ''."""
    data = f.data
    if f.check == "load" and f.status in ("warn", "fail"):
        busiest = data.get("busiest_processes") or []
        who = f" (busiest: {busiest[0]['name']} {busiest[0]['cpu_percent']:.0f}%)" if busiest else ""
        return f"{_load_level(data)} on {data.get('cpus')} CPUs{who}: timings will be noisy"
    if f.check == "memory" and f.status in ("warn", "fail"):
        return f"memory is short ({f.reading}): samples that wait for memory are slow and erratic"
    if f.check == "power" and f.status == "warn":
        return f"{f.reading}: clock speeds follow the power limits, so timings drift"
    if f.check == "virtualization" and (f.status == "fail" or _paused(data)):
        how = "paused" if f.status == "fail" or data.get("nr_throttled_now") else "can pause"
        return f"{f.reading}: the hypervisor or the cgroup quota {how} the benchmark"
    if f.check == "clock" and f.status == "fail":
        return f"{f.reading}: short samples are quantized"
    return ""


def _load_level(data: Mapping) -> str:
    """The figure that raised the load finding: the 1-minute load average or the CPUs busy just now."""
    load = (data.get("load_average") or [None])[0]
    busy = data.get("busy_cpus_now")
    if busy is not None and (load is None or busy > load):
        return f"{busy:.1f} CPUs busy just now" + (f" (load average {load:.1f})" if load is not None else "")
    return f"load average {load:.1f}"


def _paused(data: Mapping) -> bool:
    """Steal time, cgroup throttling in the activity window, or a quota below the CPUs pairbench
    may use: the benchmark was, or can be, paused.

    ``nr_throttled`` alone counts since the cgroup was created, so it says
    nothing about this run; ``nr_throttled_now`` is the count over the window.
    """
    quota, cpus = data.get("quota_cpus"), data.get("cpus")
    return bool((data.get("steal_percent") or 0) >= 1 or data.get("nr_throttled_now")
                or (quota is not None and cpus and quota < cpus))


def sample_footnotes(run: Run, rss_floor_kib: int | None = None) -> list[str]:
    """Per-variant findings from the samples: involuntary context switches, max RSS at the floor.

    The floor is ``rss_floor_kib``, else ``run.environment["executor"]["rss_floor_kib"]``
    (the executor's ``rss_floor_kib()`` stored at measuring time); without
    one the RSS note is skipped.
    """
    environment = run.environment or {}
    legacy = environment.get("rss_floor_kib")  # where the first documents kept it
    floor = (rss_floor_kib or executor_rss_floor_kib(environment)
             or (legacy if isinstance(legacy, int) and not isinstance(legacy, bool) else 0))
    notes = []
    at_floor = []
    for variant in run.variants:
        measured = variant.samples.measured()
        if len(measured) < 2:
            continue
        rate, affected = samplechecks.involuntary_excess(measured["involuntary_cs"], measured["wall_ns"])
        if samplechecks.switches_disturbing(rate, affected, len(measured)):
            notes.append(
                f"{variant.name}: {format_rate(rate)} involuntary context switches beyond its "
                f"quietest sample's, in {affected} of {len(measured)} samples: other tasks took "
                "its CPU mid-sample, and those samples include their time slices")
        rss = float(np.median(measured["max_rss_kib"]))
        if floor and 0 < rss <= floor * samplechecks.FLOOR_MARGIN:
            at_floor.append(variant.name)
    if at_floor:
        notes.append(
            f"max RSS of {', '.join(at_floor)} is at the smallest value the executor can report "
            f"({format_kib(floor)}, the size of the process that spawns commands, which Linux "
            "charges to a child at exec): the commands' own peak is at most this")
    return notes
