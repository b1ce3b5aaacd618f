"""Change points that hold: `pairbench history`'s steps and drifts against asv's and E-divisive means.

Every detector sees the same seeded histories (log values for pairbench, times for the peers):

* **noise**, of SD 1 before scaling by the CV: ``iid`` normal; ``ar`` AR(1) with phi 0.5 (what a
  shared machine's phases give); ``t3`` Student's t with 3 degrees of freedom (heavy tails);
  ``ar-t3`` both; and the real noise of ``changepoints.py`` (500 separate `pairbench run` results of
  one command on this project's machine), its undisturbed results ``quiet`` drawn independently per
  commit or ``quiet-blocks`` in runs of 20 consecutive results (the machine's phases kept), scaled
  by their MAD-SD;
* **null**: no step; every step found is false (per 1,000 commits, and the share of histories
  with one); every drift found is false;
* **step**: one step of 3 noise SDs at a uniform place in [0.2 n, 0.8 n]; "found" is a step
  within 1 commit of it (within 2, and on its commit, in brackets), "others" the steps found elsewhere
  per 1,000 commits;
* **drift**: the log values rise linearly by 5% or 10% over the history; "one step" is the share
  reported as exactly one step and no drift (the error the goal forbids), "drift" the share
  reported as a drift (pairbench only), "steps" the mean number of steps.

Methods: ``pairbench`` (``analysis.history.detect``), ``before`` (the detector of pairbench 0.2: the
SD from consecutive differences, independent noise, PELT at 4 ln n), and with ``--peers PYTHON``
the peers of ``history_peers.py`` run by that Python (asv, E-divisive means, Otava), on at most
``--peer-histories`` histories per cell (E-divisive's permutation test takes seconds a history).
``--calibrate`` runs pairbench alone over a grid of penalties (``--factors``, ``--smalls``,
``--drift-costs``), weights of a step's exact place (``--exacts``) and Bayes evidence that splits
a stretch (``--evidences``, with ``--lastings`` the evidence of a step that outlasts its jump it also
needs; ``-inf`` for none) and the skewness beyond which a history's noise is skewed (``--skeweds``,
``none`` for never) on the cells chosen (``--scenarios``, ``--noises``), which is how
``PENALTY_FACTOR``, ``SMALL_HISTORY``, ``DRIFT_COST``, ``EXACT``, ``EVIDENCE``, ``LASTING`` and ``SKEWED``
were chosen.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_steps.py --seed 2041 --peers /tmp/history-peers/bin/python
    nice -n 10 .venv/bin/python benchmarks/history_steps.py --calibrate --lengths 30,100,300 --scale 0.3 \
        --factors 3,4 --smalls 0,10,20 --scenarios null,step --noises iid,ar,t3,ar-t3
    nice -n 10 .venv/bin/python benchmarks/history_steps.py --calibrate --lengths 30,100,300 --scale 0.5 \
        --drift-costs 1,0.75,0.5 --noises iid,ar,quiet-blocks
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from changepoints import draw, real_noise  # noqa: E402
from pairbench import stats  # noqa: E402
from pairbench.analysis.change_points import (  # noqa: E402
    BY_LENGTH,
    DRIFT_COST,
    EVIDENCE,
    EXACT,
    LASTING,
    PENALTY_FACTOR,
    SKEWED,
    SMALL_HISTORY,
    clipped,
    detect,
)

MODEL_NOISES = ("iid", "ar", "t3", "ar-t3")
REAL_NOISES = ("quiet", "quiet-blocks")
LENGTHS = (30, 100, 300, 1000)
COMMITS_PER_CELL = 60_000  # null cells: enough for a rate of 1 per 1,000 commits to be seen 60 times
MIN_HISTORIES = 200
STEP_SDS = 3.0
DRIFTS = (5.0, 10.0)
PHI = 0.5
MAD_TO_SD = 1.482602218505602


# --------------------------------------------------------------------------- histories


def model_noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Noise of SD 1: normal or t3 innovations, independent or AR(1) (stationary from the start)."""
    heavy = kind.endswith("t3")
    e = rng.standard_t(3, n + 200) / math.sqrt(3.0) if heavy else rng.standard_normal(n + 200)
    if kind.startswith("ar"):
        return math.sqrt(1.0 - PHI * PHI) * lfilter([1.0], [1.0, -PHI], e)[200:]
    return e[200:]


class RealNoise:
    """The real result noise of ``changepoints.py`` (log medians about their median), scaled to a
    MAD-SD of 1, drawn independently (``quiet``) or in blocks (``quiet-blocks``)."""

    def __init__(self):
        values = real_noise("quiet")
        self.values = values / (MAD_TO_SD * np.median(np.abs(values - np.median(values))))
        self.mad_sd = float(MAD_TO_SD * np.median(np.abs(values - np.median(values))))

    def draw(self, kind: str, n: int, rng) -> np.ndarray:
        return draw(self.values, n, "iid" if kind == "quiet" else "blocks", rng)


@dataclass
class Cell:
    """Histories of one scenario, and what each method found in them."""

    scenario: str  # null, step, drift
    noise: str
    n: int
    cv: float  # the noise's SD in log units (for real noise: its MAD-SD)
    size: float = 0.0  # the step in noise SDs, or the drift in percent
    series: list = field(default_factory=list)  # log values
    truth: list = field(default_factory=list)  # the step's index, or None
    found: dict = field(default_factory=dict)  # method -> list of (breaks, drifts)

    @property
    def label(self) -> str:
        extra = {"step": f"{self.size:g} SD", "drift": f"+{self.size:g}%"}.get(self.scenario, "")
        return f"{self.scenario} {extra} {self.noise} n={self.n} cv={100 * self.cv:g}%".replace("  ", " ")


def histories(cell: Cell, count: int, rng, real: RealNoise) -> None:
    for _ in range(count):
        z = real.draw(cell.noise, cell.n, rng) if cell.noise in REAL_NOISES else model_noise(cell.noise, cell.n, rng)
        y = cell.cv * z
        truth = None
        if cell.scenario == "step":
            truth = int(rng.integers(int(0.2 * cell.n), int(0.8 * cell.n) + 1))
            y[truth:] += STEP_SDS * cell.cv
        elif cell.scenario == "drift":
            y += np.linspace(0.0, math.log1p(cell.size / 100.0), cell.n)
        cell.series.append(y)
        cell.truth.append(truth)


def cells(args) -> list[Cell]:
    out = []
    cvs = (0.01, 0.05)
    for n in args.lengths:
        for noise in MODEL_NOISES:
            out += [Cell("null", noise, n, cv) for cv in cvs]
            out.append(Cell("step", noise, n, 0.03, STEP_SDS))
        out += [Cell("drift", noise, n, cv, d) for noise in ("iid", "ar") for cv in (0.01, 0.03) for d in DRIFTS]
        out += [Cell(s, noise, n, 0.0, STEP_SDS if s == "step" else 0.0) for noise in REAL_NOISES
                for s in ("null", "step")]
    return out


def count_for(cell: Cell, scale: float) -> int:
    base = max(COMMITS_PER_CELL // cell.n, MIN_HISTORIES) if cell.scenario == "null" else MIN_HISTORIES * 2
    return max(20, int(base * scale))


# --------------------------------------------------------------------------- methods


def pairbench(y: np.ndarray, factor: float = PENALTY_FACTOR, small: float | str = BY_LENGTH,
              drift_cost: float = DRIFT_COST, exact: float = EXACT, evidence: float | str | None = BY_LENGTH,
              lasting: float = LASTING, skewed: float | None = SKEWED):
    found = detect(y, factor=factor, small=small, drift_cost=drift_cost, exact=exact, evidence=evidence,
                   lasting=lasting, skewed=skewed)
    return list(found.breaks), sum(found.segmentation.sloped)


def before(y: np.ndarray):
    """pairbench 0.2's detector, kept here to compare with."""
    if y.size < 6:
        return [], 0
    sd = stats.noise_scale(y)
    if sd <= 0:
        return [], 0
    z = clipped((y - np.median(y)) / sd)
    return list(stats.pelt(z, 4.0 * math.log(y.size), 3)), 0


def run_peers(python: str, cell_list: list[Cell], at_most: int) -> dict:
    """The peers' breaks for the first ``at_most`` histories of each cell (n <= 1000)."""
    series = [np.exp(y).tolist() for c in cell_list for y in c.series[:at_most]]
    here = Path(__file__).resolve().parent / "history_peers.py"
    done = subprocess.run([python, str(here)], input=json.dumps({"series": series}), capture_output=True,
                          text=True, check=True)
    answer = json.loads(done.stdout)
    position = 0
    for c in cell_list:
        taken = len(c.series[:at_most])
        for method, breaks in answer["breaks"].items():
            c.found[method] = [(b, 0) for b in breaks[position:position + taken]]
        position += taken
    return answer["versions"]


# --------------------------------------------------------------------------- scores


def score(cell: Cell, method: str) -> dict:
    found = cell.found[method]
    truth = cell.truth[:len(found)]
    commits = cell.n * len(found)
    if cell.scenario == "null":
        steps = sum(len(b) for b, _ in found)
        return {"histories": len(found), "per_1000": 1000.0 * steps / commits,
                "with_any": float(np.mean([bool(b) for b, _ in found])),
                "drifts_per_1000": 1000.0 * sum(d for _, d in found) / commits}
    if cell.scenario == "step":
        hit1 = [any(abs(b - t) <= 1 for b in bs) for (bs, _), t in zip(found, truth, strict=True)]
        hit2 = [any(abs(b - t) <= 2 for b in bs) for (bs, _), t in zip(found, truth, strict=True)]
        hit0 = [t in bs for (bs, _), t in zip(found, truth, strict=True)]
        others = sum(sum(abs(b - t) > 2 for b in bs) for (bs, _), t in zip(found, truth, strict=True))
        return {"histories": len(found), "found_1": float(np.mean(hit1)), "found_2": float(np.mean(hit2)),
                "found_0": float(np.mean(hit0)),
                "others_per_1000": 1000.0 * others / commits}
    return {"histories": len(found), "one_step": float(np.mean([len(b) == 1 and not d for b, d in found])),
            "drift": float(np.mean([d > 0 for _, d in found])), "steps": float(np.mean([len(b) for b, _ in found]))}


def tables(cell_list: list[Cell], methods: list[str]) -> str:
    out = []
    for scenario, head, fmt in (
            ("null", "false steps / 1000 commits (histories with one)", _null),
            ("step", "3-SD step found within 1 commit (within 2; on it); other steps / 1000 commits", _step),
            ("drift", "reported as one step (as a drift; mean steps)", _drift)):
        chosen = [c for c in cell_list if c.scenario == scenario]
        if not chosen:
            continue
        out += [f"**{scenario}**: {head}", "", "| history | " + " | ".join(methods) + " |",
                "|---|" + "---|" * len(methods)]
        for c in chosen:
            out.append(f"| {c.label} | " + " | ".join(fmt(score(c, m)) if m in c.found else "—" for m in methods)
                       + " |")
        out.append("")
    return "\n".join(out)


def _null(s: dict) -> str:
    drifts = f"; drifts {s['drifts_per_1000']:.2f}" if s["drifts_per_1000"] else ""
    return f"{s['per_1000']:.2f} ({s['with_any']:.3f}){drifts} [{s['histories']}]"


def _step(s: dict) -> str:
    return (f"{s['found_1']:.3f} ({s['found_2']:.3f}; {s['found_0']:.3f}); {s['others_per_1000']:.2f} "
            f"[{s['histories']}]")


def _drift(s: dict) -> str:
    return f"{s['one_step']:.3f} ({s['drift']:.3f}; {s['steps']:.2f}) [{s['histories']}]"


# --------------------------------------------------------------------------- main


def calibrate(cell_list: list[Cell], factors, smalls, drift_costs, exacts, evidences, lastings, skeweds) -> str:
    """One row per penalty (and weight of a step's exact place, and evidence that splits a
    stretch, "none" for no evidence pass): null cells' false steps (and drifts) per 1,000 commits,
    step cells' share found within one commit (within two; on it), drift cells' share reported as
    one step."""
    lines = ["| factor | small | drift cost | exact | evidence | lasting | skewed | "
             + " | ".join(c.label for c in cell_list) + " |", "|---|---|---|---|---|---|---|" + "---|" * len(cell_list)]
    for factor, small, drift_cost, exact, evidence, lasting, skewed in itertools.product(
            factors, smalls, drift_costs, exacts, evidences, lastings, skeweds):
        row = []
        for c in cell_list:
            c.found["pb"] = [pairbench(y, factor, small, drift_cost, exact, evidence, lasting, skewed)
                             for y in c.series]
            row.append(_calibration_cell(c.scenario, score(c, "pb")))
        lines.append(f"| {factor:g} | {small:g} | {drift_cost:g} | {exact:g} | {evidence} | {lasting:g} | {skewed} | "
                     + " | ".join(row) + " |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def _calibration_cell(scenario: str, s: dict) -> str:
    if scenario == "null":
        return f"{s['per_1000']:.2f} ({s['drifts_per_1000']:.2f})"
    return f"{s['found_1']:.3f} ({s['found_2']:.3f}; {s['found_0']:.3f})" if scenario == "step" else f"{s['one_step']:.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2041)
    parser.add_argument("--lengths", type=lambda s: [int(v) for v in s.split(",")], default=list(LENGTHS))
    parser.add_argument("--scale", type=float, default=1.0, help="share of the default number of histories")
    parser.add_argument("--peers", default=None, metavar="PYTHON", help="a Python with the peers installed")
    parser.add_argument("--peer-histories", type=int, default=100)
    parser.add_argument("--peer-max-n", type=int, default=300)
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--factors", type=lambda s: [float(v) for v in s.split(",")], default=[PENALTY_FACTOR])
    parser.add_argument("--smalls", type=lambda s: [float(v) for v in s.split(",")], default=[SMALL_HISTORY])
    parser.add_argument("--drift-costs", type=lambda s: [float(v) for v in s.split(",")], default=[DRIFT_COST])
    parser.add_argument("--exacts", type=lambda s: [float(v) for v in s.split(",")], default=[EXACT])
    parser.add_argument("--evidences", type=lambda s: [None if v == "none" else float(v) for v in s.split(",")],
                        default=[EVIDENCE], help='log Bayes factors (in noise units) that split a stretch; "none" for no evidence pass')
    parser.add_argument("--lastings", type=lambda s: [float(v) for v in s.split(",")], default=[LASTING],
                        help="log Bayes factors of a step that outlasts its jump a split also needs; -inf for none")
    parser.add_argument("--skeweds", type=lambda s: [None if v == "none" else float(v) for v in s.split(",")],
                        default=[SKEWED], help="with --calibrate: the quantile skewness (times sqrt(n)) beyond "
                                               "which a history's noise is skewed; none: never")
    parser.add_argument("--scenarios", default="null,step,drift", help="with --calibrate: which to run")
    parser.add_argument("--noises", default=",".join(MODEL_NOISES + REAL_NOISES), help="with --calibrate")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    real = RealNoise()
    cell_list = cells(args)
    for k, c in enumerate(cell_list):
        if c.noise in REAL_NOISES:
            c.cv = real.mad_sd
        histories(c, count_for(c, args.scale), np.random.default_rng([args.seed, k]), real)
    print(f"{len(cell_list)} cells, {sum(len(c.series) for c in cell_list)} histories; seed {args.seed}", flush=True)
    if args.calibrate:
        chosen = [c for c in cell_list if c.scenario in args.scenarios.split(",") and c.noise in args.noises.split(",")]
        print(calibrate(chosen, args.factors, args.smalls, args.drift_costs, args.exacts, args.evidences,
                        args.lastings, args.skeweds))
        return 0
    started = time.time()
    for c in cell_list:
        c.found["pairbench"] = [pairbench(y) for y in c.series]
        c.found["before"] = [before(y) for y in c.series]
    print(f"pairbench and before: {time.time() - started:.0f} s", flush=True)
    methods, versions = ["pairbench", "before"], {}
    if args.peers:
        started = time.time()
        versions = run_peers(args.peers, [c for c in cell_list if c.n <= args.peer_max_n], args.peer_histories)
        methods += list(versions)
        print(f"peers {versions}: {time.time() - started:.0f} s", flush=True)
    print(tables(cell_list, methods))
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "versions": versions, "cells": [
            {"label": c.label, **{m: score(c, m) for m in methods if m in c.found}} for c in cell_list]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
