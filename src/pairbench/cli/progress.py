"""Live progress while sampling: a redrawn line on a terminal, a plain line now and then otherwise."""

from __future__ import annotations

import time

from pairbench.cli.app import Io
from pairbench.measure.plan import Progress, Sampler, SamplingPlan
from pairbench.units import format_duration


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
    """A live progress line on a terminal: rounds, elapsed time, current medians."""

    def __init__(self, io: Io, plan: SamplingPlan, detail=None):
        from rich.console import Console

        self.io, self.plan, self.detail = io, plan, detail
        self._console = Console(file=io.stderr, highlight=False)
        self._last = 0.0
        self._budget = plan.stop.max_time_ns

    def __call__(self, progress: Progress, sampler: Sampler) -> None:
        now = time.monotonic()
        if now - self._last < 0.2:
            return
        self._last = now
        line = status_line(progress, sampler, self.detail)
        if self._budget and self.plan.stop.adaptive:
            share = min(progress.elapsed_ns / self._budget, 1.0)
            filled = int(share * 20)
            line = f"[{'█' * filled}{'·' * (20 - filled)}] " + line
        self._console.file.write("\r\x1b[2K" + line[: max(self._console.width - 1, 20)])
        self._console.file.flush()

    def close(self) -> None:
        self._console.file.write("\r\x1b[2K")
        self._console.file.flush()


def status_line(progress: Progress, sampler: Sampler, detail=None) -> str:
    """One line: rounds, samples, elapsed time, and ``detail()`` or each variant's current median."""
    import numpy as np

    phase = "warming up" if progress.warming_up else f"{progress.rounds} rounds"
    elapsed = format_duration(progress.elapsed_ns, digits=3)
    extra = detail() if detail else ""
    if extra:
        return f"{phase}, {elapsed} elapsed  {extra}"
    phase = "warming up" if progress.warming_up else f"{progress.rounds} rounds"
    medians = []
    for i in range(len(sampler.plan.commands)):
        wall = sampler.measured_wall_ns(i)
        if wall.size:
            medians.append(format_duration(float(np.median(wall))))
    median_text = ("median " + " | ".join(medians)) if medians else ""
    elapsed = format_duration(progress.elapsed_ns, digits=3)
    return f"{phase}, {progress.samples} samples, {elapsed} elapsed  {median_text}".rstrip()


def progress_printer(io: Io, quiet: bool, plan: SamplingPlan, detail=None):
    """The progress display for ``io``'s stderr, or None with ``--quiet``.

    ``detail`` is an optional callable returning what to show instead of the
    medians (``compare`` shows the current effect and its interval).
    """
    if quiet:
        return None
    if hasattr(io.stderr, "isatty") and io.stderr.isatty():
        return TtyProgress(io, plan, detail)
    return PlainProgress(io, plan, detail)


def close_progress(progress) -> None:
    if hasattr(progress, "close"):
        progress.close()
