"""Drifts inside a history: a slow rise between two flat stretches reported as a drift, not as one
step; and what weighing a ramp against a step costs true steps and null histories.

Histories are log values 0.03 x (noise + signal), noise of marginal SD 1: ``iid`` normal, ``ar5``
AR(1) phi 0.5 (stationary), ``ar5t3`` the same with Student t3 innovations (heavy tails).

* ``drift``: flat 50 commits, a linear rise of ``--sds`` 1, 2, 4 SD over ``--widths`` 20, 50, 100
  commits, flat 50; "one step" is the share reported as exactly one step and no drift (the error
  the goal bounds at 10%), "drift" the share with a drift;
* ``step``: one step of 3 SD at a place uniform on [0.2 n, 0.8 n]: found within 1 commit, and the
  breaks elsewhere per 1,000 commits (a drift's two ends count as breaks, as in
  ``history_steps.py``);
* ``null``: no change: breaks per 1,000 commits.

Each cell is run by ``analysis.change_points.detect`` as it is (``now``) and with the ramp's
question turned off (``before``: ``ramp=None``), on the same seeded histories.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_drifts.py --parts drift --histories 60
    nice -n 10 .venv/bin/python benchmarks/history_drifts.py --parts step --lengths 30,100 --histories 200
    nice -n 10 .venv/bin/python benchmarks/history_drifts.py --parts null --lengths 30,100 --histories 600
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

from pairbench.analysis.change_points import detect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history_short import cell, noise  # noqa: E402  the same noises (iid, ar5, ar5t3) and step cells

NOISES = ("iid", "ar5", "ar5t3")


def drift_cell(kind: str, sds: float, width: int, histories: int, seed: int, **options) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    flat = 50
    n = 2 * flat + width
    rise = np.clip((np.arange(n) - flat) / (width - 1.0), 0, 1)
    one = drift = 0
    for _ in range(histories):
        d = detect(0.03 * (noise(kind, n, rng) + sds * rise), **options)
        one += len(d.breaks) == 1 and not any(d.segmentation.sloped)
        drift += any(d.segmentation.sloped)
    return one / histories, drift / histories


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--parts", default="drift", help="drift, step, null (comma-separated)")
    parser.add_argument("--noises", default="iid,ar5")
    parser.add_argument("--sds", default="1,2,4")
    parser.add_argument("--widths", default="20,50,100")
    parser.add_argument("--lengths", default="30,100")
    parser.add_argument("--histories", type=int, default=60)
    args = parser.parse_args(argv)
    started = time.time()
    noises = args.noises.split(",")
    print(f"history_drifts: seed {args.seed}, {datetime.date.today()}, parts {args.parts}, "
          f"{args.histories} histories a cell")
    if "drift" in args.parts:
        print("| noise | rise | over | one step: now (before) | drift: now (before) |\n|---|---|---|---|---|")
        for kind in noises:
            for sds in (float(v) for v in args.sds.split(",")):
                for width in (int(v) for v in args.widths.split(",")):
                    now = drift_cell(kind, sds, width, args.histories, args.seed)
                    old = drift_cell(kind, sds, width, args.histories, args.seed, ramp=None)
                    print(f"| {kind} | {sds:g} SD | {width} commits | {now[0]:.3f} ({old[0]:.3f}) "
                          f"| {now[1]:.3f} ({old[1]:.3f}) |", flush=True)
    for part in ("step", "null"):
        if part not in args.parts:
            continue
        head = "found within 1: now (before) | breaks elsewhere / 1,000: now (before)" if part == "step" \
            else "breaks / 1,000 commits: now (before)"
        print(f"| {part} | noise | commits | {head} |\n|---|---|---|---|" + ("---|" if part == "step" else ""))
        for kind in noises:
            for n in (int(v) for v in args.lengths.split(",")):
                now = cell(kind, n, args.histories, args.seed, part == "step")
                old = cell(kind, n, args.histories, args.seed, part == "step", ramp=None)
                cells = (f"{now[1]:.3f} ({old[1]:.3f}) | {now[0]:.2f} ({old[0]:.2f})" if part == "step"
                         else f"{now[0]:.2f} ({old[0]:.2f})")
                print(f"| {part} | {kind} | {n} | {cells} |", flush=True)
    print(f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
