"""Change-point accuracy of `pairbench history`: false alarms per 1,000 commits and detection delay.

Synthetic histories are built from real result noise: the medians of separate
`pairbench run` results of one command (``benchmarks/data/history-noise-busy*.json``,
made by ``history_noise.py`` while other engineers' test suites ran on the
machine), as log values minus their median. The machine was slowed about 2.3x
for whole results 30-40% of the time, in runs of a few; **busy** noise is every
result as measured, **quiet** noise the results no other tenant slowed (within
1.5x of the fastest: the noise of a machine of one's own). Each drawn two ways:

* **iid**: each commit's noise drawn at random from the real values;
* **blocks**: runs of 20 consecutive real results (a moving-block bootstrap),
  which keeps the drift and dependence of results measured one after another.

False alarms: ``--null`` series of 1,000 commits with no step, analysed whole
as ``history`` analyses them; every step found is a false alarm.
Detection delay: ``--trials`` series of 200 commits, then a step of 1%, 3% or
10% (the values multiplied by 1.01, 1.03, 1.10), then commits revealed one at
a time, as CI adds them; the delay is the number of commits after the step at
which the detector first reports a step within 3 commits of it (a detection
is a step that stays in the analysis: we look after every new commit). Steps
found before the true one, or more than 3 commits from it, count as false
alarms of that series. Seeded; prints Markdown tables for RESULTS.md.

Usage (a few minutes; run it under the shared lock):
    flock /work/.heavy.lock .venv/bin/python benchmarks/changepoints.py --seed 2026
    .venv/bin/python benchmarks/changepoints.py --factors 2,3,4,6 --null 100 --trials 60   # choose the penalty
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pairbench.analysis.change_points import MIN_SEGMENT, PENALTY_FACTOR, detect

ROOT = Path(__file__).resolve().parent.parent
NOISE_FILES = (ROOT / "benchmarks" / "data" / "history-noise-busy.json",
               ROOT / "benchmarks" / "data" / "history-noise-busy-2.json")
UNDISTURBED = 1.5  # a result within this factor of the fastest was not slowed by another tenant
STEPS = (1.0, 3.0, 10.0)
BEFORE = 200
MAX_AFTER = 150
TOLERANCE = 3
BLOCK = 20


def real_noise(which: str) -> np.ndarray:
    """The log medians of the real results, each collection about its own median, in measured order:
    ``busy`` all of them; ``quiet`` those no other tenant slowed (within ``UNDISTURBED`` of the fastest)."""
    parts = []
    for path in NOISE_FILES:
        values = np.array(json.loads(path.read_text())["medians_ns"], dtype=float)
        if which == "quiet":
            values = values[values <= UNDISTURBED * values.min()]
        logs = np.log(values)
        parts.append(logs - np.median(logs))
    return np.concatenate(parts)


def draw(noise: np.ndarray, n: int, how: str, rng: np.random.Generator) -> np.ndarray:
    if how == "iid":
        return rng.choice(noise, size=n, replace=True)
    starts = rng.integers(0, noise.size - BLOCK + 1, size=n // BLOCK + 1)
    return np.concatenate([noise[s:s + BLOCK] for s in starts])[:n]


def false_alarms(noise, how: str, factor: float, count: int, rng) -> tuple[int, int]:
    """Steps found in ``count`` null series of 1,000 commits: (steps, commits)."""
    found = 0
    for _ in range(count):
        breaks = detect(draw(noise, 1000, how, rng), factor=factor).breaks
        found += len(breaks)
    return found, 1000 * count


REVEAL = [*range(MIN_SEGMENT, 51), *range(55, MAX_AFTER + 1, 5)]


def delay(noise, how: str, factor: float, step_pct: float, rng) -> tuple[int | None, int]:
    """Commits after the step until it is found (None: not within MAX_AFTER), and false alarms."""
    logs = draw(noise, BEFORE + MAX_AFTER, how, rng)
    logs[BEFORE:] += np.log1p(step_pct / 100)
    for after in REVEAL:
        breaks = detect(logs[:BEFORE + after], factor=factor).breaks
        if any(abs(b - BEFORE) <= TOLERANCE for b in breaks):
            return after, sum(abs(b - BEFORE) > TOLERANCE for b in breaks)
    breaks = detect(logs, factor=factor).breaks
    return None, len(breaks)


def study(noise, how: str, factor: float, nulls: int, trials: int, rng) -> dict:
    steps, commits = false_alarms(noise, how, factor, nulls, rng)
    row = {"how": how, "factor": factor, "null_alarms_per_1000": 1000 * steps / commits, "null_series": nulls,
           "null_alarms": steps}
    for pct in STEPS:
        delays, alarms = [], 0
        for _ in range(trials):
            found, wrong = delay(noise, how, factor, pct, rng)
            delays.append(found)
            alarms += wrong
        hits = np.array([d for d in delays if d is not None])
        row[pct] = {"found": len(hits), "trials": trials,
                    "median": float(np.median(hits)) if hits.size else None,
                    "p90": float(np.percentile(hits, 90)) if hits.size else None,
                    "within_10": int(np.sum(hits <= 10)), "within_50": int(np.sum(hits <= 50)),
                    "alarms_per_1000": 1000 * alarms / (trials * (BEFORE + MAX_AFTER))}
    return row


def markdown(rows: list[dict]) -> str:
    head = ["noise", "drawn", "penalty", "false alarms / 1000 commits (no step)"]
    for pct in STEPS:
        head += [f"+{pct:g}%: found within 150", "median delay", "90% delay", "within 10"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["noise"], r["how"], f"{r['factor']:g} ln n",
                 f"{r['null_alarms_per_1000']:.2f} ({r['null_alarms']} in {r['null_series']:,} series)"]
        for pct in STEPS:
            d = r[pct]
            cells += [f"{d['found']}/{d['trials']}", _n(d["median"]), _n(d["p90"]), f"{d['within_10']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _n(value) -> str:
    return "—" if value is None else f"{value:g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--factors", default=str(PENALTY_FACTOR))
    parser.add_argument("--null", type=int, default=300, help="null series of 1,000 commits per row")
    parser.add_argument("--trials", type=int, default=200, help="step series per step size and row")
    parser.add_argument("--noise", default="quiet,busy", help="which real noise: quiet, busy")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = []
    started = time.time()
    for name in args.noise.split(","):
        noise = real_noise(name)
        print(f"{name} noise: {noise.size} results, SD of log medians {np.std(noise, ddof=1):.4f}, "
              f"MAD-SD {1.4826 * np.median(np.abs(noise)):.4f}")
        for factor in (float(f) for f in args.factors.split(",")):
            for how in ("iid", "blocks"):
                rng = np.random.default_rng([args.seed, int(factor * 100), how == "blocks", len(name)])
                rows.append({"noise": name, **study(noise, how, factor, args.null, args.trials, rng)})
                print(f"{name} factor {factor:g} {how}: {time.time() - started:.0f} s", flush=True)
    print(markdown(rows))
    for r in rows:
        print(f"{r['noise']} {r['how']} {r['factor']:g}: false alarms in step series per 1000 commits: "
              + ", ".join(f"+{pct:g}%: {r[pct]['alarms_per_1000']:.2f}" for pct in STEPS))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
