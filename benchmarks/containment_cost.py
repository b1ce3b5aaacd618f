"""What containment costs a sample: the spawners with a cgroup cell against the same spawners with only
the scan of their descendants (``measure.containment``).

Two commands, each run in interleaved blocks whose order rotates (so drift hits every configuration
alike), by each spawner (native, Python) under each containment (``cgroup``: the spawner lives in a
cell with the command and reads ``cgroup.procs`` after it; ``scan``: ``PAIRBENCH_CGROUP=none``):

* ``/bin/true``: nothing is left, so the figures are the usual case: the timed window (``wall_ns``,
  which containment must not change) and the cost per call outside it (the pipe round trip and the
  spawner's own work between samples, where containment's read happens);
* ``sh -c 'sleep 30 & exit 0'``: a daemon is left in every sample, so the cost outside the window is
  what ending a leftover costs (a new cell and ``cgroup.kill``, against stopping and killing it).

Prints per configuration the median wall time of the sample, the median cost per call outside it,
and the ratios cgroup / scan. Needs a machine where pairbench may make cgroups (root, as a rule).

Usage::

    .venv/bin/python benchmarks/containment_cost.py [--blocks 6] [--runs 400] [--leftover-runs 40]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from pairbench.measure import containment
from pairbench.measure.commandline import parse_command
from pairbench.measure.spawner import SpawnerExecutor

SPAWNERS = ("native", "python")
MODES = ("cgroup", "scan")
COMMANDS = {"true": "/bin/true", "leftover": "sh -c 'sleep 30 & exit 0'"}


def block(spawner: str, mode: str, command: str, runs: int) -> tuple[list[int], list[int]]:
    """``runs`` samples of ``command``: their wall times and each call's cost outside the window, ns."""
    machine = containment.containment()
    containment._found = machine if mode == "cgroup" else containment.Containment("scan", reason="study")
    parsed = parse_command(COMMANDS[command], shell=False)
    walls, outside = [], []
    try:
        with SpawnerExecutor(spawner=spawner) as executor:
            assert executor.containment == mode, (executor.containment, mode)
            for _ in range(runs):
                t0 = time.monotonic_ns()
                done = executor.run(parsed)
                total = time.monotonic_ns() - t0
                walls.append(done.wall_ns)
                outside.append(total - done.wall_ns)
    finally:
        containment._found = machine
    return walls, outside


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--leftover-runs", type=int, default=40)
    args = parser.parse_args()
    if containment.containment().method != "cgroup":
        sys.exit(f"this machine gives pairbench no cgroup ({containment.containment().reason}): nothing to compare")
    configurations = [(s, m, c) for c in COMMANDS for s in SPAWNERS for m in MODES]
    walls = {k: [] for k in configurations}
    outside = {k: [] for k in configurations}
    with open("/proc/loadavg") as f:
        before = f.read().split()[:3]
    for b in range(args.blocks):
        order = configurations[b % len(configurations):] + configurations[:b % len(configurations)]
        for spawner, mode, command in order:
            runs = args.runs if command == "true" else args.leftover_runs
            w, o = block(spawner, mode, command, runs)
            walls[(spawner, mode, command)] += w
            outside[(spawner, mode, command)] += o
    with open("/proc/loadavg") as f:
        after = f.read().split()[:3]
    print(f"{platform.node()} · {platform.platform()} · {os.cpu_count()} CPUs · {time.strftime('%Y-%m-%d')}")
    print(f"load average before {' '.join(before)}, after {' '.join(after)}; {args.blocks} blocks")
    print(f"{'command':9} {'spawner':7} {'mode':7} {'n':>6} {'wall (us)':>10} {'outside (us)':>13}")
    for spawner, mode, command in configurations:
        k = (spawner, mode, command)
        print(f"{command:9} {spawner:7} {mode:7} {len(walls[k]):6d} {statistics.median(walls[k]) / 1e3:10.1f} "
              f"{statistics.median(outside[k]) / 1e3:13.1f}")
    print("ratios cgroup / scan (medians):")
    for command in COMMANDS:
        for spawner in SPAWNERS:
            c, s = (spawner, "cgroup", command), (spawner, "scan", command)
            print(f"  {command:9} {spawner:7} wall {statistics.median(walls[c]) / statistics.median(walls[s]):.3f}"
                  f"  outside {statistics.median(outside[c]) / statistics.median(outside[s]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
