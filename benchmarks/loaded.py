"""Under load: pairbench's verdicts on wall time and on CPU time, against the peers (issue 24, item 5).

Parts (``--part``), each appending one record per trial and design to ``--out/PART.jsonl`` (a rerun
resumes; ``--report-only`` prints the tables; ``--max-minutes`` stops a part after that long, so a
study runs as several locked runs):

* ``command``: the calibration study's 25 ms command (``calibration.py``'s ``spin``, calibrated here)
  against itself (A/A) and against a copy 1% slower; designs: ``pairbench compare`` with its defaults
  and ``--metric wall``, the same with ``--metric cpu``, and hyperfine as its users run it
  (``hyperfine -N --warmup 1 A B``: its default runs, all of A then all of B) judged by Welch's t-test
  at alpha 0.01 and 0.05;
* ``sleeper``: ``sleep 0.025`` against itself and against ``sleep 0.02525`` (+1%), with pairbench's
  default (``--metric auto``): a command that waits, which auto must decide on wall time;
* ``gbench``: a Google Benchmark program built here (``BM_Sort``: std::sort of N random ints, the
  copy made under PauseTiming; ``BM_MapInsert``; ``BM_Memcpy64K``), A against a second build (A/A)
  and against a build sorting 3% more elements (the report's +2.5%); ``pairbench bench`` with its
  defaults (``--metric auto``), and on wall and on CPU time (Google Benchmark's own ``cpu_time``);
* ``go``: the Go standard library's ``internal/strconv`` test binary built twice here (``go test -c``),
  its 12 ``Atof64`` and ``ParseInt/Pos`` benchmarks, A/A; ``pairbench bench`` with its defaults
  (``--metric auto``, ``--repetitions 8``), on wall time, and ``pairbench-once``: the default with
  ``--repetitions 1`` (one repetition a process, as before issue 24's repetitions), and benchstat on ``-test.count 10 -test.benchtime 100ms`` of A then of B (alpha 0.05 and 0.01);
* ``criterion``: the 14 benchmarks of the ``itoa`` crate's own criterion suite (its source from the
  cargo registry, built here), the bench binary against a copy of itself (A/A); ``pairbench bench``
  with its defaults (``--metric auto``) and on wall time, and criterion's own ``--save-baseline`` / ``--baseline`` compare with its
  defaults (a change is "Performance has regressed" or "has improved").

* ``go-repetitions``: each repetition of a Go invocation apart. Per round and benchmark of
  ``GO_PER_REPETITION``, A and A2 with ``-test.count 8`` and with ``-test.count 1``, each in a random
  order; from the same invocations, the spread (MAD) of a round's log-ratio for the median of the
  first k repetitions and of repetitions 2..k (the first a warmup), on the harness's time and on it
  times the process's CPU share (what ``--metric auto`` decides Go on), the ratio of the first
  repetition to the later ones, and the information per second against one repetition a process;
* ``repetitions`` (issue 24, item 4): does a harness invocation that repeats its measurement k times
  (Google Benchmark's ``--benchmark_repetitions``, Go's ``-test.count``), paired at the invocation
  level (a round's value: the log-ratio of the two invocations' medians), give more information per
  second than one? For k in ``REPETITIONS``, ``--rounds`` interleaved rounds of A against its second
  build, in a random order each round; per k the MAD of the rounds' values, the time of a round, and
  the information per second, 1 / (MAD^2 x round time), relative to k = 1.

Conditions (``--conditions``; calibration.py's load generator, one per chunk of trials, after a lead-in):
``phased+2`` (two busy CPUs, plus the phased load: 0, 1 or 2 more busy loops, exponential phases of
mean 3 s), ``ramp+2`` (two busy CPUs, plus a load rising from 0 to 2 busy loops over 30 s and
dropping back), ``busy2`` and ``busy1`` (two or one busy CPUs, nothing else added). The machine's
own load (other users) comes on top and is recorded per trial (1-minute load average).

Usage::

    flock /work/.heavy.lock .venv/bin/python benchmarks/loaded.py --part command --conditions phased+2,ramp+2 \\
        --trials 16,16 --max-minutes 24
    flock /work/.heavy.lock .venv/bin/python benchmarks/loaded.py --part gbench --conditions busy2 --trials 10,10
    flock /work/.heavy.lock .venv/bin/python benchmarks/loaded.py --part go --conditions busy1 --trials 5,0
    flock /work/.heavy.lock .venv/bin/python benchmarks/loaded.py --part criterion --conditions busy1 --trials 3,0
    .venv/bin/python benchmarks/loaded.py --report-only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402  (scripts beside this one: load, workload, bounds, peers)
import suites  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "out" / "loaded"
PAIRBENCH = (sys.executable, "-m", "pairbench")
CONDITIONS = {"phased+2": ("phased", 2), "ramp+2": ("ramp", 2), "busy2": ("steady", 2), "busy1": ("steady", 1)}
PARTS = ("command", "sleeper", "gbench", "go", "criterion", "repetitions", "go-repetitions")
DESIGNS_ALL = ("pairbench-wall", "pairbench-cpu", "pairbench-auto", "pairbench-once", "pairbench-5s", "hyperfine+welch",
               "benchstat", "criterion")
SLEEPS = {"aa": ("sleep 0.025", "sleep 0.025"), "ab": ("sleep 0.025", "sleep 0.02525")}
KINDS = ("aa", "ab")  # A/A, and the part's true change
CHANGE = {"command": "+1%", "sleeper": "+1% (sleep)", "gbench": "+2.5% (BM_Sort)", "go": "-", "criterion": "-"}
CHUNK = 8  # trials per load generator
LEAD_IN_S = 4.0
GO_FILTER = "Atof64|ParseInt/Pos"
GO_PATTERN = "Atof64|ParseInt/Pos"
ITOA = "itoa-1.0.19"
REPETITIONS = (1, 2, 4, 8)
GO_REPEATED = ("BenchmarkAtof64Decimal", 262144)  # about 10 ms a repetition here
GO_PER_REPETITION = (("BenchmarkAtof64Decimal", 262144), ("BenchmarkAtof64Big", 131072),
                     ("BenchmarkParseInt/Pos/7bit", 1048576), ("BenchmarkAtof64RandomFloats", 131072))
"""--part go-repetitions: benchmarks of internal/strconv at the counts bench's pilot chose (about 10 ms)."""
GO_MOST = 8  # repetitions of an invocation in --part go-repetitions

GBENCH_SOURCE = r"""
#include <benchmark/benchmark.h>
#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <vector>
#ifndef SORT_N
#define SORT_N 10000
#endif
static void BM_Sort(benchmark::State& state) {
  std::mt19937 rng(42);
  std::vector<int> data(SORT_N);
  for (auto& x : data) x = static_cast<int>(rng());
  std::vector<int> work;
  for (auto _ : state) {
    state.PauseTiming();
    work = data;
    state.ResumeTiming();
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
}
BENCHMARK(BM_Sort);
static void BM_MapInsert(benchmark::State& state) {
  for (auto _ : state) {
    std::map<int, int> m;
    for (int i = 0; i < 1000; i++) m[(i * 7919) % 1000] = i;
    benchmark::DoNotOptimize(m.size());
  }
}
BENCHMARK(BM_MapInsert);
static void BM_Memcpy64K(benchmark::State& state) {
  std::vector<char> a(65536, 1), b(65536);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Memcpy64K);
BENCHMARK_MAIN();
"""


# --------------------------------------------------------------------------- programs


def build_gbench(out: Path) -> dict[str, Path]:
    """A, A2 (a second build of A) and B (sorting 3% more elements)."""
    out.mkdir(parents=True, exist_ok=True)
    source = out / "bench.cc"
    source.write_text(GBENCH_SOURCE)
    built = {}
    for name, n in (("a", 10000), ("a2", 10000), ("ab", 10300)):
        target = out / f"bench-{name}"
        if not target.exists():
            subprocess.run(["g++", "-O2", f"-DSORT_N={n}", str(source), "-o", str(target), "-lbenchmark",
                            "-lpthread"], check=True)
        built[name] = target
    return built


def build_go(out: Path) -> dict[str, Path]:
    """Two builds of the standard library's internal/strconv test binary (byte-identical, two files)."""
    out.mkdir(parents=True, exist_ok=True)
    built = {}
    for name in ("a", "a2"):
        target = (out / f"istrconv-{name}.test").resolve()
        if not target.exists():
            subprocess.run(["go", "test", "-c", "-o", str(target), "internal/strconv"], check=True,
                           env={**os.environ, "GOTOOLCHAIN": "local"})
        built[name] = target
    return built


def build_criterion(out: Path) -> dict[str, Path]:
    """The itoa crate's criterion bench binary (built from the cargo registry's source) and a copy."""
    out.mkdir(parents=True, exist_ok=True)
    built = {"a": out / "itoa-bench-a", "a2": out / "itoa-bench-a2"}
    if built["a"].exists() and built["a2"].exists():
        return built
    registry = Path.home() / ".cargo" / "registry" / "src"
    source = next(registry.glob(f"*/{ITOA}"), None)
    if source is None:
        raise SystemExit(f"{ITOA} is not in {registry}: run `cargo fetch` in a crate that depends on it")
    crate = out / ITOA
    shutil.rmtree(crate, ignore_errors=True)
    shutil.copytree(source, crate)
    done = subprocess.run(["cargo", "bench", "--no-run", "--message-format=json"], cwd=crate, check=True,
                          capture_output=True, text=True)
    executables = [json.loads(line).get("executable") for line in done.stdout.splitlines()
                   if line.startswith("{") and '"executable"' in line]
    bench = next(Path(e) for e in executables if e and Path(e).name.startswith("bench-"))
    for target in built.values():
        shutil.copy2(bench, target)
    return built


# --------------------------------------------------------------------------- designs


def pairbench_compare(part: str, commands: tuple[str, str], kind: str, metric: str, seed: int, work: Path) -> dict:
    """``pairbench compare`` of ``commands`` with its defaults and ``--metric``: the verdict, the metric it
    was on, and the whole time."""
    json_path = work / "compare.json"
    json_path.unlink(missing_ok=True)
    t0 = time.monotonic()
    subprocess.run([*PAIRBENCH, "compare", "-q", "--seed", str(seed), "--metric", metric, "--json", str(json_path),
                    "-n", "A", "-n", "B", *commands], cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=False)
    wall = time.monotonic() - t0
    if not json_path.exists():
        return {"verdicts": {"command": None}, "wall_s": wall}
    kept = work.parent / "documents"
    kept.mkdir(exist_ok=True)
    shutil.copy2(json_path, kept / f"{part}-{kind}-{metric}-{seed}.json")
    document = json.loads(json_path.read_text())
    decision = cal.pairbench_decision(document)
    decision.pop("pairs", None)
    verdict = decision.get("verdict")
    decided_on = [c.get("metric") for c in document.get("comparisons", [])]
    return {"verdicts": {"command": _verdict(verdict, decision.get("negligible"))}, "wall_s": wall,
            "rounds": decision.get("rounds"), "effect": [decision.get(k) for k in ("estimate", "low", "high")],
            "decided_on": decided_on}


def hyperfine_welch(spin: Path, args: dict, kind: str, work: Path) -> dict:
    """hyperfine -N --warmup 1 A B with its default runs (all of A, then all of B), Welch's t-test."""
    export = work / "hyperfine.json"
    export.unlink(missing_ok=True)
    b = args["aa" if kind == "aa" else "ab1"]
    t0 = time.monotonic()
    subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", "1", "--export-json", str(export),
                    f"{spin} {args['aa']}", f"{spin} {b} "], check=True, cwd=ROOT, capture_output=True,
                   timeout=600)
    results = json.loads(export.read_text())["results"]
    times = [np.array(r["times"]) for r in results]
    out = {}
    for alpha in (0.01, 0.05):
        decision = cal.welch_decision(times[0], times[1], alpha=alpha)
        out[f"alpha {alpha:g}"] = {"command": decision["verdict"]}
    return {"peer_verdicts": out, "wall_s": time.monotonic() - t0, "runs": [len(t) for t in times]}


def pairbench_bench(programs: dict[str, Path], kind: str, metric: str, seed: int, work: Path,
                    extra: tuple[str, ...] = (), tag: str = "") -> dict:
    """``pairbench bench`` with its defaults and ``--metric``: each benchmark's verdict, the whole time."""
    b = programs["a2" if kind == "aa" else "ab"]
    document = suites.pairbench_bench(["--seed", str(seed), "--metric", metric, "--no-store", *extra,
                                       "-n", "A", "-n", "B", str(programs["a"]), str(b)], work / "bench.json")
    kept = work.parent / "documents"  # every sample kept: the other metrics are computed from them
    kept.mkdir(exist_ok=True)
    shutil.copy2(work / "bench.json", kept / f"{programs['a'].parent.name}-{kind}-{metric}{tag}-{seed}.json")
    rounds = {c["benchmark"]["name"]: c["rounds"] for c in document.get("comparisons", [])}
    effects = {c["benchmark"]["name"]: [c["effect"][k] for k in ("estimate", "low", "high")] if c["effect"] else None
               for c in document.get("comparisons", [])}
    decided_on = [c.get("metric") for c in document.get("comparisons", [])]
    return {"verdicts": suites.verdicts(document), "wall_s": document["_wall_s"], "rounds": rounds,
            "effects": effects, "exit": document["_exit"], "decided_on": decided_on}


def benchstat_peer(benchstat: Path, programs: dict[str, Path], kind: str, work: Path) -> dict:
    """benchstat on -test.count 10 -test.benchtime 100ms of A, then of B: its verdict per benchmark."""
    found = suites.benchstat_trial(benchstat, programs["a"], programs["a2" if kind == "aa" else "ab"], work,
                                   GO_PATTERN)
    out = {f"alpha {alpha:g}": {name: _peer_verdict(p, change, alpha) for name, (p, change) in found["rows"].items()}
           for alpha in (0.05, 0.01)}
    return {"peer_verdicts": out, "wall_s": found["peer_wall_s"]}


def criterion_peer(programs: dict[str, Path], kind: str, work: Path) -> dict:
    """criterion's own compare: A with --save-baseline, then B with --baseline, its defaults."""
    home = work / "criterion-home"
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "CRITERION_HOME": str(home)}
    t0 = time.monotonic()
    subprocess.run([str(programs["a"]), "--bench", "--save-baseline", "base"], env=env, check=True,
                   capture_output=True, timeout=1800)
    done = subprocess.run([str(programs["a2" if kind == "aa" else "ab"]), "--bench", "--baseline", "base"], env=env,
                          check=True, capture_output=True, text=True, timeout=1800)
    return {"peer_verdicts": {"criterion": parse_criterion_compare(done.stdout)}, "wall_s": time.monotonic() - t0}


def parse_criterion_compare(text: str) -> dict[str, str]:
    """Each benchmark of criterion's compare output -> slower (regressed), faster (improved), or no change
    ("No change in performance detected." or "Change within noise threshold.")."""
    out, name = {}, None
    for line in text.splitlines():
        heading = re.match(r"^(\S.*?)\s+time:\s", line)
        if heading:
            name = heading.group(1).strip()
        elif line and not line[0].isspace() and "time:" not in line and not line.startswith(("Benchmarking", "Found")):
            name = line.strip()
        if name is None:
            continue
        if "Performance has regressed" in line:
            out[name] = "slower"
        elif "Performance has improved" in line:
            out[name] = "faster"
        elif "No change in performance" in line or "Change within noise threshold" in line:
            out[name] = "no change"
    return out


def _peer_verdict(p: float, change: float, alpha: float) -> str:
    return "no change" if p >= alpha else ("slower" if change > 0 else "faster")


def _verdict(verdict: str | None, negligible) -> str | None:
    return None if verdict is None else verdict + ("-negligible" if negligible else "")


# --------------------------------------------------------------------------- trials


@dataclass(frozen=True)
class Trial:
    index: int
    part: str
    condition: str
    kind: str
    design: str
    seed: int


DESIGNS = {"command": ("pairbench-wall", "pairbench-cpu", "hyperfine+welch"),
           "sleeper": ("pairbench-auto",),
           "gbench": ("pairbench-wall", "pairbench-cpu", "pairbench-auto"),
           "go": ("pairbench-wall", "pairbench-auto", "benchstat"),
           "criterion": ("pairbench-wall", "pairbench-auto", "criterion")}
"""Per part: pairbench on each metric (auto: the default), and the peer."""
ADDED_DESIGNS = {"command": ("pairbench-auto",), "go": ("pairbench-once", "pairbench-cpu", "pairbench-5s"),
                 "criterion": ("pairbench-5s",)}
"""Designs added after a part's first records: run after the others of each trial, outside the seeded order,
so that the trials (and seeds) of the records already taken stay the same."""


def designs(part: str) -> list[str]:
    return [*DESIGNS[part], *ADDED_DESIGNS.get(part, ())]


def plan(part: str, conditions: list[str], counts: dict[str, int], seed: int) -> list[Trial]:
    """Every trial: per condition, the kinds in a seeded random order, each run by every design in a
    seeded random order one after the other (so the designs of a trial share its stretch of load)."""
    rng = np.random.default_rng([seed, PARTS.index(part)])
    trials: list[Trial] = []
    for condition in conditions:
        kinds = [k for k in KINDS for _ in range(counts[k])]
        for j in rng.permutation(len(kinds)):
            trial_seed = int(rng.integers(2**31))
            for design in [*rng.permutation(DESIGNS[part]), *ADDED_DESIGNS.get(part, ())]:
                trials.append(Trial(len(trials), part, condition, kinds[j], str(design), trial_seed))
    return trials


def runner(part: str, out: Path) -> Callable[[Trial, Path], dict]:
    """The function running one trial of ``part`` (programs built, the command calibrated, first)."""
    if part == "command":
        spin, meta = cal.ensure_calibration(argparse.Namespace(out=out / "command", workloads=["25ms"], pilot=None,
                                                               run_ms=cal.RUN_MS, calibration_rounds=100))
        args = meta["calibrations"]["25ms"]["args"]

        def command(trial: Trial, work: Path) -> dict:
            if trial.design == "hyperfine+welch":
                return hyperfine_welch(spin, args, trial.kind, work)
            b = args["aa" if trial.kind == "aa" else "ab1"]
            return pairbench_compare("command", (f"{spin} {args['aa']}", f"{spin} {b}"), trial.kind,
                                     trial.design.removeprefix("pairbench-"), trial.seed, work)
        return command
    if part == "sleeper":
        def sleeper(trial: Trial, work: Path) -> dict:
            return pairbench_compare("sleeper", SLEEPS[trial.kind], trial.kind, trial.design.removeprefix("pairbench-"),
                                     trial.seed, work)
        return sleeper
    programs = {"gbench": build_gbench, "go": build_go, "criterion": build_criterion}[part](out / part)
    extra = {"go": ("--harness", "go", "-k", GO_FILTER), "criterion": ("--harness", "criterion"),
             "gbench": ("--harness", "gbench")}[part]
    benchstat = suites.ensure_benchstat() if part == "go" else None

    def harness(trial: Trial, work: Path) -> dict:
        if trial.design == "benchstat":
            return benchstat_peer(benchstat, programs, trial.kind, work)
        if trial.design == "criterion":
            return criterion_peer(programs, trial.kind, work)
        if trial.design == "pairbench-once":  # the default before --repetitions: one repetition a process
            return pairbench_bench(programs, trial.kind, "auto", trial.seed, work, (*extra, "--repetitions", "1"),
                                   "-once")
        if trial.design == "pairbench-5s":  # the default with bench's budget before the harnesses' own (issue 24)
            return pairbench_bench(programs, trial.kind, "auto", trial.seed, work, (*extra, "--max-time", "5s"), "-5s")
        return pairbench_bench(programs, trial.kind, trial.design.removeprefix("pairbench-"), trial.seed, work, extra)
    return harness


def run_part(args) -> None:
    path = args.out / f"{args.part}.jsonl"
    done = {(r["condition"], r["kind"], r["seed"], r["design"]) for r in cal.load_records(path)}
    todo = [t for t in plan(args.part, args.conditions, args.counts, args.seed)
            if (t.condition, t.kind, t.seed, t.design) not in done and t.design in (args.designs or DESIGNS_ALL)]
    run = runner(args.part, args.out)
    spin = cal.build_spin(args.out / "load")
    deadline = time.monotonic() + 60 * args.max_minutes
    chunks = [[t for t in todo if t.condition == c][i:i + CHUNK] for c in args.conditions
              for i in range(0, len(todo), CHUNK)]
    with tempfile.TemporaryDirectory(prefix="loaded-", dir=args.out) as tmp, open(path, "a") as sink:
        work = Path(tmp)
        for chunk in (c for c in chunks if c):
            shape, busy = CONDITIONS[chunk[0].condition]
            with cal.background_load(spin, chunk[0].seed, work / "load.log", LEAD_IN_S, shape=shape, extra=busy):
                for trial in chunk:
                    if time.monotonic() > deadline:
                        print("--max-minutes reached: rerun to resume", flush=True)
                        return
                    before = os.getloadavg()[0]
                    record = {**asdict(trial), **run(trial, work), "loadavg_before": before,
                              "loadavg_after": os.getloadavg()[0], "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                    print(f"[{trial.index + 1}] {trial.part} {trial.condition} {trial.kind} {trial.design}: "
                          f"{_brief(record)} {record['wall_s']:.1f} s, load {before:.1f}", flush=True)


def _brief(record: dict) -> str:
    verdicts = record.get("verdicts") or next(iter((record.get("peer_verdicts") or {}).values()), {})
    counts: dict[str, int] = {}
    for v in verdicts.values():
        counts[str(v)] = counts.get(str(v), 0) + 1
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))


# --------------------------------------------------------------------------- repetitions per invocation


def gbench_repetitions(program: Path, k: int) -> list[tuple[float, float]]:
    """One invocation of BM_Sort repeated ``k`` times: (real, cpu) ns per iteration of each repetition."""
    done = subprocess.run([str(program), "--benchmark_filter=^BM_Sort$", f"--benchmark_repetitions={k}",
                           "--benchmark_min_time=0.01", "--benchmark_format=json",
                           "--benchmark_report_aggregates_only=false"], check=True, capture_output=True, text=True)
    runs = [b for b in json.loads(done.stdout)["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    return [(float(b["real_time"]), float(b["cpu_time"])) for b in runs]


def go_repetitions(program: Path, k: int) -> list[tuple[float, float]]:
    """One invocation of a Go benchmark with -test.count ``k``: (ns/op, ns/op) of each repetition (Go
    reports no CPU time of its own)."""
    name, iterations = GO_REPEATED
    done = subprocess.run([str(program), "-test.run", "^$", "-test.bench", f"^{name}$", "-test.count", str(k),
                           "-test.benchtime", f"{iterations}x"], check=True, capture_output=True, text=True)
    times = [float(m.group(1)) for m in re.finditer(r"^Benchmark\S+\s+\d+\s+([\d.]+) ns/op", done.stdout, re.M)]
    return [(t, t) for t in times]


def repetitions_part(args) -> None:
    """Rounds of A and A2 (random order), each invocation repeated k times, for every k and harness."""
    path = args.out / "repetitions.jsonl"
    done = {(r["harness"], r["k"], r["condition"]) for r in cal.load_records(path)}
    spin = cal.build_spin(args.out / "load")
    rng = np.random.default_rng(args.seed)
    with open(path, "a") as sink:
        for condition in args.conditions:
            shape, busy = CONDITIONS[condition]
            with tempfile.TemporaryDirectory() as tmp, cal.background_load(spin, args.seed, Path(tmp) / "load.log",
                                                                           LEAD_IN_S, shape=shape, extra=busy):
                for harness, build, run in (("gbench", build_gbench, gbench_repetitions),
                                            ("go", build_go, go_repetitions)):
                    programs = build(args.out / harness)
                    for k in rng.permutation(REPETITIONS):
                        if (harness, int(k), condition) in done:
                            continue
                        record = {"harness": harness, "k": int(k), "condition": condition,
                                  **repeated_rounds(run, programs, int(k), args.rounds, rng),
                                  "loadavg_before": os.getloadavg()[0]}
                        sink.write(json.dumps(record) + "\n")
                        sink.flush()
                        print(json.dumps({key: v for key, v in record.items() if key != "rounds"}), flush=True)


def go_invocation(program: Path, name: str, iterations: int, k: int) -> dict:
    """One invocation of a Go benchmark with -test.count ``k``: each repetition's ns/op, the process's
    wall time and CPU time (user + system, its rusage)."""
    pattern = "/".join(f"^{part}$" for part in name.split("/"))
    before, t0 = os.times(), time.monotonic()
    done = subprocess.run([str(program), "-test.run", "^$", "-test.bench", pattern, "-test.count", str(k),
                           "-test.benchtime", f"{iterations}x", "-test.benchmem", "-test.cpu", "2"], check=True,
                          capture_output=True, text=True)
    wall, after = time.monotonic() - t0, os.times()
    reps = [float(m.group(1)) for m in re.finditer(r"^Benchmark\S+\s+\d+\s+([\d.]+) ns/op", done.stdout, re.M)]
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"reps": reps, "wall": wall, "cpu": cpu}


def go_repetitions_part(args) -> None:
    """``--rounds`` rounds of every benchmark of ``GO_PER_REPETITION``: A and A2 with -test.count 8, then
    with -test.count 1, each pair in a random order, under each condition's load."""
    path = args.out / "go-repetitions.jsonl"
    spin = cal.build_spin(args.out / "load")
    programs = build_go(args.out / "go")
    rng = np.random.default_rng(args.seed)
    with open(path, "a") as sink:
        for condition in args.conditions:
            shape, busy = CONDITIONS[condition]
            with tempfile.TemporaryDirectory() as tmp, cal.background_load(spin, args.seed, Path(tmp) / "load.log",
                                                                           LEAD_IN_S, shape=shape, extra=busy):
                for r in range(args.rounds):
                    for name, iterations in GO_PER_REPETITION:
                        row = {"condition": condition, "bench": name, "round": r, "seed": args.seed,
                               "loadavg": os.getloadavg()[0]}
                        for k in (GO_MOST, 1):
                            for side in rng.permutation(["a", "a2"]):
                                row[f"{side}/{k}"] = go_invocation(programs[str(side)], name, iterations, k)
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()


def _mad(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(1.4826 * np.median(np.abs(x - np.median(x))))


GO_STATISTICS = {**{f"median of 1..{k}": (0, k) for k in (1, 2, 4, 8)},
                 **{f"median of 2..{k}": (1, k) for k in (2, 3, 4, 8)}}
"""--part go-repetitions: a side's value in a round, the median of its repetitions [start, stop)."""


def go_repetition_rows(records: list[dict]) -> list[dict]:
    """Per condition, benchmark and statistic: the MAD of the rounds' log-ratios (the harness's time, and
    it times the process's CPU share), the invocation's time, information per second against -test.count 1."""
    rows = []
    for key in sorted({(r["condition"], r["bench"]) for r in records}):
        rs = [r for r in records if (r["condition"], r["bench"]) == key]
        t1 = float(np.median([r[f"{s}/1"]["wall"] for r in rs for s in ("a", "a2")]))
        t8 = float(np.median([r[f"{s}/{GO_MOST}"]["wall"] for r in rs for s in ("a", "a2")]))
        first = float(np.median([r[f"{s}/{GO_MOST}"]["reps"][0] / np.median(r[f"{s}/{GO_MOST}"]["reps"][1:])
                                 for r in rs for s in ("a", "a2")]))

        once = [_spread(rs, 1, 0, 1, cpu) for cpu in (False, True)]
        for name, (start, stop) in GO_STATISTICS.items():
            t = t1 + (stop - 1) / (GO_MOST - 1) * (t8 - t1)  # the invocation's time at that count, interpolated
            mads = [_spread(rs, GO_MOST, start, stop, cpu) for cpu in (False, True)]
            rows.append({"condition": key[0], "bench": key[1], "statistic": name, "rounds": len(rs),
                         "loadavg": float(np.median([r["loadavg"] for r in rs])), "first_over_later": first,
                         "mad_once": once, "mad": mads, "invocation_s": t,
                         "info": [(o ** 2 * t1) / (m ** 2 * t) for o, m in zip(once, mads, strict=True)]})
    return rows


def _spread(rounds: list[dict], k: int, start: int, stop: int, cpu: bool) -> float:
    """The MAD of the rounds' log-ratios A2/A at -test.count ``k``, a side's value the median of its
    repetitions [start, stop) (times the process's CPU share when ``cpu``)."""
    def value(inv: dict) -> float:
        return float(np.median(inv["reps"][start:stop])) * (inv["cpu"] / inv["wall"] if cpu else 1.0)

    return _mad([math.log(value(r[f"a2/{k}"]) / value(r[f"a/{k}"])) for r in rounds])


def render_go_repetitions(records: list[dict]) -> str:
    lines = ["| condition | benchmark | load | first rep / later | statistic | MAD, harness's time | MAD, x CPU share "
             "| invocation | information per second vs -test.count 1, time / x CPU share |", "|---" * 9 + "|"]
    for r in go_repetition_rows(records):
        lines.append(f"| {r['condition']} | {r['bench']} | {r['loadavg']:.1f} | {r['first_over_later']:.2f} "
                     f"| {r['statistic']} | {100 * r['mad'][0]:.1f}% | {100 * r['mad'][1]:.1f}% "
                     f"| {1e3 * r['invocation_s']:.0f} ms | {r['info'][0]:.2f} / {r['info'][1]:.2f} |")
    return "\n".join(lines)


def repeated_rounds(run, programs: dict[str, Path], k: int, rounds: int, rng) -> dict:
    """``rounds`` rounds of both programs in a random order: each invocation's repetitions and time."""
    out = []
    for _ in range(rounds):
        row = {}
        for side in rng.permutation(["a", "a2"]):
            t0 = time.monotonic()
            reps = run(programs[str(side)], k)
            row[str(side)] = {"reps": reps, "s": time.monotonic() - t0}
        out.append(row)
    return {"rounds": out}


def repetition_rows(records: list[dict]) -> list[dict]:
    """Per harness, condition and k: the MAD of the rounds' log-ratios of medians (wall and CPU), the
    time of a round, and the information per second relative to k = 1."""
    rows = []
    for r in records:
        walls = np.array([[np.median([x[0] for x in row[s]["reps"]]) for s in ("a", "a2")] for row in r["rounds"]])
        cpus = np.array([[np.median([x[1] for x in row[s]["reps"]]) for s in ("a", "a2")] for row in r["rounds"]])
        round_s = float(np.mean([row["a"]["s"] + row["a2"]["s"] for row in r["rounds"]]))
        mads = [_mad(d) for d in (np.log(walls[:, 1] / walls[:, 0]), np.log(cpus[:, 1] / cpus[:, 0]))]
        rows.append({"harness": r["harness"], "condition": r["condition"], "k": r["k"], "rounds": len(r["rounds"]),
                     "mad_wall": mads[0], "mad_cpu": mads[1], "round_s": round_s,
                     "info_wall": 1.0 / (mads[0] ** 2 * round_s), "info_cpu": 1.0 / (mads[1] ** 2 * round_s),
                     "loadavg": r["loadavg_before"]})
    for row in rows:
        one = next((x for x in rows if (x["harness"], x["condition"], x["k"]) == (row["harness"], row["condition"], 1)),
                   None)
        row["relative_wall"] = row["info_wall"] / one["info_wall"] if one else math.nan
        row["relative_cpu"] = row["info_cpu"] / one["info_cpu"] if one else math.nan
    return sorted(rows, key=lambda x: (x["harness"], x["condition"], x["k"]))


def render_repetitions(records: list[dict]) -> str:
    lines = ["| harness | condition | repetitions per invocation | rounds | MAD of round values, wall (harness's time) "
             "| MAD, CPU | round time | information per second vs 1, wall | vs 1, CPU | load avg |", "|---" * 10 + "|"]
    for r in repetition_rows(records):
        lines.append(f"| {r['harness']} | {r['condition']} | {r['k']} | {r['rounds']} | {100 * r['mad_wall']:.2f}% "
                     f"| {100 * r['mad_cpu']:.2f}% | {1e3 * r['round_s']:.0f} ms | {r['relative_wall']:.2f} "
                     f"| {r['relative_cpu']:.2f} | {r['loadavg']:.1f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- report


def cells(records: list[dict]) -> list[dict]:
    """One row per part, condition, kind and design (a peer at each of its levels): every benchmark's
    verdict over the trials, the changes, those in the wrong direction, the equivalent ones, and time."""
    rows = []
    keys = sorted({(r["part"], r["condition"], r["kind"], r["design"]) for r in records},
                  key=lambda k: (PARTS.index(k[0]), k[1], k[2], k[3]))
    for part, condition, kind, design in keys:
        cell = [r for r in records if (r["part"], r["condition"], r["kind"], r["design"]) == (part, condition, kind, design)]
        variants = sorted(cell[0].get("peer_verdicts") or {None: None}, key=str)
        for variant in variants:
            rows.append(cell_row(part, condition, kind, design if variant is None else f"{design}, {variant}",
                                 [(r.get("verdicts") if variant is None else r["peer_verdicts"][variant]) or {}
                                  for r in cell], cell))
    return rows


def cell_row(part: str, condition: str, kind: str, design: str, verdicts: list[dict], cell: list[dict]) -> dict:
    flat = [str(v).removesuffix("-negligible") for trial in verdicts for v in trial.values()]
    slower, faster = flat.count("slower"), flat.count("faster")
    changed = slower + faster
    per_trial_equivalent = [np.mean([str(v) == "equivalent" for v in t.values()]) for t in verdicts if t]
    return {"part": part, "condition": condition, "kind": kind, "design": design, "trials": len(cell),
            "verdicts": len(flat), "slower": slower, "faster": faster, "equivalent": flat.count("equivalent"),
            "changes": changed, "none": flat.count("None"),
            "bound": cal.clopper_pearson_upper(changed, len(flat)) if kind == "aa" and flat else None,
            "median_equivalent_share": float(np.median(per_trial_equivalent)) if per_trial_equivalent else None,
            "median_s": float(np.median([r["wall_s"] for r in cell])),
            "decided_on": {m: sum(r.get("decided_on", []).count(m) for r in cell) for m in ("wall", "cpu")},
            "loadavg": float(np.median([r["loadavg_before"] for r in cell]))}


def render(records: list[dict]) -> str:
    lines = ["| part | condition | change | design | trials | verdicts | slower | faster | equivalent | false changes "
             "(A/A; CP 95% bound) | found (true change) | wrong direction | half equivalent or more (trials) "
             "| decided on (wall/cpu) | median s | load avg |", "|---" * 16 + "|"]
    for r in cells(records):
        aa = r["kind"] == "aa"
        false = f"{r['changes']}/{r['verdicts']} (<= {100 * r['bound']:.1f}%)" if aa else "-"
        found = "-" if aa else f"{r['slower']}/{r['verdicts']}"
        wrong = "-" if aa else str(r["faster"])
        half = "-" if r["median_equivalent_share"] is None else f"{r['median_equivalent_share']:.0%} (median)"
        lines.append(f"| {r['part']} | {r['condition']} | {'A/A' if aa else CHANGE[r['part']]} | {r['design']} "
                     f"| {r['trials']} | {r['verdicts']} | {r['slower']} | {r['faster']} | {r['equivalent']} | {false} "
                     f"| {found} | {wrong} | {half} | {r['decided_on']['wall']}/{r['decided_on']['cpu']} "
                     f"| {r['median_s']:.1f} | {r['loadavg']:.1f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=PARTS)
    p.add_argument("--conditions", default="phased+2,ramp+2")
    p.add_argument("--trials", default="16,16", help="trials per condition: A/A, true change")
    p.add_argument("--seed", type=int, default=2402)
    p.add_argument("--max-minutes", type=float, default=24.0)
    p.add_argument("--rounds", type=int, default=60, help="rounds per k (--part repetitions), per benchmark (--part go-repetitions)")
    p.add_argument("--designs", help="run only these designs (comma-separated; default: all of the part's)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    args.conditions = cal.listed(p, "--conditions", args.conditions, CONDITIONS)
    args.designs = cal.listed(p, "--designs", args.designs, DESIGNS_ALL) if args.designs else None
    args.counts = dict(zip(KINDS, (int(x) for x in args.trials.split(",")), strict=True))
    if not args.report_only and not args.part:
        p.error("give --part (or --report-only)")
    args.out = args.out.resolve()
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        {"repetitions": repetitions_part, "go-repetitions": go_repetitions_part}.get(args.part, run_part)(args)
    records = [r for part in PARTS[:-2] for r in cal.load_records(args.out / f"{part}.jsonl")]
    print(f"machine: {json.dumps(cal.machine())}")
    print(render(records))
    repeated = cal.load_records(args.out / "repetitions.jsonl")
    if repeated:
        print()
        print(render_repetitions(repeated))
    per_repetition = cal.load_records(args.out / "go-repetitions.jsonl")
    if per_repetition:
        print()
        print(render_go_repetitions(per_repetition))
    return 0


if __name__ == "__main__":
    sys.exit(main())
