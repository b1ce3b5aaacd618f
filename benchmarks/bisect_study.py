"""Bisect study: ``pairbench bisect`` against ``git bisect run`` with a hyperfine threshold script.

Each trial generates a git repository of 64 commits (GOOD = commit 0 .. BAD = commit 63) of a C
program, ``prog.c``: the 64-bit LCG loop of ``workloads/spin.c`` run a fixed number of steps,
calibrated to about 25 ms a run (``calibration.calibrate``: a linear fit of run time on steps).
One commit, at a position drawn from the trial's seed, makes the run 3% slower (start-up
included); every other commit changes only a comment. The position is written to
``positions.json`` in ``--out`` and read only by the scorer (:func:`score`): neither tool, nor
anything this script prints before scoring, sees it.

The two designs, on the same repository, in a random order per trial:

* ``pairbench``: ``pairbench bisect GOOD BAD`` with its defaults (alpha 0.01 over the search,
  threshold 1%, 60 s per comparison), ``[confirm] build = "cc -O2 -o prog prog.c"`` and
  ``command = "./prog"``; with ``--budget-trials``, more trials under ``--budget`` too small to
  finish, which must end inconclusive with a range holding the step.
* ``git-bisect``: the usual practice. GOOD and BAD are built and timed once with ``hyperfine -N
  --warmup 3`` (its default: at least 10 runs and 3 s), the threshold is halfway between their
  means, then ``git bisect run`` calls a script that builds the commit (exit 125 when it does not
  build), runs the same hyperfine, and exits 0 (good) when the mean lies below the threshold, 1
  (bad) otherwise.

Conditions: ``quiet`` (no load added), ``phased`` (``calibration.background_load``: two spin
loops switched among idle, one and two busy cores, exponential phases of mean 3 s, seeded) and
``heavy`` (the phased load with two more spin loops that never stop). ``--run-ms`` sets GOOD's run
time (25 ms by default): a very short command's start-up is a large share of it. Every
trial is appended to ``trials.jsonl`` in ``--out`` (so an interrupted study resumes, and runs in
chunks under the heavy lock); ``--report-only`` scores and prints the tables. ``--designs
pairbench`` runs pairbench alone (its trials keep their numbers and repositories), to measure
pairbench again without git bisect, whose figures do not depend on it; each comparison's record
holds what it decided on (``--metric auto``'s choice) and in how many rounds.

Usage::

    flock /work/.heavy.lock .venv/bin/python benchmarks/bisect_study.py --conditions quiet --trials 20 \\
        --seed 2040 --out benchmarks/out/bisect
    .venv/bin/python benchmarks/bisect_study.py --report-only --out benchmarks/out/bisect
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration  # noqa: E402  (the workload, its calibration and the phased load)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "out" / "bisect"
PAIRBENCH = (sys.executable, "-m", "pairbench")
COMMITS = 64  # GOOD is commit 0, BAD commit 63
STEP_PCT = 3.0
RUN_MS = 25.0
DESIGNS = ("pairbench", "git-bisect")
TOO_SMALL_BUDGET = "6s"  # for the budget trials: the step and a middle or two at most
GOAL_COMPARISONS = 8  # log2(64) + 2
BUILD = "cc -O2 -o prog prog.c"
PROGRAM = """/* {label} */
#include <stdint.h>
#include <stdio.h>

/* Knuth's MMIX LCG: each step needs the previous one, so time = a + b n (workloads/spin.c). */
static uint64_t lcg_steps(uint64_t n)
{{
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}}

int main(void)
{{
    printf("%llu\\n", (unsigned long long)lcg_steps({steps}ULL));
    return 0;
}}
"""
THRESHOLD_SCRIPT = """#!/bin/sh
# git bisect run: build, time with hyperfine, compare the mean with the threshold.
cc -O2 -o prog prog.c || exit 125
hyperfine -N --warmup 3 --style none --export-json "$2" ./prog > /dev/null 2>&1 || exit 125
python3 - "$1" "$2" <<'EOF'
import json, sys
mean = json.load(open(sys.argv[2]))["results"][0]["mean"]
sys.exit(0 if mean < float(sys.argv[1]) else 1)
EOF
"""


# --------------------------------------------------------------------------- the repository


def position_of(seed: int) -> int:
    """The commit (1 .. COMMITS - 1) that makes the program slower in the trial of ``seed``."""
    return int(np.random.default_rng([seed, 64]).integers(1, COMMITS))


def make_repository(path: Path, steps: tuple[int, int], position: int) -> list[str]:
    """A repository of ``COMMITS`` commits of ``prog.c``: ``steps[0]`` steps before ``position``,
    ``steps[1]`` from it on; its commits, oldest first."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "pairbench.toml").write_text(f'[confirm]\nbuild = "{BUILD}"\ncommand = "./prog"\nname = "prog"\n')
    (path / ".gitignore").write_text("prog\n.pairbench/\n")
    commits = []
    for k in range(COMMITS):
        (path / "prog.c").write_text(PROGRAM.format(label=f"revision {k}", steps=steps[k >= position]))
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", f"revision {k}")
        commits.append(_git(path, "rev-parse", "HEAD"))
    return commits


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "study", "GIT_AUTHOR_EMAIL": "study@example.com",
           "GIT_COMMITTER_NAME": "study", "GIT_COMMITTER_EMAIL": "study@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


# --------------------------------------------------------------------------- the designs


@dataclass(frozen=True)
class Trial:
    number: int
    seed: int
    condition: str
    design: str
    budget: str | None = None


def run_pairbench(repo: Path, commits: list[str], trial: Trial, work: Path) -> dict:
    """``pairbench bisect`` from GOOD to BAD; what it answered, its comparisons and its time."""
    out = work / "bisect.json"
    command = [*PAIRBENCH, "bisect", commits[0], commits[-1], "-q", "--seed", str(trial.seed), "--json", str(out)]
    if trial.budget:
        command += ["--budget", trial.budget]
    started = time.monotonic()
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if not out.exists():
        return {"exit": done.returncode, "seconds": seconds, "error": done.stderr[-2000:]}
    doc = json.loads(out.read_text())
    answer = doc["answer"]
    return {"exit": done.returncode, "seconds": seconds, "kind": answer["kind"], "named": answer["commit"],
            "first": commits.index(answer["first"]), "last": commits.index(answer["last"]),
            "comparisons": len(doc["comparisons"]), "why": answer["why"],
            "trials": [{"purpose": c["purpose"], "base": commits.index(c["base"]),
                        "candidate": commits.index(c["candidate"]), "outcome": c["outcome"],
                        "seconds": c["seconds"], "benchmarks": c["benchmarks"], **decided_on(c.get("result"))}
                       for c in doc["comparisons"]]}


def decided_on(result: str | None) -> dict:
    """What a comparison's result file says it decided on (``--metric auto``'s choice) and in how
    many rounds; read before the trial's scratch directory goes."""
    try:
        comparisons = json.loads(Path(result).read_text())["comparisons"] if result else None
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not comparisons:
        return {}
    return {"metric": comparisons[0].get("metric"), "rounds": comparisons[0].get("rounds")}


def hyperfine_mean(program: Path, work: Path) -> float:
    export = work / "hyperfine.json"
    subprocess.run(["hyperfine", "-N", "--warmup", "3", "--style", "none", "--export-json", str(export),
                    str(program)], check=True, capture_output=True)
    return float(json.loads(export.read_text())["results"][0]["mean"])


def run_git_bisect(repo: Path, commits: list[str], work: Path) -> dict:
    """The usual practice (module docstring): a threshold halfway between GOOD's and BAD's means,
    then ``git bisect run`` with a script that builds and times each commit."""
    started = time.monotonic()
    means = []
    for commit in (commits[0], commits[-1]):
        build = work / f"build-{commit[:10]}"
        _git(repo, "worktree", "add", "--detach", "-q", str(build), commit)
        subprocess.run(["sh", "-c", BUILD], cwd=build, check=True)
        means.append(hyperfine_mean(build / "prog", work))
        _git(repo, "worktree", "remove", "--force", str(build))
    threshold = (means[0] + means[1]) / 2
    script = work / "threshold.sh"
    script.write_text(THRESHOLD_SCRIPT)
    script.chmod(0o755)
    _git(repo, "bisect", "start", commits[-1], commits[0])
    done = subprocess.run(["git", "bisect", "run", str(script), repr(threshold), str(work / "step.json")],
                          cwd=repo, capture_output=True, text=True)
    log = _git(repo, "bisect", "log")
    _git(repo, "bisect", "reset")
    seconds = time.monotonic() - started
    named = next((line.split()[0] for line in done.stdout.splitlines() if line.endswith("is the first bad commit")),
                 None)
    steps = sum(1 for line in log.splitlines() if line.startswith(("git bisect good", "git bisect bad",
                                                                    "git bisect skip")))
    return {"exit": done.returncode, "seconds": seconds, "named": named, "steps": steps,
            "good_mean_s": means[0], "bad_mean_s": means[1], "threshold_s": threshold}


def run_trial(trial: Trial, steps: tuple[int, int], spin: Path, out: Path) -> dict:
    """Generate the trial's repository, run its design under its condition, and return the record
    (without the position)."""
    with tempfile.TemporaryDirectory(prefix="pairbench-bisect-study-") as scratch:
        work = Path(scratch)
        repo = work / "repo"
        commits = make_repository(repo, steps, position_of(trial.seed))
        load_log = out / f"load-{trial.number}.log"
        seed = trial.seed if trial.condition != "quiet" else None
        load = os.getloadavg()[0]
        with calibration.background_load(spin, seed, load_log, calibration.LEAD_IN_S if seed else 0.0,
                                         **LOADS[trial.condition]):
            found = (run_pairbench(repo, commits, trial, work) if trial.design == "pairbench"
                     else run_git_bisect(repo, commits, work))
        if found.get("named"):
            found["named_index"] = commits.index(found["named"])
        return {**asdict(trial), **found, "load_before": load, "commits": commits}


# --------------------------------------------------------------------------- planning and scoring


CONDITION_OFFSET = {"quiet": 0, "phased": 250, "heavy": 500}  # each condition's trials have seeds of their own
LOADS = {"quiet": {}, "phased": {}, "heavy": {"extra": 2}}
"""``calibration.background_load``'s shape for each condition: ``heavy`` is the phased load with two
spin loops that never stop beside it (four busy loops at its peak on two CPUs)."""


def plan(trials: int, budget_trials: int, conditions: list[str], seed: int,
         designs: tuple[str, ...] = DESIGNS) -> list[Trial]:
    """Per condition, ``trials`` repositories each bisected by both designs (in a random order,
    seeded), then ``budget_trials`` pairbench trials under a budget too small to finish. Seeds and
    numbers depend on the condition only, so conditions can be run in separate invocations; a
    design left out of ``designs`` keeps its numbers (a re-run of one design is comparable)."""
    planned = []
    for condition in conditions:
        rng = np.random.default_rng([seed, CONDITION_OFFSET[condition]])
        base, number = seed * 1000 + CONDITION_OFFSET[condition], CONDITION_OFFSET[condition] // 250 * 100
        for k in range(trials):
            for design in (rng.permutation(DESIGNS) if condition != "quiet" else _quiet_order(seed, k)):
                if design in designs:
                    planned.append(Trial(number, base + 2 * k, condition, str(design)))
                number += 1
        for j in range(budget_trials if "pairbench" in designs else 0):
            planned.append(Trial(number, base + 500 + 2 * trials + j, condition, "pairbench", TOO_SMALL_BUDGET))
            number += 1
    return planned


def _quiet_order(seed: int, k: int):
    """The order the first study (quiet) drew: one generator over its whole plan."""
    rng = np.random.default_rng(seed)
    for _ in range(k):
        rng.permutation(DESIGNS)
    return rng.permutation(DESIGNS)


def score(record: dict, position: int) -> str:
    """``right``, ``wrong`` (a commit named that is not the step's), or ``none`` (no commit named);
    for a budget trial ``held`` when its range holds the step and ``lost`` when not."""
    named = record.get("named_index")
    if record.get("budget") and named is None:
        return "held" if record.get("first", 0) <= position <= record.get("last", -1) else "lost"
    if named is None:
        return "none"
    return "right" if named == position else "wrong"


def summarize(records: list[dict], positions: dict[str, int]) -> list[dict]:
    rows = []
    for condition in dict.fromkeys(r["condition"] for r in records):
        for design, budget in (("pairbench", False), ("git-bisect", False), ("pairbench", True)):
            cell = [r for r in records if r["condition"] == condition and r["design"] == design
                    and bool(r.get("budget")) == budget]
            if not cell:
                continue
            scores = [score(r, positions[str(r["seed"])]) for r in cell]
            counted = [r.get("comparisons", r.get("steps", 0) + 2) for r in cell]
            seconds = [r["seconds"] for r in cell]
            rows.append({"condition": condition, "design": design + (" --budget " + TOO_SMALL_BUDGET if budget else ""),
                         "trials": len(cell), **{k: scores.count(k) for k in ("right", "wrong", "none", "held",
                                                                               "lost")},
                         "within_goal": sum(1 for s, c in zip(scores, counted, strict=True)
                                            if s == "right" and c <= GOAL_COMPARISONS),
                         "median_comparisons": float(np.median(counted)), "max_comparisons": max(counted),
                         "median_s": float(np.median(seconds)), "p90_s": float(np.percentile(seconds, 90)),
                         "load_before": float(np.median([r["load_before"] for r in cell]))})
    return rows


def report(out: Path) -> str:
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines() if line.strip()]
    positions = json.loads((out / "positions.json").read_text())
    rows = summarize(records, positions)
    lines = ["| condition | design | trials | right | wrong | no commit named | right within 8 | median measurements "
             "(max) | median s | p90 s | load before |", "|---|---|---|---|---|---|---|---|---|---|---|",
             ]
    for r in rows:
        named_none = f"{r['none']}" if "budget" not in r["design"] else f"{r['held']} held the step, {r['lost']} lost it"
        lines.append(f"| {r['condition']} | {r['design']} | {r['trials']} | {r['right']} | {r['wrong']} | {named_none} "
                     f"| {r['within_goal']} | {r['median_comparisons']:g} ({r['max_comparisons']}) | "
                     f"{r['median_s']:.1f} | {r['p90_s']:.1f} | {r['load_before']:.2f} |")
    lines += ["", "Measurements: pairbench's paired comparisons; git bisect's hyperfine timings (GOOD, BAD, then "
              "one per step).", "", "Per trial (position: the step's commit; named: what each design named):", "",
              "| # | condition | design | position | named | kind | comparisons | s |", "|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['number']} | {r['condition']} | {r['design']}{' (budget)' if r.get('budget') else ''} | "
                     f"{positions[str(r['seed'])]} | {r.get('named_index', '—')} | "
                     f"{r.get('kind', 'first bad commit' if r.get('named') else 'none')}"
                     f"{' ' + str(r['first']) + '..' + str(r['last']) if r.get('kind') == 'inconclusive' else ''} | "
                     f"{r.get('comparisons', r.get('steps', 0) + 2)} | {r['seconds']:.1f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def calibrated(spin: Path, out: Path, run_ms: float = RUN_MS) -> tuple[int, int]:
    """GOOD's and BAD's steps (``run_ms``, 25 ms by default, and 3% more, start-up included),
    calibrated once per ``out``."""
    path = out / "calibration.json"
    if not path.exists():
        found = calibration.calibrate(spin, out, run_ms, 100)
        path.write_text(json.dumps(found, indent=1))
    found = json.loads(path.read_text())
    return int(found["args"]["aa"]), int(found["args"]["ab3"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=20, help="repositories per condition (each bisected by both)")
    p.add_argument("--budget-trials", type=int, default=5, help="pairbench trials per condition under a small budget")
    p.add_argument("--conditions", default="quiet,phased")
    p.add_argument("--designs", default=",".join(DESIGNS), help="the designs to run (their trials keep their numbers)")
    p.add_argument("--seed", type=int, default=2040)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--run-ms", type=float, default=RUN_MS,
                   help="GOOD's run time, start-up included (calibrated once per --out; a short command's "
                        "start-up is a larger share of it)")
    p.add_argument("--max-minutes", type=float, default=24.0, help="stop starting trials after this long")
    args = p.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        print(report(out))
        return 0
    if "git-bisect" in args.designs and not shutil.which("hyperfine"):
        raise SystemExit("hyperfine is not installed (apt-get install hyperfine)")
    spin = calibration.build_spin(out)
    steps = calibrated(spin, out, args.run_ms)
    conditions = [c for c in args.conditions.split(",") if c]
    designs = tuple(d for d in args.designs.split(",") if d)
    if set(designs) - set(DESIGNS):
        raise SystemExit(f"--designs: one of {', '.join(DESIGNS)}")
    planned = plan(args.trials, args.budget_trials, conditions, args.seed, designs)
    positions_path = out / "positions.json"
    positions = json.loads(positions_path.read_text()) if positions_path.exists() else {}
    positions.update({str(t.seed): position_of(t.seed) for t in planned})
    positions_path.write_text(json.dumps(positions))  # for the scorer only
    trials_path = out / "trials.jsonl"
    done = {(r["condition"], r["seed"], r["design"], r.get("budget")) for r in
            (json.loads(line) for line in trials_path.read_text().splitlines() if line.strip())} \
        if trials_path.exists() else set()
    deadline = time.monotonic() + 60 * args.max_minutes
    print(f"{platform.node()} {platform.machine()}, steps {steps}", flush=True)
    for trial in planned:
        if (trial.condition, trial.seed, trial.design, trial.budget) in done:
            continue
        if time.monotonic() > deadline:
            print("time is up: run again to go on", flush=True)
            return 0
        record = run_trial(trial, steps, spin, out)
        with open(trials_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        print(f"trial {trial.number} {trial.condition} {trial.design}{' budget' if trial.budget else ''}: "
              f"{record.get('kind', '')} {record.get('comparisons', record.get('steps', ''))} in "
              f"{record['seconds']:.1f} s", flush=True)
    print(report(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
