"""Microbenchmark study: ``pairbench bench`` (paired in-process workers) on this machine (issue 12).

Workloads (each side of a trial is its own build or copy, as a user would have):

* ``c``: ``workloads/micro.c``, a dependent chain of N multiply-adds per call
  (about 1 us), compiled separately with ``-DN=1000`` (A, and again as A2 for
  A/A) and ``-DN=1010`` (exactly 1% more work);
* ``py``: a Python function of about 10 us (a loop of n steps), copied into
  directories that differ only in n: A, A2 (the same n), +1% and +3%, n chosen
  from a linear fit of the call's time (the fixed call cost counts in the 1%).

Conditions: ``quiet``, and ``phased`` background load (``calibration.py``'s load
generator: idle / one busy core / both busy, exponential phases of mean 3 s).
Under phased load one generator runs for a chunk of consecutive phased trials
(after a lead-in), not one per trial, to keep the study short.

Designs:

* ``pairbench``: ``pairbench bench -q --seed S --json F A B`` with its defaults
  (alpha 0.01, threshold 1%, 5 s budget per benchmark). Time to the verdict:
  the end of the benchmark's last sample (``start_ns + wall_ns``, measured
  from before the iteration count was chosen).
* ``pytest-benchmark`` (Python only): A's file with ``--benchmark-save``, then
  B's with ``--benchmark-compare --benchmark-compare-fail=min:1%`` (the
  documented CI gate, ``min:5%`` in its docs, at pairbench's 1% threshold); a
  failed run is a "slower" verdict. It can only fail on regressions.
* ``pyperf`` (Python only): ``pyperf timeit --fast`` of A then of B, and
  ``pyperf compare_to a.json b.json``: "Significant"/hidden-as-not-significant,
  direction from "faster"/"slower".

The peers run from their own venv, ``benchmarks/out/peers-venv`` (made here).
Every trial is appended to ``trials.jsonl`` in ``--out`` (a rerun resumes);
``--report-only`` prints the tables.

Usage::

    .venv/bin/python benchmarks/microbench.py [--quick] [--seed 2026] [--out DIR]
        [--aa 100,40] [--ab 20,12,8] [--peers 5,2]
    .venv/bin/python benchmarks/microbench.py --report-only [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402  (a script beside this one: its load generator and bounds)

ROOT = Path(__file__).resolve().parent.parent
MICRO_C = ROOT / "benchmarks" / "workloads" / "micro.c"
INCLUDE = ROOT / "src" / "pairbench" / "worker" / "include"
DEFAULT_OUT = ROOT / "benchmarks" / "out" / "microbench"
PEERS_VENV = ROOT / "benchmarks" / "out" / "peers-venv"
PAIRBENCH = (sys.executable, "-m", "pairbench")
ALPHA = 0.01
KINDS = {"aa": 0.0, "ab1": 1.0, "ab3": 3.0}  # kind -> true slowdown, percent
WORKLOAD_KINDS = {"c": ("aa", "ab1"), "py": ("aa", "ab1", "ab3")}
DESIGNS = ("pairbench", "pytest-benchmark", "pyperf")
CONDITIONS = ("quiet", "phased")
C_N = 1000
PY_TARGET_S = 10e-6
GOAL_S = 2.0  # the C goal: +1% found within 2 s of measuring in >= 95% of trials
CHUNK = 24  # trials per chunk: each chunk runs its quiet trials, then its phased ones under one load
LEAD_IN_S = 4.0

PY_MODULE = '''"""The Python workload of benchmarks/microbench.py (generated): a loop of N steps."""

N = {n}


def micro():
    x = 0
    for i in range(N):
        x += i
    return x
'''
PY_BENCH = "import pairbench\nfrom micro_mod import micro\n\npairbench.benchmark(micro)\n"
PY_TEST = "from micro_mod import micro\n\n\ndef test_micro(benchmark):\n    benchmark(micro)\n"


# --------------------------------------------------------------------------- workloads


def build_c(out: Path) -> dict[str, Path]:
    """Separately compiled C workers: a and a2 (N=1000), ab1 (N=1010)."""
    out.mkdir(parents=True, exist_ok=True)
    sides = {"a": C_N, "a2": C_N, "ab1": round(C_N * 1.01)}
    paths = {}
    for name, n in sides.items():
        binary = out / f"micro-{name}"
        if not binary.exists() or binary.stat().st_mtime < MICRO_C.stat().st_mtime:
            subprocess.run(["cc", "-O2", "-Wall", f"-I{INCLUDE}", f"-DN={n}", str(MICRO_C), "-o", str(binary)],
                           check=True)
        paths[name] = binary
    return paths


def fit_python(points=(300, 450, 600), number=3000, repeat=7) -> cal.LinearFit:
    """Time of one call of the Python workload vs its loop count (min over repeats; this interpreter)."""
    times = []
    for n in points:
        namespace: dict = {}
        exec(PY_MODULE.format(n=n), namespace)  # noqa: S102 - our own template
        times.append(min(timeit.repeat(namespace["micro"], number=number, repeat=repeat)) / number * 1e9)
    return cal.fit_linear(points, times)


def write_python(out: Path, counts: dict[str, int]) -> dict[str, Path]:
    """One directory per side (module, pairbench file, pytest file, an empty pytest.ini as rootdir)."""
    paths = {}
    for name, n in counts.items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "micro_mod.py").write_text(PY_MODULE.format(n=n))
        (d / "bench_micro.py").write_text(PY_BENCH)
        (d / "test_micro.py").write_text(PY_TEST)
        (d / "pytest.ini").write_text("[pytest]\n")
        paths[name] = d
    return paths


def sides_of(meta: dict, workload: str, kind: str) -> tuple[str, str]:
    """The baseline and candidate paths (worker program or directory) of a trial."""
    w = meta["workloads"][workload]["paths"]
    return w["a"], w["a2" if kind == "aa" else kind]


def achieved(a: str, b: str, out: Path, rounds: int) -> dict:
    """``pairbench bench --runs`` of a against b: the estimated change (percent) with its interval."""
    path = out / "achieved.json"
    subprocess.run([*PAIRBENCH, "bench", "-q", "--runs", str(rounds), "--seed", "1", "--json", str(path),
                    *_targets(a, b)], check=False, stdout=subprocess.DEVNULL, cwd=ROOT)
    c = json.loads(path.read_text())["comparisons"][0]
    effect = c.get("effect") or {}
    return {"estimate_pct": effect.get("estimate", math.nan), "low_pct": effect.get("low", math.nan),
            "high_pct": effect.get("high", math.nan), "min_delta_pct": c["secondary"]["min"]["delta_pct"],
            "mean_delta_pct": c["secondary"]["mean"]["paired_difference_pct"], "rounds": c["rounds"]}


def _targets(a: str, b: str) -> list[str]:
    return [str(Path(x) / "bench_micro.py") if Path(x).is_dir() else str(x) for x in (a, b)]


def prepare(out: Path, check_rounds: int) -> dict:
    """Build and write the workloads (once per ``--out``), measure the achieved ratios; the metadata."""
    meta_path = out / "meta.json"
    if meta_path.exists():
        return json.loads(meta_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    meta = {**cal.machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "workloads": {}}
    c = build_c(out / "c")
    fit = fit_python()
    n_a = cal.argument_for(PY_TARGET_S * 1e9, fit)
    counts = {"a": n_a, "a2": n_a, **{k: cal.slowed_argument(n_a, fit, p) for k, p in KINDS.items() if p}}
    py = write_python(out / "py", counts)
    meta["workloads"]["c"] = {"paths": {k: str(v) for k, v in c.items()}, "n": {"a": C_N, "ab1": round(C_N * 1.01)}}
    meta["workloads"]["py"] = {"paths": {k: str(v) for k, v in py.items()}, "n": counts, "fit": asdict(fit)}
    for workload, kinds in WORKLOAD_KINDS.items():
        meta["workloads"][workload]["achieved"] = {
            kind: achieved(*sides_of(meta, workload, kind), out, check_rounds) for kind in kinds}
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


# --------------------------------------------------------------------------- peers


def ensure_peers(venv: Path = PEERS_VENV) -> Path:
    """The peers' venv (pytest, pytest-benchmark, pyperf) on this interpreter's base Python; its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pytest", "pytest-benchmark", "pyperf"],
                       check=True)
    return python


def pytest_failed_checks(text: str) -> list[dict]:
    """The failed regression checks in pytest-benchmark's output: [{"name", "field", "value", "limit"}]."""
    out = []
    for m in re.finditer(r"^\s*(\S+)(?: \([^)]*\))? - Field '(\w+)' has failed (\w+): ([0-9.e+-]+) > ([0-9.e+-]+)",
                         text, re.MULTILINE):
        out.append({"name": m.group(1), "field": m.group(2), "check": m.group(3),
                    "value": float(m.group(4)), "limit": float(m.group(5))})
    return out


def pytest_verdict(returncode: int, text: str) -> str | None:
    """pytest-benchmark's decision: "slower" when the compare-fail check failed, "no difference" when the
    run passed, None when the run failed otherwise (an error)."""
    if "Performance has regressed" in text or pytest_failed_checks(text):
        return "slower"
    return "no difference" if returncode == 0 else None


def pyperf_verdict(text: str) -> str | None:
    """The decision in ``pyperf compare_to a.json b.json``'s output (one benchmark): "slower",
    "faster" or "no difference" (not significant); None when it is not recognisable."""
    if re.search(r"not significant", text, re.IGNORECASE):
        return "no difference"
    m = re.search(r"(\d+(?:\.\d+)?)x (slower|faster)", text)
    if m:
        return m.group(2)
    if re.search(r"\bno change\b", text, re.IGNORECASE):
        return "no difference"
    return None


def run_pytest_trial(python: Path, a: Path, b: Path, work: Path) -> dict:
    store = work / "pytest-store"
    shutil.rmtree(store, ignore_errors=True)
    common = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--benchmark-storage=file://{store}"]
    start = time.monotonic()
    first = subprocess.run([*common, "--benchmark-save=a", "test_micro.py"], cwd=a, capture_output=True,
                           text=True, timeout=300)
    second = subprocess.run([*common, "--benchmark-compare", "--benchmark-compare-fail=min:1%",
                             f"--benchmark-json={work / 'pytest-b.json'}", "test_micro.py"], cwd=b,
                            capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - start
    text = second.stdout + second.stderr
    checks = [line for line in text.splitlines() if "has regressed" in line or "has failed" in line]
    out = {"wall_s": wall, "exit": [first.returncode, second.returncode],
           "output": "\n".join([*checks[:6], "...", text[-1500:]]),
           "verdict": pytest_verdict(second.returncode, text) if first.returncode == 0 else None}
    with contextlib.suppress(OSError, ValueError, KeyError, IndexError, StopIteration):
        saved = next(store.rglob("*_a.json"))
        amin = json.loads(saved.read_text())["benchmarks"][0]["stats"]["min"]
        bmin = json.loads((work / "pytest-b.json").read_text())["benchmarks"][0]["stats"]["min"]
        out["min_change_pct"] = 100 * (bmin / amin - 1)
    return out


def run_pyperf_trial(python: Path, a: Path, b: Path, work: Path) -> dict:
    start, exits = time.monotonic(), []
    for name, d in (("a", a), ("b", b)):
        path = work / f"pyperf-{name}.json"
        path.unlink(missing_ok=True)
        proc = subprocess.run([str(python), "-m", "pyperf", "timeit", "--fast", "-q", "-o", str(path),
                               "-s", "from micro_mod import micro", "micro()"], cwd=d, capture_output=True,
                              text=True, timeout=300)
        exits.append(proc.returncode)
    cmp = subprocess.run([str(python), "-m", "pyperf", "compare_to", str(work / "pyperf-a.json"),
                          str(work / "pyperf-b.json")], capture_output=True, text=True, timeout=60)
    text = cmp.stdout + cmp.stderr
    return {"wall_s": time.monotonic() - start, "exit": [*exits, cmp.returncode], "output": text[-3000:],
            "verdict": pyperf_verdict(text) if not any(exits) else None}


# --------------------------------------------------------------------------- pairbench


def bench_timing(doc: dict) -> dict:
    """From a ``bench`` result document (one benchmark): measuring time (s, to the end of the last
    sample), samples (measured, and all incl. warmup) of both sides, and the worker-measured time."""
    series = [s["samples"] for s in doc.get("series", []) if s.get("benchmark", 0) == 0]
    ends = [st + w for s in series for st, w in zip(s["start_ns"], s["wall_ns"], strict=True)]
    if not ends:
        return {}
    measured = sum(1 for s in series for w in s["warmup"] if not w)
    total = sum(len(s["wall_ns"]) for s in series)
    worker_ns = sum(sum(s["wall_ns"]) for s in series)
    measure_s = max(ends) / 1e9
    return {"measure_s": measure_s, "samples": measured, "samples_all": total, "worker_s": worker_ns / 1e9,
            "samples_per_s": measured / measure_s if measure_s > 0 else math.nan,
            "overhead_us": (max(ends) - worker_ns) / total / 1e3 if total else math.nan,
            "iterations": int(series[0]["iterations"][0]), "sample_ms": worker_ns / total / 1e6}


def run_pairbench_trial(a: str, b: str, seed: int, work: Path) -> dict:
    path = work / "bench.json"
    path.unlink(missing_ok=True)
    argv = [*PAIRBENCH, "bench", "-q", "--seed", str(seed), "--max-time", "5s", "--json", str(path), *_targets(a, b)]
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    out: dict = {"wall_s": time.monotonic() - start, "exit": proc.returncode}
    if not path.exists():
        return {**out, "verdict": None, "error": proc.stderr[-2000:]}
    doc = json.loads(path.read_text())
    comparisons = doc.get("comparisons") or []
    if not comparisons:
        return {**out, "verdict": None, "error": proc.stderr[-2000:]}
    c = comparisons[0]
    effect = c.get("effect") or {}
    blocks = [n["data"].get("blocks") for n in c.get("notes", []) if n.get("code") == "process-blocks"]
    out.update(verdict=c["verdict"], negligible=bool(c.get("negligible")), estimate=effect.get("estimate"),
               low=effect.get("low"), high=effect.get("high"), rounds=c.get("rounds"),
               blocks=blocks[0] if blocks else None, stopped_because=doc.get("stopped_because"),
               benchmark=c.get("benchmark"), **bench_timing(doc))
    return out


# --------------------------------------------------------------------------- plan and run


@dataclass(frozen=True)
class Trial:
    index: int
    design: str
    workload: str
    condition: str
    kind: str
    seed: int


def plan_trials(aa: dict[str, int], ab: dict[str, int], peers: dict[str, int], seed: int,
                conditions=CONDITIONS) -> list[Trial]:
    """All trials in a seeded random order, then grouped in chunks of ``CHUNK`` (quiet first in each)."""
    cells = []
    for workload, kinds in WORKLOAD_KINDS.items():
        for condition in conditions:
            for kind in kinds:
                cells += [("pairbench", workload, condition, kind)] * (aa[workload] if kind == "aa" else ab[kind if workload == "py"
                                                                                                   else "c"])
                if workload == "py":
                    cells += [(d, workload, condition, kind) for d, n in peers.items() for _ in range(n)]
    rng = np.random.default_rng(seed)
    order = [cells[j] for j in rng.permutation(len(cells))]
    grouped = []
    for i in range(0, len(order), CHUNK):
        chunk = order[i:i + CHUNK]
        grouped += [c for c in chunk if c[2] == "quiet"] + [c for c in chunk if c[2] != "quiet"]
    return [Trial(i, *cell, int(rng.integers(2**31))) for i, cell in enumerate(grouped)]


def run_one(trial: Trial, meta: dict, peers_python: Path | None, work: Path) -> dict:
    a, b = sides_of(meta, trial.workload, trial.kind)
    if trial.design == "pairbench":
        return run_pairbench_trial(a, b, trial.seed, work)
    if trial.design == "pytest-benchmark":
        return run_pytest_trial(peers_python, Path(a), Path(b), work)
    return run_pyperf_trial(peers_python, Path(a), Path(b), work)


def run_study(args: argparse.Namespace) -> None:
    out = args.out
    meta = prepare(out, args.check_rounds)
    print(json.dumps({w: v["achieved"] for w, v in meta["workloads"].items()}, indent=1), flush=True)
    peers_python = ensure_peers() if any(args.peers.values()) else None
    spin = cal.build_spin(out / "load")
    plan = plan_trials(args.aa, args.ab, args.peers, args.seed)
    trials_path = out / "trials.jsonl"
    done = {(r["index"], r["seed"]) for r in cal.load_records(trials_path)}
    todo = [t for t in plan if (t.index, t.seed) not in done]
    study_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="microbench-") as tmp, open(trials_path, "a") as sink:
        work = Path(tmp)
        for i in range(0, len(todo), CHUNK):
            chunk = todo[i:i + CHUNK]
            for condition in CONDITIONS:
                group = [t for t in chunk if t.condition == condition]
                if not group:
                    continue
                log = work / "load.log"
                seed = group[0].seed if condition == "phased" else None
                with cal.background_load(spin, seed, log, LEAD_IN_S if seed is not None else 0.0):
                    for trial in group:
                        load_before = os.getloadavg()[0]
                        t0 = time.monotonic()
                        record = {**asdict(trial), **run_one(trial, meta, peers_python, work),
                                  "loadavg_before": load_before}
                        if seed is not None:
                            record["busy_cores"] = cal.busy_share(cal.read_schedule(log), t0, time.monotonic())
                        sink.write(json.dumps(record) + "\n")
                        sink.flush()
                        print(f"[{trial.index + 1}/{len(plan)}] {trial.design} {trial.workload} {trial.condition} "
                              f"{trial.kind}: {record.get('verdict')} {record.get('measure_s', record['wall_s']):.2f} s"
                              f" ({time.monotonic() - study_start:.0f} s)", flush=True)
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    meta["machine_s"] = meta.get("machine_s", 0.0) + time.monotonic() - study_start
    (out / "meta.json").write_text(json.dumps(meta, indent=1))


# --------------------------------------------------------------------------- report


def expected(kind: str) -> str:
    return "no change" if kind == "aa" else "slower"


def is_change(verdict: str | None) -> bool:
    return verdict in ("slower", "faster")


def summarize(records: list[dict]) -> list[dict]:
    """One row per design x workload x condition x kind."""
    rows = []
    keys = sorted({(r["design"], r["workload"], r["condition"], r["kind"]) for r in records},
                  key=lambda k: (DESIGNS.index(k[0]), k[1], CONDITIONS.index(k[2]), list(KINDS).index(k[3])))
    for design, workload, condition, kind in keys:
        cell = [r for r in records if (r["design"], r["workload"], r["condition"], r["kind"])
                == (design, workload, condition, kind)]
        ok = [r for r in cell if r.get("verdict") is not None]
        n = len(ok)
        counts: dict[str, int] = {}
        for r in ok:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        changes = sum(is_change(r["verdict"]) for r in ok)
        row = {"design": design, "workload": workload, "condition": condition, "kind": kind, "trials": n,
               "failed": len(cell) - n, "verdicts": counts}
        if kind == "aa":
            row["changes"] = changes
            row["wrong"] = 0
            if n:
                row["bound"] = cal.clopper_pearson_upper(changes, n)
                row["binom_p"] = float(sps.binomtest(changes, n, ALPHA, alternative="greater").pvalue)
        else:
            found = [r for r in ok if r["verdict"] == "slower"]
            row["changes"] = len(found)
            row["wrong"] = sum(r["verdict"] == "faster" for r in ok)
            if n:
                row["bound"] = cal.clopper_pearson_lower(len(found), n)
                if design == "pairbench":
                    row["within_goal"] = sum(r.get("measure_s", math.inf) <= GOAL_S for r in found)
        times = [r.get("measure_s", r["wall_s"]) for r in ok]
        if times:
            row["median_s"] = float(np.median(times))
            row["p90_s"] = float(np.percentile(times, 90))
        for key in ("samples_per_s", "overhead_us", "wall_s"):
            xs = [r[key] for r in ok if r.get(key) is not None]
            if xs:
                row[key] = float(np.median(xs))
        rows.append(row)
    return rows


def _frac(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def _verdicts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def render_report(records: list[dict], meta: dict) -> str:
    rows = summarize(records)
    lines = [f"Machine: `{meta.get('uname', '?')}`, CPU `{meta.get('cpu', '?')}`, {meta.get('cores', '?')} cores; "
             f"study {meta.get('started', '?')} .. {meta.get('finished', '?')}"
             + (f", {meta['machine_s'] / 60:.1f} min of trials." if meta.get("machine_s") else "."), ""]
    wl = meta.get("workloads", {})
    if wl:
        lines += ["Workloads (achieved change, pairbench bench --runs, quiet: estimate [99% interval]; min delta):", ""]
        for w, info in wl.items():
            for kind, a in info.get("achieved", {}).items():
                lines.append(f"- {w} {kind} (n {info['n'].get('a')} vs {info['n'].get('a' if kind == 'aa' else kind)}):"
                             f" {a['estimate_pct']:+.2f}% [{a['low_pct']:+.2f}%, {a['high_pct']:+.2f}%];"
                             f" min {a['min_delta_pct']:+.2f}%, mean {a['mean_delta_pct']:+.2f}%")
        lines.append("")
    lines += ["pairbench bench (time = measuring time to the verdict; samples/s = measured samples of both sides"
              " / measuring time; overhead = (measuring time - worker-timed time) / all samples):", "",
              "| workload | condition | change | trials | verdicts | changes found (A/A: false) | CP 95% bound "
              "| binom p vs alpha | wrong direction | found within 2 s | median s | p90 s | samples/s | overhead/sample |",
              "|---" * 14 + "|"]
    for r in rows:
        if r["design"] != "pairbench":
            continue
        bound = "-" if "bound" not in r else (f"<= {100 * r['bound']:.1f}%" if r["kind"] == "aa"
                                              else f">= {100 * r['bound']:.1f}%")
        lines.append(
            f"| {r['workload']} | {r['condition']} | {_kind(r['kind'])} | {r['trials']} | {_verdicts(r['verdicts'])}"
            f" | {_frac(r['changes'], r['trials'])} | {bound} | {_p(r)} | {r['wrong']}"
            f" | {_frac(r['within_goal'], r['trials']) if 'within_goal' in r else '-'}"
            f" | {r.get('median_s', math.nan):.2f} | {r.get('p90_s', math.nan):.2f}"
            f" | {r.get('samples_per_s', math.nan):.0f} | {r.get('overhead_us', math.nan):.0f} us |")
    peer_rows = [r for r in rows if r["design"] != "pairbench"]
    if peer_rows:
        lines += ["", "Sequential peers (Python workload; time = the whole trial, both runs):", "",
                  "| design | condition | change | trials | verdicts | changes found (A/A: false) | CP 95% bound "
                  "| binom p vs alpha | wrong direction | median s | p90 s |", "|---" * 11 + "|"]
        for r in peer_rows:
            bound = "-" if "bound" not in r else (f"<= {100 * r['bound']:.1f}%" if r["kind"] == "aa"
                                                  else f">= {100 * r['bound']:.1f}%")
            lines.append(f"| {r['design']} | {r['condition']} | {_kind(r['kind'])} | {r['trials']} "
                         f"| {_verdicts(r['verdicts'])} | {_frac(r['changes'], r['trials'])} | {bound} | {_p(r)} "
                         f"| {r['wrong']} | {r.get('median_s', math.nan):.2f} | {r.get('p90_s', math.nan):.2f} |")
    failed = sum(r.get("verdict") is None for r in records)
    loads = [r["loadavg_before"] for r in records if "loadavg_before" in r]
    lines += ["", f"Trials: {len(records)}; without a verdict (failed): {failed}."
              + (f" 1-minute load average before a trial: median {np.median(loads):.2f}, max {max(loads):.2f}."
                 if loads else "")]
    return "\n".join(lines)


def _kind(kind: str) -> str:
    return {"aa": "A/A", "ab1": "+1%", "ab3": "+3%"}[kind]


def _p(row: dict) -> str:
    return f"{row['binom_p']:.3g}" if "binom_p" in row else "-"


# --------------------------------------------------------------------------- driver


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 trials per cell: a smoke run")
    p.add_argument("--aa", default="100,40", help="pairbench A/A trials per condition: C, Python")
    p.add_argument("--ab", default="20,12,8", help="pairbench A/B trials per condition: C +1%%, Python +1%%, +3%%")
    p.add_argument("--peers", default="5,2", help="trials per cell: pytest-benchmark, pyperf (0 skips)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--check-rounds", type=int, default=1000, help="rounds of the achieved-ratio check")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    ab = [int(x) for x in args.ab.split(",")]
    peers = [int(x) for x in args.peers.split(",")]
    aa = [int(x) for x in args.aa.split(",")]
    if args.quick:
        aa, ab, peers = [2, 2], [2, 2, 2], [1, 1]
    args.aa = {"c": aa[0], "py": aa[1]}
    args.ab = {"c": ab[0], "ab1": ab[1], "ab3": ab[2]}
    args.peers = {"pytest-benchmark": peers[0], "pyperf": peers[1]}
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.report_only:
        run_study(args)
    records = cal.load_records(args.out / "trials.jsonl")
    meta_path = args.out / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else cal.machine()
    print(render_report(records, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
