"""Where a compare's fixed cost goes, phase by phase, and the floor under it.

``compare --runs R`` of a ~``--command-ms`` CPU-bound command against itself
(``workloads/spin.c``), run ``--rounds`` times per source tree through a small
wrapper that notes, in pairbench's own process, the wall time and its CPU time
(user + system, every thread; the commands are children and not counted) at
five points: the interpreter has started (after ``site``), the warm-up round
begins, the measured rounds begin, the last sample has ended, the process
exits. Printed per tree: the median of each phase, and beside them the floor, what the libraries
pairbench cannot start without cost: ``python -c "import click, numpy,
numpy.random, dataclasses, json, pathlib"`` (numpy with one OpenBLAS thread, as
pairbench loads it), timed the same way. pairbench's own part is what a phase
costs beyond that.

    flock /work/timing.lock .venv/bin/python benchmarks/fixed_cost_phases.py \\
        --source before=/tmp/before/src --source after=/tmp/after/src --rounds 10

A study, not a test: the figures go to ``benchmarks/results/startup.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import build_spin  # noqa: E402
from overhead import compile_package, machine, rotated  # noqa: E402
from perturbation import fit_steps  # noqa: E402

OUT = Path(__file__).resolve().parent / "out" / "fixed_cost_phases"
PHASES = ("start to the warm-up round", "warm-up round", "measured rounds (pairbench's part)",
          "last sample to exit")

# Runs the console script's entry point with four marks; writes them as JSON to the file $MARKS.
WRAPPER = """
import json, os, resource, sys, time
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
marks = [("start", time.perf_counter(), cpu())]
import pairbench.measure.sampler as sampler
warm_up, run = sampler.Sampler._warm_up, sampler.Sampler.run
def noting_warm_up(self):
    marks.append(("warm-up", time.perf_counter(), cpu()))
    try:
        return warm_up(self)
    finally:
        marks.append(("measured", time.perf_counter(), cpu()))
def noting_run(self, *args, **kwargs):
    try:
        return run(self, *args, **kwargs)
    finally:
        marks.append(("last sample", time.perf_counter(), cpu()))
sampler.Sampler._warm_up, sampler.Sampler.run = noting_warm_up, noting_run
import atexit
def report():
    marks.append(("exit", time.perf_counter(), cpu()))
    with open(os.environ["MARKS"], "w") as out:
        json.dump(marks, out)
atexit.register(report)
from pairbench.__main__ import entry_point
sys.argv = ["pairbench", *sys.argv[1:]]
entry_point()
"""

FLOOR = ("import os, resource, sys, time\n"
         "os.environ['OPENBLAS_NUM_THREADS'] = '1'\n"
         "import click, numpy, numpy.random, dataclasses, json, pathlib\n"
         "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
         "open(os.environ['MARKS'], 'w').write(str(usage.ru_utime + usage.ru_stime))\n")


def _marked(argv: list[str], env: dict) -> tuple[str, float]:
    """Run ``argv`` in a directory of its own; what it wrote to the file $MARKS, and its wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        marks = os.path.join(tmp, "marks")
        started = time.perf_counter()
        done = subprocess.run(argv, env={**env, "MARKS": marks}, cwd=tmp, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        return Path(marks).read_text(), wall


def phases_of(src: str, runs: int, command: str) -> dict:
    """One compare's phases: wall and CPU seconds of each, and the whole run's wall time."""
    argv = [sys.executable, "-c", WRAPPER, "compare", "--quiet", "--seed", "1", "--runs", str(runs),
            command, command]
    written, wall = _marked(argv, {**os.environ, "PYTHONPATH": os.path.abspath(src)})
    marks = json.loads(written)
    found = {"wall": wall}
    for phase, (_, w0, c0), (_, w1, c1) in zip(PHASES, marks[:-1], marks[1:], strict=True):
        found[phase] = (w1 - w0, c1 - c0)
    return found


def floor_cpu_s() -> float:
    """The CPU seconds of an interpreter that loads only the libraries pairbench starts with."""
    written, _ = _marked([sys.executable, "-c", FLOOR], dict(os.environ))
    return float(written)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR", required=True,
                        help="a tree whose pairbench package is measured (repeatable)")
    parser.add_argument("--rounds", type=int, default=10, help="compares per tree (alternating trees)")
    parser.add_argument("--runs", type=int, default=30, help="--runs of each compare")
    parser.add_argument("--command-ms", type=float, default=20.0, help="CPU time of the compared command")
    args = parser.parse_args(argv)
    sources = dict(item.split("=", 1) for item in args.source)
    for src in sources.values():
        compile_package(src)
    spin = build_spin(OUT)
    command = f"{spin} {fit_steps(spin, args.command_ms)}"
    print(f"machine: {machine()}")
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; load average at start "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    found: dict[str, list[dict]] = {label: [] for label in sources}
    floors = []
    for r in range(args.rounds):
        for label in rotated(list(sources), r):
            found[label].append(phases_of(sources[label], args.runs, command))
        floors.append(floor_cpu_s())
    floor = statistics.median(floors)
    print(f"\n`compare --runs {args.runs}` of a ~{args.command_ms:g} ms command, {args.rounds} runs per tree; "
          "medians, wall / pairbench's own CPU (ms):\n")
    print("| phase | " + " | ".join(sources) + " |")
    print("|---|" + "---|" * len(sources))
    for phase in PHASES:
        cells = []
        for label in sources:
            wall = statistics.median(f[phase][0] for f in found[label]) * 1000
            cpu = statistics.median(f[phase][1] for f in found[label]) * 1000
            cells.append(f"{wall:.0f} / {cpu:.0f}")
        print(f"| {phase} | " + " | ".join(cells) + " |")
    print("| the whole run (wall) | " + " | ".join(
        f"{statistics.median(f['wall'] for f in found[label]) * 1000:.0f}" for label in sources) + " |")
    print(f"\nfloor: an interpreter loading click, numpy (one OpenBLAS thread) and numpy.random costs "
          f"{floor * 1000:.0f} ms of CPU (median of {len(floors)}); the start phase above begins after "
          "the interpreter's own start-up (about 10 ms of it)")
    print(f"load average at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
