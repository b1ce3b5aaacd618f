"""Small workloads, so a newcomer (``make demo``) and the test suite can measure something real.

    python examples/workloads.py spin 400000      # CPU: a loop of 400000 iterations
    python examples/workloads.py alloc 50         # memory: touch 50 MiB, then exit
    python examples/workloads.py alloc-each 10 8  # memory that grows: keep 8 blocks of 10 MiB
    python examples/workloads.py setup-then-spin 0.05 20000 8
                                                  # sleep 0.05 s of "setup", then 8 x 20000 iterations

Standard library only, and nothing from pairbench is imported, so start-up stays cheap.
"""

from __future__ import annotations

import sys
import time

USAGE = __doc__


def spin(iterations: int) -> int:
    """Burn CPU for ``iterations`` loop turns; returns a checksum so the loop is not optimised away."""
    total = 0
    for i in range(iterations):
        total = (total + i * i) % 1_000_003
    return total


def allocate(mib: int) -> int:
    """Allocate and touch ``mib`` MiB (one write per 4 KiB page) so it counts in max RSS."""
    block = bytearray(mib * 1024 * 1024)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    return len(block)


def allocate_each(mib: int, times: int) -> int:
    """Allocate and touch ``mib`` MiB ``times`` times, keeping every block: peak RSS grows with ``times``.

    A benchmark written wrongly on purpose (the Swift benchmark suite's rule: memory that depends on the
    iteration count), for ``pairbench doctor``'s memory-growth check.
    """
    blocks = []
    for _ in range(times):
        blocks.append(bytearray(mib * 1024 * 1024))
        for offset in range(0, len(blocks[-1]), 4096):
            blocks[-1][offset] = 1
    return sum(len(b) for b in blocks)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    name, args = argv[0], argv[1:]
    try:
        if name == "spin":
            spin(int(args[0]))
        elif name == "alloc":
            allocate(int(args[0]))
        elif name == "alloc-each":
            allocate_each(int(args[0]), int(args[1]))
        elif name == "setup-then-spin":
            time.sleep(float(args[0]))
            for _ in range(int(args[2])):
                spin(int(args[1]))
        else:
            print(f"unknown workload {name!r}\n{USAGE}", file=sys.stderr)
            return 2
    except (IndexError, ValueError):
        print(f"bad arguments for {name!r}\n{USAGE}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
