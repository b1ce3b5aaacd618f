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

``overhead.py startup`` measures instead what a pairbench process costs around
its samples (issue 15): how long ``pairbench --version``, ``--help`` and
``compare --help`` take (timed by ``hyperfine -N``, beside ``python -c pass``
and ``hyperfine --version``), and how long ``pairbench compare --runs N``
spends before its first sample and after its last, against ``hyperfine -N
--runs N`` on the same two commands, in interleaved rounds. The commands
(``--command-ms``, default 25 ms) print the wall clock as they start and end,
so the time from launch to the first sample and from the last sample to exit is
read, not inferred.
``--source LABEL=DIR`` (repeatable) measures the pairbench whose package is in
DIR (e.g. a ``git worktree``'s ``src``) instead of the installed one, so two
versions are compared in the same run. The packages' modules are byte-compiled
first, as a ``pip install`` does (an editable install, or
PYTHONDONTWRITEBYTECODE=1, would compile them at every start)::

    .venv/bin/python benchmarks/overhead.py startup [--blocks 5] [--rounds 10] [--runs 30] [--command-ms 25] \
        [--source before=/tmp/old/src --source after=src]

hyperfine is installed from the Debian package with apt-get if it is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    with EXECUTORS[name]() as executor:
        if getattr(executor, "notes", ()):
            sys.exit(f"{name}: {executor.notes[0]}")
        samples, outside = time_program(executor, runs, warmup)
    rss = statistics.median(s.max_rss_kib for s in samples)
    return [s.wall_ns for s in samples], outside, rss


def time_program(executor, runs: int, warmup: int) -> tuple[list, float]:
    """``runs`` executions of PROGRAM (after ``warmup`` more) by ``executor``: the samples, and the
    median time per call outside the timed window (ns)."""
    command = Command(PROGRAM, (PROGRAM,))
    clock = time.monotonic_ns
    for _ in range(warmup):
        executor.run(command)
    samples, outside = [], []
    for _ in range(runs):
        t0 = clock()
        sample = executor.run(command)
        outside.append(clock() - t0 - sample.wall_ns)
        samples.append(sample)
    return samples, statistics.median(outside)


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


def rotated(items: list, k: int) -> list:
    """``items`` rotated left by ``k``: the order of block ``k``, so drift hits every tool alike."""
    return items[k % len(items):] + items[:k % len(items)]


def us(ns: float) -> str:
    return f"{ns / 1000:.1f}"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["startup"]:
        return startup_main(argv[1:])
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


# --------------------------------------------------------------------------- start-up (issue 15)

STARTUP_ARGS = (("--version",), ("--help",), ("compare", "--help"))
TIMESTAMP = "date +%s%N"  # a sample that prints the wall clock (ns) when it runs


def stamped_command(ms: float) -> str:
    """A command of about ``ms`` that prints the wall clock (ns) as it starts and as it ends (only
    ``date`` for 0), so the time before the first sample and after the last is read, not inferred."""
    return TIMESTAMP if ms <= 0 else f"sh -c 'date +%s%N; sleep {ms / 1000:g}; date +%s%N'"
STARTUP_TARGET_S = 0.150  # --version and --help
FIXED_TARGET_S = 0.300  # compare: before the first sample plus after the last


def startup_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="overhead.py startup", description=startup_main.__doc__)
    parser.add_argument("--blocks", type=int, default=5, help="hyperfine start-up blocks")
    parser.add_argument("--startup-runs", type=int, default=20, help="runs per start-up command and block")
    parser.add_argument("--rounds", type=int, default=10, help="compare invocations per tool")
    parser.add_argument("--runs", type=int, default=30, help="--runs of each compare")
    parser.add_argument("--command-ms", type=float, default=25.0,
                        help="how long each compared command takes (0: `date` alone)")
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR",
                        help="measure the pairbench package in DIR (default: the installed one)")
    args = parser.parse_args(argv)
    sources = dict(item.split("=", 1) for item in args.source) or {"installed": ""}
    for src in [*sources.values(), str(Path(__import__("pairbench").__file__).parent)]:
        compile_package(src)
    hyperfine = ensure_hyperfine()
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {machine()}")
    print(f"python {platform.python_version()}, {version}; {time.strftime('%Y-%m-%d %H:%M %Z')}")
    for label, src in sources.items():
        print(f"pairbench {label}: {src or 'installed in ' + sys.prefix}")
    started = startup_table(hyperfine, sources, args.blocks, args.startup_runs)
    fixed = fixed_cost_table(hyperfine, sources, args.rounds, args.runs, stamped_command(args.command_ms))
    return 0 if started and fixed else 1
startup_main.__doc__ = "Start-up of pairbench --version/--help and the fixed cost of compare, against hyperfine -N."


def compile_package(src: str) -> None:
    """Byte-compile the modules under ``src``, as an installed package's are: an editable install
    (or PYTHONDONTWRITEBYTECODE=1) would otherwise compile pairbench's own modules at every start."""
    if src:
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True)


def _pairbench(src: str, *args: str) -> list[str]:
    """argv running the console script with the package in ``src`` (through env, like every
    command timed here, so all pay the same exec of env)."""
    script = str(Path(sys.executable).with_name("pairbench"))
    return ["env", *([f"PYTHONPATH={os.path.abspath(src)}"] if src else []), script, *args]


def startup_table(hyperfine: str, sources: dict[str, str], blocks: int, runs: int) -> bool:
    """Median time of each start-up command over ``blocks`` hyperfine runs (order rotated per
    block); prints the table; True when every pairbench --version and --help meets the target."""
    commands = {"python -c pass": ["env", sys.executable, "-c", "pass"],
                "hyperfine --version": ["env", hyperfine, "--version"]}
    for label, src in sources.items():
        for args in STARTUP_ARGS:
            commands[f"pairbench {' '.join(args)} ({label})"] = _pairbench(src, *args)
    names, times = list(commands), {name: [] for name in commands}
    for block in range(blocks):
        order = rotated(names, block)
        for name, measured in zip(order, _hyperfine_times(hyperfine, [commands[n] for n in order], runs),
                                  strict=True):
            times[name] += measured
    print(f"\nstart-up, hyperfine -N, {blocks} blocks x {runs} runs (+3 warmup) per command:\n")
    print("| command | median (ms) | min (ms) | target |")
    print("|---|---|---|---|")
    met = True
    for name in names:
        median = statistics.median(times[name])
        gated = name.startswith(("pairbench --version", "pairbench --help"))
        met &= median <= STARTUP_TARGET_S or not gated
        target = (f"<= {STARTUP_TARGET_S * 1000:.0f} ms: {'met' if median <= STARTUP_TARGET_S else 'MISSED'}"
                  if gated else "")
        print(f"| `{name}` | {median * 1000:.1f} | {min(times[name]) * 1000:.1f} | {target} |")
    return met


def _hyperfine_times(hyperfine: str, commands: list[list[str]], runs: int) -> list[list[float]]:
    """hyperfine -N's per-run wall times (s) of each command, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "startup.json")
        done = subprocess.run([hyperfine, "-N", "--style", "none", "--runs", str(runs), "--warmup", "3",
                               "--export-json", export, *(shlex.join(c) for c in commands)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"hyperfine failed ({done.returncode}):\n{done.stderr}")
        with open(export) as f:
            return [result["times"] for result in json.load(f)["results"]]


def fixed_cost_table(hyperfine: str, sources: dict[str, str], rounds: int, runs: int, command: str) -> bool:
    """``rounds`` invocations of each tool comparing two ``date`` commands with ``runs`` rounds, in
    rotating order; prints medians of wall time, before the first sample, after the last, their
    sum, and wall time minus the samples' own; True when each pairbench meets the fixed-cost target."""
    tools = [*(f"pairbench {label}" for label in sources), "hyperfine"]
    rows: dict[str, list[dict]] = {tool: [] for tool in tools}
    for r in range(rounds):
        for tool in rotated(tools, r):
            if tool == "hyperfine":
                rows[tool].append(_hyperfine_compare(hyperfine, runs, command))
            else:
                rows[tool].append(_pairbench_compare(sources[tool.removeprefix("pairbench ")], runs, command))
    print(f"\n`compare --runs {runs}` of `{command}` twice (pairbench also runs its 1 warmup round; "
          f"hyperfine -N --runs {runs} none), {rounds} invocations per tool, medians in ms:\n")
    print("| tool | wall | before first sample | after last sample | fixed (sum) "
          "| wall minus the samples' own time | target |")
    print("|---|---|---|---|---|---|---|")
    met = True
    for tool in tools:
        med = {key: statistics.median(row[key] for row in rows[tool])
               for key, value in rows[tool][0].items() if value is not None}
        target = ""
        if tool != "hyperfine":
            ok = med["fixed"] <= FIXED_TARGET_S
            met &= ok
            target = f"<= {FIXED_TARGET_S * 1000:.0f} ms: {'met' if ok else 'MISSED'}"
        cells = " | ".join("" if med.get(key) is None else f"{med[key] * 1000:.0f}"
                           for key in ("wall", "before", "after", "fixed", "outside"))
        print(f"| {tool} | {cells} | {target} |")
    return met


def _timed(argv: list[str]) -> tuple[float, int, int]:
    """Run ``argv``; its wall time (s) and the wall clock (ns) at launch and at exit."""
    launched, t0 = time.time_ns(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall, ended = time.perf_counter() - t0, time.time_ns()
    if done.returncode != 0:
        sys.exit(f"{shlex.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return wall, launched, ended


def _pairbench_compare(src: str, runs: int, command: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        stamps, result = os.path.join(tmp, "stamps"), os.path.join(tmp, "result.json")
        wall, launched, ended = _timed(_pairbench(
            src, "compare", "--quiet", "--seed", "1", "--runs", str(runs), "--output", stamps,
            "--json", result, command, command))
        with open(stamps) as f:
            written = [int(line) for line in f]
        with open(result) as f:
            own = sum(sum(s["samples"]["wall_ns"]) for s in json.load(f)["series"]) / 1e9
    before, after = (written[0] - launched) / 1e9, (ended - written[-1]) / 1e9
    return {"wall": wall, "before": before, "after": after, "fixed": before + after, "outside": wall - own}


def _hyperfine_compare(hyperfine: str, runs: int, command: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "hyperfine.json")
        wall, _, _ = _timed([hyperfine, "-N", "--style", "none", "--runs", str(runs),
                             "--export-json", export, command, command])
        with open(export) as f:
            own = sum(sum(r["times"]) for r in json.load(f)["results"])
    return {"wall": wall, "before": None, "after": None, "fixed": None, "outside": wall - own}


if __name__ == "__main__":
    sys.exit(main())
