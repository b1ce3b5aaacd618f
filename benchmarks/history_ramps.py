"""Ramps between flat stretches: how often a rise over 20-100 commits is called exactly one step
(which sends ``bisect`` looking for one commit), now that a break is one step only when one step
beats a ramp decisively; and what that costs true steps.

Histories are log values 0.03 x (noise + signal), noise of marginal SD 1 (``history_short.noise``):
``iid`` normal, ``ar5`` AR(1) phi 0.5, ``ar5t3`` the same with Student t3 innovations.

* ``ramp``: flat 50 commits, a linear rise of ``--sds`` 1, 2, 4 SD over ``--widths`` 20, 50, 100
  commits, flat 50. "one step" is the share reported as exactly one step, no drift and not
  spread (the goal: at most 10%); "spread" the share with a change that may be spread over
  commits (a step or a drift), "drift" the share with a drift;
* ``step``: one 3-SD step at a place uniform on [0.2 n, 0.8 n]: found within 1 commit (a break
  there, whatever it is called), called one step there (not spread), and breaks elsewhere per
  1,000 commits;
* ``null``: no change: breaks per 1,000 commits.

"now" is ``analysis.change_points.detect`` as it is; "before" the same detection with every break
called one step (``one_step=None``): the question is asked after the segmentation, so breaks and
their places are the same (checked on the first histories of every cell).

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_ramps.py --parts ramp --histories 100
    nice -n 10 .venv/bin/python benchmarks/history_ramps.py --parts step,null --lengths 30,50,100 --histories 200
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
from history_short import drawn, noise  # noqa: E402  the same noises (iid, ar5, ar5t3) and step histories

CHECKED = 10  # histories of each cell whose breaks are checked against the detection without the question


def _detected(y: np.ndarray, checked: bool):
    d = detect(y)
    if checked and detect(y, one_step=None).breaks != d.breaks:
        raise AssertionError("the one-step question moved a break")
    return d


def ramp_cell(kind: str, sds: float, width: int, histories: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    flat = 50
    n = 2 * flat + width
    rise = np.clip((np.arange(n) - flat) / (width - 1.0), 0, 1)
    counts = dict.fromkeys(("one", "before", "spread", "drift"), 0)
    for h in range(histories):
        d = _detected(0.03 * (noise(kind, n, rng) + sds * rise), h < CHECKED)
        single = len(d.breaks) == 1 and not any(d.segmentation.sloped)
        counts["before"] += single
        counts["one"] += single and d.one_step(0)
        counts["spread"] += any(s is not None for s in d.spread)
        counts["drift"] += any(d.segmentation.sloped)
    return {k: v / histories for k, v in counts.items()}


def step_cell(kind: str, n: int, histories: int, seed: int, step: bool) -> dict[str, float]:
    """As ``history_short.cell`` (the same draws): breaks elsewhere per 1,000 commits, and with a
    step the share found within 1 commit and the share called one step there."""
    rng = np.random.default_rng(seed)
    false = found = one = 0
    for h in range(histories):
        y, k = drawn(kind, n, rng, step)
        d = _detected(0.03 * y, h < CHECKED)
        near = [i for i, b in enumerate(d.breaks) if k is not None and abs(b - k) <= 1]
        found += bool(near)
        one += any(d.one_step(i) for i in near)
        false += len(d.breaks) - (1 if near else 0)
    return {"false": 1000.0 * false / (n * histories), "found": found / histories, "one": one / histories}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--parts", default="ramp", help="ramp, step, null (comma-separated)")
    parser.add_argument("--noises", default="iid,ar5")
    parser.add_argument("--sds", default="1,2,4")
    parser.add_argument("--widths", default="20,50,100")
    parser.add_argument("--lengths", default="30,50,100")
    parser.add_argument("--histories", type=int, default=100)
    args = parser.parse_args(argv)
    started = time.time()
    noises = args.noises.split(",")
    print(f"history_ramps: seed {args.seed}, {datetime.date.today()}, parts {args.parts}, "
          f"{args.histories} histories a cell")
    if "ramp" in args.parts:
        print("| noise | rise | over | one step: now (before) | spread | drift |\n|---|---|---|---|---|---|")
        for kind in noises:
            for sds in (float(v) for v in args.sds.split(",")):
                for width in (int(v) for v in args.widths.split(",")):
                    c = ramp_cell(kind, sds, width, args.histories, args.seed)
                    print(f"| {kind} | {sds:g} SD | {width} commits | {c['one']:.3f} ({c['before']:.3f}) "
                          f"| {c['spread']:.3f} | {c['drift']:.3f} |", flush=True)
    for part in ("step", "null"):
        if part not in args.parts:
            continue
        head = ("found within 1 | called one step there: now (before) | breaks elsewhere / 1,000"
                if part == "step" else "breaks / 1,000 commits")
        print(f"| {part} | noise | commits | {head} |\n|---|---|---|---|" + ("---|---|" if part == "step" else ""))
        for kind in noises:
            for n in (int(v) for v in args.lengths.split(",")):
                c = step_cell(kind, n, args.histories, args.seed, part == "step")
                cells = (f"{c['found']:.3f} | {c['one']:.3f} ({c['found']:.3f}) | {c['false']:.2f}"
                         if part == "step" else f"{c['false']:.2f}")
                print(f"| {part} | {kind} | {n} | {cells} |", flush=True)
    print(f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
