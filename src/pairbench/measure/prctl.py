"""Linux's ``prctl(2)``, called through the C library where there is one (standard library only).

The options pairbench uses: a child subreaper (``measure.leftovers``, the keepers), a parent-death
signal (the keepers) and a process that is not dumpable (``measure.child_environment``)."""

from __future__ import annotations

import sys

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value, 0, 0, 0)`` for this process (thread); True if it worked, False where it
    failed or there is no such call (not Linux, no C library)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, int(value), 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False
