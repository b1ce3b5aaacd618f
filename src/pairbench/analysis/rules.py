"""The rules that turn what was measured into notes, each written once.

* **RSS floor**: a median max RSS within ``RSS_FLOOR_MARGIN`` of the
  executor's floor is "at the floor": the command's own peak may be anywhere
  below (RSS moves by tens of KiB between identical runs, so 5% is a margin
  no real difference hides in). One far below the floor is the process's
  own: the floor did not apply to it.
* **Involuntary context switches**: switches beyond the quietest sample's, at
  >= ``SWITCH_RATE_WARN`` per second of sampling and in at least
  ``SWITCH_SAMPLES_MIN`` (and ``SWITCH_SHARE_MIN``) of the samples: each gave
  the CPU to another task for about a scheduler slice (0.75-3 ms), so 10/s
  costs up to 1-3% of the time, unevenly.
* **CPU-bound or not**: a sample no other task interrupted (no involuntary
  switch) that spends over ``OFF_CPU_SHARE`` of its wall time off the CPU,
  and over ``OFF_CPU_MIN_NS`` or over half of it, was sleeping, reading, or
  waiting for a child or a lock: its CPU time leaves that time out. Spawning
  and reaping a command costs about 0.4-0.9 ms off its CPU (41% of `true`'s
  wall time), and Python's start-up 2-3 ms (20%), measured on the 2-CPU test
  machine: hence the floor, and the half. That share is read only from enough
  such samples, at least ``MIN_UNSWITCHED`` and ``MIN_UNSWITCHED_SHARE`` of
  them: under load nearly every sample of a CPU-bound program is interrupted,
  and the few that are not still waited for a CPU after they started (a spin
  of 8 ms at load 10 showed 0.63 of its wall time off the CPU in the 3 of 20
  samples no task interrupted, 0.36-0.42 in 13-16 of 426-654), which is the
  machine's time, not the program's. Fewer, and the time off the CPU is
  unknown, as when every sample was interrupted. A median CPU time over
  ``THREADS_RATIO`` times the wall time means several threads or processes ran
  at once: CPU time adds them up.
* **The A/A self-check**: a copy of the baseline that is found faster or
  slower means the machine's noise is not what the method assumes.
* **The machine**: of the environment checks (``environment.checks``), only
  what bears on *these* numbers becomes a note: conditions of the moment
  (load, memory, power, pausing, a coarse clock), one each, and the untuned
  settings (governor, turbo, SMT, ASLR, a VM) together in one. Advice that
  holds on nearly every machine stays in ``pairbench doctor``.

The doctor's benchmark checks use the same functions, so a table's "≤" and
the doctor's finding always agree. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pairbench.environment.findings import Finding
from pairbench.frozen import frozen
from pairbench.model import COUNT_METRICS, Run
from pairbench.notes import Note, Subject
from pairbench.stats._order import middle  # np.median's, without loading numpy.ma while sampling

RSS_FLOOR_MARGIN = 1.05
SWITCH_RATE_WARN = 10.0
SWITCH_SAMPLES_MIN, SWITCH_SHARE_MIN = 2, 0.10
OFF_CPU_SHARE, OFF_CPU_MIN_NS = 0.25, 2_000_000
MIN_UNSWITCHED, MIN_UNSWITCHED_SHARE = 5, 0.25
THREADS_RATIO = 1.10

MOMENT_CHECKS = ("load", "memory", "power", "virtualization", "clock")
TUNING_CHECKS = ("governor", "turbo", "smt", "aslr", "virtualization")


# --------------------------------------------------------------------------- what was recorded


RESOURCES = ("user_ns", "sys_ns", "max_rss_kib", "voluntary_cs", "involuntary_cs")


def recorded_resources(environment: Mapping) -> frozenset[str]:
    """The resource columns (``RESOURCES``) whose values were measured, so that one never recorded
    is shown as unknown, not as a measured zero: every one for pairbench's own runs; for an import,
    those the tool recorded (``environment.import.recorded``). An import document written before it
    said so (pairbench 0.2.0 kept no CPU times and zeros for what was missing), or anything
    malformed there, counts as nothing recorded."""
    imported = environment.get("import")
    if not isinstance(imported, Mapping):
        return frozenset(RESOURCES)
    recorded = imported.get("recorded")
    if not isinstance(recorded, (list, tuple)):
        return frozenset()
    return frozenset(column for column in RESOURCES if column in recorded)


# --------------------------------------------------------------------------- memory


def executor_rss_floor_kib(run: Run) -> int | None:
    """The max RSS floor of what measured ``run`` (None: none, or unknown)."""
    return (run.executor.rss_floor_kib or None) if run.executor else None


def timer_step(environment: Mapping) -> int | None:
    """The measured timer step in the machine metadata, if it is a positive integer."""
    timer = environment.get("timer")
    step = timer.get("measured_resolution_ns") if isinstance(timer, Mapping) else None
    return step if isinstance(step, int) and not isinstance(step, bool) and step > 0 else None


def at_rss_floor(rss_kib: float, floor_kib: int | None) -> bool:
    """Whether a max RSS reading is at the executor's floor (so the true peak is at most it): within
    the margin of it. A reading well below the floor shows that it did not apply to that process (a
    worker started by a small keeper process, not by pairbench itself): it is a measurement."""
    return bool(floor_kib) and floor_kib / RSS_FLOOR_MARGIN <= rss_kib <= RSS_FLOOR_MARGIN * floor_kib


def rss_floor_note(sides_at_floor: Sequence[str], floor_kib: int) -> Note | None:
    """One note naming every side whose max RSS is at the floor (None if there is none)."""
    if not sides_at_floor:
        return None
    return Note("rss-at-floor", {"sides": list(sides_at_floor), "floor_kib": floor_kib})


# --------------------------------------------------------------------------- interference


def involuntary_excess(switches: Sequence[int], wall_ns: Sequence[float]) -> tuple[float, int]:
    """Involuntary switches per second beyond the quietest sample's, and how many samples had more.

    The quietest sample's count is the command's own (a process gets one at
    exit on many kernels; a multi-threaded one preempts itself); the rest were
    taken by other tasks.
    """
    counts = np.asarray(switches, dtype=np.float64)
    seconds = float(np.sum(wall_ns)) / 1e9
    if counts.size == 0 or seconds <= 0:
        return 0.0, 0
    excess = counts - counts.min()
    return float(excess.sum() / seconds), int(np.count_nonzero(excess))


def switches_disturbing(rate: float, affected: int, n: int) -> bool:
    """Whether involuntary switches at ``rate`` in ``affected`` of ``n`` samples bear on the times."""
    return rate >= SWITCH_RATE_WARN and affected >= max(SWITCH_SAMPLES_MIN, SWITCH_SHARE_MIN * n)


def switches_note(switches: Sequence[int], wall_ns: Sequence[float]) -> Note | None:
    """The note on a series whose samples other tasks interrupted, else None (needs 2 samples)."""
    if len(switches) < 2:
        return None
    rate, affected = involuntary_excess(switches, wall_ns)
    if not switches_disturbing(rate, affected, len(switches)):
        return None
    return Note("involuntary-switches", {"rate": rate, "affected": affected, "n": len(switches)})


# --------------------------------------------------------------------------- CPU-bound or not


@frozen
class CpuUse:
    """How a series spends its wall time: ``off_cpu_share``/``off_cpu_ns``, the median share and time
    off the CPU in the samples no other task interrupted (None when too few were not: fewer than
    ``MIN_UNSWITCHED``, or than ``MIN_UNSWITCHED_SHARE`` of the samples),
    ``cpu_over_wall`` the median CPU time over wall time, ``unswitched`` of ``n`` samples; ``waits``:
    the samples gave up the CPU themselves (``_gives_up_the_cpu``)."""

    off_cpu_share: float | None
    off_cpu_ns: float | None
    cpu_over_wall: float
    unswitched: int
    n: int
    waits: bool = False

    @property
    def kind(self) -> str:
        """"threads" (CPU time adds up what ran at once), "off-cpu" (sleeping, reading, waiting),
        "cpu-bound", "waits" (nearly every sample was interrupted, and each gave up the CPU itself: it
        sleeps, reads or waits for a child) or "unknown" (nearly every sample was interrupted: its time
        off the CPU is not its own)."""
        if self.cpu_over_wall > THREADS_RATIO:
            return "threads"
        if self.off_cpu_share is None:
            return "waits" if self.waits else "unknown"
        if self.off_cpu_share > OFF_CPU_SHARE and (self.off_cpu_ns > OFF_CPU_MIN_NS or self.off_cpu_share > 0.5):
            return "off-cpu"
        return "cpu-bound"


def cpu_use(wall_ns, cpu_ns, involuntary, voluntary=None) -> CpuUse | None:
    """The ``CpuUse`` of samples' wall time, CPU time (user + system), involuntary and (when recorded)
    voluntary switches; None without samples or CPU times."""
    wall, cpu = np.asarray(wall_ns, dtype=np.float64), np.asarray(cpu_ns, dtype=np.float64)
    switches = np.asarray(involuntary)
    if wall.size == 0 or not np.any(cpu > 0) or np.any(wall <= 0):
        return None
    quiet = switches == 0  # with one switch, the sample may have waited a whole time slice
    off = wall[quiet] - cpu[quiet]
    enough = quiet.sum() >= max(MIN_UNSWITCHED, MIN_UNSWITCHED_SHARE * wall.size)
    return CpuUse(middle(off / wall[quiet]) if enough else None,
                  middle(off) if enough else None,
                  middle(cpu / wall), int(quiet.sum()), int(wall.size),
                  voluntary is not None and _gives_up_the_cpu(np.asarray(voluntary), switches))


def _gives_up_the_cpu(voluntary: np.ndarray, involuntary: np.ndarray) -> bool:
    """Whether samples wait by themselves: more voluntary switches than a start costs, and more than
    other tasks forced on them. Measured on this 2-CPU machine beside busy loops (2026-11-27): a
    CPU-bound C program and a CPU-bound Python command gave 1 voluntary switch a sample (their start)
    against 7-10 involuntary ones; a 10 ms nanosleep gave 2 against 1; ``sh -c`` around the C
    program 4 against 10 (the shell's wait for its child is not waiting of the tree). A tie counts as
    waiting: the same nanosleep beside three test workers gave 2 against 2, and wall time, never wrong
    about how long a benchmark takes, is the safe side of a doubt."""
    given_up, taken = middle(voluntary), middle(involuntary)
    return given_up >= 2 and given_up >= taken


CHOICE_ROUNDS = 10
"""``--metric auto`` chooses from the first this many rounds both sides measured: the fewest ``compare``
takes (its --min-runs), and fewer than any verdict at alpha 0.01 needs (11)."""


def is_recheck(rounds: int) -> bool:
    """Whether a choice of CPU time is checked again after ``rounds`` rounds both sides measured: at
    20, 40, 80, ... (each doubling). Ten rounds can miss a benchmark that waits: on a busy machine its
    sleep's wake-up is often interrupted too (a 10 ms nanosleep beside three test workers gave 2
    voluntary switches a sample against 2-3 involuntary ones in its first rounds, and the waiting showed
    only over 408). Only CPU time is checked again, and only wall time can replace it: wall time is
    never wrong about how long a benchmark takes, only noisier."""
    blocks, rest = divmod(rounds, CHOICE_ROUNDS)
    return rest == 0 and blocks >= 2 and blocks & (blocks - 1) == 0


def chosen_metric(use: CpuUse | None) -> str:
    """What ``--metric auto`` decides on, from the ``cpu_use`` of the first ``CHOICE_ROUNDS`` rounds
    (both sides' samples): CPU time unless the samples show the benchmark waiting or running threads,
    or recorded no CPU time. A benchmark whose every sample other tasks interrupted counts as CPU-bound,
    unless its samples also gave up the CPU themselves (a sleep, a read, a wait for a child: on a busy
    machine even a waiting command is interrupted in its short bursts of work)."""
    if use is None or use.kind in ("off-cpu", "threads", "waits"):
        return "wall"
    return "cpu"


# --------------------------------------------------------------------------- the self-check


def self_check_note(verdict: str, candidate: str, baseline: str) -> Note | None:
    """The note on an A/A self-check that found a change (its verdict is faster or slower)."""
    if verdict not in ("slower", "faster"):
        return None
    return Note("self-check-found-change", {"verdict": verdict},
                Subject(side=candidate, baseline=baseline))


# --------------------------------------------------------------------------- the machine


def machine_notes(environment: Mapping, kind: str, n_sides: int, metric: str | None = None) -> list[Note]:
    """Notes on the machine a run or comparison was measured on, from its stored metadata.

    ``kind`` ("run" or "compare") and ``n_sides`` say what the noise does to
    the numbers (interleaved rounds cancel what the sides share); ``metric``, when the
    verdicts are on a count (``--metric instructions``), that load does not move them.
    [] when nothing bears on the numbers.
    """
    # imported here: after the last sample, not with the stopping rule before the first
    from pairbench.environment.checks import evaluate

    findings = {f.check: f for f in evaluate(environment)}
    effect = {"kind": kind, "sides": n_sides, **({"metric": metric} if metric in COUNT_METRICS else {})}
    notes = [note for check in MOMENT_CHECKS if (note := _moment_note(findings[check], effect))]
    untuned = [_tuning_item(findings[c]) for c in TUNING_CHECKS
               if findings[c].status == "warn" and not _tuned_anyway(findings[c])]
    if untuned:
        notes.append(Note("machine-untuned", {"items": untuned}))
    return notes


def _moment_note(f: Finding, effect: dict) -> Note | None:
    """A note for a condition of the moment that is not ok, else None."""
    data = f.data
    if f.check == "load" and f.status in ("warn", "fail"):
        busiest = (data.get("busiest_processes") or [None])[0]
        return Note("machine-busy", {
            **effect, "load_average": (data.get("load_average") or [None])[0],
            "busy_cpus_now": data.get("busy_cpus_now"), "cpus": data.get("cpus"),
            "busiest": {"name": busiest["name"], "cpu_percent": busiest["cpu_percent"]} if busiest else None})
    finding = {"finding": {"code": f.note.code, "data": dict(f.note.data)}}
    if f.check == "memory" and f.status in ("warn", "fail"):
        return Note("machine-memory-short", {**effect, **finding})
    if f.check == "power" and f.status == "warn":
        return Note("machine-power-limited", {**effect, **finding})
    if f.check == "virtualization" and (f.status == "fail" or _paused(data)):
        now = f.status == "fail" or bool(data.get("nr_throttled_now"))
        return Note("machine-paused", {**effect, **finding, "paused_now": now})
    if f.check == "clock" and f.status == "fail":
        return Note("machine-clock-coarse", {**effect, **finding})
    return None


def _paused(data: Mapping) -> bool:
    """Steal time, cgroup throttling in the activity window, or a quota below the CPUs pairbench
    may use: the benchmark was, or can be, paused.

    ``nr_throttled`` alone counts since the cgroup was created, so it says
    nothing about this run; ``nr_throttled_now`` is the count over the window.
    """
    quota, cpus = data.get("quota_cpus"), data.get("cpus")
    return bool((data.get("steal_percent") or 0) >= 1 or data.get("nr_throttled_now")
                or (quota is not None and cpus and quota < cpus))


def _tuning_item(f: Finding) -> dict:
    """One untuned setting, as data: ``{"check": "governor", "governors": ["powersave"]}``."""
    if f.check == "governor":
        return {"check": "governor", "governors": sorted(f.data.get("governors", {}))}
    return {"check": f.check}


def _tuned_anyway(f: Finding) -> bool:
    """A warning that is not about tuning: the virtualization check warns on a bare-metal quota too."""
    return f.check == "virtualization" and not f.data.get("virtual_machine")
