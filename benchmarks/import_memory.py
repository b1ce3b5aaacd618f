"""`pairbench import` of a large go test text: peak memory and time in proportion to the input.

What it measures: a go test -bench text of SIZE MB (benchmark lines like a real
``go test -bench . -count N -benchmem`` prints, seeded), imported as a user runs
it (``pairbench convert --json OUT TEXT``, a new process), best of ``--repeat``:

* **peak RSS above the reference**: the process's maximum resident set size
  (``getrusage(RUSAGE_CHILDREN)``) less that of the reference, divided by the
  input's size: bytes of memory a byte of input;
* **time**: wall seconds, and seconds a MB.

Reference, measured in the same run: a process that loads what an import loads
(Python, numpy, scipy.stats, pairbench's CLI) and reads nothing.

Usage (under the shared lock, since it times):
    flock /work/.heavy.lock .venv/bin/python benchmarks/import_memory.py --sizes 20 100
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = "import pairbench.cli, pairbench.analysis, scipy.stats, pairbench.store.imports"


def go_text(path: Path, megabytes: float, seed: int) -> int:
    """A go test -bench text of about ``megabytes`` MB; the number of benchmark lines."""
    rng = random.Random(seed)
    lines = 0
    with open(path, "w") as out:
        out.write("goos: linux\ngoarch: amd64\npkg: example.com/study\ncpu: Study CPU\n")
        while out.tell() < megabytes * 1e6:
            out.write(f"BenchmarkParse/size={rng.randint(1, 9)}-2  \t{rng.randint(1000, 100000)}\t"
                      f"{rng.uniform(10, 2000):.1f} ns/op\t{rng.randint(0, 999)} B/op\t{rng.randint(0, 9)} allocs/op\n")
            lines += 1
        out.write("PASS\n")
    return lines


def measured(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and max RSS (KiB) of one child process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr[-500:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        raise SystemExit("RUSAGE_CHILDREN did not rise: measure each size in a fresh process (--sizes one at a time)")
    return elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[20.0], help="input sizes, MB (ascending)")
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    python = str(ROOT / ".venv" / "bin" / "python")
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"seed {args.seed}")
    _, reference = measured([python, "-c", REFERENCE])
    print(f"reference (imports only): max RSS {reference / 1024:.0f} MiB")
    with tempfile.TemporaryDirectory() as scratch:
        for size in sorted(args.sizes):  # RUSAGE_CHILDREN keeps the largest child so far: ascending sizes
            text = Path(scratch) / "go.txt"
            lines = go_text(text, size, args.seed)
            megabytes = text.stat().st_size / 1e6
            elapsed, peak = measured([python, "-m", "pairbench", "convert", "--json", str(Path(scratch) / "out.json"),
                                      str(text)])
            above = (peak - reference) * 1024 / text.stat().st_size
            print(f"{megabytes:6.1f} MB, {lines:,} lines: max RSS {peak / 1024:.0f} MiB, {above:.2f} bytes a byte "
                  f"above the reference; {elapsed:.1f} s ({elapsed / megabytes:.2f} s/MB)")


if __name__ == "__main__":
    main()
