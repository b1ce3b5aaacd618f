"""Short histories: a 3-SD step under AR(1) noise at 30-100 commits, and the false steps there,
with the settings for short histories (``analysis.change_points.short_history``) against those
of long ones at every length (before).

Histories are log values 0.03 x (noise + signal), noise of marginal SD 1: ``iid`` normal, ``ar5``
AR(1) phi 0.5 (stationary), ``ar5t3`` the same with Student t3 innovations, ``ar8`` AR(1) phi 0.8.
``null``: no step, every break false (per 1,000 commits); ``step``: one step of 3 SD at a place
uniform on [0.2 n, 0.8 n], found within 1 commit, and breaks elsewhere per 1,000 commits.
"before" passes ``small=SMALL_HISTORY, evidence=EVIDENCE`` (the long histories' settings) to
``detect``; "now" its defaults.

``--evidence T`` runs "now" with the short histories' evidence threshold T (at 30 commits, fading to
the long one's at 100) instead of ``SHORT_EVIDENCE``. ``--intervals`` counts the null's breaks in
chunks of ``--histories`` histories (chunk c from the seed [seed, c]) with a 95% interval from the
histories' own counts, after every chunk, for the defaults (or ``--evidence``) and each of
``--thresholds`` (none below it) on the same histories, until ``--chunks`` or ``--minutes``.

Seeded; times nothing, so it runs without the shared lock, niced:
    nice -n 10 .venv/bin/python benchmarks/history_short.py --parts null --lengths 30,50 --histories 1000
    nice -n 10 .venv/bin/python benchmarks/history_short.py --parts step --lengths 30,50 --histories 300
    nice -n 10 .venv/bin/python benchmarks/history_short.py --intervals --noises ar5t3 --lengths 30 \
        --histories 2000 --chunks 12 --seed 4702
"""

from __future__ import annotations

import argparse
import datetime
import math
import time

import numpy as np
from scipy.signal import lfilter

from pairbench.analysis.change_points import (
    EVIDENCE,
    SHORT_EVIDENCE,
    SHORTEST,
    SMALL_HISTORY,
    detect,
    short_history,
)


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
    false, found = counted(kind, n, histories, seed, step, **options)
    return 1000.0 * false.sum() / (n * histories), found / histories


def counted(kind: str, n: int, histories: int, seed: int, step: bool, **options) -> tuple[np.ndarray, int]:
    """Each history's breaks elsewhere, and (with a step) how many histories found it within 1 commit."""
    rng = np.random.default_rng(seed)
    false = np.zeros(histories, dtype=int)
    found = 0
    for i in range(histories):
        y, k = drawn(kind, n, rng, step)
        breaks = detect(0.03 * y, **options).breaks
        near = [b for b in breaks if k is not None and abs(b - k) <= 1]
        found += bool(near)
        false[i] = len(breaks) - (1 if near else 0)
    return false, found


def interval(false: np.ndarray, n: int) -> str:
    """Breaks per 1,000 commits with a 95% interval from the histories' own counts (normal, on the
    histories' sample SD: a history's breaks may come in pairs, which a Poisson interval would not see)."""
    rate = 1000.0 * false.mean() / n
    half = 1.96 * 1000.0 * false.std(ddof=1) / math.sqrt(false.size) / n
    return f"{false.sum()} in {false.size * n:,} commits: {rate:.3f} per 1,000 (95% {rate - half:.3f}-{rate + half:.3f})"


def null_by_threshold(kind: str, n: int, histories: int, rng: np.random.Generator,
                      thresholds: tuple[float, ...], base: float | None = None) -> np.ndarray:
    """Each null history's breaks (rows) with the short histories' evidence threshold ``base`` (None:
    ``detect``'s defaults; column 0) and with each of ``thresholds`` (the rest), none below it. A
    history with no break at ``base`` has none at a higher threshold either (PELT's segmentation does
    not depend on it, and no stretch passed the lower one), so only histories with a break run again."""
    false = np.zeros((histories, 1 + len(thresholds)), dtype=int)
    for i in range(histories):
        y = 0.03 * noise(kind, n, rng)
        found = len(detect(y, **tried(n, base)).breaks)
        false[i, 0] = found
        if found:
            false[i, 1:] = [len(detect(y, **tried(n, t)).breaks) for t in thresholds]
    return false


def chunked_nulls(kind: str, n: int, args) -> None:
    """The null's breaks per 1,000 commits with 95% intervals (at ``args.evidence`` or the default, and at
    each of ``args.thresholds``), in chunks of ``args.histories`` histories
    (chunk c drawn from the seed [seed, c]), the running totals printed after each, until
    ``args.chunks`` chunks or ``args.minutes`` minutes."""
    thresholds = tuple(float(v) for v in args.thresholds.split(",")) if args.thresholds else ()
    base = SHORT_EVIDENCE if args.evidence is None else args.evidence
    if any(t < base for t in thresholds):
        raise SystemExit(f"--thresholds: none below {base}, the threshold of --evidence or the default")
    started, parts = time.time(), []
    for c in range(args.chunks):
        parts.append(null_by_threshold(kind, n, args.histories, np.random.default_rng([args.seed, c]), thresholds,
                                       args.evidence))
        false = np.concatenate(parts)
        print(f"null {kind} {n}, chunks 0-{c} ({time.time() - started:.0f} s):", flush=True)
        for j, t in enumerate((base, *thresholds)):
            print(f"  evidence {t} at {SHORTEST} commits ({short_history(n, EVIDENCE, t):.3f} here): "
                  f"{interval(false[:, j], n)}", flush=True)
        if time.time() - started > 60 * args.minutes:
            break


def tried(n: int, evidence: float | None) -> dict:
    """``detect``'s options for "now": its defaults, or the short histories' evidence threshold ``evidence``."""
    return {} if evidence is None else {"evidence": short_history(n, EVIDENCE, evidence)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--parts", default="null,step")
    parser.add_argument("--noises", default="ar5,ar5t3,iid,ar8")
    parser.add_argument("--lengths", default="30,50")
    parser.add_argument("--histories", type=int, default=300)
    parser.add_argument("--before", action="store_true", help="also the long histories' settings")
    parser.add_argument("--evidence", type=float, default=None,
                        help="the short histories' evidence threshold (at 30 commits and below) to try for 'now'")
    parser.add_argument("--intervals", action="store_true",
                        help="the null's breaks with a 95%% interval per cell, in chunks of --histories, not the table")
    parser.add_argument("--chunks", type=int, default=1, help="with --intervals: at most this many chunks")
    parser.add_argument("--minutes", type=float, default=math.inf, help="with --intervals: no chunk after this long")
    parser.add_argument("--thresholds", default="",
                        help="with --intervals: also these short histories' evidence thresholds (comma-separated)")
    args = parser.parse_args(argv)
    started = time.time()
    print(f"history_short: seed {args.seed}, {datetime.date.today()}, {args.histories} histories a cell")
    old = {"small": SMALL_HISTORY, "evidence": EVIDENCE}
    if args.evidence is not None:
        print(f"now: the short histories' evidence threshold {args.evidence} (from 30 commits, fading to {EVIDENCE} at 100)")
    if args.intervals:
        for kind in args.noises.split(","):
            for n in (int(v) for v in args.lengths.split(",")):
                chunked_nulls(kind, n, args)
        print(f"{time.time() - started:.0f} s")
        return
    for part in args.parts.split(","):
        step = part == "step"
        print(f"| {part} | noise | commits | " + ("found within 1: now" + (" (before)" if args.before else "") + " | "
                                                 if step else "") + "breaks / 1,000 commits: now"
              + (" (before)" if args.before else "") + " |\n|---|---|---|---|" + ("---|" if step else ""))
        for kind in args.noises.split(","):
            for n in (int(v) for v in args.lengths.split(",")):
                now = cell(kind, n, args.histories, args.seed, step, **tried(n, args.evidence))
                was = cell(kind, n, args.histories, args.seed, step, **old) if args.before else None
                shown = [f"{now[1]:.3f}" + (f" ({was[1]:.3f})" if was else "")] if step else []
                shown.append(f"{now[0]:.2f}" + (f" ({was[0]:.2f})" if was else ""))
                print(f"| {part} | {kind} | {n} | " + " | ".join(shown) + " |", flush=True)
    print(f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
