"""Calibration study: pairbench's own error rates on this machine, against a sequential design.

A CPU workload whose run time is linear in its argument (``workloads/spin.c``,
built here with ``cc -O2``) is compared with itself (A/A) and with a copy
slowed down by a true 1% and 3% (A/B), under two conditions:

* ``quiet``: no load added by the study (other users of the machine still run);
* ``phased``: a background process switches at random (exponential phase
  lengths, mean 3 s, seeded, schedule logged) among idle, one busy core and both
  busy cores (busy = ``spin --busy``, a pure spin loop per core).

Two designs decide each trial:

* ``pairbench``: ``pairbench compare`` with its defaults (alpha 0.01, threshold
  1%, adaptive stopping on the anytime-valid confidence sequence, 60 s budget);
* ``sequential``: ``hyperfine -N --runs R`` of A, then of B, decided with Welch's
  t-test at alpha 0.01 (direction: sign of the mean difference), and the same
  samples through a two-sided Mann-Whitney test (benchstat's way) as
  ``sequential-mw``. R is the median number of rounds pairbench used in the same
  condition (so the pairbench trials run first), or ``--seq-runs``.

Workloads (``--workloads``, issue 17): commands of about 1 ms, 5 ms, 25 ms and
250 ms, and ``bimodal``: a 25 ms command that runs one of two lengths 5% apart,
chosen at random per run (``spin --bimodal``). The goal per cell: A/A false
changes at or below alpha, the +1% slowdown (+3% at 1 ms) found in at least 95%
of trials, none in the wrong direction. Each workload is calibrated once per
``--out`` (its own linear fit around its run time).

Per workload, design and condition it reports the false-positive rate with its one-sided
95% Clopper-Pearson upper bound and a binomial test against alpha, the
detection rates of +1% and +3%, wrong-direction verdicts and the time to a
verdict. Every trial is appended to ``trials.jsonl`` in ``--out`` (pairs,
load schedule and all), so ``--report-only`` recomputes the tables and an
interrupted study resumes where it stopped.

Usage::

    .venv/bin/python benchmarks/calibration.py [--quick] [--trials 40,40,20] [--seed 2026]
        [--conditions quiet,phased] [--designs pairbench,sequential] [--out DIR]
        [--workloads 1ms,5ms,25ms,250ms,bimodal]
    .venv/bin/python benchmarks/calibration.py --report-only [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import itertools
import json
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

ROOT = Path(__file__).resolve().parent.parent
SPIN_SOURCE = ROOT / "benchmarks" / "workloads" / "spin.c"
DEFAULT_OUT = ROOT / "benchmarks" / "out" / "calibration"
PAIRBENCH = (sys.executable, "-m", "pairbench")
ALPHA = 0.01  # pairbench's default, used by the sequential design too
THRESHOLD = 1.0  # percent, pairbench's default
KINDS = {"aa": 0.0, "ab1": 1.0, "ab3": 3.0}  # trial kind -> true slowdown in percent
CONDITIONS = ("quiet", "phased")
DESIGNS = ("pairbench", "sequential")
PHASE_NAMES = {0: "idle", 1: "one busy core", 2: "both busy"}
MEAN_PHASE_S = 3.0
# Per-run time of A, chosen with --pilot (benchmarks/RESULTS.md): under phased
# load the 1% effect needed ~40-55 rounds at 10-50 ms, and 25 ms holds ~730
# rounds in 60 s (14x that) while staying far longer than a scheduler slice,
# which made 5-12 ms runs much noisier when the machine was oversubscribed.
RUN_MS = 25.0
FIT_ARGS_MS = (10.0, 25.0, 50.0, 75.0, 100.0)
# workload name -> (per-run time of A in ms, bimodal); "25ms" is the original study's
WORKLOADS = {"1ms": (1.0, False), "5ms": (5.0, False), "25ms": (25.0, False),
             "250ms": (250.0, False), "bimodal": (25.0, True)}
DEFAULT_WORKLOAD = "25ms"
BIMODAL_PCT = 5.0  # the two modes of the bimodal workload, percent apart
FIT_FACTORS = (0.4, 1.0, 2.0, 3.0, 4.0)  # fit points as multiples of the run time
# the effect a workload must find in >= 95% of trials: +1%, except +3% at 1 ms
GOAL_KIND = {"1ms": "ab3"}
# Measuring starts this long after the load generator's first phase began, so
# trials do not start at a switch. Just after a switch the workload is slowed
# more than later in the phase (sequential A/A trials run wholly in a both-busy
# phase, started at its switch, had A's mean 5% above B's, A running first);
# after 2 mean phase lengths 86% of trials have passed a switch already.
LEAD_IN_S = 2 * MEAN_PHASE_S
# The fit uses each argument's 10th-percentile time: on a shared machine the
# median mixes in time spent waiting for a core (it was 1.7x the minimum under
# the other engineers' load), the low quantile is the undisturbed run time.
FIT_QUANTILE = 10


# --------------------------------------------------------------------------- workload


def build_spin(out_dir: Path) -> Path:
    """Compile ``spin.c`` with ``cc -O2`` into ``out_dir`` (again when the source is newer)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "spin"
    if not binary.exists() or binary.stat().st_mtime < SPIN_SOURCE.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-Wall", "-o", str(binary), str(SPIN_SOURCE)], check=True)
    return binary


@dataclass(frozen=True)
class LinearFit:
    """Run time = intercept + slope * argument, by least squares on per-argument low quantiles."""

    intercept_ns: float
    slope_ns: float
    r_squared: float


def fit_linear(args, times_ns) -> LinearFit:
    """Least-squares line through (argument, time) points (``scipy.stats.linregress``)."""
    fit = sps.linregress(np.asarray(args, dtype=float), np.asarray(times_ns, dtype=float))
    return LinearFit(float(fit.intercept), float(fit.slope), float(fit.rvalue**2))


def argument_for(time_ns: float, fit: LinearFit) -> int:
    """The argument whose fitted run time is ``time_ns``."""
    if fit.slope_ns <= 0:
        raise ValueError(f"the fitted slope must be positive, got {fit.slope_ns!r}")
    return max(round((time_ns - fit.intercept_ns) / fit.slope_ns), 1)


def slowed_argument(base_arg: int, fit: LinearFit, percent: float) -> int:
    """The argument whose *total* run time (start-up included) is ``percent`` above ``base_arg``'s.

    T(n) = a + b n, so T(n') = (1 + p) T(n) gives n' = n + p (a + b n) / b: the
    intercept (process start-up) counts in the time that grows by p.
    """
    total = fit.intercept_ns + fit.slope_ns * base_arg
    return argument_for(total * (1.0 + percent / 100.0), fit)


def workload_command(spin: Path, arg: int, workload: str = DEFAULT_WORKLOAD) -> str:
    """The command line running ``arg`` steps of the workload (two modes for ``bimodal``)."""
    if WORKLOADS[workload][1]:
        return f"{spin} --bimodal {arg} {BIMODAL_PCT:g}"
    return f"{spin} {arg}"


def fit_points_ms(run_ms: float) -> tuple[float, ...]:
    """Run times (ms) of the fit: the original study's for 25 ms, else multiples of ``run_ms``."""
    return FIT_ARGS_MS if run_ms == RUN_MS else tuple(f * run_ms for f in FIT_FACTORS)


def pairbench_run(commands: list[str], runs: int, json_path: Path) -> dict:
    """``pairbench run --runs`` of ``commands`` interleaved; the result document."""
    argv = [*PAIRBENCH, "run", "-q", "--runs", str(runs), "--warmup", "1", "--json", str(json_path),
            *commands]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return json.loads(json_path.read_text())


def side_samples(doc: dict) -> list[dict]:
    """The sample columns of each side of a result document (format /2, its one benchmark), in order."""
    series = sorted((s for s in doc["series"] if s["benchmark"] == 0), key=lambda s: s["side"])
    return [s["samples"] for s in series]


def walls_by_round(doc: dict) -> np.ndarray:
    """Wall times (ns) of the measured rounds, one row per round, one column per side."""
    columns = []
    for s in side_samples(doc):
        keep = [i for i, w in enumerate(s["warmup"]) if w == 0 and s["status"][i] == 0]
        columns.append({s["pair"][i]: s["wall_ns"][i] for i in keep})
    rounds = sorted(set.intersection(*(set(c) for c in columns)))
    return np.array([[c[r] for c in columns] for r in rounds], dtype=float)


def calibrate(spin: Path, out_dir: Path, run_ms: float, runs: int,
              workload: str = DEFAULT_WORKLOAD) -> dict:
    """Fit time vs argument, choose A, +1% and +3%, and measure the achieved ratios (quiet).

    The fit is of the plain workload (one mode); a bimodal command runs the
    chosen argument or 5% more, so its effect is the same ratio.
    """
    from pairbench import stats

    probe = 20_000_000
    rough = np.min(walls_by_round(pairbench_run([f"{spin} {probe}"], 10, out_dir / "probe.json")))
    per_step = rough / probe
    fit_args = [max(round(ms * 1e6 / per_step), 1) for ms in fit_points_ms(run_ms)]
    walls = walls_by_round(pairbench_run([f"{spin} {n}" for n in fit_args], runs, out_dir / "fit.json"))
    fit = fit_linear(fit_args, np.percentile(walls, FIT_QUANTILE, axis=0))
    base = argument_for(run_ms * 1e6, fit)
    args = {kind: slowed_argument(base, fit, pct) for kind, pct in KINDS.items()}
    check = walls_by_round(pairbench_run([workload_command(spin, args[k], workload) for k in KINDS],
                                         runs, out_dir / "achieved.json"))
    achieved = {}
    for j, kind in enumerate(KINDS):
        if j == 0:
            continue  # A against itself
        effect = stats.paired_effect(check[:, 0], check[:, j], 0.95)
        achieved[kind] = {"target_pct": KINDS[kind], "estimate_pct": effect.estimate_pct,
                          "low_pct": effect.low_pct, "high_pct": effect.high_pct}
    return {"fit": asdict(fit), "fit_args": fit_args, "fit_quantile": FIT_QUANTILE,
            "fit_points_ns": np.percentile(walls, FIT_QUANTILE, axis=0).tolist(),
            "rounds": runs, "run_ms": run_ms, "workload": workload, "args": args, "achieved": achieved,
            "a_median_ns": float(np.median(check[:, 0]))}


def pilot(spin: Path, out_dir: Path, fit: LinearFit, seconds: float, seed: int) -> list[dict]:
    """Pair noise and rounds per 60 s at several per-run times, quiet and under phased load.

    For each per-run time, ``pairbench run`` of A twice, interleaved, for about
    ``seconds``; from the A/A log-ratios r: their normal-consistent MAD, rounds
    per 60 s, and the rounds the confidence sequence needs to exclude 0 for a
    1% slowdown (smallest t with t P(r + ln 1.01 <= 0) <= t - c_t).
    """
    from pairbench.stats.sequential import upper_ranks

    t = np.arange(1, 20001)
    c = upper_ranks(t, ALPHA, 200, "beta-binomial")
    rows = []
    for condition, ms in itertools.product(CONDITIONS, FIT_ARGS_MS[:-1]):
        arg = argument_for(ms * 1e6, fit)
        runs = max(int(seconds * 1e3 / (2 * ms + 2)), 20)
        with background_load(spin, seed if condition == "phased" else None, out_dir / "pilot-load.log"):
            start = time.monotonic()
            walls = walls_by_round(pairbench_run([f"{spin} {arg}"] * 2, runs, out_dir / "pilot.json"))
            per_round = (time.monotonic() - start) / (runs + 1)
        r = np.log(walls[:, 1] / walls[:, 0])
        below = float(np.mean(r + math.log1p(THRESHOLD / 100) <= 0))
        stop = np.flatnonzero(t * below <= t - c)
        rows.append({"condition": condition, "run_ms": ms, "rounds": int(r.size),
                     "mad_pct": 100 * float(sps.median_abs_deviation(r, scale="normal")),
                     "rounds_per_60s": int(60 / per_round), "p_below_at_1pct": below,
                     "rounds_to_detect_1pct": int(t[stop[0]]) if stop.size else None})
        print(rows[-1], flush=True)
    return rows


# --------------------------------------------------------------------------- background load


def phase_switches(seed: int, mean_s: float = MEAN_PHASE_S, cores: int = 2) -> Iterator[tuple[float, int]]:
    """The load schedule: (time in s, busy cores) at 0 and at every switch, forever.

    Phase lengths are exponential with mean ``mean_s``; each switch moves to one
    of the other phases (0..cores busy cores) with equal probability, so every
    switch is a real change. The first phase is uniform. Deterministic per seed.
    """
    if mean_s <= 0:
        raise ValueError(f"mean_s must be positive, got {mean_s!r}")
    rng = np.random.default_rng(seed)
    t, busy = 0.0, int(rng.integers(cores + 1))
    while True:
        yield t, busy
        t += float(rng.exponential(mean_s))
        busy = int(rng.choice([p for p in range(cores + 1) if p != busy]))


def phase_at(schedule: list[tuple[float, int]], t: float) -> int:
    """Busy cores at time ``t`` (same clock as the schedule; before its start: the first phase)."""
    times = [s for s, _ in schedule]
    i = int(np.searchsorted(times, t, side="right")) - 1
    return schedule[max(i, 0)][1]


def busy_share(schedule: list[tuple[float, int]], start: float, end: float) -> float:
    """Time-weighted mean number of busy cores over [start, end]."""
    if end <= start:
        return float(phase_at(schedule, start))
    times = np.array([s for s, _ in schedule])
    phases = np.array([b for _, b in schedule])
    edges = np.concatenate([[start], times[(times > start) & (times < end)], [end]])
    index = np.maximum(np.searchsorted(times, edges[:-1], side="right") - 1, 0)
    return float(np.sum(np.diff(edges) * phases[index]) / (end - start))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to send SIGTERM when the parent dies (PR_SET_PDEATHSIG = 1)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    if os.getppid() != parent:
        raise SystemExit(0)


RAMP_S = 30.0  # the ramp load rises from 0 to every core busy over this long, then drops back
RAMP_TICK_S = 0.1  # its busy loops run this share of each tick that the level asks


def ramp_level(t: float, cores: int = 2, period_s: float = RAMP_S) -> float:
    """Busy cores the ramp load asks at ``t`` s: 0 rising linearly to ``cores`` over ``period_s``,
    then back to 0 at once (a sawtooth)."""
    return cores * ((t % period_s) / period_s)


def load_generator(spin: Path, seed: int, log_path: Path, parent: int, cores: int = 2,
                   shape: str = "phased", extra: int = 0) -> None:
    """The background-load process: ``cores`` spin loops stopped and continued on schedule, and
    ``extra`` spin loops that never stop (busy CPUs beside the load).

    ``shape`` "steady": the extra loops alone (``cores`` is ignored). "phased": the seeded schedule of ``phase_switches``; logs ``monotonic_ns busy_cores`` per
    switch to ``log_path``. "ramp": ``ramp_level`` (the seed sets where in the ramp it starts), each
    loop running its share of every ``RAMP_TICK_S`` tick; logs the level every second.
    Ends on SIGTERM / SIGINT or when its parent dies, killing its spin loops (which also die with it).
    """
    _die_with_parent(parent)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    cores = 0 if shape == "steady" else cores
    children = [subprocess.Popen([str(spin), "--busy"]) for _ in range(cores + extra)]
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            if shape == "steady":  # the extra loops alone
                log.write(f"{time.monotonic_ns()} 0\n")
                log.flush()
                while True:
                    time.sleep(3600)
            elif shape == "ramp":
                _ramp(children[:cores], seed, log)
            else:
                _phases(children[:cores], seed, log)
    except KeyboardInterrupt:
        pass
    finally:
        for child in children:
            child.kill()
            child.wait()


def _phases(children: list, seed: int, log) -> None:
    t0 = time.monotonic()
    for t, busy in phase_switches(seed, MEAN_PHASE_S, len(children)):
        time.sleep(max(t0 + t - time.monotonic(), 0.0))
        for i, child in enumerate(children):
            os.kill(child.pid, signal.SIGCONT if i < busy else signal.SIGSTOP)
        log.write(f"{time.monotonic_ns()} {busy}\n")
        log.flush()


def _ramp(children: list, seed: int, log) -> None:
    offset = float(np.random.default_rng(seed).uniform(0.0, RAMP_S))
    t0, logged = time.monotonic(), -1
    while True:
        start = time.monotonic()
        level = ramp_level(start - t0 + offset, len(children))
        shares = [min(max(level - i, 0.0), 1.0) for i in range(len(children))]
        for child, share in zip(children, shares, strict=True):
            os.kill(child.pid, signal.SIGCONT if share > 0 else signal.SIGSTOP)
        for child, share in sorted(zip(children, shares, strict=True), key=lambda x: x[1]):
            if 0 < share < 1:
                time.sleep(max(start + share * RAMP_TICK_S - time.monotonic(), 0.0))
                os.kill(child.pid, signal.SIGSTOP)
        if int(start - t0) != logged:
            logged = int(start - t0)
            log.write(f"{time.monotonic_ns()} {level:.3f}\n")
            log.flush()
        time.sleep(max(start + RAMP_TICK_S - time.monotonic(), 0.0))


@contextlib.contextmanager
def background_load(spin: Path, seed: int | None, log_path: Path, lead_in_s: float = 0.0, *,
                    shape: str = "phased", extra: int = 0):
    """Run the load generator for the duration of the block (nothing when ``seed`` is None).

    The block starts ``lead_in_s`` after the first phase began, so that a trial
    does not always start at a phase switch (see ``LEAD_IN_S``). ``shape`` and
    ``extra`` as ``load_generator`` takes them.
    """
    if seed is None:
        yield
        return
    log_path.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, __file__, "--load-generator", str(spin), str(seed),
                             str(log_path), str(os.getpid()), shape, str(extra)])
    try:
        deadline = time.monotonic() + 10
        while not (log_path.exists() and log_path.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(lead_in_s)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_schedule(log_path: Path) -> list[tuple[float, float]]:
    """The logged switches as (monotonic seconds, busy cores; a ramp's level is fractional)."""
    if not log_path.exists():
        return []
    rows = [line.split() for line in log_path.read_text().splitlines() if line.strip()]
    return [(int(ns) / 1e9, float(busy) if "." in busy else int(busy)) for ns, busy in rows]


# --------------------------------------------------------------------------- trials


@dataclass(frozen=True)
class Trial:
    """One planned trial: which design, under which condition, with which true effect."""

    index: int
    design: str
    condition: str
    kind: str
    seed: int
    workload: str = DEFAULT_WORKLOAD


def plan_trials(counts: dict[str, int], conditions, designs, seed: int,
                workloads=(DEFAULT_WORKLOAD,)) -> list[Trial]:
    """All trials, in a seeded random order inside each design block (pairbench first).

    Kinds, conditions and workloads are interleaved at random, so slow drift of
    the machine cannot line up with one kind of trial. The sequential block
    comes second because its R is taken from the pairbench trials.
    """
    rng = np.random.default_rng(seed)
    trials: list[Trial] = []
    for design in [d for d in DESIGNS if d in designs]:
        cells = [(w, c, k) for w in workloads for c in conditions for k, n in counts.items()
                 for _ in range(n)]
        for j in rng.permutation(len(cells)):
            workload, condition, kind = cells[j]
            trials.append(Trial(len(trials), design, condition, kind, int(rng.integers(2**31)),
                                workload))
    return trials


def pairbench_decision(doc: dict) -> dict:
    """The verdict fields of a ``pairbench compare --json`` document, and its per-round pairs.

    ``pairs`` holds [start s, end s, ln(B/A)] per measured round, times from
    the start of sampling; ``error`` is set when the document has no comparison.
    """
    out: dict = {"stopped_because": doc.get("stopped_because"), "state": doc.get("state")}
    comparisons = doc.get("comparisons") or []
    if comparisons:
        c = comparisons[0]
        effect = c.get("effect") or {}
        out.update(verdict=c["verdict"], negligible=bool(c["negligible"]), refused=bool(c.get("refused")),
                   estimate=effect.get("estimate"), low=effect.get("low"), high=effect.get("high"),
                   pvalue=c.get("pvalue"), rounds=c.get("rounds"))
    else:
        out.update(verdict=None, error="the result document has no comparison")
    out["pairs"] = _pairs(doc)
    return out


def _pairs(doc: dict) -> list[list[float]]:
    rows = {}
    for v, s in enumerate(side_samples(doc)[:2]):
        for i, pair in enumerate(s["pair"]):
            if s["warmup"][i] == 0 and s["status"][i] == 0:
                rows.setdefault(pair, {})[v] = (s["start_ns"][i], s["wall_ns"][i])
    out = []
    for _, both in sorted(rows.items()):
        if len(both) == 2:
            (sa, wa), (sb, wb) = both[0], both[1]
            out.append([round(min(sa, sb) / 1e9, 4), round(max(sa + wa, sb + wb) / 1e9, 4),
                        round(math.log(wb / wa), 7)])
    return out


def welch_decision(a, b, alpha: float = ALPHA, threshold: float = THRESHOLD) -> dict:
    """The sequential design's decision on samples ``a`` (all of A) and ``b`` (all of B).

    Welch's t-test (``scipy.stats.ttest_ind(equal_var=False)``), significant when
    p < alpha, direction the sign of mean(b) - mean(a); "negligible" when the
    1 - alpha Welch interval of the difference lies within +-threshold% of
    mean(a). Mann-Whitney (two-sided, ``scipy.stats.mannwhitneyu``) on the same
    samples as benchstat decides: direction by the sign of the median difference.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    welch = sps.ttest_ind(b, a, equal_var=False)
    ci = welch.confidence_interval(1.0 - alpha)
    scale = 100.0 / a.mean()
    mw_p = float(sps.mannwhitneyu(b, a, alternative="two-sided").pvalue)
    mean_dir = "slower" if b.mean() > a.mean() else "faster"
    median_dir = "slower" if np.median(b) > np.median(a) else "faster"
    return {
        "welch_p": float(welch.pvalue),
        "verdict": mean_dir if welch.pvalue < alpha else "no difference",
        "negligible": bool(-threshold <= ci.low * scale and ci.high * scale <= threshold),
        "estimate": float((b.mean() / a.mean() - 1.0) * 100.0),
        "low": float(ci.low * scale), "high": float(ci.high * scale),
        "mw_p": mw_p,
        "mw_verdict": median_dir if mw_p < alpha else "no difference",
        "mw_estimate": float((np.median(b) / np.median(a) - 1.0) * 100.0),
    }


def hyperfine_times(doc: dict) -> list[float]:
    """The per-run wall times (s) of the single benchmark in a ``hyperfine --export-json`` file."""
    results = doc.get("results") or []
    if len(results) != 1:
        raise ValueError(f"expected one hyperfine result, got {len(results)}")
    return [float(t) for t in results[0]["times"]]


def run_pairbench_trial(spin: Path, args: dict, trial: Trial, work: Path) -> dict:
    """``pairbench compare`` (defaults) of A against the trial's B; the decision and timing."""
    json_path, stamp = work / "compare.json", work / "stamp"
    for p in (json_path, stamp):
        p.unlink(missing_ok=True)
    argv = [*PAIRBENCH, "compare", "-q", "--seed", str(trial.seed), "--json", str(json_path),
            "--setup", shlex.join([str(spin), "--stamp", str(stamp)]), "-n", "A", "-n", "B",
            workload_command(spin, args["aa"], trial.workload),
            workload_command(spin, args[trial.kind], trial.workload)]
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=300)
    out = {"wall_s": time.monotonic() - start, "exit": proc.returncode, "t_launch": start}
    if not json_path.exists():
        return {**out, "verdict": None, "error": proc.stderr[-2000:]}
    out.update(pairbench_decision(json.loads(json_path.read_text())))
    if out.get("verdict") is None:
        out["error"] = proc.stderr.strip().splitlines()[-1:] or ["no output"]
    if stamp.exists():
        out["t0"] = int(stamp.read_text()) / 1e9  # sampling starts right after --setup
    return out


def run_sequential_trial(spin: Path, args: dict, trial: Trial, work: Path, runs: int) -> dict:
    """``hyperfine -N --runs R`` of A, then of B; Welch and Mann-Whitney decisions."""
    times, spans, warned = [], [], 0
    for arg in (args["aa"], args[trial.kind]):
        export = work / "hyperfine.json"
        export.unlink(missing_ok=True)
        start = time.monotonic()
        proc = subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(runs),
                               "--export-json", str(export), workload_command(spin, arg, trial.workload)],
                              check=True, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
        spans.append((start, time.monotonic()))
        warned += "outliers were detected" in proc.stderr
        times.append(hyperfine_times(json.loads(export.read_text())))
    out = welch_decision(times[0], times[1])
    return {**out, "runs": runs, "spans": spans, "hyperfine_outlier_warnings": warned, "wall_s": spans[1][1] - spans[0][0],
            "times_ms": [[round(t * 1e3, 4) for t in arm] for arm in times]}


def run_trial(spin: Path, calibration: dict, trial: Trial, work: Path, seq_runs: int | None,
              lead_in_s: float = LEAD_IN_S) -> dict:
    """Run one trial under its condition; the JSON-ready record."""
    log = work / "load.log"
    seed = trial.seed if trial.condition == "phased" else None
    load_before = os.getloadavg()[0]
    with background_load(spin, seed, log, lead_in_s):
        if trial.design == "pairbench":
            result = run_pairbench_trial(spin, calibration["args"], trial, work)
        else:
            result = run_sequential_trial(spin, calibration["args"], trial, work, seq_runs)
    schedule = read_schedule(log) if seed is not None else []
    return {**asdict(trial), **result, "schedule": schedule, "lead_in_s": lead_in_s if seed is not None else 0, "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0], "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}


def workload_of(record: dict) -> str:
    """A trial record's workload (records of studies before issue 17: the 25 ms one)."""
    return record.get("workload", DEFAULT_WORKLOAD)


def sequential_runs(records: list[dict], condition: str, workload: str = DEFAULT_WORKLOAD) -> int | None:
    """R for the sequential design: the median rounds pairbench used under ``condition``."""
    rounds = [r["rounds"] for r in records
              if r["design"] == "pairbench" and r["condition"] == condition and r.get("rounds")
              and workload_of(r) == workload]
    return int(np.median(rounds)) if rounds else None


# --------------------------------------------------------------------------- statistics of the study


def clopper_pearson_upper(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided upper Clopper-Pearson bound for a binomial rate (k successes of n)."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    return 1.0 if k == n else float(sps.beta.ppf(confidence, k + 1, n - k))


def clopper_pearson_lower(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided lower Clopper-Pearson bound for a binomial rate (k successes of n)."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    return 0.0 if k == 0 else float(sps.beta.ppf(1.0 - confidence, k, n - k + 1))


def consistent_with(k: int, n: int, rate: float, level: float = 0.05) -> tuple[bool, float]:
    """Whether k of n is consistent with a true rate <= ``rate`` (one-sided exact binomial test)."""
    p = float(sps.binomtest(k, n, rate, alternative="greater").pvalue)
    return p >= level, p


DERIVED = {"pairbench": ("pairbench",), "sequential": ("sequential-welch", "sequential-mw")}


def decisions(record: dict) -> dict[str, tuple[str | None, bool]]:
    """Design label -> (verdict, negligible) of one trial record."""
    if record["design"] == "pairbench":
        return {"pairbench": (record.get("verdict"), bool(record.get("negligible")))}
    return {"sequential-welch": (record["verdict"], bool(record["negligible"])),
            "sequential-mw": (record["mw_verdict"], False)}


def summarize(records: list[dict]) -> list[dict]:
    """One row per workload x design label x condition: error rates, bounds, detection, time."""
    rows = []
    labels = [x for v in DERIVED.values() for x in v]
    for workload, label, condition in itertools.product(WORKLOADS, labels, CONDITIONS):
        cell = [r for r in records if label in DERIVED[r["design"]] and r["condition"] == condition
                and workload_of(r) == workload]
        cell = [r for r in cell if decisions(r)[label][0] is not None]
        if cell:
            rows.append({"workload": workload, **_row(label, condition, cell),
                         **goals(workload, _row(label, condition, cell))})
    return rows


def goals(workload: str, row: dict) -> dict:
    """Whether a row meets issue 17's goals: A/A false changes consistent with <= alpha, the
    workload's effect (+1%, +3% at 1 ms) found in >= 95% of trials, none the wrong way."""
    kind = GOAL_KIND.get(workload, "ab1")
    found, trials = row[f"{kind}_detected"], row[f"{kind}_trials"]
    power_ok = (bool(trials) and float(sps.binomtest(found, trials, 0.95, alternative="less").pvalue)
                >= 0.05) if trials else None
    fp_ok = row.get("fp_consistent")
    met = None if power_ok is None or fp_ok is None else bool(fp_ok and power_ok
                                                               and row["wrong_direction"] == 0)
    return {"goal_kind": kind, "goal_power_ok": power_ok, "goals_met": met}


def _row(label: str, condition: str, cell: list[dict]) -> dict:
    by_kind = {k: [decisions(r)[label] for r in cell if r["kind"] == k] for k in KINDS}
    aa = by_kind["aa"]
    fp = sum(v in ("slower", "faster") for v, _ in aa)
    fp_real = sum(v in ("slower", "faster") and not neg for v, neg in aa)
    row = {"design": label, "condition": condition, "aa_trials": len(aa), "fp": fp, "fp_nonnegligible": fp_real,
           "aa_equivalent": sum(v == "equivalent" for v, _ in aa)}
    if aa:
        ok, p = consistent_with(fp, len(aa), ALPHA)
        row.update(fp_rate=fp / len(aa), fp_upper95=clopper_pearson_upper(fp, len(aa)),
                   fp_binom_p=p, fp_consistent=ok)
    for kind in ("ab1", "ab3"):
        got = by_kind[kind]
        hits = sum(v == "slower" for v, _ in got)
        row[f"{kind}_trials"] = len(got)
        row[f"{kind}_detected"] = hits
        row[f"{kind}_rate"] = hits / len(got) if got else None
        row[f"{kind}_lower95"] = clopper_pearson_lower(hits, len(got)) if got else None
        row[f"{kind}_equivalent"] = sum(v == "equivalent" for v, _ in got)
    row["wrong_direction"] = sum(v == "faster" for k in ("ab1", "ab3") for v, _ in by_kind[k])
    walls = np.array([r["wall_s"] for r in cell])
    row.update(median_s=float(np.median(walls)), p90_s=float(np.percentile(walls, 90)))
    rounds = [r.get("rounds") or r.get("runs") for r in cell]
    row["median_rounds"] = float(np.median([x for x in rounds if x])) if any(rounds) else None
    return row


def phase_noise(records: list[dict]) -> list[dict]:
    """Spread of the per-round log-ratios by load phase (pairbench trials under phased load).

    A round is attributed to a phase when it started and ended inside it
    ("switch" otherwise). Spread: the normal-consistent MAD and the 5-95%
    range of ln(B/A) in percent, after removing each trial's median.
    """
    groups: dict[str, list[float]] = {}
    for r in records:
        if r["design"] != "pairbench" or not r.get("schedule") or "t0" not in r:
            continue
        pairs = np.asarray(r.get("pairs") or [], dtype=float).reshape(-1, 3)
        centred = pairs[:, 2] - np.median(pairs[:, 2]) if pairs.size else []
        for (start, end, _), x in zip(pairs, centred, strict=True):
            a, b = phase_at(r["schedule"], r["t0"] + start), phase_at(r["schedule"], r["t0"] + end)
            groups.setdefault(PHASE_NAMES[a] if a == b else "switch", []).append(float(x))
    out = []
    for name in [*PHASE_NAMES.values(), "switch"]:
        x = np.asarray(groups.get(name, []))
        if x.size:
            out.append({"phase": name, "rounds": int(x.size),
                        "mad_pct": 100 * float(sps.median_abs_deviation(x, scale="normal")),
                        "p05_pct": 100 * float(np.percentile(x, 5)), "p95_pct": 100 * float(np.percentile(x, 95))})
    return out


def kind_details(records: list[dict]) -> list[dict]:
    """Per design label x condition x kind: verdict counts, rounds, time and final interval width."""
    out = []
    labels = [x for v in DERIVED.values() for x in v]
    for workload, label, condition, kind in itertools.product(WORKLOADS, labels, CONDITIONS, KINDS):
        cell = [r for r in records if label in DERIVED[r["design"]] and r["condition"] == condition
                and r["kind"] == kind and decisions(r)[label][0] is not None and workload_of(r) == workload]
        if not cell:
            continue
        counts: dict[str, int] = {}
        for v, neg in (decisions(r)[label] for r in cell):
            key = f"{v} (n)" if neg and label == "pairbench" else v
            counts[key] = counts.get(key, 0) + 1
        walls = [r["wall_s"] for r in cell]
        widths = [r["high"] - r["low"] for r in cell if r.get("high") is not None and r.get("low") is not None]
        out.append({"workload": workload, "design": label, "condition": condition, "kind": kind,
                    "verdicts": ", ".join(f"{k} {n}" for k, n in sorted(counts.items())),
                    "median_rounds": float(np.median([r.get("rounds") or r.get("runs") or 0 for r in cell])),
                    "median_s": float(np.median(walls)), "p90_s": float(np.percentile(walls, 90)),
                    "median_width": float(np.median(widths)) if widths else math.nan})
    return out


def arm_load_gap(records: list[dict], cores: int = 2) -> list[dict]:
    """Sequential A/A trials under phased load, by Welch verdict: how unequal the two arms' load was.

    gap = share of B's time with every core busy - share of A's (from the load
    log): only then does the workload lose CPU (one busy core leaves it a free
    one). A "slower" verdict agrees with the gap when B had more saturation,
    "faster" when A had; a gap of 0 points to a cause outside the study's load.
    """
    rows: dict[str, list[float]] = {}
    for r in records:
        if r["design"] == "sequential" and r["condition"] == "phased" and r["kind"] == "aa" and r.get("schedule"):
            saturated = [(t, int(b >= cores)) for t, b in r["schedule"]]
            (a0, a1), (b0, b1) = r["spans"]
            rows.setdefault(r["verdict"], []).append(busy_share(saturated, b0, b1) - busy_share(saturated, a0, a1))
    out = []
    for verdict, gaps in sorted(rows.items()):
        g = np.asarray(gaps)
        agree = {"slower": int(np.sum(g > 0.05)), "faster": int(np.sum(g < -0.05))}.get(verdict)
        out.append({"verdict": verdict, "trials": int(g.size), "mean_abs_gap": float(np.mean(np.abs(g))),
                    "no_gap": int(np.sum(np.abs(g) <= 0.05)),
                    "agrees": "-" if agree is None else f"{agree}/{g.size}"})
    return out


# --------------------------------------------------------------------------- report


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_report(records: list[dict], meta: dict) -> str:
    """The Markdown tables of the study."""
    lines = [f"Machine: `{meta.get('uname', '?')}`, CPU `{meta.get('cpu', '?')}`, {meta.get('cores', '?')} cores;"
             f" study {meta.get('started', '?')} .. {meta.get('finished', '?')}.", "",
             "| workload | design | condition | A/A trials | false positives | non-negligible FP | FP upper 95% "
             "| binom p vs alpha | consistent | +1% detected | +1% lower 95% | +3% detected | wrong direction "
             "| median s | p90 s | median rounds | goals met |", "|---" * 17 + "|"]
    for r in summarize(records):
        met = {True: "yes", False: "**no**", None: "-"}[r["goals_met"]]
        lines.append(
            f"| {r['workload']} | {r['design']} | {r['condition']} | {r['aa_trials']} | {r['fp']} ({_pct(r.get('fp_rate'))})"
            f" | {r['fp_nonnegligible']} | {_pct(r.get('fp_upper95'))} | {r.get('fp_binom_p', float('nan')):.3g}"
            f" | {'yes' if r.get('fp_consistent') else 'no'}"
            f" | {r['ab1_detected']}/{r['ab1_trials']} ({_pct(r['ab1_rate'])}) | {_pct(r['ab1_lower95'])}"
            f" | {r['ab3_detected']}/{r['ab3_trials']} ({_pct(r['ab3_rate'])}) | {r['wrong_direction']}"
            f" | {r['median_s']:.1f} | {r['p90_s']:.1f} | {r['median_rounds'] or '-'} | {met} |")
    lines += ["", "Per kind (pairbench: `(n)` = negligible; width = interval high - low at the end, in %):", "",
              "| workload | design | condition | kind | verdicts | median rounds | median s | p90 s | median width |",
              "|---" * 9 + "|"]
    lines += [f"| {d['workload']} | {d['design']} | {d['condition']} | {d['kind']} | {d['verdicts']} | {d['median_rounds']:g}"
              f" | {d['median_s']:.1f} | {d['p90_s']:.1f} | {d['median_width']:.2f} |" for d in kind_details(records)]
    noise = phase_noise(records)
    if noise:
        lines += ["", "Per-round ln(B/A) spread by load phase (pairbench, phased load; centred per trial):", "",
                  "| phase | rounds | MAD (normal) | 5% | 95% |", "|---|---|---|---|---|"]
        lines += [f"| {n['phase']} | {n['rounds']} | {n['mad_pct']:.2f}% | {n['p05_pct']:+.2f}% "
                  f"| {n['p95_pct']:+.2f}% |" for n in noise]
    gap = arm_load_gap(records)
    if gap:
        lines += ["", "Sequential A/A under phased load: share of B's time with both cores busy minus A's:", "",
                  "| Welch verdict | trials | mean abs gap | gap within 0.05 | direction agrees with the gap |",
                  "|---|---|---|---|---|"]
        lines += [f"| {g['verdict']} | {g['trials']} | {g['mean_abs_gap']:.2f} | {g['no_gap']} | {g['agrees']} |"
                  for g in gap]
    missing = sum(r["condition"] == "phased" and not r.get("schedule") for r in records)
    failed = sum(decisions(r)[lbl][0] is None for r in records for lbl in DERIVED[r["design"]])
    lines += ["", f"Trials: {len(records)}; without a verdict (failed): {failed}; "
              f"phased trials without a load log: {missing}."]
    loads = [r["loadavg_before"] for r in records if "loadavg_before" in r]
    if loads:
        lines[-1] += (f" 1-minute load average before a trial (this study's own processes and other users' included): median "
                      f"{np.median(loads):.2f}, 90th percentile {np.percentile(loads, 90):.2f}, max {max(loads):.2f}.")
    return "\n".join(lines)


def machine() -> dict:
    """uname, CPU model and core count of this machine."""
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"uname": " ".join(platform.uname()), "cpu": cpu, "cores": os.cpu_count()}


# --------------------------------------------------------------------------- driver


def load_records(path: Path) -> list[dict]:
    """The trial records saved so far (a torn last line from a crash is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            out.append(json.loads(line))
    return out


def listed(parser: argparse.ArgumentParser, option: str, text: str, allowed) -> list[str]:
    """A comma-separated option's values, each one of ``allowed`` (else the parser's usage error)."""
    values = [v for v in text.split(",") if v]
    for value in values:
        if value not in allowed:
            parser.error(f"{option}: unknown value {value!r}; choose from {', '.join(allowed)}")
    return values


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 trials per kind: a smoke run")
    p.add_argument("--trials", default="40,40,20", help="trials per condition: A/A, +1%%, +3%%")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--conditions", default=",".join(CONDITIONS))
    p.add_argument("--designs", default=",".join(DESIGNS))
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help="run times and shapes of the command compared (default: all)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--run-ms", type=float, default=RUN_MS, help="per-run time of A in ms")
    p.add_argument("--calibration-rounds", type=int, default=100)
    p.add_argument("--seq-runs", type=int, help="R for the sequential design (default: pairbench's median)")
    p.add_argument("--lead-in", type=float, default=LEAD_IN_S, help="seconds of phased load before measuring")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--pilot", type=float, metavar="SECONDS",
                   help="only the per-run-time pilot, SECONDS per cell; needs a calibration in --out")
    args = p.parse_args(argv)
    args.counts = dict(zip(KINDS, [2, 2, 2] if args.quick else [int(x) for x in args.trials.split(",")],
                           strict=True))
    args.conditions = listed(p, "--conditions", args.conditions, CONDITIONS)
    args.designs = listed(p, "--designs", args.designs, DESIGNS)
    args.workloads = listed(p, "--workloads", args.workloads, WORKLOADS)
    if "sequential" in args.designs and not (args.report_only or args.pilot) and not shutil.which("hyperfine"):
        p.error("the sequential design needs hyperfine: run scripts/install-test-deps.sh --bench "
                "(or use make calibrate, which does)")
    return args


def ensure_calibration(args: argparse.Namespace) -> tuple[Path, dict]:
    """The built workload and the study's metadata, calibrating each workload ``--out`` lacks.

    ``meta["calibrations"]`` maps workload -> calibration; ``meta["calibration"]``
    (the 25 ms one, or ``--run-ms`` for the pilot) is kept for older readers.
    """
    args.out.mkdir(parents=True, exist_ok=True)
    spin = build_spin(args.out)
    meta_path = args.out / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if not meta:
        meta = {**machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    calibrations = meta.setdefault("calibrations", {})
    if "calibration" in meta and meta["calibration"].get("run_ms") == RUN_MS:
        calibrations.setdefault(DEFAULT_WORKLOAD, meta["calibration"])
    wanted = list(args.workloads) if not args.pilot else []
    for workload in wanted:
        run_ms = args.run_ms if workload == DEFAULT_WORKLOAD else WORKLOADS[workload][0]
        if workload in calibrations and calibrations[workload]["run_ms"] == run_ms:
            continue
        print(f"calibrating the {workload} workload (quiet) ...", flush=True)
        calibrations[workload] = calibrate(spin, args.out, run_ms, args.calibration_rounds, workload)
        meta_path.write_text(json.dumps(meta, indent=1))
    if args.pilot and ("calibration" not in meta or meta["calibration"]["run_ms"] != args.run_ms):
        meta["calibration"] = calibrate(spin, args.out, args.run_ms, args.calibration_rounds)
    elif DEFAULT_WORKLOAD in calibrations:
        meta["calibration"] = calibrations[DEFAULT_WORKLOAD]
    meta_path.write_text(json.dumps(meta, indent=1))
    return spin, meta


def run_study(args: argparse.Namespace) -> None:
    spin, meta = ensure_calibration(args)
    out, trials_path = args.out, args.out / "trials.jsonl"
    print(json.dumps({w: meta["calibrations"][w]["achieved"] for w in args.workloads}, indent=1),
          flush=True)
    plan = plan_trials(args.counts, args.conditions, args.designs, args.seed, args.workloads)
    records = load_records(trials_path)
    done = {(r["index"], r["seed"]) for r in records}
    with tempfile.TemporaryDirectory(prefix="calibration-") as tmp, open(trials_path, "a") as sink:
        for trial in plan:
            if (trial.index, trial.seed) in done:
                continue
            seq_runs = args.seq_runs or sequential_runs(records, trial.condition, trial.workload) or 100
            calibration = meta["calibrations"][trial.workload]
            record = run_trial(spin, calibration, trial, Path(tmp), seq_runs, args.lead_in)
            records.append(record)
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            print(f"[{trial.index + 1}/{len(plan)}] {trial.workload} {trial.design} {trial.condition} {trial.kind}: "
                  f"{record.get('verdict')} {record.get('rounds') or record.get('runs')} rounds "
                  f"{record['wall_s']:.1f} s", flush=True)
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    (out / "meta.json").write_text(json.dumps(meta, indent=1))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--load-generator"]:
        spin, seed, log, parent, *shape = argv[1:7]
        load_generator(Path(spin), int(seed), Path(log), int(parent), shape=(shape or ["phased"])[0],
                       extra=int(shape[1]) if len(shape) > 1 else 0)
        return 0
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    if args.pilot:
        spin, meta = ensure_calibration(args)
        rows = pilot(spin, args.out, LinearFit(**meta["calibration"]["fit"]), args.pilot, args.seed)
        (args.out / "pilot.json").write_text(json.dumps(rows, indent=1))
        return 0
    if not args.report_only:
        run_study(args)
    records = load_records(args.out / "trials.jsonl")
    meta = json.loads((args.out / "meta.json").read_text()) if (args.out / "meta.json").exists() else machine()
    print(render_report(records, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
