"""``--metric auto`` on a CPU-bound C program under load: real A/A comparisons.

A C spin (``benchmarks/workloads/spin.c``, ``spin 5000000``: a serial LCG, about 8 ms on an idle
core of the 2-CPU test machine) against a byte-identical copy, with ``pairbench compare -N
--seed S --max-time 20s --json`` and every other option at its default (``--metric auto``,
alpha 0.01, threshold 1%). Each run holds the shared timing lock (``--lock``) only while it
measures; the 1-minute load average is read before and after each. Per run: the verdict, the
metric auto chose and what it read (``metric-chosen``: the kind, the unswitched samples), whether
the verdict carries ``cpu-time-partial``. The goal: auto chooses CPU time in at least 23 of 24
runs at load 6-11, none with ``cpu-time-partial``.

The load is whatever the machine has (other jobs); ``--busy N`` adds N busy loops of the spin for
the whole study, so a quiet machine can be brought to the load the goal names (they are counted in
the load average the table gives).

    .venv/bin/python benchmarks/auto_metric_real.py --runs 24 --lock /work/timing.lock --out benchmarks/out/auto_metric
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPIN_SOURCE = ROOT / "benchmarks" / "workloads" / "spin.c"
PAIRBENCH = (sys.executable, "-m", "pairbench")
STEPS = 5_000_000


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def build(out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    spin = out / "spin"
    subprocess.run(["cc", "-O2", "-Wall", "-o", str(spin), str(SPIN_SOURCE)], check=True)
    copy = out / "spin2"
    shutil.copyfile(spin, copy)
    copy.chmod(0o755)
    return spin, copy


def one_run(spin: Path, copy: Path, seed: int, out: Path, lock: str | None, max_time: str) -> dict:
    result = out / f"run-{seed}.json"
    command = [*PAIRBENCH, "compare", "-N", "--seed", str(seed), "--max-time", max_time, "--json", str(result),
               f"{spin} {STEPS}", f"{copy} {STEPS}"]
    if lock:
        command = ["flock", lock, *command]
    before = load()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out)
    after = load()
    return {"seed": seed, "load_before": before, "load_after": after, **summary(json.loads(result.read_text()))}


def summary(doc: dict) -> dict:
    """What one result says: verdict, metric, interval, rounds, what auto read, cpu-time-partial."""
    (c,) = doc["comparisons"]
    notes = {n["code"]: n["data"] for n in c["notes"]}
    chosen = notes.get("metric-chosen", {})
    effect = c.get("effect") or {}
    measured = [(inv, warm) for s in doc["series"]
                for inv, warm in zip(s["samples"]["involuntary_cs"], s["samples"]["warmup"], strict=True)]
    samples = [inv for inv, warm in measured if not warm]
    before_metric, before_partial = before_rule(doc)
    return {"before_metric": before_metric, "before_partial": before_partial, "verdict": c["verdict"], "metric": c["metric"], "rounds": c["rounds"],
            "low": effect.get("low"), "high": effect.get("high"), "kind": chosen.get("kind"),
            "off_cpu_share": chosen.get("off_cpu_share"), "partial": "cpu-time-partial" in notes,
            "unswitched": sum(1 for v in samples if v == 0), "samples": len(samples)}


def before_rule(doc: dict) -> tuple[str, bool]:
    """What the rule before a minimum of unswitched samples read from the same samples: the metric auto
    would have chosen (the first 10 rounds of both sides; "off-cpu" from any unswitched sample) and
    whether the verdict would carry cpu-time-partial (the same rule over every round)."""
    def kind(rows) -> str:
        quiet = [(w, c) for w, c, inv in rows if inv == 0]
        if not quiet:
            return "unknown"
        share = float(np.median([(w - c) / w for w, c in quiet]))
        off = float(np.median([w - c for w, c in quiet]))
        return "off-cpu" if share > 0.25 and (off > 2e6 or share > 0.5) else "cpu-bound"

    by_side = []
    for s in doc["series"]:
        x = s["samples"]
        keep = [i for i, (w, st) in enumerate(zip(x["warmup"], x["status"], strict=True)) if not w and st == 0]
        by_side.append([(x["wall_ns"][i], x["user_ns"][i] + x["sys_ns"][i], x["involuntary_cs"][i]) for i in keep])
    first = [row for side in by_side for row in side[:10]]
    chosen = "wall" if kind(first) == "off-cpu" else "cpu"
    return chosen, chosen == "cpu" and kind([row for side in by_side for row in side]) == "off-cpu"


def table(rows: list[dict]) -> str:
    lines = ["| run (seed) | load before / after | verdict | metric | rounds | interval | auto read "
             "| unswitched samples | cpu-time-partial | the rule before: metric, partial |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        interval = f"[{r['low']:+.2f}%, {r['high']:+.2f}%]" if r["low"] is not None else "—"
        lines.append(f"| {r['seed']} | {r['load_before']:.1f} / {r['load_after']:.1f} | {r['verdict']} | {r['metric']} "
                     f"| {r['rounds']} | {interval} | {r['kind']} "
                     f"| {r['unswitched']} of {r['samples']} | {'yes' if r['partial'] else 'no'} "
                     f"| {r['before_metric']}, {'yes' if r['before_partial'] else 'no'} |")
    cpu = sum(r["metric"] == "cpu" for r in rows)
    partial = sum(r["partial"] for r in rows)
    loads = [r["load_before"] for r in rows] + [r["load_after"] for r in rows]
    lines.append(f"\nauto chose CPU time in {cpu} of {len(rows)}; cpu-time-partial on {partial}; the rule before, on "
                 f"the same samples: CPU time in {sum(r['before_metric'] == 'cpu' for r in rows)}, cpu-time-partial on "
                 f"{sum(r['before_partial'] for r in rows)}; "
                 f"false changes {sum(r['verdict'] in ('slower', 'faster') for r in rows)}; "
                 f"equivalent {sum(r['verdict'] == 'equivalent' for r in rows)}; load {min(loads):.1f}-{max(loads):.1f}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--first-seed", type=int, default=7001)
    parser.add_argument("--max-time", default="20s")
    parser.add_argument("--lock", default=None, help="a file to flock while each run measures")
    parser.add_argument("--busy", type=int, default=0, help="busy loops added for the whole study")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "auto_metric")
    parser.add_argument("--report-only", action="store_true", help="tables from the runs' stored results")
    args = parser.parse_args(argv)
    rows_path = args.out / "runs.jsonl"
    if args.report_only:
        rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
        rows = [{**r, **summary(json.loads((args.out / f"run-{r['seed']}.json").read_text()))} for r in rows]
        print(table(rows))
        return
    spin, copy = build(args.out)
    busy = [subprocess.Popen([str(spin), "--busy"]) for _ in range(args.busy)]
    try:
        for i in range(args.runs):
            row = one_run(spin, copy, args.first_seed + i, args.out, args.lock, args.max_time)
            with rows_path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    print(f"auto_metric_real: {datetime.datetime.now():%Y-%m-%d %H:%M}, spin {STEPS} steps")
    print(table(rows))


if __name__ == "__main__":
    main()
