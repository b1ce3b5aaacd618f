"""Loading the statistics in the background while a measuring command takes its first samples.

Importing scipy.stats costs about 0.6 s, more than everything else a ``compare``
does before its first sample. Nothing needs it until the stopping rule first
looks at the samples, and the analysis after the last one. So a measuring
command calls :func:`start` once its first round has ended (``bench``: once the
first benchmark's validation samples are taken, which are judged after its
rounds): a daemon thread
imports :data:`MODULES` under ``SCHED_BATCH`` where the OS has it (its fair share
of a CPU, but it never preempts a command that wakes up). The stopping rule
looks only once :func:`ready` (an anytime-valid rule may skip looks: the
verdict at any round is valid), and the analysis calls :func:`wait` first.

Not ``SCHED_IDLE``: a thread there runs only on a CPU nothing else wants, so on
a machine whose every CPU is busy (the command on one, other work on the rest)
it starved for seconds, and the rule could not look meanwhile: under phased
background load a verdict took a median 55 rounds where the same samples
decided in 25 (``benchmarks/RESULTS.md``, issue 15). An unprivileged thread
cannot leave ``SCHED_IDLE`` again (``RLIMIT_NICE``), so it cannot be raised
when it starves. With randomized pairs a thread that takes CPU time from some
rounds adds noise to both sides alike, not a bias.

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
import sys
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

SWITCH_INTERVAL_S = 0.0002
"""How long this thread may hold the GIL while the main thread waits for it (Python's default: 5 ms, as
long as several samples of a microbenchmark)."""

_loading: threading.Thread | None = None
_starting = threading.Lock()  # bench's lanes (--jobs) may start it from several threads


def start(modules: tuple[str, ...] = MODULES) -> None:
    """Import ``modules`` in a background thread, once per process; an import error is left for
    the main thread's own import to raise."""
    global _loading
    with _starting:
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
    _yield_to_wakeups()
    usual = sys.getswitchinterval()
    sys.setswitchinterval(min(usual, SWITCH_INTERVAL_S))
    try:
        for name in modules:
            with contextlib.suppress(Exception):  # the main thread's import says what went wrong
                importlib.import_module(name)
    finally:
        sys.setswitchinterval(usual)


def _yield_to_wakeups() -> None:
    """This thread takes its fair share of a CPU but never preempts a thread that wakes up
    (Linux: ``SCHED_BATCH``, a thread's own scheduling policy)."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))

