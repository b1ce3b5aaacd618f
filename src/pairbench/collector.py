"""Python's cyclic garbage collector, held off while pairbench starts.

Starting a compare creates tens of thousands of objects that stay alive until
the process exits: the modules, classes and functions of click, numpy and some
200 modules of pairbench's own. The collector traverses them again and again
while they are created, about 90 collections and 11 ms of CPU before a
compare's first measured sample (benchmarks/results/startup.md), none of which
frees anything. So the console script holds it from its first line
(:func:`hold`), and :func:`release` ends that hold where a command has loaded:
a session's sampler before its first measured round (after the warmup rounds,
beside which the report's modules load), any other command when it starts.
What exists then is frozen (``gc.freeze``: left out of every later
collection, as it stays alive anyway), and the collector runs as usual.

Standard library only: the console script holds it before anything else loads.
"""

from __future__ import annotations

import gc

_state = {"held": False}


def hold() -> None:
    """Disable the collector until :func:`release`; nothing when it is disabled already (the
    embedding program's choice, which release leaves as it is)."""
    if gc.isenabled():
        gc.disable()
        _state["held"] = True


def held() -> bool:
    """Whether the collector is being held (between :func:`hold` and :func:`release`)."""
    return _state["held"]


def release() -> None:
    """End the hold: freeze every object tracked now, and enable the collector again. Nothing when
    nothing is held (``main`` called from a test, or released already)."""
    if _state["held"]:
        _state["held"] = False
        gc.freeze()
        gc.enable()
