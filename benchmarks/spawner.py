"""The native spawner against the Python one and ``hyperfine -N``: per-sample overhead and RSS floor.

``/bin/true`` does nothing, so its measured wall time is almost all harness
overhead (spawn, exec, wait, the clock reads). This script times it with the
bare ``SpawnerExecutor.run()`` loop of each spawner (``native``: the C
``pairbench-spawner``; ``python``: ``python -S -I`` running ``PosixExecutor``)
and with ``hyperfine -N`` (no shell; per-run times from ``--export-json``), in
interleaved blocks whose order rotates, so drift hits all alike. It prints per
block and pooled the medians and the ratios of medians, spawner / hyperfine
(target: <= 1.0 for the native spawner, issue 15: "no worse than hyperfine
-N"), each spawner's median cost per call outside the timed window (the pipe
round trip and the spawner's own work), the median max RSS reported for
``/bin/true``, and each spawner's RSS floor (its own resident set: the smallest
max RSS it can report; target: <= 2 MiB for the native one). numpy and
scipy.stats are imported first, as in pairbench's CLI process.

Usage::

    .venv/bin/python benchmarks/spawner.py [--blocks 6] [--runs 500] [--warmup 20]

hyperfine is installed from the Debian package with apt-get if it is missing.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time

from overhead import PROGRAM, ensure_hyperfine, hyperfine_block, machine, time_program, us
from pairbench.measure.spawner import SpawnerExecutor

SPAWNERS = ("native", "python")
TOOLS = (*SPAWNERS, "hyperfine")
TARGET_RATIO = 1.0  # the native spawner's median against hyperfine's
TARGET_FLOOR_KIB = 2048


def spawner_block(kind: str, runs: int, warmup: int) -> dict:
    """Wall times (ns) of ``runs`` executions of ``/bin/true`` through the ``kind`` spawner, with the
    median cost per call outside the timed window (ns), the median max RSS and the floor (KiB)."""
    with SpawnerExecutor(spawner=kind) as executor:
        if executor.spawner != kind:
            sys.exit(f"{kind}: the {kind} spawner did not start ({executor.notes})")
        samples, outside = time_program(executor, runs, warmup)
        floor = executor.rss_floor_kib()
    return {"walls": [s.wall_ns for s in samples], "outside": outside,
            "rss": statistics.median(s.max_rss_kib for s in samples), "floor": floor}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=500, help="executions per block and tool")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args(argv)
    import numpy  # noqa: F401  (pairbench's CLI process holds these)
    import scipy.stats  # noqa: F401

    hyperfine = ensure_hyperfine()
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version}, program {PROGRAM}; {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"{args.blocks} blocks x {args.runs} runs (+{args.warmup} warmup) per tool\n")
    walls: dict[str, list[int]] = {tool: [] for tool in TOOLS}
    rows = []
    for block in range(args.blocks):
        order = TOOLS[block % 3:] + TOOLS[: block % 3]
        found = {}
        for tool in order:
            if tool == "hyperfine":
                found[tool] = {"walls": hyperfine_block(hyperfine, args.runs, args.warmup)}
            else:
                found[tool] = spawner_block(tool, args.runs, args.warmup)
            walls[tool] += found[tool]["walls"]
        rows.append((block, order, found))
    print_table(rows)
    return print_summary(walls, rows)


def print_table(rows) -> None:
    print("| block | order | native median (us) | python median (us) | hyperfine median (us) | ratio native "
          "| ratio python | outside window native (us) | python (us) | /bin/true max RSS native (KiB) "
          "| python (KiB) | floor native (KiB) | python (KiB) |")
    print("|---" * 13 + "|")
    for block, order, found in rows:
        med = {tool: statistics.median(found[tool]["walls"]) for tool in TOOLS}
        nat, py = found["native"], found["python"]
        print(f"| {block + 1} | {', '.join(order)} | {us(med['native'])} | {us(med['python'])} "
              f"| {us(med['hyperfine'])} | {med['native'] / med['hyperfine']:.3f} "
              f"| {med['python'] / med['hyperfine']:.3f} | {us(nat['outside'])} | {us(py['outside'])} "
              f"| {nat['rss']:.0f} | {py['rss']:.0f} | {nat['floor']} | {py['floor']} |")


def print_summary(walls: dict[str, list[int]], rows) -> int:
    hf = statistics.median(walls["hyperfine"])
    print(f"\npooled medians ({len(walls['hyperfine'])} runs each): hyperfine {us(hf)} us", end="")
    ratios = {}
    for kind in SPAWNERS:
        med = statistics.median(walls[kind])
        ratios[kind] = med / hf
        print(f", {kind} {us(med)} us (ratio {ratios[kind]:.3f})", end="")
    floors = [found["native"]["floor"] for _, _, found in rows]
    rss = [found["native"]["rss"] for _, _, found in rows]
    print(f"\nnative floor {min(floors)}-{max(floors)} KiB, /bin/true max RSS {min(rss):.0f}-{max(rss):.0f} KiB")
    per_block = [statistics.median(found["native"]["walls"]) / statistics.median(found["hyperfine"]["walls"])
                 for _, _, found in rows]
    print(f"native / hyperfine per block: {min(per_block):.3f} to {max(per_block):.3f}")
    centre, low, high = block_ratio_interval(per_block)
    print(f"native / hyperfine across blocks: geometric mean {centre:.3f}, 95% interval [{low:.3f}, {high:.3f}] "
          f"(t on the blocks' log-ratios; blocks are the paired units)")
    outcome = ratio_outcome(ratios["native"], high)
    floor_met = max(floors) <= TARGET_FLOOR_KIB
    print(f"targets: native ratio <= {TARGET_RATIO:.2f}: {outcome}; floor <= {TARGET_FLOOR_KIB} KiB: "
          f"{'met' if floor_met else 'MISSED'}")
    return 0 if outcome != "MISSED" and floor_met else 1


def block_ratio_interval(per_block: list[float]) -> tuple[float, float, float]:
    """The geometric mean of the per-block ratios with a 95% t interval: each block times all three
    tools back to back, so a block is one pair and drift between blocks cancels in its ratio."""
    import numpy as np
    from scipy import stats

    logs = np.log(per_block)
    if len(logs) < 2:
        return float(np.exp(logs.mean())), float("nan"), float("nan")
    low, high = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
    return tuple(float(np.exp(v)) for v in (logs.mean(), low, high))


def ratio_outcome(pooled: float, upper: float) -> str:
    """``met`` when the pooled ratio is at most the target; ``not distinguishable`` when it is above
    but the blocks' interval still reaches the target; else ``MISSED``."""
    if pooled <= TARGET_RATIO:
        return "met"
    return "not distinguishable from the target" if upper >= TARGET_RATIO else "MISSED"


if __name__ == "__main__":
    raise SystemExit(main())
