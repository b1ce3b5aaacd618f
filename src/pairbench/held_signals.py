"""Ctrl-C, SIGTERM and SIGHUP held while a measuring command starts, and delivered once it can end
as any interrupted run does.

A run interrupted while it samples keeps what it took: its journal becomes
the result (state ``interrupted``) and ``--cleanup`` runs. Before that point
(the code loading, the machine being read, the store being reached) an
interruption used to end pairbench at once, with no journal and no cleanup.
So the console script holds these signals from its first line (:func:`hold`):
the first one is remembered, and delivered (:func:`release`) where the
session can end cleanly, right after its journal exists and before
``--setup``; a command that does not measure releases them when it starts.
A second signal while one is held interrupts at once, so a start-up that
hangs can still be left with a second Ctrl-C.

Standard library only: the console script installs it before anything else
loads. Main thread only (signal handlers live there).
"""

from __future__ import annotations

import signal
import threading

HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_state: dict = {"holding": False, "pending": None, "previous": {}}


def hold() -> None:
    """From now until :func:`release`, hold SIGINT, SIGTERM and SIGHUP (not one ignored when
    pairbench started, as under ``nohup``): the first is remembered, a second interrupts at once."""
    if _state["holding"] or threading.current_thread() is not threading.main_thread():
        return
    _state.update(holding=True, pending=None, previous={})
    for signum in HELD_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            _state["previous"][signum] = signal.signal(signum, _held)


def holding() -> bool:
    """Whether signals are being held (between :func:`hold` and :func:`release`)."""
    return _state["holding"]


def release() -> None:
    """Stop holding: SIGINT raises ``KeyboardInterrupt`` again and SIGTERM and SIGHUP
    ``errors.Terminated``; then deliver the signal held meanwhile, if any, by raising it here.
    Nothing happens when nothing is held (``main`` called from a test, or released already)."""
    if not _state["holding"]:
        return
    _state["holding"] = False
    for signum in _state["previous"]:
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else _terminate)
    pending, _state["pending"] = _state["pending"], None
    if pending is not None:
        _interrupt(pending)


def restore() -> None:
    """Put back the handlers :func:`hold` replaced (at exit), dropping a signal still held."""
    for signum, handler in _state["previous"].items():
        signal.signal(signum, handler)
    _state.update(holding=False, pending=None, previous={})


def _held(signum, frame) -> None:
    if _state["pending"] is None:
        _state["pending"] = signum
        return
    _state["pending"] = None  # a second one interrupts at once, for both
    _interrupt(signum)


def _terminate(signum, frame) -> None:
    _interrupt(signum)


def _interrupt(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    from pairbench.errors import Terminated

    raise Terminated(signum)
