"""Answers from harness suites on real binaries: how many A/A benchmarks `pairbench bench` calls
`equivalent` at its defaults, how often it finds a +3% change, and what limits each interval.

Real programs, built here once (``--work``; the builds are kept):

* **go**: the Go standard library's ``internal/strconv`` test binary, ``go test -c`` twice
  (byte-identical, checked), its 12 ``Atof64`` and ``ParseInt/Pos`` benchmarks, A/A;
* **criterion**: the ``itoa`` crate's own criterion benches (its source from the cargo registry,
  criterion from crates.io), the bench binary against a copy of itself (byte-identical), 14 benchmarks;
* **gbench**: Google Benchmark (Debian's ``libbenchmark-dev``) ``BM_Sort``, ``std::sort`` of 10,000
  random ints (the copy under ``PauseTiming``), against a build sorting 10,275 (n log n: +3.0%), and
  against a second build of itself (A/A).

Experiments (``--experiments``; all but ``go-procs2`` by default, in this order):

* ``go``: ``bench A B -k 'Atof64|ParseInt/Pos'`` at bench's defaults (GOMAXPROCS 1; ``--metric auto``,
  which decides Go on its process's own CPU time);
* ``go-wall``: the same with ``--metric wall`` (the loops' wall time: what auto chose for Go before);
* ``go-procs2`` (not run unless asked): the default with ``GOMAXPROCS=2`` (the default before);
* ``criterion``: ``bench A B`` at bench's defaults;
* ``gbench``: ``--trials`` runs of ``bench A B`` at its defaults (found: a ``slower`` verdict);
* ``gbench-aa``: 3 runs of ``bench A A2``.

Each run holds ``--lock`` (a ``flock`` on the file, as ``flock LOCK CMD`` does) only while it runs,
with the 1-minute load average read before and after. Per benchmark the study reads the result file
back (``analyse``): its verdict and interval, its rounds and what a round cost, the time it was
decided on, the spread of the per-round log-ratios (IQR) on wall and on CPU time, and the rounds
still needed (``plan_rounds``) or whether that was out of reach. The Markdown goes to ``--output``
(default ``benchmarks/results/harness_equivalence.md``), the result files to ``--work``/results.

    .venv/bin/python benchmarks/harness_equivalence.py --lock /work/timing.lock
    .venv/bin/python benchmarks/harness_equivalence.py --experiments gbench --trials 10 --lock /work/timing.lock
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import filecmp
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("go", "go-wall", "go-procs2", "criterion", "gbench", "gbench-aa")
DEFAULT = ("go", "go-wall", "criterion", "gbench", "gbench-aa")
GO_FILTER = "Atof64|ParseInt/Pos"
ITOA = "itoa-1.0.19"
GBENCH_SOURCE = r"""
#include <benchmark/benchmark.h>
#include <algorithm>
#include <random>
#include <vector>
static void BM_Sort(benchmark::State& s) { std::mt19937 r(42); std::vector<int> src(SORT_N), v;
  for (auto& x : src) x = (int)r();
  for (auto _ : s) { s.PauseTiming(); v = src; s.ResumeTiming(); std::sort(v.begin(), v.end());
    benchmark::DoNotOptimize(v.data()); } }
BENCHMARK(BM_Sort); BENCHMARK_MAIN();
"""


# --------------------------------------------------------------------------- the programs


def build_go(out: Path) -> tuple[Path, Path]:
    """Two builds of internal/strconv's test binary, byte-identical."""
    out.mkdir(parents=True, exist_ok=True)
    built = tuple((out / f"istrconv-{name}.test").resolve() for name in ("a", "b"))
    for target in built:
        if not target.exists():
            subprocess.run(["go", "test", "-c", "-o", str(target), "internal/strconv"], check=True,
                           env={**os.environ, "GOTOOLCHAIN": "local"})
    if not filecmp.cmp(*built, shallow=False):
        raise SystemExit(f"{built[0]} and {built[1]} differ: two builds of one source were not byte-identical")
    return built


def build_criterion(out: Path) -> tuple[Path, Path]:
    """The itoa crate's criterion bench binary, built from the cargo registry's source, and a copy."""
    out.mkdir(parents=True, exist_ok=True)
    built = (out / "itoa-a", out / "itoa-b")
    if all(p.exists() for p in built):
        return built
    source = next((Path.home() / ".cargo" / "registry" / "src").glob(f"*/{ITOA}"), None)
    if source is None:
        raise SystemExit(f"{ITOA} is not in the cargo registry: `cargo fetch` a crate that depends on it")
    crate = out / ITOA
    shutil.rmtree(crate, ignore_errors=True)
    shutil.copytree(source, crate)
    done = subprocess.run(["cargo", "bench", "--no-run", "--message-format=json"], cwd=crate, check=True,
                          capture_output=True, text=True)
    executables = [json.loads(line).get("executable") for line in done.stdout.splitlines() if '"executable"' in line]
    bench = next(Path(e) for e in executables if e and Path(e).name.startswith("bench-"))
    for target in built:
        shutil.copy2(bench, target)
    return built


def build_gbench(out: Path) -> dict[str, Path]:
    """A (10,000 ints), A2 (a second build of A, byte-identical) and B (10,275 ints: +3.0%)."""
    out.mkdir(parents=True, exist_ok=True)
    source = out / "sort.cc"
    source.write_text(GBENCH_SOURCE)
    built = {}
    for name, n in (("a", 10000), ("a2", 10000), ("b", 10275)):
        target = out / f"sort-{name}"
        if not target.exists():
            subprocess.run(["g++", "-O2", f"-DSORT_N={n}", str(source), "-o", str(target), "-lbenchmark",
                            "-lpthread"], check=True)
        built[name] = target
    if not filecmp.cmp(built["a"], built["a2"], shallow=False):
        raise SystemExit("the two builds of sort-a differ")
    return built


# --------------------------------------------------------------------------- one run


@dataclass
class Outcome:
    """One ``pairbench bench`` run: what it was, its loads, its time, and each benchmark's figures."""

    experiment: str
    command: list[str]
    load_before: float
    load_after: float
    wall_s: float
    exit: int
    result: str
    rows: list[dict] = field(default_factory=list)
    advice: str = ""


def load_average() -> float:
    with open("/proc/loadavg", encoding="ascii") as handle:
        return float(handle.read().split()[0])


@contextlib.contextmanager
def held(lock: str | None):
    """``lock`` (a file) held exclusively, as ``flock LOCK CMD`` holds it; nothing without one."""
    if lock is None:
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def bench(experiment: str, args: list[str], result: Path, lock: str | None, env: dict | None = None) -> Outcome:
    """``pairbench bench ARGS --json RESULT`` under the lock, its loads and time, then its figures."""
    result.parent.mkdir(parents=True, exist_ok=True)
    result.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pairbench", "bench", *args, "--no-store", "-q", "--json", str(result)]
    with held(lock):
        before, t0 = load_average(), time.monotonic()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})},
                              timeout=3600)
        wall, after = time.monotonic() - t0, load_average()
    outcome = Outcome(experiment, [*args], before, after, wall, done.returncode, str(result))
    if result.exists():
        outcome.rows, outcome.advice = figures(result)
    else:
        outcome.advice = f"no result: exit {done.returncode}; {done.stderr.strip()[-300:]}"
    shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    print(f"{experiment}: {shown} {' '.join(args)} | load {before:.1f} -> {after:.1f} | {wall:.0f} s | "
          f"{summary_of(outcome.rows)}", flush=True)
    return outcome


def figures(path: Path) -> tuple[list[dict], str]:
    """Each comparison of a result: verdict, interval, rounds, round cost, metric, spreads, rounds
    needed; and the suite's budget sentence."""
    from pairbench.analysis import analyse
    from pairbench.analysis.budget import OUT_OF_REACH, round_ns
    from pairbench.analysis.pairing import paired_values
    from pairbench.report.suite import budget_sentence
    from pairbench.stats.paired import log_ratios
    from pairbench.store.resultfile import read_result

    run = read_result(str(path))
    analysis = analyse(run)
    index = {key: b for b, key in enumerate(run.benchmarks)}
    rows = []
    for c in analysis.comparisons:
        b = index[c.benchmark]
        spreads = {}
        for metric in ("wall", "cpu"):
            x, y = paired_values(run.series(b, 0), run.series(b, 1), metric)
            r = log_ratios(x, y) if x.size else np.zeros(0)
            spreads[metric] = float(np.subtract(*np.percentile(r, [75, 25]))) if r.size > 3 else None
        e = c.effect
        rows.append({"benchmark": c.benchmark.label, "verdict": c.verdict.verdict, "metric": c.metric,
                     "estimate": e.estimate if e else None, "low": e.low if e else None,
                     "high": e.high if e else None, "rounds": c.rounds, "round_s": round_ns(run, b) / 1e9,
                     "needed": c.rounds_needed, "out_of_reach": any(n.code == OUT_OF_REACH for n in c.notes),
                     "iqr_wall": spreads["wall"], "iqr_cpu": spreads["cpu"]})
    budget = analysis.suite.budget if analysis.suite is not None else None
    return rows, budget_sentence(budget) if budget else ""


def summary_of(rows: list[dict]) -> str:
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no comparison"


# --------------------------------------------------------------------------- the experiments


def run_experiments(args) -> list[Outcome]:
    work = Path(args.work)
    results = work / "results"
    stamp = time.strftime("%Y%m%dT%H%M%S")
    outcomes = []
    wanted = args.experiments.split(",")
    if any(e.startswith("go") for e in wanted):
        go = [str(p) for p in build_go(work / "go")]
        base = [*go, "-k", GO_FILTER, "-n", "A", "-n", "B"]
        for experiment, extra, env in (("go", [], {}), ("go-wall", ["--metric", "wall"], {}),
                                        ("go-procs2", [], {"GOMAXPROCS": "2"})):
            if experiment in wanted:
                outcomes.append(bench(experiment, [*base, *extra], results / f"{experiment}-{stamp}.json", args.lock,
                                      env))
    if "criterion" in wanted:
        crit = [str(p) for p in build_criterion(work / "criterion")]
        outcomes.append(bench("criterion", [*crit, "-n", "A", "-n", "B"], results / f"criterion-{stamp}.json",
                              args.lock))
    if "gbench" in wanted or "gbench-aa" in wanted:
        gb = build_gbench(work / "gbench")
        for i in range(1, args.trials + 1 if "gbench" in wanted else 1):
            outcomes.append(bench("gbench", [str(gb["a"]), str(gb["b"]), "-n", "A", "-n", "B"],
                                  results / f"gbench-{stamp}-{i}.json", args.lock))
        for i in range(1, 4 if "gbench-aa" in wanted else 1):
            outcomes.append(bench("gbench-aa", [str(gb["a"]), str(gb["a2"]), "-n", "A", "-n", "A2"],
                                  results / f"gbench-aa-{stamp}-{i}.json", args.lock))
    return outcomes


# --------------------------------------------------------------------------- the report


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}%"


def suite_table(o: Outcome) -> list[str]:
    lines = [f"Load {o.load_before:.1f} → {o.load_after:.1f}; {o.wall_s:.0f} s; exit {o.exit}; "
             f"{summary_of(o.rows)}.", ""]
    if o.advice:
        lines += [f"Summary's budget sentence: “{o.advice}”", ""]
    lines += ["| benchmark | verdict | on | change [interval] | rounds | s a round | IQR of log-ratios wall / CPU "
              "| more rounds needed |", "|---|---|---|---|---|---|---|---|"]
    for r in o.rows:
        needed = ("out of reach" if r["out_of_reach"] else str(r["needed"])) if r["needed"] else "—"
        iqr = " / ".join("—" if v is None else f"{v:.3f}" for v in (r["iqr_wall"], r["iqr_cpu"]))
        lines.append(f"| {r['benchmark']} | {r['verdict']} | {r['metric']} | {pct(r['estimate'])} "
                     f"[{pct(r['low'])}, {pct(r['high'])}] | {r['rounds']} | {r['round_s']:.3f} | {iqr} | {needed} |")
    return lines + [""]


def trials_table(outcomes: list[Outcome], change: bool) -> list[str]:
    lines = ["| trial | verdict | on | change [interval] | rounds | more rounds needed | wall | load before → after |",
             "|---|---|---|---|---|---|---|---|"]
    for i, o in enumerate(outcomes, 1):
        for r in o.rows:
            needed = ("out of reach" if r["out_of_reach"] else str(r["needed"])) if r["needed"] else "—"
            lines.append(f"| {i} | {r['verdict']} | {r['metric']} | {pct(r['estimate'])} [{pct(r['low'])}, "
                         f"{pct(r['high'])}] | {r['rounds']} | {needed} | {o.wall_s:.1f} s | "
                         f"{o.load_before:.1f} → {o.load_after:.1f} |")
    verdicts = [r["verdict"] for o in outcomes for r in o.rows]
    wanted = "slower" if change else "equivalent"
    estimates = [r["needed"] for o in outcomes for r in o.rows if r["needed"] and not r["out_of_reach"]]
    spread = f"; rounds-needed estimates {min(estimates)}–{max(estimates)} ({max(estimates) / min(estimates):.1f}×)" \
        if len(estimates) > 1 else ""
    wrong = sum(v == ("faster" if change else "slower") for v in verdicts) + (0 if change else verdicts.count("faster"))
    lines += ["", f"{wanted}: {verdicts.count(wanted)} of {len(verdicts)}; wrong: {wrong}; "
                  f"inconclusive: {verdicts.count('inconclusive')}{spread}.", ""]
    return lines


TITLES = {"go": "Go `internal/strconv`, 12 benchmarks, A/A, bench's defaults (GOMAXPROCS 1)",
          "go-wall": "Go, the same with `--metric wall` (the loops' wall time)",
          "go-procs2": "Go, the default with GOMAXPROCS=2 (the default before 2026-11-29)",
          "criterion": "criterion, `itoa`'s 14 benchmarks, A/A, bench's defaults",
          "gbench": "Google Benchmark `std::sort` +3.0%, bench's defaults",
          "gbench-aa": "Google Benchmark `std::sort` A/A, bench's defaults"}


def machine_line() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    return (f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}, "
            f"{time.strftime('%Y-%m-%d %H:%M %Z')}, pairbench at {commit.strip() or 'unknown'}")


def report(outcomes: list[Outcome], argv: list[str]) -> str:
    lines = [f"## Run of {time.strftime('%Y-%m-%d %H:%M')}", "",
             f"Machine: {machine_line()}. Command: `.venv/bin/python benchmarks/harness_equivalence.py "
             f"{' '.join(argv)}`.", ""]
    for experiment in EXPERIMENTS:
        found = [o for o in outcomes if o.experiment == experiment]
        if not found:
            continue
        lines += [f"### {TITLES[experiment]}", ""]
        if experiment.startswith("gbench"):
            lines += trials_table(found, change=experiment == "gbench")
        else:
            for o in found:
                lines += suite_table(o)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", default=",".join(DEFAULT))
    parser.add_argument("--trials", type=int, default=10, help="runs of the gbench +3%% experiment")
    parser.add_argument("--work", default="/tmp/pairbench-harness-equivalence")
    parser.add_argument("--lock", default="/work/timing.lock" if Path("/work/timing.lock").exists() else None)
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "harness_equivalence.md"))
    args = parser.parse_args(argv)
    unknown = set(args.experiments.split(",")) - set(EXPERIMENTS)
    if unknown:
        parser.error(f"unknown experiments: {', '.join(sorted(unknown))}")
    text = report(run_experiments(args), argv)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "a", encoding="utf-8") as handle:  # each run appends its section
        handle.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
