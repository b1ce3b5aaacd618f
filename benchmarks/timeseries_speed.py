"""Run time of ``mean_error`` (every method) and ``autocorrelation`` at 1e6 and 1e7 samples.

Each call is timed ``--repeat`` times on the same AR(1) phi = 0.5 series (the
best and the median time are printed), so the figures show the cost of one
analysis of a long run. The work is an FFT autocovariance, O(n log n): the
ratio t(1e7) / t(1e6) should be close to 10 * log(1e7) / log(1e6) ~ 11.7
(memory bandwidth makes it somewhat larger), never ~100 as an O(n^2) lag
loop would be. ``median_ci`` and ``describe`` are timed too, for reference.

Usage::

    .venv/bin/python benchmarks/timeseries_speed.py [--sizes 1000000 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from scipy import signal

from pairbench import stats

CALLS = {
    "mean_error batch-means": lambda x: stats.mean_error(x, method="batch-means"),
    "mean_error truncated-lag": lambda x: stats.mean_error(x, method="truncated-lag"),
    "mean_error newey-west": lambda x: stats.mean_error(x, method="newey-west"),
    "mean_error iid": lambda x: stats.mean_error(x, method="iid"),
    "autocorrelation (default lags)": lambda x: stats.autocorrelation(x),
    "ljung_box": lambda x: stats.ljung_box(x),
    "median_ci": lambda x: stats.median_ci(x),
    "describe": lambda x: stats.describe(x),
}


def series(n: int) -> np.ndarray:
    rng = np.random.default_rng(20261122)
    ar = signal.lfilter([1.0], [1.0, -0.5], rng.normal(size=n))
    return 1e6 + 2e4 * ar  # timings in ns around 1 ms


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    results: dict[str, list[float]] = {name: [] for name in CALLS}
    for n in args.sizes:
        x = series(n)
        for name, call in CALLS.items():
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                call(x)
                times.append(time.perf_counter() - start)
            results[name].append(min(times))
            print(
                f"n = {n:>10,}  {name:32s} best {min(times):7.3f} s  "
                f"median {statistics.median(times):7.3f} s",
                file=sys.stderr,
            )
    header = " | ".join(f"n = {n:,} (s)" for n in args.sizes)
    print(f"| call | {header} | ratio |")
    print("|---" * (len(args.sizes) + 2) + "|")
    for name, times in results.items():
        ratio = f"{times[-1] / times[0]:.1f}" if len(times) > 1 else ""
        cells = " | ".join(f"{t:.3f}" for t in times)
        print(f"| {name} | {cells} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
