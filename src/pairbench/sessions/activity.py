"""The machine's activity, read between a measuring command's samples rather than before them.

The "right now" window (``environment.activity``) spans ``ACTIVITY_WINDOW_S``
from the moment the command began. Read before the first sample, it made that
sample wait for whatever of the window the command's loading had not filled
(most of it on a quiet machine). :class:`ActivityReading` instead reads it at the
first gap between samples after it has passed, or after the last sample (what
passed of it, without waiting): the
samples then taken are left out of the machine's load as pairbench itself is
(the spawner and the commands it waited for are pairbench's children). It is a
sink of the sampler, so it reads only between samples, never beside one.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench import environment
from pairbench.environment.activity import ActivityWindow
from pairbench.measure.sampler import Measured, Sink


def activity_pending(metadata: Mapping) -> bool:
    """Whether ``metadata`` (a command's machine metadata) leaves its activity to be read later
    (``collect_environment(activity_later=True)``: ``activity`` present and None)."""
    return "activity" in metadata and metadata["activity"] is None


class ActivityReading(Sink):
    """Reads ``window`` at the first measured sample after it has passed (:meth:`on_sample`), or at
    :meth:`finish`, after the last sample, waiting for what is left of it then. Not at a warmup
    sample: a compare loads what follows its samples in a thread beside its warmup rounds, and a
    reading there waits for that thread at each of its hundreds of reads (33 ms instead of 3)."""

    def __init__(self, window: ActivityWindow):
        self.window = window
        self.activity: dict | None = None

    def on_sample(self, measured: Measured) -> None:
        """Between two samples: read the window if it has passed (no wait)."""
        if (self.activity is None and not measured.sample.warmup
                and self.window.elapsed_s() >= environment.ACTIVITY_WINDOW_S):
            self.activity = self.window.finish(environment.ACTIVITY_WINDOW_S)

    def finish(self, metadata: Mapping) -> dict:
        """``metadata`` with the activity read: now, without waiting, if no sample came after the
        window passed (a command shorter than the window reads what passed of it)."""
        if self.activity is None:
            self.activity = self.window.finish(min(environment.ACTIVITY_WINDOW_S, self.window.elapsed_s()))
        return {**metadata, "activity": self.activity}
