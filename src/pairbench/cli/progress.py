"""Live progress while sampling: a redrawn line on a terminal, a plain line now and then otherwise.

The display is a sink of the sampler: it counts samples as they arrive and
rounds as they end, keeps each side's values for the medians it shows, and
(for ``compare``) asks the stopping rule for the current effects. It never
reads the sampler. Redraws are paced by ``clock`` (``time.monotonic``; tests
pass their own).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable

from pairbench.cli.app import Io
from pairbench.measure.sampler import Measured, RoundEnd, Sink
from pairbench.report.safe import visible
from pairbench.settings import Sampling
from pairbench.units import format_duration, format_percent

TTY_REDRAW_S = 0.2  # the terminal line is redrawn at most this often
PLAIN_INTERVAL_S = 5.0


class Progress(Sink):
    """Where sampling stands, drawn by ``draw(line, share)`` at most every ``interval_s`` (the
    first time at once when ``IMMEDIATE``, else one interval after the start)."""

    IMMEDIATE = True

    def __init__(self, sampling: Sampling, sides: int, *, effects: Callable[[], list] | None = None,
                 clock: Callable[[], float] = time.monotonic, interval_s: float = PLAIN_INTERVAL_S,
                 label: str = ""):
        self.sampling, self.effects, self.clock, self.interval_s = sampling, effects, clock, interval_s
        self.label = label  # what is being measured, before the line ("[2/9] sort[n=10]"); bench's
        self.rounds = self.samples = self.elapsed_ns = 0
        self.warming_up = sampling.warmup > 0
        self.values: list[list[float]] = [[] for _ in range(sides)]
        self._last: float | None = None if self.IMMEDIATE else clock()

    def on_sample(self, measured: Measured) -> None:
        self.samples += 1
        sample = measured.sample
        self.elapsed_ns = max(self.elapsed_ns, sample.start_ns + sample.wall_ns)
        if not sample.warmup and sample.ok:
            self.values[measured.side].append(measured.value)
        self._maybe_draw()

    def on_round(self, end: RoundEnd) -> None:
        self.rounds, self.warming_up = end.rounds, end.warmup
        self.elapsed_ns = max(self.elapsed_ns, end.elapsed_ns)
        self._maybe_draw()

    def _maybe_draw(self) -> None:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval_s:
            return
        self._last = now
        self.draw(self.status_line(), self.done_share())

    def draw(self, line: str, share: float | None) -> None:
        raise NotImplementedError

    def done_share(self) -> float | None:
        """How far sampling has come, 0 to 1: rounds of --runs, else time of the budget; None if unknown."""
        if self.sampling.runs is not None:
            return min(self.rounds / self.sampling.runs, 1.0)
        if self.sampling.max_time_ns:
            return min(self.elapsed_ns / self.sampling.max_time_ns, 1.0)
        return None

    def status_line(self) -> str:
        """One line: rounds, samples, elapsed time, and compare's effects or each side's median. The
        label is a benchmark's name, a harness's or a worker's words: shown with its control
        characters made visible, like every other name."""
        line = self._status()
        return f"{visible(self.label)}  {line}" if self.label else line

    def _status(self) -> str:
        runs = self.sampling.runs
        rounds = f"{self.rounds}/{runs} rounds" if runs is not None else f"{self.rounds} rounds"
        phase = "warming up" if self.warming_up else rounds
        elapsed = format_duration(self.elapsed_ns, digits=3)
        if self.effects is not None:
            return f"{phase}, {elapsed} elapsed  {effects_text(self.effects())}"
        medians = [format_duration(statistics.median(v)) for v in self.values if v]
        median_text = ("median " + " | ".join(medians)) if medians else ""
        return f"{phase}, {self.samples} samples, {elapsed} elapsed  {median_text}".rstrip()


def effects_text(effects: list) -> str:
    """The latest effect of each comparison: "effect +3.1% [+1.2%, +5.0%]"."""
    return " | ".join("effect: collecting rounds" if e is None else
                      f"effect {format_percent(e.estimate)} [{format_percent(e.low)}, {format_percent(e.high)}]"
                      for e in effects)


class PlainProgress(Progress):
    """Progress as a plain line every few seconds (standard error is not a terminal)."""

    IMMEDIATE = False

    def __init__(self, io: Io, sampling: Sampling, sides: int, **options):
        super().__init__(sampling, sides, **options)
        self.io = io

    def draw(self, line: str, share: float | None) -> None:
        self.io.err(line)


class TtyProgress(Progress):
    """A live progress line on a terminal: a bar, rounds, elapsed time, current medians or effect."""

    def __init__(self, io: Io, sampling: Sampling, sides: int, **options):
        from rich.console import Console

        super().__init__(sampling, sides, interval_s=TTY_REDRAW_S, **options)
        self._console = Console(file=io.stderr, highlight=False)

    def draw(self, line: str, share: float | None) -> None:
        if share is not None:
            filled = int(share * 20)
            line = f"[{'█' * filled}{'·' * (20 - filled)}] " + line
        self._console.file.write("\r\x1b[2K" + line[: max(self._console.width - 1, 20)])
        self._console.file.flush()

    def close(self) -> None:
        self._console.file.write("\r\x1b[2K")
        self._console.file.flush()


def progress_for(io: Io, sampling: Sampling, sides: int, *, quiet: bool,
                 effects: Callable[[], list] | None = None, clock: Callable[[], float] = time.monotonic,
                 label: str = "") -> Progress | None:
    """The progress display for ``io``'s standard error, or None with ``--quiet``."""
    if quiet:
        return None
    kind = TtyProgress if hasattr(io.stderr, "isatty") and io.stderr.isatty() else PlainProgress
    return kind(io, sampling, sides, effects=effects, clock=clock, label=label)


def close_progress(progress: Progress | None) -> None:
    if isinstance(progress, TtyProgress):
        progress.close()


class Displays:
    """A measuring session's progress on standard error (``sessions.result.ProgressFactory``): a display
    for each benchmark as it starts, labelled ``[K/N] name`` in a suite; one at a time, the last closed
    when the next starts and at the end (``with``), or shared under a lock when jobs measure at once."""

    def __init__(self, io: Io, settings, clock: Callable[[], float] = time.monotonic):
        self.io, self.settings, self.clock = io, settings, clock
        workers = settings.workers
        self.sides = 2 if workers is not None and workers.against else len(settings.commands) + settings.decision.self_check
        self.jobs = workers.jobs if workers is not None else 1
        self.shown: list[Progress | None] = []
        self.lock = threading.Lock()

    def __call__(self, b: int, label: str, count: int, rule) -> Sink | None:
        with self.lock:
            if self.jobs == 1:
                close_progress(self.shown[-1] if self.shown else None)
            display = progress_for(self.io, self.settings.sampling, self.sides, quiet=self.settings.outputs.quiet,
                                   effects=rule.current if rule else None, clock=self.clock,
                                   label=f"[{b + 1}/{count}] {label}" if label else "")
            self.shown.append(display)
        if self.jobs == 1 or display is None:
            return display
        from pairbench.measure.sampler import LockedSink

        return LockedSink(display, self.lock)

    def __enter__(self) -> Displays:
        return self

    def __exit__(self, *exc) -> None:
        close_progress(self.shown[-1] if self.shown else None)
