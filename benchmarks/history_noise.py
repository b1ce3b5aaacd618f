"""Real result-to-result noise for the change-point study: many separate `pairbench run`s of one command.

A history's points are the medians of separate results: each a new pairbench
process, run at another moment of the machine's life. Their spread (the noise
a change-point method must not mistake for a step) is measured here as it
arises: ``--results N`` separate ``pairbench run --runs 15`` invocations of a C
workload of about 10 ms (``workloads/spin.c``), one after another, each stored
in a real SQLite history store as a user's would be. The per-result medians,
in the order measured, go to ``benchmarks/data/history-noise.json``, which
``benchmarks/changepoints.py`` builds its synthetic series from.

Usage (about 4 minutes for 300 results; run it under the shared lock):
    flock /work/.heavy.lock .venv/bin/python benchmarks/history_noise.py --results 300
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import ROOT, build_spin  # noqa: E402

PAIRBENCH = [sys.executable, "-m", "pairbench"]
OUT = ROOT / "benchmarks" / "data" / "history-noise.json"
SPIN_ARG = 2_500_000  # about 10 ms on the project's VM


def one_result(spin: Path, store: str, runs: int) -> float:
    """Measure ``spin`` once with ``pairbench run`` into ``store``; the median wall time (ns)."""
    done = subprocess.run([*PAIRBENCH, "run", "-q", "--runs", str(runs), "--warmup", "1", "--json", "-",
                           "--store", store, "--name", "spin", f"{spin} {SPIN_ARG}"],
                          check=True, capture_output=True, text=True, cwd=ROOT)
    document = json.loads(done.stdout)
    series = next(s for s in document["series"] if s["benchmark"] == 0)
    walls = np.array(series["samples"]["wall_ns"])[np.array(series["samples"]["warmup"]) == 0]
    return float(np.median(walls))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=300)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "out" / "history-noise")
    parser.add_argument("--out", type=Path, default=OUT, help="where the medians go")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    spin = build_spin(args.out_dir)
    store = f"sqlite:///{args.out_dir / 'history.db'}"
    started, medians = time.time(), []
    for i in range(args.results):
        medians.append(one_result(spin, store, args.runs))
        if (i + 1) % 50 == 0:
            print(f"{i + 1} results, {time.time() - started:.0f} s", file=sys.stderr)
    values = np.array(medians)
    logs = np.log(values)
    summary = {
        "what": "medians (ns) of separate `pairbench run --runs N` results of spin.c, in the order measured",
        "date": dt.date.today().isoformat(), "machine": f"{platform.node()} {platform.machine()}",
        "python": platform.python_version(), "runs_per_result": args.runs, "spin_arg": SPIN_ARG,
        "median_ns": float(np.median(values)), "relative_sd": float(np.std(logs, ddof=1)),
        "lag1_autocorrelation": float(np.corrcoef(logs[:-1], logs[1:])[0, 1]),
        "medians_ns": [round(v) for v in medians],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "medians_ns"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
