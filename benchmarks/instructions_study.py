"""Instruction verdicts against time verdicts, on real changes, under load.

For each case (a real pair of programs; ``CASES``) and each load (quiet: the machine as it is;
phased: one busy loop 2 s on, 2 s off; phased+2: that and two busy loops that never stop), the
pair is compared by ``pairbench`` on instructions (Callgrind: this machine has no hardware
counters), on CPU time and on wall time, each in a run of its own, and the verdict, effect,
rounds and elapsed time of each are recorded. Goals (``--goals``): the C worker's +0.5% and A/A
pairs and the Python function's +2% and A/A pairs, each ``--goal-trials`` times on instructions
beside the phased+2 load (``--goal-load phased+2``), or with no load of the study's own
(``--goal-load none``) beside another job's busy loops: instruction counts do not depend on load,
so a study already loading the machine need not be loaded twice. Every row records the busy
loops and phased loops of other processes (``sh -c 'while :; do :; done'``, and a ``sh`` loop
that runs one under ``timeout`` and sleeps) at its start and end; with ``none``, a trial that
finds fewer than two other busy loops runs beside the study's own phased+2 load instead, and its
row says so. A gap of up to two minutes (between another study's records) is waited out, and up to
ten while another job holds ``/work/timing.lock`` (read from ``/proc/locks``, never taken): the
study does not load a machine someone is timing on; after that the trial runs with no load of
its own, and its row shows the busy loops it found. The matrix's load ``none`` is the same: no
load of the study's own, the other loops recorded.

Cases:

* ``c +0.5%``, ``c A/A``: a pairbench.h worker whose body runs 200 or 201 steps of a 64-bit LCG;
* ``python +2%``, ``python +5%``, ``python A/A``: a @pairbench.benchmark function of 100, 102 or
  105 steps of the same LCG;
* ``gzip -1/-2``, ``gzip A/A``: ``gzip -N -c`` of 2 MiB of generated text, whole commands;
* ``std::sort +2.5%``: Google Benchmark sorting 1,000 or 1,025 random ints (time: ``bench`` on
  the harness's own loop; instructions: the whole process, one iteration, ``compare``);
* ``criterion A/A``: the repository's criterion bench (``tests/adapters/programs/critbench``,
  benchmark ``same``: it has no itoa benchmark) against a copy of itself (time: ``bench``;
  instructions: the whole invocation in criterion's ``--profile-time 1`` mode, which runs the
  benchmark for 1 s (its least) with no analysis, ``compare``: a count driven by the clock, so it varies);
* ``memory-bound``: a worker counting the bits of 256 random words with the SWAR popcount (about
  12 instructions a word), against one that looks them up in a 64 MiB table (about 7 instructions
  a word, and a cache miss per lookup): instructions fall, time rises.

Run it under the timing lock, with the load recorded::

    flock /work/timing.lock .venv/bin/python benchmarks/instructions_study.py --out benchmarks/out/instructions
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "src" / "pairbench" / "worker" / "include"
PAIRBENCH = [sys.executable, "-m", "pairbench"]

C_WORKER = r"""
#include "pairbench.h"
static unsigned long v = 1;
PAIRBENCH(lcg) { for (int i = 0; i < STEPS; i++) v = v * 6364136223846793005u + 1442695040888963407u; pairbench_keep(v); }
PAIRBENCH_MAIN()
"""
MEMORY_WORKER = r"""
#include "pairbench.h"
#include <stdlib.h>
static unsigned long words[256];
static unsigned char *table;
PAIRBENCH_SETUP(popcount) {
    static int ready;
    if (!ready) {
        unsigned long x = 88172645463325252u;
        for (int i = 0; i < 256; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; words[i] = x; }
        if (TABLE) {
            table = malloc(1u << 26);
            for (unsigned i = 0; i < (1u << 26); i++) table[i] = (unsigned char)__builtin_popcount(i);
        }
        ready = 1;
    }
}
PAIRBENCH(popcount) {
    unsigned total = 0;
    for (int i = 0; i < 256; i++) {
        unsigned long w = words[i];
#if TABLE
        total += table[w & 0x3FFFFFF] + table[(w >> 26) & 0x3FFFFFF] + table[w >> 52];
#else
        w = w - ((w >> 1) & 0x5555555555555555u);
        w = (w & 0x3333333333333333u) + ((w >> 2) & 0x3333333333333333u);
        w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
        total += (unsigned)((w * 0x0101010101010101u) >> 56);
#endif
        words[i] = words[i] * 6364136223846793005u + 1u;  /* new words each call: new table lines */
    }
    pairbench_keep(total);
}
PAIRBENCH_MAIN()
"""
PYTHON_BENCH = """
import pairbench

@pairbench.benchmark
def lcg():
    x = 1
    for _ in range({steps}):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    return x
"""
SORT_BENCH = r"""
#include <benchmark/benchmark.h>
#include <algorithm>
#include <random>
#include <vector>
static void BM_sort(benchmark::State& state) {
    std::mt19937 rng(42);
    std::vector<int> data(N), work(N);
    for (auto& d : data) d = (int)rng();
    for (auto _ : state) {
        state.PauseTiming(); work = data; state.ResumeTiming();
        std::sort(work.begin(), work.end());
        benchmark::DoNotOptimize(work.data());
    }
}
BENCHMARK(BM_sort);
BENCHMARK_MAIN();
"""


def build(work: Path) -> dict[str, dict]:
    """Every case's two sides: how each metric compares them (``bench`` or ``compare`` arguments)."""
    def cc(name, source, *flags, cxx=False):
        path = work / name
        (work / f"{name}.src").write_text(source)
        compiler = "c++" if cxx else "cc"
        subprocess.run([compiler, "-O2", "-x", "c++" if cxx else "c", str(work / f"{name}.src"), "-x", "none",
                        "-I", str(INCLUDE), *flags, "-o", str(path)], check=True)
        return str(path)

    def py(name, steps):
        directory = work / name
        directory.mkdir()
        (directory / "bench_lcg.py").write_text(PYTHON_BENCH.format(steps=steps))
        return str(directory)

    text = work / "input.txt"
    rng = random.Random(7)
    words = ["pairbench", "instruction", "counted", "paired", "round", "verdict", "callgrind", "cache"]
    text.write_text(" ".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(260_000)))
    cases = {
        "c +0.5%": ("bench", cc("c200", C_WORKER, "-DSTEPS=200"), cc("c201", C_WORKER, "-DSTEPS=201"), 1),
        "c A/A": ("bench", cc("c200a", C_WORKER, "-DSTEPS=200"), cc("c200b", C_WORKER, "-DSTEPS=200"), 0),
        "python +2%": ("bench", py("py100", 100), py("py102", 102), 1),
        "python +5%": ("bench", py("py100b", 100), py("py105", 105), 1),
        "python A/A": ("bench", py("py100c", 100), py("py100d", 100), 0),
        "gzip -1/-2": ("compare", f"gzip -1 -c {text}", f"gzip -2 -c {text}", None),
        "gzip A/A": ("compare", f"gzip -1 -c {text}", f"gzip -1 -c {text} ", 0),
        "memory-bound": ("bench", cc("swar", MEMORY_WORKER, "-DTABLE=0"), cc("table", MEMORY_WORKER, "-DTABLE=1"),
                         None),
    }
    if Path("/usr/include/benchmark/benchmark.h").exists():
        base = cc("sort1000", SORT_BENCH, "-DN=1000", "-lbenchmark", "-lpthread", cxx=True)
        cand = cc("sort1025", SORT_BENCH, "-DN=1025", "-lbenchmark", "-lpthread", cxx=True)
        cases["std::sort +2.5%"] = ("harness", (base, cand), ("gbench", "--benchmark_min_time=0"), 1)
    chains = Path.home() / ".cache" / "pairbench-tests"
    built = sorted(chains.glob("critbench-*/chains"))
    if built:
        a, b = work / "chains-a", work / "chains-b"
        shutil.copy2(built[0], a)
        shutil.copy2(built[0], b)
        cases["criterion A/A"] = ("harness", (str(a), str(b)),
                                  ("criterion", "--bench same --profile-time 1"), 0)
    return {name: {"how": how, "base": base, "cand": cand, "truth": truth}
            for name, (how, base, cand, truth) in cases.items()}


def argv_for(case: dict, metric: str, seed: int, out: Path, alpha: str | None = None) -> list[str]:
    """The pairbench command that compares a case's sides on ``metric`` (at ``alpha``, or the default)."""
    common = ["--metric", metric, "--seed", str(seed), "--json", str(out), *(["--alpha", alpha] if alpha else [])]
    if case["how"] == "bench":
        return [*PAIRBENCH, "bench", *common, case["base"], case["cand"]]
    if case["how"] == "compare":
        return [*PAIRBENCH, "compare", *common, case["base"], case["cand"]]
    harness, options = case["cand"]
    base, cand = case["base"]
    if metric in ("instructions", "cycles-model"):  # counted whole, as commands
        return [*PAIRBENCH, "compare", *common, f"{base} {options}", f"{cand} {options}"]
    return [*PAIRBENCH, "bench", "--harness", harness, *common, base, cand]


def one(case: dict, metric: str, seed: int, scratch: Path, timeout: float, alpha: str | None = None) -> dict:
    out = scratch / f"r-{seed}-{metric}.json"
    started = time.monotonic()
    try:
        done = subprocess.run(argv_for(case, metric, seed, out, alpha), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"metric": metric, "error": "timeout", "elapsed_s": timeout}
    elapsed = time.monotonic() - started
    try:
        comparison = json.loads(out.read_text())["comparisons"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return {"metric": metric, "error": (done.stderr or done.stdout)[-400:], "elapsed_s": elapsed}
    effect = comparison.get("effect") or {}
    return {"metric": metric, "verdict": comparison["verdict"], "estimate": effect.get("estimate"),
            "low": effect.get("low"), "high": effect.get("high"), "method": effect.get("method"),
            "rounds": comparison.get("rounds"), "elapsed_s": round(elapsed, 1),
            "notes": sorted({n.get("code") for n in comparison.get("notes", [])})}


class Load:
    """Background load: ``phased`` (one loop 2 s on, 2 s off) and ``busy`` loops that never stop."""

    def __init__(self, phased: bool, busy: int):
        self.processes = []
        if phased:
            self.processes.append(subprocess.Popen([sys.executable, "-c", (
                "import time\nwhile True:\n    end = time.monotonic() + 2\n    while time.monotonic() < end: pass\n"
                "    time.sleep(2)")]))
        for _ in range(busy):
            self.processes.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))

    def stop(self):
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
            process.wait(5)


LOADS = {"quiet": (False, 0), "phased": (True, 0), "phased+2": (True, 2), "none": (False, 0)}
BUSY_LOOP = "while :; do :; done"
OTHERS_GAP_S = 120  # how long other busy loops may be missing before the goal cells load the machine themselves
LOCKED_GAP_S = 600  # ... while another job holds the timing lock (then the trial runs with no load of its own)
TIMING_LOCK = Path("/work/timing.lock")


def timing_lock_held(lock: Path = TIMING_LOCK, locks: Path = Path("/proc/locks")) -> bool:
    """Whether a process holds a ``flock`` on ``lock``, read from ``locks`` (the lock is not taken)."""
    try:
        inode = str(lock.stat().st_ino)
        lines = locks.read_text().splitlines()
    except OSError:
        return False
    held = (line.split() for line in lines if "->" not in line)  # "->": a process waiting for a lock
    return any(len(f) > 5 and f[1] == "FLOCK" and f[5].rsplit(":", 1)[-1] == inode for f in held)


def others_loops(proc: Path = Path("/proc")) -> dict[str, int]:
    """Other processes' busy loops (``sh -c 'while :; do :; done'``, not one a ``timeout`` runs) and
    phased loops (a shell loop that runs such a loop under ``timeout`` and sleeps), read from ``proc``."""
    busy = phased = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            parent_name = (proc / str(parent) / "comm").read_text().strip()
        except (OSError, ValueError, IndexError):
            continue
        if len(argv) != 3 or Path(argv[0]).name not in ("sh", "bash", "dash") or argv[1] != "-c":
            continue
        if argv[2] == BUSY_LOOP and parent_name != "timeout":
            busy += 1
        elif BUSY_LOOP in argv[2] and "timeout" in argv[2] and "sleep" in argv[2]:
            phased += 1
    return {"busy": busy, "phased": phased}


def measured(case: dict, metric: str, seed: int, scratch: Path, args, load: str) -> dict:
    """One comparison and what ran beside it: with load ``none`` in the goal cells, the study's own
    phased+2 load when fewer than two other busy loops run (the goals are beside two busy loops),
    but never while another job holds the timing lock without them: its timing is not loaded."""
    loops_before, waited = others_loops(), 0
    while load == "none" and args.goals and loops_before["busy"] < 2 and \
            waited < (LOCKED_GAP_S if timing_lock_held() else OTHERS_GAP_S):
        time.sleep(5)  # another study's loops stop between its records, while it builds and in its pauses
        loops_before, waited = others_loops(), waited + 5
    own = None
    if load == "none" and args.goals and loops_before["busy"] < 2 and not timing_lock_held():
        own = Load(*LOADS["phased+2"])
        time.sleep(2)
    try:
        before = loadavg()
        row = one(case, metric, seed, scratch, args.timeout, args.alpha)
        after = loadavg()
    finally:
        if own is not None:
            own.stop()
    row.update(load="phased+2" if own is not None else load, own_load_fallback=own is not None, waited_s=waited,
               others_loops_before=loops_before, others_loops_after=others_loops(),
               loadavg_before=before, loadavg_after=after)
    return row


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/instructions")
    parser.add_argument("--loads", default="quiet,phased,phased+2")
    parser.add_argument("--metrics", default="instructions,cpu,wall")
    parser.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    parser.add_argument("--goals", action="store_true", help="the goal cells instead of the matrix")
    parser.add_argument("--goal-trials", type=int, default=20)
    parser.add_argument("--goal-cases", default="c +0.5%,c A/A,python +2%,python A/A")
    parser.add_argument("--goal-load", choices=("phased+2", "none"), default="phased+2",
                        help="the goal cells' own load: phased+2, or none beside another job's busy loops")
    parser.add_argument("--seed", type=int, default=4100)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--alpha", default=None, help="pairbench's --alpha (default: its own, 0.01)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / (("goals" if args.goals else "matrix") + (f"-alpha{args.alpha}" if args.alpha else "") + ".jsonl")
    with tempfile.TemporaryDirectory(prefix="pairbench-instructions-") as work:
        cases = build(Path(work))
        chosen = args.goal_cases if args.goals else args.cases
        if chosen:
            cases = {name: cases[name] for name in chosen.split(",")}
        loads = [args.goal_load] if args.goals else args.loads.split(",")
        metrics = ["instructions"] if args.goals else args.metrics.split(",")
        trials = args.goal_trials if args.goals else 1
        seed = args.seed
        for load in loads:
            background = Load(*LOADS[load])
            time.sleep(2 if background.processes else 0)
            try:
                for name, case in cases.items():
                    for trial in range(trials):
                        for metric in metrics:
                            seed += 1
                            row = measured(case, metric, seed, Path(work), args, load)
                            row.update(case=name, trial=trial, seed=seed, truth=case["truth"],
                                       time=time.strftime("%Y-%m-%dT%H:%M:%S"))
                            with open(results, "a") as f:
                                f.write(json.dumps(row) + "\n")
                            print(json.dumps(row), flush=True)
            finally:
                background.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
