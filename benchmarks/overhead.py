"""Per-sample overhead of pairbench's executors against hyperfine's, timing ``/bin/true``.

``/bin/true`` does nothing, so its measured wall time is almost all harness
overhead: spawning, exec, waiting, and the clock reads around them. This script
runs the bare ``run()`` loop of the in-process ``PosixExecutor``, of the
``SpawnerExecutor`` (the same code in a small helper process) and ``hyperfine
-N`` (no shell) in interleaved blocks (the order rotates per block, so drift
hits all alike), takes hyperfine's per-run times from its ``--export-json``, and
prints the medians and the ratios of medians, pairbench / hyperfine. Target:
<= 1.10 for each executor.

It measures the bare executor loop: the sampling plan's own per-sample work
(choosing the order, journaling each sample) is outside the timed window and
is reported only as each executor's median cost per call outside the timed
window (for the spawner this includes the pipe round trip). The median max RSS that each executor
reports for ``/bin/true`` is printed too: numpy and scipy are imported first,
as in pairbench's CLI process, unless ``--bare``.

Usage::

    .venv/bin/python benchmarks/overhead.py [--blocks 6] [--runs 300] [--warmup 20] [--bare]

hyperfine is installed from the Debian package with apt-get if it is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pairbench.command import Command
from pairbench.measure.posix import PosixExecutor
from pairbench.measure.spawner import SpawnerExecutor

PROGRAM = "/bin/true"
TARGET_RATIO = 1.10


def ensure_hyperfine() -> str:
    """Return the path of hyperfine, installing the Debian package if it is missing."""
    found = shutil.which("hyperfine")
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run([*sudo, "apt-get", "update", "-q"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-q", "hyperfine"], check=True, env=env)
    found = shutil.which("hyperfine")
    if not found:
        sys.exit("hyperfine is still missing after apt-get install hyperfine")
    return found


EXECUTORS = {"in-process": PosixExecutor, "spawner": SpawnerExecutor}


def pairbench_block(name: str, runs: int, warmup: int) -> tuple[list[int], float, float]:
    """Wall times (ns) of ``runs`` executions, median cost outside the timed window (ns), median max RSS (KiB).

    The cost outside the window is, per call, the time ``run()`` took as seen
    from here minus the sample's wall time: executor bookkeeping, and for the
    spawner the pipe round trip. A median, so a stall of a shared machine does
    not swamp it.
    """
    command = Command(PROGRAM, (PROGRAM,))
    clock = time.monotonic_ns
    with EXECUTORS[name]() as executor:
        if getattr(executor, "notes", ()):
            sys.exit(f"{name}: {executor.notes[0]}")
        for _ in range(warmup):
            executor.run(command)
        samples, outside = [], []
        for _ in range(runs):
            t0 = clock()
            sample = executor.run(command)
            outside.append(clock() - t0 - sample.wall_ns)
            samples.append(sample)
    rss = statistics.median(s.max_rss_kib for s in samples)
    return [s.wall_ns for s in samples], statistics.median(outside), rss


def hyperfine_block(hyperfine: str, runs: int, warmup: int) -> list[int]:
    """hyperfine's per-run wall times (ns) for ``runs`` executions without a shell."""
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "hyperfine.json")
        done = subprocess.run(
            [hyperfine, "-N", "--style", "none", "--runs", str(runs), "--warmup", str(warmup)]
            + ["--export-json", export, PROGRAM],
            capture_output=True,  # hyperfine's outlier warnings would clutter the table
            text=True,
        )
        if done.returncode != 0:
            sys.exit(f"hyperfine failed ({done.returncode}):\n{done.stderr}")
        with open(export) as f:
            times = json.load(f)["results"][0]["times"]
    return [round(t * 1e9) for t in times]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{' '.join(os.uname())}; {cpu}; {os.cpu_count()} cores"


def us(ns: float) -> str:
    return f"{ns / 1000:.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=300, help="executions per block and tool")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--bare", action="store_true", help="do not import numpy and scipy first")
    args = parser.parse_args(argv)
    if not args.bare:
        import numpy  # noqa: F401  (pairbench's CLI process holds these)
        import scipy.stats  # noqa: F401

    hyperfine = ensure_hyperfine()
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version.strip()}, program {PROGRAM}")
    print(f"numpy and scipy loaded in this process: {not args.bare}")
    print(f"{args.blocks} blocks x {args.runs} runs (+{args.warmup} warmup) per tool\n")
    tools = ["in-process", "spawner", "hyperfine"]
    walls: dict[str, list[int]] = {tool: [] for tool in tools}
    rows = []
    for block in range(args.blocks):
        order = tools[block % 3 :] + tools[: block % 3]
        medians, loops, rss = {}, {}, {}
        for tool in order:
            if tool == "hyperfine":
                times = hyperfine_block(hyperfine, args.runs, args.warmup)
            else:
                times, loops[tool], rss[tool] = pairbench_block(tool, args.runs, args.warmup)
            walls[tool] += times
            medians[tool] = statistics.median(times)
        rows.append((block, order, medians, loops, rss))
    print_table(rows)
    return print_summary(walls)


def print_table(rows) -> None:
    print(
        "| block | order | in-process median (us) | spawner median (us) | hyperfine median (us) "
        "| ratio in-process | ratio spawner | outside window in-process (us) | spawner (us) "
        "| /bin/true max RSS in-process (KiB) | spawner (KiB) |"
    )
    print("|---" * 11 + "|")
    for block, order, med, loops, rss in rows:
        hf = med["hyperfine"]
        print(
            f"| {block + 1} | {', '.join(order)} | {us(med['in-process'])} | {us(med['spawner'])} "
            f"| {us(hf)} | {med['in-process'] / hf:.3f} | {med['spawner'] / hf:.3f} "
            f"| {us(loops['in-process'])} | {us(loops['spawner'])} "
            f"| {rss['in-process']:.0f} | {rss['spawner']:.0f} |"
        )


def print_summary(walls: dict[str, list[int]]) -> int:
    hf_med = statistics.median(walls["hyperfine"])
    print(
        f"\npooled medians ({len(walls['hyperfine'])} runs each): hyperfine {us(hf_med)} us", end=""
    )
    met = True
    for tool in ("in-process", "spawner"):
        med = statistics.median(walls[tool])
        ratio = med / hf_med
        met &= ratio <= TARGET_RATIO
        print(f", {tool} {us(med)} us (ratio {ratio:.3f})", end="")
    print(f"\ntarget <= {TARGET_RATIO:.2f} for both: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
