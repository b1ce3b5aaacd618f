"""Short histories: a 3-SD step under AR(1) noise at 30-100 commits, and the false steps there,
with the settings for short histories (``analysis.change_points.short_history``) against those
of long ones at every length (before).

Histories are log values 0.03 x (noise + signal), noise of marginal SD 1: ``iid`` normal, ``ar5``
AR(1) phi 0.5 (stationary), ``ar5t3`` the same with Student t3 innovations, ``ar8`` AR(1) phi 0.8.
``null``: no step, every break false (per 1,000 commits); ``step``: one step of 3 SD at a place
uniform on [0.2 n, 0.8 n], found within 1 commit, and breaks elsewhere per 1,000 commits.
"before" passes ``small=SMALL_HISTORY, evidence=EVIDENCE`` (the long histories' settings) to
``detect``; "now" its defaults.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_short.py --parts null --lengths 30,50 --histories 1000
    nice -n 10 .venv/bin/python benchmarks/history_short.py --parts step --lengths 30,50 --histories 300
"""

from __future__ import annotations

import argparse
import datetime
import math
import time

import numpy as np
from scipy.signal import lfilter

from pairbench.analysis.change_points import EVIDENCE, SMALL_HISTORY, detect


def noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "iid":
        return rng.standard_normal(n)
    phi = 0.8 if kind == "ar8" else 0.5
    e = rng.standard_t(3, n + 300) / math.sqrt(3.0) if kind == "ar5t3" else rng.standard_normal(n + 300)
    return math.sqrt(1 - phi * phi) * lfilter([1.0], [1.0, -phi], e)[300:]


def drawn(kind: str, n: int, rng: np.random.Generator, step: bool) -> tuple[np.ndarray, int | None]:
    """One history of ``n`` commits of ``kind`` noise in units of its SD and, with ``step``, a 3-SD
    step at a commit drawn from the middle 60% (returned; None without a step)."""
    y = noise(kind, n, rng)
    if not step:
        return y, None
    k = int(rng.integers(math.ceil(0.2 * n), math.floor(0.8 * n) + 1))
    return y + 3.0 * (np.arange(n) >= k), k


def cell(kind: str, n: int, histories: int, seed: int, step: bool, **options) -> tuple[float, float]:
    """Breaks elsewhere per 1,000 commits, and (with a step) the share found within 1 commit."""
    rng = np.random.default_rng(seed)
    false = found = 0
    for _ in range(histories):
        y, k = drawn(kind, n, rng, step)
        breaks = detect(0.03 * y, **options).breaks
        near = [b for b in breaks if k is not None and abs(b - k) <= 1]
        found += bool(near)
        false += len(breaks) - (1 if near else 0)
    return 1000.0 * false / (n * histories), found / histories


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--parts", default="null,step")
    parser.add_argument("--noises", default="ar5,ar5t3,iid,ar8")
    parser.add_argument("--lengths", default="30,50")
    parser.add_argument("--histories", type=int, default=300)
    parser.add_argument("--before", action="store_true", help="also the long histories' settings")
    args = parser.parse_args(argv)
    started = time.time()
    print(f"history_short: seed {args.seed}, {datetime.date.today()}, {args.histories} histories a cell")
    old = {"small": SMALL_HISTORY, "evidence": EVIDENCE}
    for part in args.parts.split(","):
        step = part == "step"
        print(f"| {part} | noise | commits | " + ("found within 1: now" + (" (before)" if args.before else "") + " | "
                                                 if step else "") + "breaks / 1,000 commits: now"
              + (" (before)" if args.before else "") + " |\n|---|---|---|---|" + ("---|" if step else ""))
        for kind in args.noises.split(","):
            for n in (int(v) for v in args.lengths.split(",")):
                now = cell(kind, n, args.histories, args.seed, step)
                was = cell(kind, n, args.histories, args.seed, step, **old) if args.before else None
                shown = [f"{now[1]:.3f}" + (f" ({was[1]:.3f})" if was else "")] if step else []
                shown.append(f"{now[0]:.2f}" + (f" ({was[0]:.2f})" if was else ""))
                print(f"| {part} | {kind} | {n} | " + " | ".join(shown) + " |", flush=True)
    print(f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
