"""Benchmark: exact Hodges-Lehmann shift with its 95% interval, against R's wilcox.test.

    .venv/bin/python benchmarks/hodges_lehmann.py            # full run (about 1 minute + R)
    .venv/bin/python benchmarks/hodges_lehmann.py --quick    # 1e4 and 1e5 only

For n = m = 1e4, 1e5, 1e6 (lognormal data, fixed seed) it times
``hodges_lehmann(x, y)`` in a fresh subprocess and reports the best wall time, the
peak of Python/numpy allocations during the call (tracemalloc) and the process's
peak resident set (ru_maxrss, interpreter and libraries included). At 1e4 and 1e5
it runs R's ``wilcox.test(x, y, conf.int=TRUE)`` on the same data (the timing is
taken inside R, data loading excluded), prints the speed ratio and checks that the
intervals agree to R's tol.root = 1e-4. Coarse-timer data (values rounded to a tick,
heavy ties: the R-root-finder path) are timed too. Targets: >= 100x faster than R
at 1e5; < 3 s and < 200 MB at 1e6. Rscript missing -> the R columns are skipped
with a note.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

TOL_ROOT = 1e-4
SEED = 20261122


def make_data(n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Two lognormal samples (rlnorm(n, 5, 0.2)), y shifted by 0.5%."""
    rng = np.random.default_rng(SEED + n)
    x = rng.lognormal(5, 0.2, n)
    y = rng.lognormal(5, 0.2, n) * 1.005
    if kind == "ticks":  # a 1-unit timer: ~150 distinct values, heavy ties
        x, y = np.round(x), np.round(y)
    return x, y


def worker(n: int, kind: str, repeats: int) -> dict:
    """Time one size in this (fresh) process; print the result as JSON."""
    from pairbench.stats import hodges_lehmann

    x, y = make_data(n, kind)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = hodges_lehmann(x, y)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    hodges_lehmann(x, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "n": n,
        "kind": kind,
        "best_s": min(times),
        "times_s": times,
        "traced_peak_mb": peak / 2**20,
        "max_rss_mb": rss_kib / 1024,
        "estimate": res.estimate,
        "low": res.low,
        "high": res.high,
        "method": res.method,
    }


def run_worker(n: int, kind: str, repeats: int) -> dict:
    cmd = [sys.executable, __file__, "--worker", str(n), kind, str(repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


R_SCRIPT = """
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[2])
con <- file(args[1], "rb"); x <- readBin(con, "double", n); y <- readBin(con, "double", n); close(con)
t <- system.time(w <- wilcox.test(x, y, conf.int = TRUE))[["elapsed"]]
cat(sprintf("%.17g %.17g %.17g %.17g\\n", t, w$conf.int[1], w$conf.int[2], w$estimate))
"""


def run_r(n: int, kind: str) -> dict | None:
    """R's wilcox.test on the same data, timed inside R; None when Rscript is absent."""
    if shutil.which("Rscript") is None:
        return None
    x, y = make_data(n, kind)
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp) / "xy.bin", Path(tmp) / "hl.R"
        data.write_bytes(x.astype("<f8").tobytes() + y.astype("<f8").tobytes())
        script.write_text(R_SCRIPT)
        out = subprocess.run(
            ["Rscript", str(script), str(data), str(n)], check=True, capture_output=True, text=True
        ).stdout.split()
    t, low, high, est = map(float, out)
    return {"seconds": t, "low": low, "high": high, "estimate": est}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only n = 1e4 and 1e5")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        n, kind, repeats = int(args.worker[0]), args.worker[1], int(args.worker[2])
        print(json.dumps(worker(n, kind, repeats)))
        return 0
    sizes = [10**4, 10**5] if args.quick else [10**4, 10**5, 10**6]
    plan = [(n, "lognormal") for n in sizes] + [(n, "ticks") for n in sizes if n >= 10**5]
    if shutil.which("Rscript") is None:
        print("note: Rscript not found; R comparison skipped")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(
        f"{'data':<10} {'n=m':>8} {'pairbench s':>12} {'traced MB':>10} {'max RSS MB':>11} "
        f"{'R s':>8} {'R/ours':>8} {'max |diff| vs R':>16}  interval"
    )
    ok = True
    for n, kind in plan:
        res = run_worker(n, kind, repeats=3 if n >= 10**6 else 7)
        r = run_r(n, kind) if n <= 10**5 else None
        r_cols = f"{'-':>8} {'-':>8} {'-':>16}"
        if r is not None:
            diff = max(abs(res["low"] - r["low"]), abs(res["high"] - r["high"]))
            agree = diff <= TOL_ROOT + 4 * np.finfo(float).eps * abs(r["high"])
            ok &= agree
            ratio = r["seconds"] / res["best_s"]
            r_cols = f"{r['seconds']:8.2f} {ratio:8.0f} {diff:16.2e}" + (
                "" if agree else " MISMATCH"
            )
        print(
            f"{kind:<10} {n:>8.0e} {res['best_s']:12.3f} {res['traced_peak_mb']:10.1f} "
            f"{res['max_rss_mb']:11.1f} {r_cols}  [{res['low']:.6f}, {res['high']:.6f}] ({res['method']})"
        )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
