"""Loading the statistics in the background while a measuring command takes its first samples.

Importing scipy.stats costs about 0.6 s, more than everything else a ``compare``
does before its first sample. Nothing needs it until the stopping rule first
looks at the samples, and the analysis after the last one. So a measuring
command calls :func:`start` once its first round has ended: a daemon thread at the
lowest scheduling priority (``SCHED_IDLE``, where the OS has it: it runs only
on a CPU nothing else wants, so it takes no CPU time from a command being
measured) imports :data:`MODULES`. The stopping rule looks only once
:func:`ready` (an anytime-valid rule may skip looks: the verdict at any round
is valid), and the analysis calls :func:`wait` first.

The main thread never imports these modules while the thread does (it waits,
or checks :func:`ready`), and by the end of the first round it has imported
what sampling uses, so two threads never import at once: a Ctrl-C landing in
one thread's wait for a module the other is importing can break the import
lock for good (a hang, seen in a stress test of Ctrl-C at random moments).
Process-wide, as imports are. Without :func:`start`, :func:`ready` is true and
:func:`wait` returns at once."""

from __future__ import annotations

import contextlib
import importlib
import os
import threading

MODULES = (
    "pairbench.analysis.comparison",
    "pairbench.stats.descriptive",
    "pairbench.stats.timeseries",
    "pairbench.stats.ranks",
    "pairbench.stats.paired",
    "pairbench.stats.modality",
    "pairbench.stats.shift",
    "pairbench.stats.multiple",
    "pairbench.report.text",
    "pairbench.report.jsonfile",
)
"""What the stopping rule, ``analyse`` and the terminal report import (``analyse`` reaches the
``stats`` submodules through the package's lazy names)."""

_loading: threading.Thread | None = None


def start(modules: tuple[str, ...] = MODULES) -> None:
    """Import ``modules`` in a background thread, once per process; an import error is left for
    the main thread's own import to raise."""
    global _loading
    if _loading is not None:
        return
    _loading = threading.Thread(target=_import_all, args=(modules,), name="pairbench-preload", daemon=True)
    _loading.start()


def ready() -> bool:
    """True when nothing is being imported in the background (done, or never started)."""
    return _loading is None or not _loading.is_alive()


def wait() -> None:
    """Return when the background imports are done (at once if none were started)."""
    if _loading is not None:
        _loading.join()


def _import_all(modules: tuple[str, ...]) -> None:
    _lowest_priority()
    for name in modules:
        with contextlib.suppress(Exception):  # the main thread's import says what went wrong
            importlib.import_module(name)


def _lowest_priority() -> None:
    """This thread runs only on an otherwise idle CPU (Linux: a thread's own scheduling policy)."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

