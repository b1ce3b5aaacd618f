"""Which value should a round give on a loaded machine? Per-round statistics under preemption, simulated.

Issue 24, item 3. On a loaded machine a sample's wall time is its CPU time plus
the time slices other tasks took while it waited, and each wait is an
involuntary context switch. This study simulates a single-threaded CPU-bound
command on a 2-CPU machine (the model below), runs pairbench's decision on
several per-round statistics, and reports for each the false changes, the power
and the rounds and seconds to a verdict.

**Every statistic here is a function of one round's samples that is odd under
swapping the two sides' labels** (min, median, trimming by a rule symmetric in
the two sides). Under no change the round's order is a fair coin, so the value
is symmetric about 0 whatever the load did, and the sign-based confidence
sequence (``stats.sequential``) keeps its error rate exactly. What differs is
how often a verdict comes, and how soon.

Statistics (``STATISTICS``), one value per round:

- ``wall``: ln(wall_B / wall_A), one sample per side: what pairbench decides on today;
- ``wall min-k`` / ``wall median-k``: k samples per side, in a random order of the 2k
  slots, and the log-ratio of each side's minimum (median) wall time;
- ``wall, unswitched pairs``: only rounds in which neither sample had an involuntary
  switch (a symmetric trim: which rounds are kept does not depend on which side is which);
- ``wall, fewer switches``: only rounds whose two samples' switches sum to at most the
  median sum of the rounds before (the trim's threshold is fixed before the round);
- ``wall, equal switches``: only rounds whose two samples had as many switches;
- ``cpu``: ln(cpu_B / cpu_A), user + system time, one sample per side;
- ``cpu min-k`` / ``cpu median-k``: as for wall.

Model (``Machine``, ``Load``; parameters from measurements on this machine, in
RESULTS.md): N runnable tasks besides ours share 2 CPUs; ours shares its CPU
with K = floor((N + coin) / 2) of them. With K = 0 it runs through, apart from
rare short wake-ups of other tasks; with K >= 1 it runs a slice (3 ms, the
scheduler's base slice), then waits while the K others run theirs (each a gamma
of mean 3 ms), once per slice of its CPU need: wall = CPU + the waits, and each
wait is an involuntary switch. Its CPU time is its need times a small noise
(t5, SD 0.3%), 0.2% more while the other CPU is busy (shared caches), plus 15 us
per switch (refilling its caches). A +1% candidate needs 1% more CPU, and so is
exposed to 1% more preemption. N is the load's at the sample's start, from

- ``quiet``: other users' jobs only (M/M/inf: arrivals and lifetimes of mean 2 s,
  on average 0.5 runnable), the condition of the earlier calibration studies;
- ``heavy``: other users' jobs averaging 4 runnable, the load this machine had
  while this study was written (load average 10-12);
- ``phased+2``: two busy CPUs, plus calibration.py's phased load (0, 1 or 2 more
  busy tasks, exponential phases of mean 3 s), plus the quiet jobs;
- ``ramp+2``: two busy CPUs, plus a load rising from 0 to 2 busy tasks over 30 s
  and falling back at once, over and over, plus the quiet jobs.

A trial starts at a random time of its load. Each round's samples run one after
the other with 1 ms between them (the spawn); the round ends when its last does.
Decisions are ``compare``'s: the running intersection of the anytime-valid
sequence at alpha 0.01 (t_opt 30), threshold 1%, at least 10 rounds, a 60 s
budget for the 25 ms command and 5 s for the 1 ms one (a verdict in the first
round past the budget still counts, as in ``compare``).

Usage::

    nice -n 10 .venv/bin/python benchmarks/round_statistics.py [--trials 1000,400,200] [--seed 2401]
        [--conditions quiet,heavy,phased+2,ramp+2] [--workloads 25ms,1ms] [--ks 2,3,5]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402  (a script beside this one: the phased schedule, the bounds)
from pairbench.stats.sequential import upper_ranks  # noqa: E402

ALPHA = 0.01
THRESHOLD_PCT = 1.0
T_OPT = 30
MIN_ROUNDS = 10
STEP_S = 0.05  # the load is looked up on this grid
EFFECTS = {"A/A": 0.0, "+1%": 1.0, "+3%": 3.0}
WORKLOADS = {"25ms": (25e6, 60.0), "1ms": (1e6, 5.0)}  # CPU need (ns), budget (s)
CONDITIONS = ("quiet", "heavy", "phased+2", "ramp+2")
RAMP_S = 30.0
VERDICTS = ("slower", "faster", "equivalent", "inconclusive")


@dataclass(frozen=True)
class Machine:
    """The scheduler and the command's CPU time (see the module's docstring)."""

    cpus: int = 2
    slice_ns: float = 3e6
    slice_shape: float = 4.0  # gamma shape of one competitor's slice
    spawn_ns: float = 1e6
    cpu_sd: float = 0.003
    busy_other_cpu: float = 0.002
    switch_cpu_ns: float = 15e3
    wakeups_per_s: float = 20.0  # with the CPU to itself: other tasks' short wake-ups
    wakeup_ns: float = 100e3


@dataclass(frozen=True)
class Load:
    """How many tasks besides ours are runnable, over time: busy tasks plus other users' jobs."""

    name: str
    busy: int = 0  # always busy
    shape: str = "none"  # "none", "phased" or "ramp": busy tasks added on top
    jobs: float = 0.5  # other users' runnable jobs on average
    job_life_s: float = 2.0


LOADS = {"quiet": Load("quiet"), "heavy": Load("heavy", jobs=4.0),
         "phased+2": Load("phased+2", busy=2, shape="phased"), "ramp+2": Load("ramp+2", busy=2, shape="ramp")}


# --------------------------------------------------------------------------- the load over time


def jobs_over_time(rng, trials: int, steps: int, mean: float, life_s: float) -> np.ndarray:
    """Other users' runnable jobs per trial and time step: an M/M/inf queue (Poisson arrivals, exponential
    lives of mean ``life_s``), started in its stationary law, Poisson(``mean``)."""
    out = np.empty((trials, steps), dtype=np.int64)
    n = rng.poisson(mean, trials)
    leave, arrive = STEP_S / life_s, mean * STEP_S / life_s
    for s in range(steps):
        out[:, s] = n
        n = n - rng.binomial(n, min(leave, 1.0)) + rng.poisson(arrive, trials)
    return out


def shape_over_time(rng, load: Load, trials: int, steps: int) -> np.ndarray:
    """Busy tasks the load's shape adds per trial and time step (a ramp's fraction is a duty cycle)."""
    t = np.arange(steps) * STEP_S
    if load.shape == "phased":
        out = np.empty((trials, steps), dtype=np.int64)
        for i in range(trials):
            offset = rng.uniform(0.0, 60.0)
            schedule = _schedule_until(int(rng.integers(2**31)), offset + t[-1] + STEP_S)
            times, busy = np.array([s for s, _ in schedule]), np.array([b for _, b in schedule])
            out[i] = busy[np.searchsorted(times, offset + t, side="right") - 1]
        return out
    if load.shape == "ramp":
        level = 2.0 * (((t[None, :] + rng.uniform(0.0, RAMP_S, (trials, 1))) % RAMP_S) / RAMP_S)
        return np.floor(level).astype(np.int64) + (rng.random((trials, steps)) < level % 1.0)
    return np.zeros((trials, steps), dtype=np.int64)


def _schedule_until(seed: int, end_s: float) -> list[tuple[float, int]]:
    schedule = []
    for t, busy in cal.phase_switches(seed):
        schedule.append((t, busy))
        if t > end_s:
            return schedule
    return schedule  # pragma: no cover - phase_switches never ends


def runnable_over_time(rng, load: Load, trials: int, seconds: float) -> np.ndarray:
    """Tasks besides ours that are runnable, per trial and ``STEP_S`` step, over ``seconds``."""
    steps = int(math.ceil(seconds / STEP_S)) + 1
    return (load.busy + shape_over_time(rng, load, trials, steps)
            + jobs_over_time(rng, trials, steps, load.jobs, load.job_life_s))


# --------------------------------------------------------------------------- one sample


@dataclass
class Taken:
    """Samples of one slot of a round across trials: wall and CPU time (ns), involuntary switches."""

    wall: np.ndarray
    cpu: np.ndarray
    switches: np.ndarray


def sample(rng, machine: Machine, need_ns: np.ndarray, others: np.ndarray) -> Taken:
    """One sample per trial of a command needing ``need_ns`` of CPU, with ``others`` runnable tasks."""
    trials = need_ns.size
    sharing = (others + rng.integers(0, 2, trials)) // machine.cpus  # competitors on our CPU
    slices = np.floor(need_ns / machine.slice_ns + rng.random(trials)).astype(np.int64)
    preempted = np.where(sharing > 0, slices, rng.poisson(need_ns * 1e-9 * machine.wakeups_per_s))
    shape = np.where(sharing > 0, preempted * sharing * machine.slice_shape, preempted)
    scale = np.where(sharing > 0, machine.slice_ns / machine.slice_shape, machine.wakeup_ns)
    waits = np.where(shape > 0, rng.gamma(np.maximum(shape, 1e-9), scale), 0.0)
    noise = machine.cpu_sd * rng.standard_t(5, trials) / math.sqrt(5 / 3)
    cpu = (need_ns * np.exp(noise) * (1.0 + machine.busy_other_cpu * (others >= 1))
           + preempted * machine.switch_cpu_ns * rng.uniform(0.5, 1.5, trials))
    return Taken(cpu + waits, cpu, preempted)


# --------------------------------------------------------------------------- rounds


@dataclass
class Rounds:
    """k samples per side per round, across trials: arrays (trials, rounds, k) per side, and each round's
    end (seconds from the first sample)."""

    wall: tuple[np.ndarray, np.ndarray]
    cpu: tuple[np.ndarray, np.ndarray]
    switches: tuple[np.ndarray, np.ndarray]
    end_s: np.ndarray


def simulate(rng, machine: Machine, load: Load, need_ns: float, change_pct: float, trials: int, k: int,
             budget_s: float) -> Rounds:
    """Rounds of k samples per side in a random order of the 2k slots, until every trial's budget is spent."""
    runnable = runnable_over_time(rng, load, trials, budget_s * 3 + 5)
    needs = np.array([need_ns, need_ns * (1.0 + change_pct / 100.0)])
    t = np.zeros(trials)
    columns: dict[str, list[list[np.ndarray]]] = {"wall": [[], []], "cpu": [[], []], "switches": [[], []]}
    ends = []
    rows = np.arange(trials)
    while t.min() <= budget_s:
        order = rng.permuted(np.tile(np.repeat([0, 1], k), (trials, 1)), axis=1)
        slots: dict[str, np.ndarray] = {name: np.empty((trials, 2, k)) for name in columns}
        filled = np.zeros((trials, 2), dtype=np.int64)
        for slot in range(2 * k):
            side = order[:, slot]
            others = runnable[rows, np.minimum((t / STEP_S).astype(np.int64), runnable.shape[1] - 1)]
            taken = sample(rng, machine, needs[side], others)
            for name in columns:
                slots[name][rows, side, filled[rows, side]] = getattr(taken, name)
            filled[rows, side] += 1
            t = t + (taken.wall + machine.spawn_ns) / 1e9
        for name in columns:
            for side in (0, 1):
                columns[name][side].append(slots[name][:, side, :])
        ends.append(t.copy())
    stacked = {name: tuple(np.stack(columns[name][side], axis=1) for side in (0, 1)) for name in columns}
    return Rounds(stacked["wall"], stacked["cpu"], stacked["switches"], np.stack(ends, axis=1))


# --------------------------------------------------------------------------- per-round statistics

# name -> (k it needs: 1, or "k" for any k >= 2; the function of the rounds giving (values, kept))
Statistic = Callable[[Rounds], tuple[np.ndarray, np.ndarray]]


def _ratio(column: tuple[np.ndarray, np.ndarray], reduce) -> np.ndarray:
    return np.log(reduce(column[1], axis=2) / reduce(column[0], axis=2))


def _all_kept(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return values, np.ones(values.shape, dtype=bool)


def unswitched(rounds: Rounds) -> tuple[np.ndarray, np.ndarray]:
    values = _ratio(rounds.wall, np.min)
    return values, (rounds.switches[0][:, :, 0] == 0) & (rounds.switches[1][:, :, 0] == 0)


def fewer_switches(rounds: Rounds) -> tuple[np.ndarray, np.ndarray]:
    """Rounds whose summed switches are at most the median sum of the rounds before (a threshold fixed
    before the round, from values symmetric in the sides)."""
    values = _ratio(rounds.wall, np.min)
    total = (rounds.switches[0][:, :, 0] + rounds.switches[1][:, :, 0]).astype(float)
    kept = np.ones(total.shape, dtype=bool)
    for r in range(1, total.shape[1]):
        kept[:, r] = total[:, r] <= np.median(total[:, :r], axis=1)
    return values, kept


def equal_switches(rounds: Rounds) -> tuple[np.ndarray, np.ndarray]:
    values = _ratio(rounds.wall, np.min)
    return values, rounds.switches[0][:, :, 0] == rounds.switches[1][:, :, 0]


STATISTICS: dict[str, tuple[str, Statistic]] = {
    "wall": ("1", lambda r: _all_kept(_ratio(r.wall, np.min))),
    "wall, unswitched pairs": ("1", unswitched),
    "wall, fewer switches": ("1", fewer_switches),
    "wall, equal switches": ("1", equal_switches),
    "cpu": ("1", lambda r: _all_kept(_ratio(r.cpu, np.min))),
    "wall min-k": ("k", lambda r: _all_kept(_ratio(r.wall, np.min))),
    "wall median-k": ("k", lambda r: _all_kept(_ratio(r.wall, np.median))),
    "cpu min-k": ("k", lambda r: _all_kept(_ratio(r.cpu, np.min))),
    "cpu median-k": ("k", lambda r: _all_kept(_ratio(r.cpu, np.median))),
}


# --------------------------------------------------------------------------- the decision


def sign_verdicts(values: np.ndarray, kept: np.ndarray, ends_s: np.ndarray, budget_s: float,
                  alpha: float = ALPHA, threshold_pct: float = THRESHOLD_PCT, t_opt: int = T_OPT,
                  min_rounds: int = MIN_ROUNDS) -> dict[str, np.ndarray]:
    """``compare``'s verdict per trial (rows of ``values``, rounds in time order; ``kept`` marks the
    rounds the statistic counts), through the count criterion of the running intersection: at n kept
    values it lies above q once #{D <= q} <= n - c_n, below q once #{D < q} >= c_n
    (``stats.sequential``). Looks from round ``min_rounds`` on, while the round started within the budget.

    Returns the verdict, the round and the seconds at which it came (the last round looked at when none).
    """
    n = np.cumsum(kept, axis=1)
    c = np.concatenate([[1], upper_ranks(np.arange(1, values.shape[1] + 1), alpha, t_opt, "beta-binomial")])[n]
    low, high = math.log1p(-threshold_pct / 100.0), math.log1p(threshold_pct / 100.0)

    def count(test):
        return np.cumsum(kept & test, axis=1)

    above_zero = np.logical_or.accumulate(count(values <= 0.0) <= n - c, axis=1)
    below_zero = np.logical_or.accumulate(count(values < 0.0) >= c, axis=1)
    inside = (np.logical_or.accumulate(count(values < low) <= n - c, axis=1)
              & np.logical_or.accumulate(count(values <= high) >= c, axis=1))
    slower, faster = above_zero & ~below_zero, below_zero & ~above_zero
    equivalent = inside & ~above_zero & ~below_zero
    started = np.concatenate([np.zeros((values.shape[0], 1)), ends_s[:, :-1]], axis=1)
    index = np.arange(values.shape[1]) + 1
    looked = (index >= min_rounds) & ((started <= budget_s) | (index == min_rounds))  # min_rounds always run
    decided = (slower | faster | equivalent) & looked
    last = looked.sum(axis=1) - 1 + min_rounds - 1
    at = np.where(decided.any(axis=1), decided.argmax(axis=1), np.minimum(last, values.shape[1] - 1))
    rows = np.arange(values.shape[0])
    verdict = np.select([~decided[rows, at], slower[rows, at], faster[rows, at]],
                        ["inconclusive", "slower", "faster"], "equivalent")
    return {"verdict": verdict, "rounds": at + 1, "seconds": ends_s[rows, at]}


# --------------------------------------------------------------------------- the study


def cell(rng, machine: Machine, load: Load, workload: str, change: str, trials: int, k: int) -> list[dict]:
    """Every statistic of ``k`` samples per side (k = 1: the one-sample ones) on one simulated cell."""
    need, budget = WORKLOADS[workload]
    rounds = simulate(rng, machine, load, need, EFFECTS[change], trials, k, budget)
    rows = []
    for name, (needs, statistic) in STATISTICS.items():
        if (needs == "1") != (k == 1):
            continue
        values, kept = statistic(rounds)
        found = sign_verdicts(values, kept, rounds.end_s, budget)
        label = name.replace("-k", f"-{k}") if needs == "k" else name
        rows.append(summary(found, load.name, workload, change, label, values, kept, rounds))
    return rows


def summary(found: dict, condition: str, workload: str, change: str, label: str, values, kept, rounds) -> dict:
    verdict = found["verdict"]
    decided = verdict != "inconclusive"
    spread = values[:, :MIN_ROUNDS * 4][kept[:, :MIN_ROUNDS * 4]]
    return {"condition": condition, "workload": workload, "change": change, "statistic": label,
            "trials": int(verdict.size), **{v: int(np.sum(verdict == v)) for v in VERDICTS},
            "median_rounds": float(np.median(found["rounds"][decided])) if decided.any() else math.nan,
            "median_s": float(np.median(found["seconds"][decided])) if decided.any() else math.nan,
            "p90_s": float(np.percentile(np.where(decided, found["seconds"], np.inf), 90)),
            "kept_pct": float(100.0 * kept.mean()),
            "mad_pct": float(100.0 * 1.4826 * np.median(np.abs(spread - np.median(spread)))) if spread.size else math.nan,
            "wall_over_cpu": float(np.median(rounds.wall[0] / rounds.cpu[0])),
            "switches": float(np.median(rounds.switches[0]))}


def render(rows: list[dict]) -> str:
    lines = ["| condition | workload | change | statistic | trials | slower | faster | equivalent | inconclusive "
             "| rounds (median, decided) | s (median, decided) | s p90 | rounds kept | MAD of values |",
             "|---" * 14 + "|"]
    for r in rows:
        lines.append(
            f"| {r['condition']} | {r['workload']} | {r['change']} | {r['statistic']} | {r['trials']} | {r['slower']} "
            f"| {r['faster']} | {r['equivalent']} | {r['inconclusive']} | {r['median_rounds']:.0f} "
            f"| {r['median_s']:.1f} | {_seconds(r['p90_s'])} | {r['kept_pct']:.0f}% | {r['mad_pct']:.2f}% |")
    return "\n".join(lines)


def _seconds(x: float) -> str:
    return "never" if not math.isfinite(x) else f"{x:.1f}"


def model_check(rows: list[dict]) -> str:
    """What the model makes of one A/A sample per side, per condition and workload: to hold against the
    measured figures."""
    lines = ["| condition | workload | wall / CPU (median) | involuntary switches (median) | MAD wall | MAD cpu |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["change"] == "A/A" and r["statistic"] == "wall":
            cpu = next(x for x in rows if x["condition"] == r["condition"] and x["workload"] == r["workload"]
                       and x["change"] == "A/A" and x["statistic"] == "cpu")
            lines.append(f"| {r['condition']} | {r['workload']} | {r['wall_over_cpu']:.2f} | {r['switches']:.0f} "
                         f"| {r['mad_pct']:.2f}% | {cpu['mad_pct']:.2f}% |")
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", default="1000,400,200", help="trials per cell: A/A, +1%%, +3%%")
    p.add_argument("--seed", type=int, default=2401)
    p.add_argument("--conditions", default=",".join(CONDITIONS))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--ks", default="2,3,5", help="samples per side per round for the -k statistics")
    args = p.parse_args(argv)
    args.counts = dict(zip(EFFECTS, (int(x) for x in args.trials.split(",")), strict=True))
    args.conditions = cal.listed(p, "--conditions", args.conditions, LOADS)
    args.workloads = cal.listed(p, "--workloads", args.workloads, WORKLOADS)
    args.ks = [1, *(int(k) for k in args.ks.split(",") if k)]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    rows = []
    started = time.monotonic()
    for c_index, condition in enumerate(args.conditions):
        for w_index, workload in enumerate(args.workloads):
            for e_index, change in enumerate(EFFECTS):
                for k in args.ks:
                    seed = [args.seed, c_index, w_index, e_index, k]
                    rows += cell(np.random.default_rng(seed), Machine(), LOADS[condition], workload, change,
                                 args.counts[change], k)
            print(f"# {condition} {workload}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    print(render(rows))
    print()
    print(model_check(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
