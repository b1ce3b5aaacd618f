"""Calibration of ``describe``'s modality label: the lowland detector against ``mvalue > 3.2``.

For each scenario and n, draw ``reps`` samples with a fixed seed and count how
often each rule says "several modes":

* ``lowland``: ``pairbench.stats.lowland_modes(x, sensitivity=0.6).count >= 2``
  (precision 0.01), which is what ``describe(x).modality`` reports for n >= the
  label's minimum (``descriptive.MODALITY_SENSITIVITY``; perfolizer's default
  0.5 is in Part 4);
* ``mvalue > 3.2``: BenchmarkDotNet's "bimodal" threshold on
  ``pairbench.stats.mvalue``, the label ``describe`` used to give (and > 4.2,
  its "multimodal").

Part 1: false alarms on unimodal, timing-like data, heavy tails included (target: <= 5%).
Part 2: detection of mixtures (two normals 4 and 6 SD apart, 50/50 and 80/20;
a 70/20/10 lognormal mixture, where "3 modes" is also counted).
Part 3: the smallest n at which the detector finds blatant modes, which sets
``descriptive.MODALITY_MIN_N``.
Part 4: what a higher sensitivity would buy and cost (information only).
Part 5: the cases quoted in the brief, and the time ``describe`` takes.

Usage::

    .venv/bin/python benchmarks/modality_calibration.py [--reps 1000] [--seed 2026] [--jobs 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats as sps

from pairbench.stats import describe, mvalue
from pairbench.stats.descriptive import MODALITY_SENSITIVITY
from pairbench.stats.modality import lowland_modes

NS = (30, 100, 1000, 10000)
SMALL_NS = (12, 16, 20, 25, 30, 40, 50)


def _mix(rng, n, weight, shift, sd=3e4):
    """weight N(1e6, sd) + (1 - weight) N(1e6 + shift sd, sd)."""
    first = rng.random(n) < weight
    return 1e6 + sd * np.where(first, rng.normal(0, 1, n), rng.normal(shift, 1, n))


def _rmixed(rng, n):
    """Seed 000's rmixed: 1000 + 2000 (lognormal(0, .2) + 0, 1 or 3 w.p. .7, .2, .1)."""
    offset = np.array([0.0, 1.0, 3.0])[rng.choice(3, size=n, p=[0.7, 0.2, 0.1])]
    return 1000 + 2000 * (offset + rng.lognormal(0.0, 0.2, n))


UNIMODAL = {
    "normal (CV 3%)": lambda r, n: r.normal(1e6, 3e4, n),
    "lognormal sigma 0.1": lambda r, n: 1e6 * r.lognormal(0, 0.1, n),
    "lognormal sigma 0.3": lambda r, n: 1e6 * r.lognormal(0, 0.3, n),
    "lognormal sigma 0.6": lambda r, n: 1e6 * r.lognormal(0, 0.6, n),
    "gamma(2) + offset": lambda r, n: 1e6 + r.gamma(2.0, 1e5, n),
    "exponential + offset": lambda r, n: 1e6 + r.exponential(5e4, n),
    "grid: N(1000, 3) to 1": lambda r, n: np.round(r.normal(1000, 3, n)),
    "grid: lognormal 0.3 to 100": lambda r, n: (
        100 * np.round(r.lognormal(np.log(1e3), 0.3, n) / 100)
    ),
    "grid: Poisson(20)": lambda r, n: r.poisson(20, n).astype(float),
    "grid: N(10, 0.3) to 1 (3 values)": lambda r, n: np.round(r.normal(10, 0.3, n)),
    "heavy: t(3)": lambda r, n: 1e6 + 3e4 * r.standard_t(3, n),
    "heavy: lognormal sigma 1": lambda r, n: 1e6 * r.lognormal(0, 1.0, n),
    "heavy: Pareto(2) + offset": lambda r, n: 1e6 + 3e4 * r.pareto(2.0, n),
    "heavy: Cauchy": lambda r, n: 1e6 + 3e4 * r.standard_cauchy(n),
    "extra: uniform": lambda r, n: r.uniform(1e6, 1.2e6, n),
    "extra: normal + 2% outliers x1.5-3": lambda r, n: np.where(
        r.random(n) < 0.98, r.normal(1e6, 3e4, n), r.uniform(1.5e6, 3e6, n)
    ),
}
MIXTURES = {
    "50/50, 4 SD apart": lambda r, n: _mix(r, n, 0.5, 4.0),
    "50/50, 6 SD apart": lambda r, n: _mix(r, n, 0.5, 6.0),
    "80/20, 4 SD apart": lambda r, n: _mix(r, n, 0.8, 4.0),
    "80/20, 6 SD apart": lambda r, n: _mix(r, n, 0.8, 6.0),
    "70/20/10 lognormal mixture": _rmixed,
}
SEPARATED = {
    "50/50, 20 SD apart": lambda r, n: _mix(r, n, 0.5, 20.0),
    "80/20, 20 SD apart": lambda r, n: _mix(r, n, 0.8, 20.0),
    "50/50, 6 SD apart": lambda r, n: _mix(r, n, 0.5, 6.0),
    "lognormal sigma 0.6": UNIMODAL["lognormal sigma 0.6"],
    "extra: uniform": UNIMODAL["extra: uniform"],
    "grid: N(1000, 3) to 1": UNIMODAL["grid: N(1000, 3) to 1"],
}
SCENARIOS = {**UNIMODAL, **MIXTURES, **SEPARATED}


def _cell(task):
    """(several-modes count, 3+ modes count, mvalue > 3.2 count, > 4.2 count, reps)."""
    name, n, reps, seed, sensitivity, with_mvalue = task
    rng = np.random.default_rng(seed)
    several = three = mv32 = mv42 = 0
    for _ in range(reps):
        x = SCENARIOS[name](rng, n)
        count = lowland_modes(x, sensitivity=sensitivity).count
        several += count >= 2
        three += count >= 3
        if with_mvalue:
            m = mvalue(x)
            mv32 += m > 3.2
            mv42 += m > 4.2
    return several, three, mv32, mv42, reps


def _seed(base: int, *parts) -> int:
    return int(np.random.SeedSequence([base, *parts]).generate_state(1)[0])


def _run(pool, names, ns, reps, seed, sensitivity=MODALITY_SENSITIVITY, with_mvalue=True):
    tasks = [
        (name, n, reps if n <= 1000 else max(reps // 5, 50), _seed(seed, i, n, int(sensitivity * 100)),
         sensitivity, with_mvalue)
        for i, name in enumerate(names)
        for n in ns
    ]  # fmt: skip
    results = list(pool.map(_cell, tasks))
    return {(t[0], t[1]): r for t, r in zip(tasks, results, strict=True)}


def _upper(k: int, reps: int) -> float:
    """One-sided 95% Clopper-Pearson upper bound of a rate."""
    return 1.0 if k == reps else float(sps.beta.ppf(0.95, k + 1, reps - k))


def rate_table(results, names, ns, three=False) -> list[str]:
    head = "| scenario | " + " | ".join(f"n = {n}" for n in ns) + " |"
    rows = [head, "|---" * (len(ns) + 1) + "|"]
    for name in names:
        cells = []
        for n in ns:
            several, three_plus, mv32, mv42, reps = results[(name, n)]
            cell = f"{several / reps:.3f}"
            if three:
                cell += f" (3: {three_plus / reps:.2f})"
            cell += f" / {mv32 / reps:.2f} / {mv42 / reps:.2f}"
            cells.append(cell)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def small_n_table(results, names) -> list[str]:
    rows = ["| scenario | " + " | ".join(f"n = {n}" for n in SMALL_NS) + " |"]
    rows.append("|---" * (len(SMALL_NS) + 1) + "|")
    for name in names:
        cells = [f"{results[(name, n)][0] / results[(name, n)][4]:.3f}" for n in SMALL_NS]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def sweep_table(pool, reps, seed) -> list[str]:
    names = ["lognormal sigma 0.6", "gamma(2) + offset", "extra: uniform",
             "grid: N(1000, 3) to 1", "50/50, 4 SD apart", "80/20, 6 SD apart"]  # fmt: skip
    ns = (30, 100, 1000)
    levels = (0.5, 0.6, 0.65, 0.7)
    rows = ["| scenario | n | " + " | ".join(f"s = {s}" for s in levels) + " |"]
    rows.append("|---" * (len(levels) + 2) + "|")
    by_s = {s: _run(pool, names, ns, reps, seed, s, with_mvalue=False) for s in levels}
    for name in names:
        for n in ns:
            cells = [f"{by_s[s][(name, n)][0] / by_s[s][(name, n)][4]:.3f}" for s in by_s]
            rows.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return rows


def quoted_cases(seed) -> list[str]:
    rng = np.random.default_rng(seed)
    two = np.concatenate([rng.normal(10, 0.3, 500), rng.normal(12, 0.3, 500)])
    poisson = rng.poisson(20, 1000).astype(float)
    lognormal = rng.lognormal(0, 0.3, 1000)
    rows = ["| sample | modes (lowland) | mode locations | mvalue |", "|---|---|---|---|"]
    for label, x in (
        ("50/50 N(10, 0.3) + N(12, 0.3), n = 1000", two),
        ("Poisson(20), n = 1000", poisson),
        ("lognormal(0, 0.3), n = 1000", lognormal),
    ):
        found = lowland_modes(x, sensitivity=MODALITY_SENSITIVITY)
        where = ", ".join(f"{v:.3g}" for v in found.locations)
        rows.append(f"| {label} | {found.count} | {where} | {mvalue(x):.2f} |")
    return rows


def timing_table(seed) -> list[str]:
    rows = ["| n | describe | of which mvalue | lowland_modes |", "|---|---|---|---|"]
    rng = np.random.default_rng(seed)
    for n in (1000, 10_000, 100_000, 1_000_000):
        x = rng.lognormal(13.0, 0.4, n)
        cells = []
        for f in (describe, mvalue, lowland_modes):
            times = []
            for _ in range(5):
                start = time.perf_counter()
                f(x)
                times.append(time.perf_counter() - start)
            cells.append(f"{1e3 * float(np.median(times)):.1f} ms")
        rows.append(f"| {n} | " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    out = []
    with ProcessPoolExecutor(args.jobs) as pool:
        uni = _run(pool, list(UNIMODAL), NS, args.reps, args.seed)
        worst = max(uni.values(), key=lambda r: r[0] / r[4])
        out += [
            "## Part 1: false 'several modes' on unimodal data",
            "",
            "Each cell: lowland rate / mvalue > 3.2 rate / mvalue > 4.2 rate. "
            f"{args.reps} samples per cell ({max(args.reps // 5, 50)} at n = 10000).",
            "",
        ]
        out += rate_table(uni, list(UNIMODAL), NS)
        out += ["", f"Worst lowland cell: {worst[0]}/{worst[4]}, one-sided 95% upper bound "
                f"{_upper(worst[0], worst[4]):.4f}.", ""]  # fmt: skip
        mix = _run(pool, list(MIXTURES), NS, args.reps, args.seed + 1)
        out += ["## Part 2: detection of mixtures", "",
                "Each cell: lowland rate of >= 2 modes (for the 70/20/10 mixture also of >= 3) "
                "/ mvalue > 3.2 / mvalue > 4.2.", ""]  # fmt: skip
        out += rate_table(mix, list(MIXTURES), NS, three=True) + [""]
        small = _run(
            pool, list(SEPARATED), SMALL_NS, args.reps // 2, args.seed + 2, with_mvalue=False
        )
        out += ["## Part 3: small n (lowland rate of >= 2 modes)", ""]
        out += small_n_table(small, list(SEPARATED)) + [""]
        out += ["## Part 4: sensitivity (lowland rate of >= 2 modes; describe uses "
                f"{MODALITY_SENSITIVITY}, perfolizer 0.5)", ""]
        out += sweep_table(pool, max(args.reps // 3, 50), args.seed + 3) + [""]
    out += ["## Part 5: quoted cases and speed", ""] + quoted_cases(args.seed + 4) + [""]
    out += timing_table(args.seed + 5)
    out += ["", f"Total time: {time.perf_counter() - start:.0f} s."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
