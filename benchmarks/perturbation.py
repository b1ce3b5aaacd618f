"""Does pairbench compete with what it measures? Early against late samples, and against hyperfine -N.

pairbench's own work (loading its code and the statistics, the analysis, the
progress line, reading /proc, the journal) must never run on a CPU while a
sample runs (issue 24). On a 2-CPU machine with one other busy process, any
such work takes CPU time from the command, so it shows as samples that are
slower while it runs. This script measures that, with ``--busy`` spinners
(``workloads/spin.c --busy``, not pinned: the scheduler places them) running
beside every invocation:

1. **Early against late.** ``pairbench run --runs R`` and ``pairbench compare
   --runs R`` (the same command twice) of a ~``--command-ms`` CPU-bound command
   (``spin N``, N fitted to its CPU time), long enough to sample for
   ``--seconds``; per invocation the ratio median(wall of the samples that
   started in the first ``EARLY_S`` of sampling) / median(wall of those that
   started after ``LATE_S``). Goal: <= 1.05. The samples' CPU time (user +
   sys, from ``wait4``) is printed beside: it does not change when the command
   only waits for a CPU.
2. **run against hyperfine -N.** ``pairbench run --runs 20`` and ``hyperfine
   -N --runs 20`` of the same command, in interleaved blocks whose order
   rotates; per block the ratio of the two medians. Goal: within 5%.

``--source LABEL=DIR`` (repeatable, as in ``overhead.py startup``) measures the
pairbench package in DIR (e.g. an old commit's ``src`` from ``git archive``,
with its native spawner built) beside the installed one, in the same
interleaved order, so "before" and "after" come from the same session::

    flock /work/.heavy.lock .venv/bin/python benchmarks/perturbation.py \\
        --source before=/tmp/old/src --source after=src [--trials 4] [--blocks 8] [--busy 1]

Samples with a non-zero status or marked warm-up are left out. Every figure
is a median; the invocations' own tables are printed as Markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from calibration import build_spin
from overhead import _pairbench, compile_package, ensure_hyperfine, machine, rotated

EARLY_S = 1.5  # samples that started within this many seconds of the first one
LATE_S = 3.0  # ... against those that started after this many
RATIO_GOAL = 1.05  # early / late
HYPERFINE_GOAL = 0.05  # |run / hyperfine - 1|
OUT = Path(__file__).resolve().parent / "out" / "perturbation"


# --------------------------------------------------------------------------- the command


def fit_steps(spin: Path, command_ms: float) -> int:
    """The ``spin`` argument whose run takes about ``command_ms`` of CPU time, scaled from the
    median CPU time (the children's user + sys) of a few runs at a guess: CPU time, unlike wall
    time, does not grow when a loaded machine makes the command wait."""
    guess = 10_000_000

    def cpu_s() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    times = []
    for _ in range(7):
        before = cpu_s()
        subprocess.run([str(spin), str(guess)], stdout=subprocess.DEVNULL, check=True)
        times.append(cpu_s() - before)
    return max(round(command_ms / 1000 / (statistics.median(times) / guess)), 1)


@contextlib.contextmanager
def busy_processes(spin: Path, count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` spinners (``spin --busy``: they die with this process), killed on the way out."""
    spinners = [subprocess.Popen([str(spin), "--busy"]) for _ in range(count)]
    try:
        time.sleep(0.2)  # running before the first invocation
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


# --------------------------------------------------------------------------- early against late


def samples_of(result_path: str) -> list[tuple[int, int, int]]:
    """(start_ns, wall_ns, cpu_ns) of every measured, successful sample in a result file."""
    with open(result_path) as f:
        document = json.load(f)
    rows = []
    for series in document["series"]:
        s = series["samples"]
        for i, start in enumerate(s["start_ns"]):
            if s["status"][i] == 0 and not s["warmup"][i]:
                rows.append((start, s["wall_ns"][i], s["user_ns"][i] + s["sys_ns"][i]))
    return sorted(rows)


def early_late(rows: list[tuple[int, int, int]]) -> dict:
    """Median wall and CPU time of the samples that started in the first ``EARLY_S`` of sampling
    and of those that started after ``LATE_S`` (start times from the first sample's), and the ratio
    of the two wall medians (NaN when either window holds no sample)."""
    if not rows:
        return {"early": math.nan, "late": math.nan, "ratio": math.nan, "early_cpu": math.nan,
                "late_cpu": math.nan, "n_early": 0, "n_late": 0}
    first = rows[0][0]
    early = [r for r in rows if r[0] - first < EARLY_S * 1e9]
    late = [r for r in rows if r[0] - first >= LATE_S * 1e9]

    def median(window, column):
        return statistics.median(r[column] for r in window) if window else math.nan

    result = {"early": median(early, 1), "late": median(late, 1), "early_cpu": median(early, 2),
              "late_cpu": median(late, 2), "n_early": len(early), "n_late": len(late)}
    result["ratio"] = result["early"] / result["late"] if early and late else math.nan
    return result


def invoke(src: str, kind: str, runs: int, command: str, seed: int) -> tuple[list, float]:
    """One ``pairbench run`` or ``compare`` (the command twice) of ``runs`` rounds: its samples
    (``samples_of``) and its wall time (s)."""
    commands = [command] if kind == "run" else [command, command]
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result.json")
        argv = _pairbench(src, kind, "--quiet", "--seed", str(seed), "--runs", str(runs), "--json", result,
                          *commands)
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(f"{shlex.join(argv)} failed ({done.returncode}):\n{done.stderr}")
        return samples_of(result), wall


def early_late_study(sources: dict[str, str], trials: int, seconds: float, command: str, ms: float) -> dict:
    """``trials`` invocations of run and of compare per source, in rotating order: the per-invocation
    figures of ``early_late``, by (source, kind)."""
    figures: dict[tuple[str, str], list[dict]] = {}
    cells = [(label, kind) for label in sources for kind in ("run", "compare")]
    for trial in range(trials):
        for label, kind in rotated(cells, trial):
            rounds = math.ceil(seconds * 1000 / ms / (1 if kind == "run" else 2))
            rows, wall = invoke(sources[label], kind, rounds, command, seed=trial + 1)
            figures.setdefault((label, kind), []).append({**early_late(rows), "wall_s": wall})
    return figures


def print_early_late(figures: dict, seconds: float) -> bool:
    print(f"\nearly (first {EARLY_S:g} s of sampling) against late (after {LATE_S:g} s), about {seconds:g} s "
          "of sampling per invocation; wall and CPU (user + sys) medians in ms:\n")
    print("| pairbench | command | invocations | early/late ratios | median ratio | early wall | late wall "
          "| early CPU | late CPU | goal <= 1.05 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    met = True
    for (label, kind), rows in figures.items():
        ratio = statistics.median(r["ratio"] for r in rows)
        met &= ratio <= RATIO_GOAL
        medians = [statistics.median(r[key] for r in rows) / 1e6
                   for key in ("early", "late", "early_cpu", "late_cpu")]
        ratios = ", ".join(f"{r['ratio']:.3f}" for r in rows)
        print(f"| {label} | {kind} | {len(rows)} | {ratios} | **{ratio:.3f}** | "
              + " | ".join(f"{m:.1f}" for m in medians)
              + f" | {'met' if ratio <= RATIO_GOAL else 'MISSED'} |")
    return met


# --------------------------------------------------------------------------- run against hyperfine -N


def hyperfine_median(hyperfine: str, runs: int, command: str) -> float:
    """hyperfine -N's median wall time (ns) of ``runs`` runs of ``command`` (no warm-up, as run's)."""
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "hyperfine.json")
        done = subprocess.run([hyperfine, "-N", "--style", "none", "--runs", str(runs), "--export-json", export,
                               command], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"hyperfine failed ({done.returncode}):\n{done.stderr}")
        with open(export) as f:
            return statistics.median(json.load(f)["results"][0]["times"]) * 1e9


def hyperfine_study(hyperfine: str, sources: dict[str, str], blocks: int, runs: int, command: str) -> dict:
    """``blocks`` blocks of one ``pairbench run --runs RUNS`` per source and one hyperfine -N, in
    rotating order: each tool's median per block (ns)."""
    tools = [*sources, "hyperfine -N"]
    medians: dict[str, list[float]] = {tool: [] for tool in tools}
    for block in range(blocks):
        for tool in rotated(tools, block):
            if tool == "hyperfine -N":
                medians[tool].append(hyperfine_median(hyperfine, runs, command))
            else:
                rows, _ = invoke(sources[tool], "run", runs, command, seed=block + 1)
                medians[tool].append(statistics.median(r[1] for r in rows))
    return medians


def print_hyperfine(medians: dict, runs: int) -> bool:
    reference = medians["hyperfine -N"]
    print(f"\n`pairbench run --runs {runs}` against `hyperfine -N --runs {runs}`, {len(reference)} interleaved "
          "blocks; medians in ms:\n")
    print("| tool | median of block medians | ratio to hyperfine -N per block | median ratio | goal within 5% |")
    print("|---|---|---|---|---|")
    met = True
    for tool, values in medians.items():
        ratios = [v / h for v, h in zip(values, reference, strict=True)]
        ratio = statistics.median(ratios)
        ok = abs(ratio - 1) <= HYPERFINE_GOAL
        met &= ok or tool == "hyperfine -N"
        cells = ("", "") if tool == "hyperfine -N" else (f"**{ratio:.3f}**", "met" if ok else "MISSED")
        print(f"| {tool} | {statistics.median(values) / 1e6:.2f} | {', '.join(f'{r:.3f}' for r in ratios)} "
              f"| {cells[0]} | {cells[1]} |")
    return met


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR",
                        help="measure the pairbench package in DIR (default: the installed one)")
    parser.add_argument("--trials", type=int, default=4, help="early/late invocations per source and command")
    parser.add_argument("--seconds", type=float, default=5.0, help="sampling time of each early/late invocation")
    parser.add_argument("--blocks", type=int, default=8, help="blocks of run against hyperfine -N")
    parser.add_argument("--runs", type=int, default=20, help="--runs of each run against hyperfine -N")
    parser.add_argument("--command-ms", type=float, default=20.0, help="the CPU time the command takes")
    parser.add_argument("--busy", type=int, default=1, help="busy processes beside every invocation")
    args = parser.parse_args(argv)
    sources = dict(item.split("=", 1) for item in args.source) or {"installed": ""}
    for src in sources.values():
        compile_package(src)
    hyperfine = ensure_hyperfine()
    spin = build_spin(OUT)
    steps = fit_steps(spin, args.command_ms)
    command = f"{spin} {steps}"
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version}; {time.strftime('%Y-%m-%d %H:%M %Z')}; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    for label, src in sources.items():
        print(f"pairbench {label}: {src or 'installed in ' + sys.prefix}")
    print(f"command: spin {steps} (~{args.command_ms:g} ms of CPU); {args.busy} busy process(es) beside, "
          "not pinned")
    with busy_processes(spin, args.busy):
        figures = early_late_study(sources, args.trials, args.seconds, command, args.command_ms)
        medians = hyperfine_study(hyperfine, sources, args.blocks, args.runs, command)
    early_met = print_early_late(figures, args.seconds)
    hyperfine_met = print_hyperfine(medians, args.runs)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0 if early_met and hyperfine_met else 1


if __name__ == "__main__":
    sys.exit(main())
