"""What pairbench costs around its samples, against hyperfine -N and bare Python, quiet and loaded.

The goals of "nothing before the first sample that the first sample does not
need" (``benchmarks/results/startup.md``), each measured side by side with its
reference in one run, in rotating order so that drift hits all alike:

1. **--version** against ``python -c pass`` (hyperfine -N, with warm-up): at most 6x.
2. **exec to first sample**: ``pairbench run --runs 1`` of a command that prints
   the wall clock as it starts (``date +%s%N``), from the launch to that stamp;
   at most 0.2 s quiet and at most twice the quiet figure beside ``--busy-first``
   busy loops.
3. **CPU of ``run --runs 1 true``**: user + system time of pairbench and its
   children (``getrusage``); at most 0.35 s.
4. **fixed cost**: ``compare --runs R`` of a ~``--command-ms`` CPU-bound command
   (``workloads/spin.c``, fitted to its CPU time) against itself, and ``hyperfine
   -N --runs R`` of the same two commands; per round the ratio of the two wall
   times; at most 1.2 quiet and beside ``--busy-fixed`` busy loop(s). The CPU time of each
   (user + system, with its children: the compared commands' own included) is shown beside it.
5. **exec to the journal**: from the launch of ``run --runs 1 --json r.json`` to the moment its
   journal (``r.json.partial``) holds its header line, polled every millisecond; no goal of its own
   (the journal comes before the first sample), the figure a kill during start-up is measured by.
6. **where the import time goes**: ``-X importtime``'s top entries (cumulative) of ``run --runs 1
   true``, once per package, for reading, not a goal.

``--source LABEL=DIR`` (repeatable) measures the pairbench package in DIR (an
older checkout's ``src`` from ``git archive``, its native spawner copied in)
beside the installed one, so "before" and "after" come from the same session.
The packages are byte-compiled first, as an installed package is. Run it under
the timing lock, with the load recorded::

    flock /work/timing.lock nice -n 0 .venv/bin/python benchmarks/startup.py \\
        --source before=/tmp/before/src --source after=src [--rounds 10]

``--study first-sample`` (repeatable: ``version``, ``first-sample``, ``cpu``,
``fixed-cost``, ``journal``, ``imports``) measures only those goals.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from calibration import build_spin
from overhead import (
    _hyperfine_times,
    _pairbench,
    compile_package,
    ensure_hyperfine,
    machine,
    rotated,
)
from perturbation import busy_processes, fit_steps

OUT = Path(__file__).resolve().parent / "out" / "startup"
VERSION_GOAL = 6.0  # pairbench --version / python -c pass
FIRST_SAMPLE_GOAL_S = 0.2  # quiet
LOADED_FIRST_SAMPLE_GOAL = 2.0  # beside busy loops / quiet
CPU_GOAL_S = 0.35  # run --runs 1 true
FIXED_COST_GOAL = 1.2  # compare / hyperfine -N
STUDIES = ("version", "first-sample", "cpu", "fixed-cost", "journal", "imports")  # as numbered above


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: str | None = None) -> dict:
    """Run ``argv``: its wall time (s), the CPU time of it and its children (s), and the wall clock
    (ns) at launch."""
    cpu, launched, t0 = cpu_of_children(), time.time_ns(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    wall, spent = time.perf_counter() - t0, cpu_of_children() - cpu
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return {"wall": wall, "cpu": spent, "launched": launched}


def first_sample_s(src: str) -> float:
    """From the launch of ``pairbench run --runs 1`` to the moment its first sample (the warm-up,
    if any) starts, read from the stamp the command prints."""
    with tempfile.TemporaryDirectory() as tmp:
        stamps = os.path.join(tmp, "stamps")
        found = timed(_pairbench(src, "run", "--quiet", "--runs", "1", "--output", stamps, "date +%s%N"), cwd=tmp)
        with open(stamps) as f:
            first = int(f.readline())
    return (first - found["launched"]) / 1e9


def journal_s(src: str) -> float:
    """From the launch of ``pairbench run --runs 1 --json r.json`` to the moment its journal holds
    its header line (a complete first line), polled every millisecond."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp, "r.json.partial")
        launched = time.perf_counter()
        child = subprocess.Popen(_pairbench(src, "run", "--quiet", "--runs", "1", "--json", "r.json", "sleep 0.2"),
                                 cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        found = None
        while found is None and child.poll() is None:
            try:
                if b"\n" in journal.read_bytes():
                    found = time.perf_counter() - launched
            except FileNotFoundError:
                pass
            time.sleep(0.001)
        _, err = child.communicate()
        if child.returncode != 0 or found is None:
            sys.exit(f"run --json r.json failed ({child.returncode}) or no journal was seen:\n{err.decode()}")
    return found


def import_times(src: str, top: int) -> list[tuple[float, str]]:
    """The ``top`` largest cumulative import times (s, module) of ``run --runs 1 true``."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = _pairbench(src, "run", "--quiet", "--runs", "1", "true")
        done = subprocess.run([argv[0], "PYTHONPROFILEIMPORTTIME=1", *argv[1:]], capture_output=True, text=True,
                              cwd=tmp)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def cpu_s(src: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return timed(_pairbench(src, "run", "--quiet", "--runs", "1", "true"), cwd=tmp)["cpu"]


def compare_timed(src: str, runs: int, command: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return timed(_pairbench(src, "compare", "--quiet", "--seed", "1", "--runs", str(runs), command, command),
                     cwd=tmp)


def hyperfine_timed(hyperfine: str, runs: int, command: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return timed([hyperfine, "-N", "--style", "none", "--runs", str(runs), command, command], cwd=tmp)


# --------------------------------------------------------------------------- the studies


def version_table(hyperfine: str, sources: dict[str, str], blocks: int, runs: int) -> bool:
    commands = {"python -c pass": ["env", sys.executable, "-c", "pass"]}
    commands |= {f"pairbench --version ({label})": _pairbench(src, "--version") for label, src in sources.items()}
    names, times = list(commands), {name: [] for name in commands}
    for block in range(blocks):
        order = rotated(names, block)
        for name, measured in zip(order, _hyperfine_times(hyperfine, [commands[n] for n in order], runs),
                                  strict=True):
            times[name] += measured
    bare = statistics.median(times["python -c pass"])
    print(f"\n1. `--version` against `python -c pass` (hyperfine -N, {blocks} blocks x {runs} runs + 3 warm-up):\n")
    print(f"| command | median (ms) | ratio to python | goal <= {VERSION_GOAL:g}x |")
    print("|---|---|---|---|")
    met = True
    for name in names:
        median = statistics.median(times[name])
        ratio = median / bare
        gated = name != "python -c pass"
        met &= ratio <= VERSION_GOAL or not gated
        verdict = ("met" if ratio <= VERSION_GOAL else "MISSED") if gated else ""
        print(f"| `{name}` | {median * 1000:.1f} | {ratio:.2f} | {verdict} |")
    return met


def alternated(sources: dict[str, str], rounds: int, measure) -> dict[str, list[float]]:
    """``measure(directory)`` of each source, ``rounds`` times, the order rotated each round so that
    drift hits every source alike; the figures by source label."""
    figures: dict[str, list[float]] = {label: [] for label in sources}
    for r in range(rounds):
        for label in rotated(list(sources), r):
            figures[label].append(measure(sources[label]))
    return figures


def first_sample_table(sources: dict[str, str], rounds: int, spin: Path, busy: int) -> bool:
    figures: dict[tuple[str, str], list[float]] = {}
    for load in ("quiet", f"beside {busy} busy loops"):
        with busy_processes(spin, busy if load != "quiet" else 0):
            for label, values in alternated(sources, rounds, first_sample_s).items():
                figures[(label, load)] = values
    print(f"\n2. exec to first sample (`run --runs 1` of `date +%s%N`, {rounds} invocations each), medians:\n")
    print(f"| pairbench | quiet (s) | beside {busy} busy loops (s) | loaded / quiet | goal <= {FIRST_SAMPLE_GOAL_S:g} s "
          f"quiet, <= {LOADED_FIRST_SAMPLE_GOAL:g}x loaded |")
    print("|---|---|---|---|---|")
    met = True
    for label in sources:
        quiet, loaded = (statistics.median(figures[(label, load)]) for load in ("quiet", f"beside {busy} busy loops"))
        ok = quiet <= FIRST_SAMPLE_GOAL_S and loaded <= LOADED_FIRST_SAMPLE_GOAL * quiet
        met &= ok
        print(f"| {label} | {quiet:.3f} | {loaded:.3f} | {loaded / quiet:.2f} | {'met' if ok else 'MISSED'} |")
    return met


def cpu_table(sources: dict[str, str], rounds: int) -> bool:
    figures = alternated(sources, rounds, cpu_s)
    print(f"\n3. CPU time (user + system, with its children) of `run --runs 1 true`, {rounds} invocations each:\n")
    print(f"| pairbench | median (s) | min (s) | goal <= {CPU_GOAL_S:g} s |")
    print("|---|---|---|---|")
    met = True
    for label, values in figures.items():
        median = statistics.median(values)
        met &= median <= CPU_GOAL_S
        print(f"| {label} | {median:.3f} | {min(values):.3f} | {'met' if median <= CPU_GOAL_S else 'MISSED'} |")
    return met


def journal_table(sources: dict[str, str], rounds: int) -> None:
    figures = alternated(sources, rounds, journal_s)
    print(f"\n5. exec to the journal's header line (`run --runs 1 --json r.json`), {rounds} invocations each:\n")
    print("| pairbench | median (s) | min (s) | max (s) |")
    print("|---|---|---|---|")
    for label, values in figures.items():
        print(f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")


def import_table(sources: dict[str, str], top: int) -> None:
    for label, src in sources.items():
        print(f"\n6. `-X importtime` of `run --runs 1 true` ({label}), the {top} largest cumulative, one run:\n")
        print("| module  | cumulative (s) |")
        print("|---|---|")
        for seconds, module in import_times(src, top):
            print(f"| `{module.strip()}` | {seconds:.3f} |")


def fixed_cost_table(hyperfine: str, sources: dict[str, str], rounds: int, runs: int, command: str,
                     spin: Path, busy: int, ms: float) -> bool:
    loads = ("quiet", f"beside {busy} busy loop(s)")
    ratios: dict[tuple[str, str], list[float]] = {}
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for load in loads:
        with busy_processes(spin, busy if load != "quiet" else 0):
            for r in range(rounds):
                tools = rotated([*sources, "hyperfine -N"], r)
                found = {tool: (hyperfine_timed(hyperfine, runs, command) if tool == "hyperfine -N"
                                else compare_timed(sources[tool], runs, command)) for tool in tools}
                for tool, value in found.items():
                    walls.setdefault((tool, load), []).append(value["wall"])
                    cpus.setdefault((tool, load), []).append(value["cpu"])
                for label in sources:
                    ratios.setdefault((label, load), []).append(found[label]["wall"] / found["hyperfine -N"]["wall"])
    print(f"\n4. `compare --runs {runs}` of a ~{ms:g} ms command against itself, against `hyperfine -N --runs {runs}` "
          f"of the same two, {rounds} rounds per load (median wall, and the median of the per-round ratios):\n")
    print(f"| tool | load | median wall (s) | median CPU (s) | ratio to hyperfine -N | goal <= {FIXED_COST_GOAL:g} |")
    print("|---|---|---|---|---|---|")
    met = True
    for load in loads:
        print(f"| hyperfine -N | {load} | {statistics.median(walls[('hyperfine -N', load)]):.3f} "
              f"| {statistics.median(cpus[('hyperfine -N', load)]):.3f} | | |")
        for label in sources:
            ratio = statistics.median(ratios[(label, load)])
            met &= ratio <= FIXED_COST_GOAL
            print(f"| pairbench {label} | {load} | {statistics.median(walls[(label, load)]):.3f} "
                  f"| {statistics.median(cpus[(label, load)]):.3f} | **{ratio:.2f}** "
                  f"| {'met' if ratio <= FIXED_COST_GOAL else 'MISSED'} |")
    return met


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR",
                        help="measure the pairbench package in DIR (default: the installed one)")
    parser.add_argument("--rounds", type=int, default=10, help="invocations per tool, study and load")
    parser.add_argument("--runs", type=int, default=30, help="--runs of the fixed-cost comparison")
    parser.add_argument("--command-ms", type=float, default=20.0, help="CPU time of the compared command")
    parser.add_argument("--busy-first", type=int, default=2, help="busy loops beside the first-sample study")
    parser.add_argument("--busy-fixed", type=int, default=1, help="busy loops beside the fixed-cost study")
    parser.add_argument("--version-blocks", type=int, default=5, help="hyperfine blocks of --version")
    parser.add_argument("--imports", type=int, default=12, help="how many -X importtime entries to list")
    parser.add_argument("--study", action="append", choices=STUDIES, default=[],
                        help="measure only this study (repeatable; default: all of them)")
    args = parser.parse_args(argv)
    studies = args.study or list(STUDIES)
    sources = dict(item.split("=", 1) for item in args.source) or {"installed": ""}
    for src in [*sources.values(), str(Path(__import__("pairbench").__file__).parent)]:
        compile_package(src)
    hyperfine = ensure_hyperfine()
    spin = build_spin(OUT)
    steps = fit_steps(spin, args.command_ms) if "fixed-cost" in studies else 0
    command = f"{spin} {steps}"
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version}; {time.strftime('%Y-%m-%d %H:%M %Z')}; "
          f"load average at start {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for label, src in sources.items():
        print(f"pairbench {label}: {src or 'installed in ' + sys.prefix}")
    met = []
    if "version" in studies:
        met.append(version_table(hyperfine, sources, args.version_blocks, 20))
    if "first-sample" in studies:
        met.append(first_sample_table(sources, args.rounds, spin, args.busy_first))
    if "cpu" in studies:
        met.append(cpu_table(sources, args.rounds))
    if "fixed-cost" in studies:
        met.append(fixed_cost_table(hyperfine, sources, args.rounds, args.runs, command, spin, args.busy_fixed,
                                    args.command_ms))
    if "journal" in studies:
        journal_table(sources, args.rounds)
    if "imports" in studies:
        import_table(sources, args.imports)
    print(f"\nload average at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
