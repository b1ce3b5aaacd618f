"""Why `pairbench history` misses a step in a short history: each miss of a step cell, by cause.

``history_steps.py`` draws the histories (the same cells, seed and count); for each step history
that ``analysis.change_points.detect`` does not find within 1 commit, the cause:

* ``PELT none, evidence below``: PELT (with the noise estimated jointly) finds no step or drift,
  and the Bayes evidence of one step over the whole history (``stats.step_evidence``, in units of
  the noise scale, as ``detect`` asks it) is at or below ``EVIDENCE`` against a level;
* ``PELT none, a line as likely``: above it against a level, but not above 0 against a line;
* ``PELT none, split elsewhere``: the evidence split the history 2 or more commits off;
* ``PELT drift``: PELT fitted a line (a drift) and no step is within 2 commits;
* ``placed 2+ off``: a step was found within 3 commits of the truth but placed 2 or more off;
* ``other``: steps found elsewhere only.

Then, over the whole history, the distribution of the evidence against a level, against a line
and of a step that outlasts its jump (``stats.lasting_evidence``), and of the Gaussian AR(1)
likelihood ratio of one step against none with phi, the SD and the levels profiled
(``history_small_detection.estimated_statistic``): in the misses of each band of evidence, and its
upper quantiles in null histories (where PELT finds nothing). Seeded; times nothing:

    nice -n 10 .venv/bin/python benchmarks/history_short_misses.py --seed 2041 --lengths 30
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history_steps as study  # noqa: E402
from history_small_detection import estimated_statistic  # noqa: E402
from pairbench import stats  # noqa: E402
from pairbench.analysis import change_points  # noqa: E402

BANDS = ((4.5, change_points.EVIDENCE), (3.5, 4.5), (2.5, 3.5), (-math.inf, 2.5))


def examined(y: np.ndarray) -> dict:
    """What ``detect`` does with ``y``, stage by stage, and the whole history's evidence."""
    n = y.size
    sd = max(stats.noise_scale(y), 0.25 * float(np.std(np.diff(y))) / math.sqrt(2.0))
    x = sd * change_points.clipped((y - np.median(y)) / sd)
    pelt, _ = change_points._joint(x, stats.SerialNoise(sd, 0.0), change_points.penalty(n), change_points.DRIFT_COST)
    found = change_points.detect(y)
    evidence = stats.step_evidence(x / sd, change_points.MIN_SEGMENT)
    return {"pelt": pelt, "breaks": found.breaks, "sloped": any(found.segmentation.sloped),
            "level": evidence.against_level, "line": evidence.against_line,
            "lasting": stats.lasting_evidence(x / sd, change_points.MIN_SEGMENT).against_level}


def cause(seen: dict, truth: int) -> str:
    """The cause of a miss (module docstring), or "found"."""
    off = [abs(b - truth) for b in seen["breaks"]]
    if any(d <= 1 for d in off):
        return "found"
    pelt = seen["pelt"]
    if not pelt.breaks and not any(pelt.sloped):
        if not seen["level"] > change_points.EVIDENCE:
            return "PELT none, evidence below"
        return "PELT none, a line as likely" if not seen["line"] > 0 else "PELT none, split elsewhere"
    if any(pelt.sloped) and not any(d <= 2 for d in off):
        return "PELT drift"
    if any(d <= 3 for d in off) or any(abs(b - truth) <= 3 for b in pelt.breaks):
        return "placed 2+ off"
    return "other"


def report_steps(cell: study.Cell) -> list[str]:
    seen = [examined(y) for y in cell.series]
    causes = [cause(s, t) for s, t in zip(seen, cell.truth, strict=True)]
    ratio, _ = estimated_statistic(np.array(cell.series) / cell.cv)
    count = len(seen)
    out = [f"**{cell.label}** ({count} histories): " + "; ".join(
        f"{c} {k / count:.3f}" for c, k in Counter(causes).most_common())]
    below = [i for i, c in enumerate(causes) if c == "PELT none, evidence below"]
    for low, high in BANDS:
        band = [i for i in below if low < seen[i]["level"] <= high]
        line = [i for i in band if seen[i]["line"] > 0]
        lasting = [i for i in line if seen[i]["lasting"] > change_points.LASTING]
        out.append(f"- evidence in ({low:g}, {high:g}]: {len(band) / count:.3f} of histories; a step likelier "
                   f"than a line {len(line) / count:.3f}; and lasting {len(lasting) / count:.3f}")
    if below:
        r = ratio[below]
        out.append(f"- likelihood ratio (2 log) in these misses: median {np.median(r):.1f} "
                   f"[10%: {np.quantile(r, 0.1):.1f}, 90%: {np.quantile(r, 0.9):.1f}]; in the steps found "
                   f"{np.median(ratio[[i for i, c in enumerate(causes) if c == 'found']]):.1f}")
    return out


def report_null(cell: study.Cell) -> list[str]:
    seen = [examined(y) for y in cell.series]
    empty = [i for i, s in enumerate(seen) if not s["pelt"].breaks and not any(s["pelt"].sloped)]
    ratio, _ = estimated_statistic(np.array(cell.series)[empty] / cell.cv)
    level = np.array([seen[i]["level"] for i in empty])
    return [f"**{cell.label}** ({len(seen)} histories, PELT finds nothing in {len(empty) / len(seen):.3f}): "
            f"evidence against a level 97% / 99% quantile {np.quantile(level, 0.97):.2f} / "
            f"{np.quantile(level, 0.99):.2f}; likelihood ratio {np.quantile(ratio, 0.97):.1f} / "
            f"{np.quantile(ratio, 0.99):.1f}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2041)
    parser.add_argument("--lengths", type=lambda s: [int(v) for v in s.split(",")], default=[30])
    parser.add_argument("--noises", default="iid,ar,t3,ar-t3")
    parser.add_argument("--scale", type=float, default=1.0, help="share of the study's number of histories")
    args = parser.parse_args(argv)
    real = study.RealNoise()
    noises = args.noises.split(",")
    for k, cell in enumerate(study.cells(args)):
        if cell.scenario == "drift" or cell.noise not in noises:
            continue
        if cell.noise in study.REAL_NOISES:
            cell.cv = real.mad_sd
        study.histories(cell, study.count_for(cell, args.scale), np.random.default_rng([args.seed, k]), real)
        lines = report_steps(cell) if cell.scenario == "step" else report_null(cell)
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
