"""Live progress while sampling: a redrawn line on a terminal, a plain line now and then otherwise."""

from __future__ import annotations

import time

from pairbench.cli.app import Io
from pairbench.measure.plan import Progress, Sampler, SamplingPlan
from pairbench.units import format_duration

TTY_REDRAW_S = 0.2  # the terminal line is redrawn at most this often


class PlainProgress:
    """Progress as a plain line every few seconds (not a TTY)."""

    def __init__(self, io: Io, plan: SamplingPlan, detail=None, interval_s: float = 5.0):
        self.io, self.plan, self.detail, self.interval_s = io, plan, detail, interval_s
        self._last = time.monotonic()

    def __call__(self, progress: Progress, sampler: Sampler) -> None:
        now = time.monotonic()
        if now - self._last < self.interval_s:
            return
        self._last = now
        self.io.err(status_line(progress, sampler, self.detail))


class TtyProgress:
    """A live progress line on a terminal: a bar, rounds, elapsed time, current medians or effect."""

    def __init__(self, io: Io, plan: SamplingPlan, detail=None):
        from rich.console import Console

        self.io, self.plan, self.detail = io, plan, detail
        self._console = Console(file=io.stderr, highlight=False)
        self._last = 0.0

    def __call__(self, progress: Progress, sampler: Sampler) -> None:
        now = time.monotonic()
        if now - self._last < TTY_REDRAW_S:
            return
        self._last = now
        line = status_line(progress, sampler, self.detail)
        share = done_share(progress, self.plan)
        if share is not None:
            filled = int(share * 20)
            line = f"[{'█' * filled}{'·' * (20 - filled)}] " + line
        self._console.file.write("\r\x1b[2K" + line[: max(self._console.width - 1, 20)])
        self._console.file.flush()

    def close(self) -> None:
        self._console.file.write("\r\x1b[2K")
        self._console.file.flush()


def done_share(progress: Progress, plan: SamplingPlan) -> float | None:
    """How far sampling has come, 0 to 1: rounds of --runs, else time of the budget; None if unknown."""
    stop = plan.stop
    if stop.runs is not None:
        return min(progress.rounds / stop.runs, 1.0)
    if stop.max_time_ns:
        return min(progress.elapsed_ns / stop.max_time_ns, 1.0)
    return None


def status_line(progress: Progress, sampler: Sampler, detail=None) -> str:
    """One line: rounds, samples, elapsed time, and ``detail(sampler)`` or each variant's current median."""
    import numpy as np

    runs = sampler.plan.stop.runs
    rounds = f"{progress.rounds}/{runs} rounds" if runs is not None else f"{progress.rounds} rounds"
    phase = "warming up" if progress.warming_up else rounds
    elapsed = format_duration(progress.elapsed_ns, digits=3)
    extra = detail(sampler) if detail else ""
    if extra:
        return f"{phase}, {elapsed} elapsed  {extra}"
    medians = []
    for i in range(len(sampler.plan.commands)):
        wall = sampler.measured_wall_ns(i)
        if wall.size:
            medians.append(format_duration(float(np.median(wall))))
    median_text = ("median " + " | ".join(medians)) if medians else ""
    return f"{phase}, {progress.samples} samples, {elapsed} elapsed  {median_text}".rstrip()


def progress_printer(io: Io, quiet: bool, plan: SamplingPlan, detail=None):
    """The progress display for ``io``'s stderr, or None with ``--quiet``.

    ``detail`` is an optional callable, given the sampler, returning what to show
    instead of the medians (``compare`` shows the current effect and its interval).
    """
    if quiet:
        return None
    if hasattr(io.stderr, "isatty") and io.stderr.isatty():
        return TtyProgress(io, plan, detail)
    return PlainProgress(io, plan, detail)


def close_progress(progress) -> None:
    if hasattr(progress, "close"):
        progress.close()
