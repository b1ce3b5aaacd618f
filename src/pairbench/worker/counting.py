"""Counting a Python sample's instructions: the loop alone, as its time is.

pairbench asks for counting with ``PAIRBENCH_COUNTER`` in the worker's environment (removed
once read, so nothing the benchmarks start sees it):

* ``callgrind``: the worker runs under Callgrind with collection off; :class:`CallgrindRegion`
  switches it on and off around the loop and dumps the counts after it, through Callgrind's client
  requests in the counting library (``counting.c``, built by the install as
  ``pairbench-counting.so``, loaded with ctypes). pairbench reads the dump between samples.
* ``instructions``: a hardware counter of this thread's user-space instructions
  (``perf_event_open``), enabled around the loop (:class:`HardwareCounter`); the count goes in the
  reply. Only where pairbench found the machine's counters (``measure.counters``).

What is counted besides the calls: the loop's own iteration (``for _ in repeat(...)``), and the
ctypes call that switches counting on (its return) and off (its entry), a constant per sample
that the iterations divide. Standard library only.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

VARIABLE = "PAIRBENCH_COUNTER"
LIBRARY = "pairbench-counting.so"


class CountingUnavailable(Exception):
    """Counting was asked for and cannot be done here; the message says why and what to do."""


class CallgrindRegion:
    """Callgrind's collection around a sample's loop, and one dump per sample."""

    instructions = None  # the counts go to the dump, which pairbench reads
    resets = False  # counts accumulate until the dump

    def __init__(self, path: str | None = None):
        path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY)
        try:
            library = ctypes.CDLL(path)
        except OSError:
            raise CountingUnavailable(f"the counting library {path} is missing: reinstall pairbench where a C "
                                      "compiler and Valgrind's headers are (Debian: valgrind)") from None
        if not library.pairbench_counting_available():
            raise CountingUnavailable(f"the counting library {path} was built without <valgrind/callgrind.h>: "
                                      "install valgrind, then reinstall pairbench")
        self.start = self.stop = library.pairbench_collect
        self.finish = library.pairbench_dump


_SYSCALL_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241, "i686": 336, "i386": 336}
_PERF_TYPE_HARDWARE, _PERF_COUNT_HW_INSTRUCTIONS = 0, 1
_IOC_ENABLE, _IOC_DISABLE, _IOC_RESET = 0x2400, 0x2401, 0x2403  # _IO('$', 0), _IO('$', 1), _IO('$', 3)
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6  # perf_event_attr's flag bits


class _Attr(ctypes.Structure):
    """``struct perf_event_attr`` up to its flags, padded to 128 bytes (PERF_ATTR_SIZE_VER7); the
    fields after the flags stay 0."""

    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64), ("rest", ctypes.c_uint8 * 80)]


class HardwareCounter:
    """A ``perf_event_open`` counter of this thread's user-space instructions (kernel and hypervisor
    excluded), enabled around the loop; ``instructions`` is the last sample's count."""

    resets = True  # each start resets the count: a sample of several timed calls sums them

    def __init__(self, event: tuple[int, int] = (_PERF_TYPE_HARDWARE, _PERF_COUNT_HW_INSTRUCTIONS)):
        """``event``: perf's (type, config); another than instructions is for tests only (a software
        clock, which a machine without counters has, exercises the same calls)."""
        number = _SYSCALL_PERF_EVENT_OPEN.get(platform.machine())
        if number is None:
            raise CountingUnavailable(f"hardware instruction counting is not supported on {platform.machine()}")
        libc = ctypes.CDLL(None, use_errno=True)
        attr = _Attr(type=event[0], size=ctypes.sizeof(_Attr), config=event[1],
                     flags=_DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV)
        fd = libc.syscall(ctypes.c_long(number), ctypes.byref(attr), ctypes.c_long(0), ctypes.c_long(-1),
                          ctypes.c_long(-1), ctypes.c_ulong(8))  # this thread, any CPU, no group, FD_CLOEXEC
        if fd < 0:
            raise CountingUnavailable(f"cannot open the hardware instruction counter: {os.strerror(ctypes.get_errno())}")
        self._fd, self._ioctl = fd, libc.ioctl
        self.instructions: int | None = None

    def start(self) -> None:
        self._ioctl(self._fd, ctypes.c_ulong(_IOC_RESET), 0)
        self._ioctl(self._fd, ctypes.c_ulong(_IOC_ENABLE), 0)

    def stop(self) -> None:
        self._ioctl(self._fd, ctypes.c_ulong(_IOC_DISABLE), 0)

    def finish(self) -> None:
        self.instructions = int.from_bytes(os.read(self._fd, 8), sys.byteorder)


def from_environment(environ) -> CallgrindRegion | HardwareCounter | None:
    """The counting ``PAIRBENCH_COUNTER`` asks for (removed from ``environ``), None when none;
    ``CountingUnavailable`` when it cannot be done."""
    wanted = environ.pop(VARIABLE, None)
    if wanted is None:
        return None
    if wanted == "callgrind":
        return CallgrindRegion()
    if wanted == "instructions":
        return HardwareCounter()
    raise CountingUnavailable(f"{VARIABLE} must be callgrind or instructions, got {wanted[:40]!r}")
