"""Per-sample overhead of pairbench's executor against hyperfine's, timing ``/bin/true``.

``/bin/true`` does nothing, so its measured wall time is almost all harness
overhead: spawning, exec, waiting, and the clock reads around them. This script
runs the bare ``PosixExecutor.run()`` loop and ``hyperfine -N`` (no shell) in
interleaved blocks (the order alternates per block, so drift hits both alike),
takes hyperfine's per-run times from its ``--export-json``, and prints the
medians and the ratio of medians, pairbench / hyperfine. Target: <= 1.10.

It measures the bare executor loop: the sampling plan's own per-sample work
(choosing the order, journaling each sample) is outside the timed window and
is reported only as the loop's cost per iteration beside it.

Usage::

    .venv/bin/python benchmarks/overhead.py [--blocks 5] [--runs 300] [--warmup 20]

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

from pairbench.measure.posix import PosixExecutor
from pairbench.model import Command

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


def pairbench_block(runs: int, warmup: int) -> tuple[list[int], float]:
    """Wall times (ns) of ``runs`` executions, and the loop's cost per iteration (ns)."""
    command = Command(PROGRAM, (PROGRAM,))
    with PosixExecutor() as executor:
        for _ in range(warmup):
            executor.run(command)
        t0 = time.monotonic_ns()
        walls = [executor.run(command).wall_ns for _ in range(runs)]
        loop_ns = (time.monotonic_ns() - t0) / runs
    return walls, loop_ns


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
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--runs", type=int, default=300, help="executions per block")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args(argv)

    hyperfine = ensure_hyperfine()
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version.strip()}, program {PROGRAM}")
    print(f"{args.blocks} blocks x {args.runs} runs (+{args.warmup} warmup) per tool\n")
    print(
        "| block | first | pairbench median (us) | hyperfine median (us) | ratio | pairbench loop/iter (us) |"
    )
    print("|---|---|---|---|---|---|")
    all_pb, all_hf, ratios = [], [], []
    for block in range(args.blocks):
        pb_first = block % 2 == 0
        if pb_first:
            pb, loop_ns = pairbench_block(args.runs, args.warmup)
            hf = hyperfine_block(hyperfine, args.runs, args.warmup)
        else:
            hf = hyperfine_block(hyperfine, args.runs, args.warmup)
            pb, loop_ns = pairbench_block(args.runs, args.warmup)
        pb_med, hf_med = statistics.median(pb), statistics.median(hf)
        ratios.append(pb_med / hf_med)
        all_pb += pb
        all_hf += hf
        first = "pairbench" if pb_first else "hyperfine"
        print(
            f"| {block + 1} | {first} | {us(pb_med)} | {us(hf_med)} | {ratios[-1]:.3f} | {us(loop_ns)} |"
        )

    pb_med, hf_med = statistics.median(all_pb), statistics.median(all_hf)
    ratio = pb_med / hf_med
    print(f"\npooled medians: pairbench {us(pb_med)} us, hyperfine {us(hf_med)} us")
    print(f"ratio of medians (pairbench / hyperfine): {ratio:.3f}")
    print(
        f"per-block ratios: min {min(ratios):.3f}, median {statistics.median(ratios):.3f}, max {max(ratios):.3f}"
    )
    met = ratio <= TARGET_RATIO
    print(f"target <= {TARGET_RATIO:.2f}: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
