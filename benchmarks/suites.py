"""Suite study (issue 13): pairbench bench on harness programs, against the harnesses' own ways.

Parts (``--part``), each appending its records to ``--out/PART.jsonl`` (a rerun resumes;
``--report-only`` prints the tables):

* ``overhead``: the time of a round of ``pairbench bench`` (one invocation per side) on a Google
  Benchmark and a Go benchmark, against the same invocations run alone by ``hyperfine -N`` (the
  argv pairbench runs, read back from the pairbench run), in the same run. Quiet machine.
* ``calibration``: A/A and +1% trials of one Google Benchmark benchmark and one Go benchmark
  (``workloads/gbench_chain.cc``, ``workloads/gochain``: a chain of 1000 or 1010 dependent
  multiply-adds) under phased load (``calibration.py``'s generator, one per chunk of trials),
  each trial decided, in the same load period, by

  - ``pairbench``: ``pairbench bench`` with its defaults (alpha 0.01, threshold 1%, 5 s per
    benchmark, 10 ms samples);
  - ``compare.py`` (gbench): A then B with ``--benchmark_repetitions=10 --benchmark_min_time=0.05``,
    then Google Benchmark's ``tools/compare.py benchmarks a.json b.json`` (its U test on the
    repetitions, ``time_pvalue``); "changed" at its default alpha 0.05 and at pairbench's 0.01,
    direction from the median time;
  - ``benchstat`` (Go): A then B with ``-test.count=10 -test.benchtime=100ms``, then ``benchstat``
    (its Mann-Whitney p), likewise at 0.05 and 0.01;
  - ``diff``: ``pairbench import`` of those two sequential files and ``pairbench diff`` (the
    not-paired caveat, measured: the same sequential runs the peers judge).

* ``suite``: a 50-benchmark Google Benchmark suite (``BM_s00`` .. ``BM_s49``, chains of 300 to 2260
  multiply-adds; the candidate does 3% more in the 25 odd ones) measured whole at ``--jobs 1``, at
  ``--jobs 2``, and as 2 shards one after the other (then merged), ``--max-time 2s`` per benchmark:
  wall time, rounds, noise (the MAD of the per-round log-ratios and the width of the intervals of
  the unchanged benchmarks) and error rates (false changes among the 25 unchanged, the +3% found
  among the 25 changed) per configuration.

compare.py is not part of pairbench: fetch google/benchmark and give ``--compare-py
PATH/tools/compare.py`` (it needs numpy and scipy, which pairbench's venv has); benchstat is
installed here with ``go install golang.org/x/perf/cmd/benchstat@latest`` into ``benchmarks/out/bin``.

Usage::

    .venv/bin/python benchmarks/suites.py --part overhead [--rounds 200] [--repeats 3]
    .venv/bin/python benchmarks/suites.py --part calibration --harness gbench --compare-py P [--aa 100 --ab 30]
    .venv/bin/python benchmarks/suites.py --part calibration --harness go [--aa 100 --ab 30]
    .venv/bin/python benchmarks/suites.py --part suite [--repeats 4]
    .venv/bin/python benchmarks/suites.py --report-only
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402  (a script beside this one: load generator, bounds, machine)

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "benchmarks" / "workloads"
DEFAULT_OUT = ROOT / "benchmarks" / "out" / "suites"
BIN = ROOT / "benchmarks" / "out" / "bin"
PAIRBENCH = (sys.executable, "-m", "pairbench")
GO_PACKAGE = "example.com/pairbench/gochain"
KINDS = {"aa": 0, "ab1": 1010}  # kind -> the candidate's WORK (0: A2, a second build of A)
CHUNK = 20
LEAD_IN_S = 4.0
SUITE_SIZE = 50
SUITE_MAX_TIME = "2s"
PEER_ALPHAS = (0.05, 0.01)


# --------------------------------------------------------------------------- workloads


def build_gbench(out: Path, work: int, name: str, source: Path = WORKLOADS / "gbench_chain.cc") -> Path:
    target = out / name
    if not target.exists():
        subprocess.run(["g++", "-O2", "-std=c++17", f"-DWORK={work}", str(source), "-o", str(target),
                        "-lbenchmark", "-lpthread"], check=True)
    return target


def build_go(out: Path, work: int, name: str) -> Path:
    target = (out / f"{name}.test").resolve()  # absolute: go runs in the package's directory
    if not target.exists():
        subprocess.run(["go", "test", "-c", "-o", str(target), "-ldflags", f"-X {GO_PACKAGE}.work={work}", "."],
                       cwd=WORKLOADS / "gochain", check=True, env={**os.environ, "GOTOOLCHAIN": "local"})
    return target


def programs(out: Path, harness: str) -> dict[str, Path]:
    """A, A2 (a second build of A) and the +1% candidate of ``harness``."""
    out.mkdir(parents=True, exist_ok=True)
    build = build_gbench if harness == "gbench" else build_go
    return {"a": build(out, 1000, "a"), "a2": build(out, 1000, "a2"), "ab1": build(out, 1010, "ab1")}


def suite_source(out: Path, scale: float, size: int = SUITE_SIZE) -> Path:
    """The suite of ``size`` benchmarks: BM_sNN runs a chain of 300 + 40 NN multiply-adds, times
    ``scale`` for odd NN."""
    lines = ["#include <benchmark/benchmark.h>", "#include <cstdint>", "static std::uint64_t chain(int n) {",
             "  std::uint64_t x = 1;", "  for (int i = 0; i < n; i++) x = x * 6364136223846793005ULL + "
             "1442695040888963407ULL;", "  return x;", "}"]
    for i in range(size):
        n = round((300 + 40 * i) * (scale if i % 2 else 1.0))
        lines.append(f"static void BM_s{i:02d}(benchmark::State& s) {{ for (auto _ : s) "
                     f"benchmark::DoNotOptimize(chain({n})); }}")
        lines.append(f"BENCHMARK(BM_s{i:02d});")
    lines.append("BENCHMARK_MAIN();")
    path = out / f"suite-{size}-{scale:g}.cc"
    path.write_text("\n".join(lines) + "\n")
    return path


def ensure_benchstat() -> Path:
    tool = BIN / "benchstat"
    if not tool.exists():
        subprocess.run(["go", "install", "golang.org/x/perf/cmd/benchstat@latest"], check=True,
                       env={**os.environ, "GOBIN": str(BIN), "GOTOOLCHAIN": "local"})
    return tool


# --------------------------------------------------------------------------- pairbench runs


def pairbench_bench(args: list[str], json_path: Path) -> dict:
    """Run ``pairbench bench -q ARGS --json F`` and return its result document (and how long it took)."""
    t0 = time.monotonic()
    done = subprocess.run([*PAIRBENCH, "bench", "-q", "--json", str(json_path), *args], capture_output=True,
                          text=True, check=False)
    wall = time.monotonic() - t0
    if not json_path.exists():
        raise RuntimeError(f"pairbench bench failed ({done.returncode}): {done.stderr[-2000:]}")
    document = json.loads(json_path.read_text())
    return {**document, "_wall_s": wall, "_exit": done.returncode}


def verdicts(document: dict) -> dict[str, str]:
    return {c["benchmark"]["name"]: c["verdict"] + ("-negligible" if c["negligible"] else "")
            for c in document.get("comparisons", [])}


def rounds_span(document: dict) -> tuple[int, float]:
    """(measured rounds, seconds from the first measured sample's start to the last's end) of a
    one-benchmark bench document."""
    starts, ends, pairs = [], [], set()
    for series in document["series"]:
        samples = series["samples"]
        for start, wall, warm, pair in zip(samples["start_ns"], samples["wall_ns"], samples["warmup"],
                                           samples["pair"], strict=True):
            if not warm:
                starts.append(start)
                ends.append(start + wall)
                pairs.add(pair)
    return len(pairs), (max(ends) - min(starts)) / 1e9


# --------------------------------------------------------------------------- overhead


def invocation_argv(harness: str, program: Path, document: dict, scratch: Path) -> list[str]:
    """The argv pairbench ran for one measured sample of ``program`` (the harness's own options as
    the adapter builds them, with this study's scratch file)."""
    if harness == "gbench":
        return [str(program), "--benchmark_filter=^BM_chain$", "--benchmark_repetitions=1",
                "--benchmark_min_time=0.01", f"--benchmark_out={scratch / 'x.json'}", "--benchmark_out_format=json"]
    iterations = next(n for series in document["series"]
                      for n, warm in zip(series["samples"]["iterations"], series["samples"]["warmup"], strict=True)
                      if not warm)
    from pairbench.measure.harnesses.gotest import procs

    return [str(program), "-test.run", "^$", "-test.bench", "^BenchmarkChain$", "-test.benchtime",
            f"{iterations}x", "-test.benchmem", "-test.count", "1", "-test.cpu", str(procs())]


def hyperfine_times(argv: list[str], runs: int, scratch: Path) -> tuple[float, float]:
    """hyperfine -N's mean and median wall time of ``argv`` over ``runs`` runs, seconds."""
    export = scratch / "hf.json"
    import shlex

    subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", "3", "--runs", str(runs), "--export-json",
                    str(export), shlex.join(argv)], check=True, capture_output=True)
    result = json.loads(export.read_text())["results"][0]
    return float(result["mean"]), float(result["median"])


def invocation_walls(document: dict) -> np.ndarray:
    """The wall time of every measured invocation of a bench document (the executor's), seconds."""
    return np.array([w / 1e9 for series in document["series"]
                     for w, warm in zip(series["samples"]["wall_ns"], series["samples"]["warmup"], strict=True)
                     if not warm])


def overhead_part(args) -> None:
    out = args.out / "overhead"
    sink_path = args.out / "overhead.jsonl"
    with open(sink_path, "a") as sink, tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for repeat in range(args.repeats):
            for harness in ("gbench", "go"):
                built = programs(out / harness, harness)
                document = pairbench_bench(["--seed", str(args.seed + repeat), "--runs", str(args.rounds),
                                            str(built["a"]), str(built["a2"])], scratch / "r.json")
                rounds, span = rounds_span(document)
                alone, alone_median = hyperfine_times(invocation_argv(harness, built["a"], document, scratch),
                                                      2 * args.rounds, scratch)
                walls = invocation_walls(document)
                record = {"part": "overhead", "harness": harness, "repeat": repeat, "rounds": rounds,
                          "round_s": span / rounds, "invocation_alone_s": alone,
                          "invocation_alone_median_s": alone_median,
                          "invocation_in_pairbench_s": float(walls.mean()),
                          "invocation_in_pairbench_median_s": float(np.median(walls)),
                          "driver_per_round_s": span / rounds - 2 * float(walls.mean()),
                          "overhead_per_round_s": span / rounds - 2 * alone, "pairbench_wall_s": document["_wall_s"]}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                print(json.dumps(record), flush=True)


# --------------------------------------------------------------------------- peers


def compare_py_trial(compare_py: Path, a: Path, b: Path, work: Path) -> dict:
    """A then B, 10 repetitions each, judged by compare.py's U test."""
    files = []
    t0 = time.monotonic()
    for side, program in (("a", a), ("b", b)):
        path = work / f"{side}.json"
        subprocess.run([str(program), "--benchmark_filter=^BM_chain$", "--benchmark_repetitions=10",
                        "--benchmark_min_time=0.05", f"--benchmark_out={path}", "--benchmark_out_format=json"],
                       check=True, capture_output=True)
        files.append(path)
    dump = work / "compare.json"
    subprocess.run([sys.executable, str(compare_py), "--no-color", "-d", str(dump), "benchmarks", *map(str, files)],
                   check=True, capture_output=True)
    entries = json.loads(dump.read_text())
    (first,) = [e for e in entries if e["name"] == "BM_chain" and e.get("utest")]
    median = next(e for e in entries if e["name"] == "BM_chain_median")["measurements"][0]
    return {"peer": "compare.py", "pvalue": first["utest"]["time_pvalue"], "change": median["time"],
            "peer_wall_s": time.monotonic() - t0, "files": [str(f) for f in files]}


def benchstat_trial(benchstat: Path, a: Path, b: Path, work: Path, pattern: str = "^BenchmarkChain$") -> dict:
    """A then B, -count=10 each, judged by benchstat's Mann-Whitney test (the first benchmark's; all of
    them in ``rows``: name -> (p, relative change of the medians))."""
    files = []
    t0 = time.monotonic()
    for side, program in (("a", a), ("b", b)):
        path = work / f"{side}.txt"
        with open(path, "w") as handle:
            subprocess.run([str(program), "-test.run", "^$", "-test.bench", pattern, "-test.count", "10",
                            "-test.benchtime", "100ms"], check=True, stdout=handle)
        files.append(path)
    done = subprocess.run([str(benchstat), "-format", "csv", *map(str, files)], check=True, capture_output=True,
                          text=True)
    rows = parse_benchstat_rows(done.stdout)
    pvalue, change = next(iter(rows.values()))
    return {"peer": "benchstat", "pvalue": pvalue, "change": change, "rows": rows,
            "peer_wall_s": time.monotonic() - t0, "files": [str(f) for f in files]}


def parse_benchstat_csv(text: str) -> tuple[float, float]:
    """benchstat -format csv: the sec/op table's first p-value and the relative change of the medians."""
    return next(iter(parse_benchstat_rows(text).values()))


def parse_benchstat_rows(text: str) -> dict[str, tuple[float, float]]:
    """benchstat -format csv: each benchmark of the sec/op table -> (p-value, relative change of the
    medians), up to the geomean or the table's end."""
    rows = list(csv.reader(io.StringIO(text)))
    header = next(i for i, row in enumerate(rows) if len(row) > 1 and row[1] == "sec/op")
    out = {}
    for row in rows[header + 1:]:
        if len(row) < 4 or not row[0] or row[0] == "geomean":
            break
        old, new = float(row[1]), float(row[3])
        out[row[0]] = (float(row[-1].split()[0].removeprefix("p=")), new / old - 1.0)
    return out


def diff_trial(files: list[str], work: Path) -> dict:
    """pairbench convert of the two sequential files and pairbench diff: its verdict."""
    imported = []
    for i, path in enumerate(files):
        target = work / f"imported-{i}.json"
        subprocess.run([*PAIRBENCH, "convert", "--json", str(target), path], check=True, capture_output=True)
        imported.append(target)
    done = subprocess.run([*PAIRBENCH, "diff", "--json", "-", *map(str, imported)], check=True, capture_output=True,
                          text=True)
    (difference,) = json.loads(done.stdout)["differences"]
    return {"diff_verdict": difference["verdict"] + ("-negligible" if difference["negligible"] else ""),
            "diff_change": difference["change"]["estimate"], "diff_pvalue": difference["pvalue"]}


# --------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class Trial:
    index: int
    harness: str
    kind: str
    seed: int


def plan(harness: str, aa: int, ab: int, seed: int) -> list[Trial]:
    kinds = ["aa"] * aa + ["ab1"] * ab
    order = np.random.default_rng(seed).permutation(len(kinds))
    return [Trial(i, harness, kinds[j], seed * 10_000 + i) for i, j in enumerate(order)]


def run_trial(trial: Trial, built: dict[str, Path], peer, work: Path) -> dict:
    a, b = built["a"], built["a2" if trial.kind == "aa" else "ab1"]
    document = pairbench_bench(["--seed", str(trial.seed), str(a), str(b)], work / "bench.json")
    name = "BM_chain" if trial.harness == "gbench" else "BenchmarkChain"
    comparison = next(c for c in document["comparisons"] if c["benchmark"]["name"] == name)
    rounds, span = rounds_span(document)
    record = {"verdict": verdicts(document)[name], "effect": comparison["effect"], "rounds": rounds,
              "measure_s": span, "wall_s": document["_wall_s"]}
    peer_record = peer(a, b, work)
    return {**record, **peer_record, **diff_trial(peer_record["files"], work)}


def calibration_part(args) -> None:
    harness = args.harness
    built = programs(args.out / "calibration" / harness, harness)
    if harness == "gbench":
        if not args.compare_py:
            raise SystemExit("--compare-py PATH/tools/compare.py is needed (fetch google/benchmark)")
        peer = lambda a, b, work: compare_py_trial(args.compare_py, a, b, work)  # noqa: E731
    else:
        tool = ensure_benchstat()
        peer = lambda a, b, work: benchstat_trial(tool, a, b, work)  # noqa: E731
    spin = cal.build_spin(args.out / "load")
    trials = plan(harness, args.aa, args.ab, args.seed)
    path = args.out / "calibration.jsonl"
    done = {(r["harness"], r["index"], r["seed"]) for r in cal.load_records(path)}
    todo = [t for t in trials if (t.harness, t.index, t.seed) not in done]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="suites-") as tmp, open(path, "a") as sink:
        work = Path(tmp)
        for i in range(0, len(todo), CHUNK):
            chunk = todo[i:i + CHUNK]
            log = work / "load.log"
            with cal.background_load(spin, chunk[0].seed, log, LEAD_IN_S):
                for trial in chunk:
                    t0 = time.monotonic()
                    record = {**asdict(trial), **run_trial(trial, built, peer, work),
                              "loadavg_before": os.getloadavg()[0]}
                    record["busy_cores"] = cal.busy_share(cal.read_schedule(log), t0, time.monotonic())
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                    print(f"[{trial.index + 1}/{len(trials)}] {harness} {trial.kind}: pairbench {record['verdict']}, "
                          f"{record['peer']} p={record['pvalue']:.3g}, diff {record['diff_verdict']} "
                          f"({time.monotonic() - started:.0f} s)", flush=True)


# --------------------------------------------------------------------------- suite


def suite_part(args) -> None:
    out = args.out / "suite"
    out.mkdir(parents=True, exist_ok=True)
    base = build_gbench(out, 0, f"suite-{args.suite_size}-base", suite_source(out, 1.0, args.suite_size))
    cand = build_gbench(out, 0, f"suite-{args.suite_size}-cand", suite_source(out, 1.03, args.suite_size))
    path = args.out / "suite.jsonl"
    done = {(r["repeat"], r["config"]) for r in cal.load_records(path)}
    with open(path, "a") as sink:
        for repeat in range(args.repeats):
            for config in ("jobs1", "jobs2", "shards2"):
                if (repeat, config) in done:
                    continue
                seed = args.seed * 100 + repeat
                record = {"part": "suite", "repeat": repeat, "config": config, "seed": seed,
                          "size": args.suite_size, **run_suite(config, seed, base, cand, out, args.suite_max_time)}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                print(json.dumps({k: v for k, v in record.items() if k != "comparisons"}), flush=True)


def run_suite(config: str, seed: int, base: Path, cand: Path, out: Path, max_time: str) -> dict:
    common = ["--seed", str(seed), "--max-time", max_time, str(base), str(cand)]
    if config != "shards2":
        jobs = "1" if config == "jobs1" else "2"
        document = pairbench_bench(["--jobs", jobs, *common], out / f"{config}.json")
        return {"wall_s": [document["_wall_s"]], **suite_figures(document)}
    walls = []
    for k in (1, 2):
        walls.append(pairbench_bench(["--shard", f"{k}/2", *common], out / f"shard-{k}.json")["_wall_s"])
    merged = out / "merged.json"
    subprocess.run([*PAIRBENCH, "merge", "--json", str(merged), str(out / "shard-1.json"), str(out / "shard-2.json")],
                   check=True, capture_output=True)
    return {"wall_s": walls, **suite_figures(json.loads(merged.read_text()))}


def suite_figures(document: dict) -> dict:
    """Per comparison: changed or not (odd index), verdict, rounds, the interval's width and the MAD
    of the per-round log-ratios."""
    series = {(s["benchmark"], s["side"]): s for s in document["series"]}
    rows = []
    for b, key in enumerate(document["benchmarks"]):
        comparison = next(c for c in document["comparisons"] if c["benchmark"]["name"] == key["name"])
        ratios = _log_ratios(series.get((b, 0)), series.get((b, 1)))
        effect = comparison["effect"]
        rows.append({"name": key["name"], "changed": int(key["name"][-2:]) % 2 == 1,
                     "verdict": comparison["verdict"], "negligible": comparison["negligible"],
                     "rounds": comparison["rounds"],
                     "width": (effect["high"] - effect["low"]) if effect else None,
                     "mad": float(np.median(np.abs(ratios - np.median(ratios)))) if ratios.size else None})
    return {"comparisons": rows}


def _log_ratios(base: dict | None, cand: dict | None) -> np.ndarray:
    if not base or not cand:
        return np.zeros(0)

    def by_pair(s):
        samples, value = s["samples"], s["metrics"]["value"]
        return {p: value[i] / samples["iterations"][i] for i, p in enumerate(samples["pair"])
                if p >= 0 and not samples["warmup"][i] and samples["status"][i] == 0}

    b, c = by_pair(base), by_pair(cand)
    common = sorted(b.keys() & c.keys())
    return np.log(np.array([c[p] / b[p] for p in common]))


# --------------------------------------------------------------------------- report


def is_change(verdict: str | None) -> bool:
    return verdict in ("slower", "faster")


def peer_decision(record: dict, alpha: float) -> str:
    if record["pvalue"] is None or record["pvalue"] >= alpha:
        return "no change"
    return "slower" if record["change"] > 0 else "faster"


def calibration_rows(records: list[dict]) -> list[dict]:
    rows = []
    for harness in ("gbench", "go"):
        for kind in ("aa", "ab1"):
            cell = [r for r in records if r["harness"] == harness and r["kind"] == kind]
            if not cell:
                continue
            peer = cell[0]["peer"]
            designs = {"pairbench bench": [r["verdict"].removesuffix("-negligible") if not r["verdict"].endswith(
                "negligible") else "negligible" for r in cell]}
            for alpha in PEER_ALPHAS:
                designs[f"{peer}, alpha {alpha:g}"] = [peer_decision(r, alpha) for r in cell]
            designs["pairbench diff (imported)"] = [r["diff_verdict"].removesuffix("-negligible")
                                                    if not r["diff_verdict"].endswith("negligible") else "negligible"
                                                    for r in cell]
            times = {"pairbench bench": [r["wall_s"] for r in cell], f"{peer}, alpha 0.05": [r["peer_wall_s"] for r in cell]}
            for design, found in designs.items():
                rows.append(_rate_row(harness, kind, design, found, times.get(design, [])))
    return rows


def _rate_row(harness: str, kind: str, design: str, found: list[str], times: list[float]) -> dict:
    n = len(found)
    slower = sum(v == "slower" for v in found)
    faster = sum(v == "faster" for v in found)
    changes = slower + faster
    row = {"harness": harness, "kind": kind, "design": design, "n": n, "slower": slower, "faster": faster,
           "counts": {v: found.count(v) for v in sorted(set(found))},
           "median_s": float(np.median(times)) if times else None}
    if kind == "aa":
        row["bound"] = cal.clopper_pearson_upper(changes, n)
        row["binom_p"] = cal.consistent_with(changes, n, 0.01)[1]
    else:
        row["bound"] = cal.clopper_pearson_lower(slower, n)
    return row


def render(args) -> str:
    lines = [f"machine: {json.dumps(cal.machine())}", ""]
    overhead = [r for r in cal.load_records(args.out / "overhead.jsonl") if "driver_per_round_s" in r]
    if overhead:
        lines += ["| harness | rounds | pairbench round (mean) | invocation in pairbench (median) | invocation alone, "
                  "hyperfine -N (median) | ratio | driver per round | round / 2 x invocation alone (means) |",
                  "|---|---|---|---|---|---|---|---|"]
        for harness in ("gbench", "go"):
            cell = [r for r in overhead if r["harness"] == harness]
            if cell:
                def med(key, cell=cell):
                    return float(np.median([r[key] for r in cell]))

                lines.append(
                    f"| {harness} | {cell[0]['rounds']} x {len(cell)} | {med('round_s') * 1e3:.2f} ms | "
                    f"{med('invocation_in_pairbench_median_s') * 1e3:.2f} ms | {med('invocation_alone_median_s') * 1e3:.2f} ms | "
                    f"{med('invocation_in_pairbench_median_s') / med('invocation_alone_median_s'):.2f} | "
                    f"{med('driver_per_round_s') * 1e3:.2f} ms | {med('round_s') / (2 * med('invocation_alone_s')):.2f} |")
        lines.append("")
    records = cal.load_records(args.out / "calibration.jsonl")
    if records:
        lines += ["| harness | change | design | trials | verdicts | changes found (A/A: false) | CP 95% bound | "
                  "binom p vs 1% | wrong direction | median s |", "|---|---|---|---|---|---|---|---|---|---|"]
        for row in calibration_rows(records):
            found = row["slower"] + row["faster"] if row["kind"] == "aa" else row["slower"]
            wrong = row["faster"] if row["kind"] != "aa" else "-"
            bound = ("<= " if row["kind"] == "aa" else ">= ") + f"{100 * row['bound']:.1f}%"
            binom = f"{row['binom_p']:.3g}" if "binom_p" in row else "-"
            verdict_counts = ", ".join(f"{k} {v}" for k, v in row["counts"].items())
            median = f"{row['median_s']:.2f}" if row["median_s"] is not None else "-"
            lines.append(f"| {row['harness']} | {'A/A' if row['kind'] == 'aa' else '+1%'} | {row['design']} | {row['n']} | "
                         f"{verdict_counts} | {found}/{row['n']} ({100 * found / row['n']:.0f}%) | {bound} | {binom} | "
                         f"{wrong} | {median} |")
        lines.append("")
    suites = cal.load_records(args.out / "suite.jsonl")
    if suites:
        lines += suite_table(suites)
    return "\n".join(lines)


def suite_table(records: list[dict]) -> list[str]:
    lines = ["| configuration | suites | wall time (median) | A/A: false changes | +3%: found slower | wrong direction | "
             "median rounds | median MAD of log-ratios (A/A) | median interval width (A/A) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for config in ("jobs1", "jobs2", "shards2"):
        cell = [r for r in records if r["config"] == config]
        if not cell:
            continue
        rows = [c for r in cell for c in r["comparisons"]]
        same = [c for c in rows if not c["changed"]]
        changed = [c for c in rows if c["changed"]]
        false = sum(is_change(c["verdict"]) for c in same)
        found = sum(c["verdict"] == "slower" for c in changed)
        wrong = sum(c["verdict"] == "faster" for c in changed)
        wall = [sum(r["wall_s"]) if config != "shards2" else max(r["wall_s"]) for r in cell]
        wall_text = f"{np.median(wall):.0f} s"
        if config == "shards2":
            wall_text += f" (longest shard; both in turn {np.median([sum(r['wall_s']) for r in cell]):.0f} s)"
        mad = np.median([c["mad"] for c in same if c["mad"] is not None])
        width = np.median([c["width"] for c in same if c["width"] is not None])
        lines.append(f"| {config} | {len(cell)} | {wall_text} | {false}/{len(same)} (<= "
                     f"{100 * cal.clopper_pearson_upper(false, len(same)):.1f}%) | {found}/{len(changed)} | {wrong} | "
                     f"{np.median([c['rounds'] for c in rows]):.0f} | {100 * mad:.2f}% | {width:.2f} pp |")
    return lines


# --------------------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("overhead", "calibration", "suite"))
    parser.add_argument("--harness", choices=("gbench", "go"), default="gbench")
    parser.add_argument("--compare-py", type=Path)
    parser.add_argument("--aa", type=int, default=100)
    parser.add_argument("--ab", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--suite-size", type=int, default=SUITE_SIZE)
    parser.add_argument("--suite-max-time", default=SUITE_MAX_TIME)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report-only", action="store_true")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out = args.out.resolve()  # hyperfine -N runs a program by an absolute path only
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        if shutil.which("hyperfine") is None and args.part == "overhead":
            raise SystemExit("hyperfine is needed: scripts/install-test-deps.sh --bench")
        {"overhead": overhead_part, "calibration": calibration_part, "suite": suite_part}[args.part](args)
    print(render(args))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--load-generator":
        cal.load_generator(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(main())
