"""Does a step's span hold the step? `pairbench history` gives each step between two levels a span:
the shortest run of commits that holds 95% of the posterior of its place (``analysis.history``,
step 6). `confirm` and `bisect` are offered over it, so a span that misses the step sends the user
to the wrong commits.

The histories are ``history_steps.py``'s (same cells, seeds and noises). For each step cell:

* **on it**: a step found at the true one: `confirm` of the step's two commits, as offered before
  spans, compares the commits the step lies between;
* **within 1**: a step found within one commit of the true one (the study's "found");
* **near**: a step found within ``NEAR`` commits of it (a step the user is shown near the truth);
* **spanned**: a step whose span holds the true step (the commits `bisect` is offered contain it);
* **held | near**: spanned among the near, the span's coverage where the step was found;
* **width**: the spans' lengths in commits for the near steps (median, mean, 90th percentile), and
  the share of near steps without a span (beside a drift).

For the null and drift cells: the spans' median width of the (false, or single) steps found, to see
whether an unsure step says so.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_spans.py --seed 2041 --lengths 30,100,300
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from history_steps import RealNoise, cells, count_for, histories  # noqa: E402
from pairbench.analysis.change_points import detect  # noqa: E402

NEAR = 10


def spans_found(y: np.ndarray) -> list[tuple[int, int | None, int | None]]:
    """Each step found in ``y``: its place and its span's first and last place (None: no span)."""
    found = detect(y)
    return [(q, *(span if span else (None, None))) for q, span in zip(found.breaks, found.spans, strict=True)]


def score_steps(found: list, truth: list[int]) -> dict:
    """The step cell's columns (module docstring) from each history's spans and its true step."""
    on = within1 = near = spanned = held = unspanned = 0
    widths = []
    for steps, t in zip(found, truth, strict=True):
        on += any(q == t for q, _, _ in steps)
        within1 += any(abs(q - t) <= 1 for q, _, _ in steps)
        close = [s for s in steps if abs(s[0] - t) <= NEAR]
        covers = [s for s in steps if s[1] is not None and s[1] <= t <= s[2]]
        spanned += bool(covers)
        if close:
            near += 1
            held += bool(covers)
            unspanned += sum(s[1] is None for s in close)
            widths += [s[2] - s[1] + 1 for s in close if s[1] is not None]
    count = len(found)
    return {"histories": count, "on": on / count, "within_1": within1 / count, "near": near / count, "spanned": spanned / count,
            "held_near": held / near if near else float("nan"), **_widths(widths),
            "unspanned": unspanned / max(near, 1)}


def score_others(found: list) -> dict:
    """The null and drift cells: the steps found and their spans' widths."""
    widths = [s[2] - s[1] + 1 for steps in found for s in steps if s[1] is not None]
    return {"histories": len(found), "with_step": float(np.mean([bool(s) for s in found])), **_widths(widths)}


def _widths(widths: list[int]) -> dict:
    if not widths:
        return {"width_median": float("nan"), "width_mean": float("nan"), "width_p90": float("nan")}
    return {"width_median": float(np.median(widths)), "width_mean": float(np.mean(widths)),
            "width_p90": float(np.percentile(widths, 90))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2041)
    parser.add_argument("--lengths", type=lambda s: [int(v) for v in s.split(",")], default=[30, 100, 300])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the default number of histories")
    parser.add_argument("--scenarios", default="null,step,drift")
    args = parser.parse_args(argv)
    real = RealNoise()
    cell_list = cells(argparse.Namespace(lengths=args.lengths))
    print("| history | on it | within 1 | near | spanned | held / near | width median / mean / p90 | no span |",
          "|---|---|---|---|---|---|---|---|", sep="\n")
    others = []
    for k, c in enumerate(cell_list):
        if c.scenario not in args.scenarios.split(","):
            continue
        if c.noise in ("quiet", "quiet-blocks"):
            c.cv = real.mad_sd
        histories(c, count_for(c, args.scale), np.random.default_rng([args.seed, k]), real)  # the same draws
        found = [spans_found(y) for y in c.series]
        if c.scenario == "step":
            s = score_steps(found, c.truth)
            print(f"| {c.label} [{s['histories']}] | {s['on']:.3f} | {s['within_1']:.3f} | {s['near']:.3f} | {s['spanned']:.3f} | "
                  f"{s['held_near']:.3f} | {s['width_median']:g} / {s['width_mean']:.1f} / {s['width_p90']:g} | "
                  f"{s['unspanned']:.3f} |", flush=True)
        else:
            others.append((c, score_others(found)))
    if others:
        print("", "| history | with a step | its span: median / mean / p90 |", "|---|---|---|", sep="\n")
        for c, s in others:
            print(f"| {c.label} [{s['histories']}] | {s['with_step']:.3f} | {s['width_median']:g} / "
                  f"{s['width_mean']:.1f} / {s['width_p90']:g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
