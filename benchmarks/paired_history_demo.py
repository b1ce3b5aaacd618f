"""The paired history's headline demonstration, both ways, on real processes: a 12-commit git
repository whose 7th commit makes a small C program 8% slower.

Not run by the test suite (it times real processes for minutes). Each *repetition* makes fresh stores
and records the 12 commits in order, two ways, in the same session and under the same load:

* **paired**: ``pairbench record REV`` per commit (the project's ``[confirm]`` recipe: ``cc -O2``,
  then the whole program as a command, compared in interleaved randomized rounds against the
  predecessor and, every few records, the anchor), then ``pairbench history -f json``;
* **unpaired**, as a new user keeps a history today: at each commit the program is built in a checkout
  of that commit and measured alone with ``pairbench run --runs 20 --store`` (once with ``--metric
  wall``, once with ``--metric cpu``, each into its own store), then ``pairbench history -f json``.

Per commit the order of the two ways is drawn from the seed, and every ``pairbench`` invocation gets
a ``--seed`` drawn from it (the round orders are repeatable; the machine's timing is not). Timing runs
under ``flock /work/timing.lock``, held for one repetition at a time (builds included, not timed),
with ``/proc/loadavg`` before and after each record. ``--busy N`` adds N busy loops (``sh -c 'while
:; do :; done'``, started and ended by this script by their process ids) while the lock is held.

Prints, per repetition: the load, each link's effect and interval (the step's and the others'),
the steps each history found, and the per-commit medians of the unpaired runs; then the counts over
repetitions (the step found at link 6→7 only; false steps elsewhere). A journal (JSON lines, one per
repetition) in ``--work`` keeps the figures; ``--report`` prints them again without measuring.

Usage::

    nice -n 0 .venv/bin/python benchmarks/paired_history_demo.py --work /tmp/pbdemo --repeats 3 \\
        --seed 20261129 --record-time 30s [--busy 2]
    .venv/bin/python benchmarks/paired_history_demo.py --work /tmp/pbdemo --report
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

LOCK = "/work/timing.lock"
LOOPS = 4_000_000  # about 4-6 ms of dependent multiply-adds on this machine
STEP_COMMIT = 7
COMMITS = 12
PAIRBENCH = str(Path(sys.executable).parent / "pairbench")

C_SOURCE = """#include <stdio.h>
/* commit {k} */
volatile unsigned sink;
int main(void) {{
    unsigned s = 1;
    for (unsigned i = 0; i < {loops}u; i++) s = s * 1103515245u + i;
    sink = s;
    return 0;
}}
"""
RECIPE = '[confirm]\nbuild = "cc -O2 prog.c -o prog"\ncommand = "./prog"\nname = "prog"\n'


def _git(cwd: Path, *args: str, date: str = "2026-11-01T00:00:00Z") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
           "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.com",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def repository(work: Path) -> tuple[Path, list[str]]:
    """The 12-commit repository (made once; the same bytes every time) and its commits, oldest first."""
    root = work / "repo"
    if not (root / ".git").exists():
        root.mkdir(parents=True)
        _git(root, "init", "-q", "-b", "main")
        (root / ".gitignore").write_text("prog\n.pairbench/\n")
        (root / "pairbench.toml").write_text(RECIPE)
        for k in range(1, COMMITS + 1):
            loops = round(LOOPS * (1.08 if k >= STEP_COMMIT else 1.0))
            (root / "prog.c").write_text(C_SOURCE.format(loops=loops, k=k))
            _git(root, "add", ".")
            _git(root, "commit", "-q", "-m", f"commit {k}", date=f"2026-11-01T00:{k:02d}:00Z")
    return root, _git(root, "rev-list", "--reverse", "HEAD").split()


def checkout(work: Path, repo: Path, commit: str) -> Path:
    """A clone of ``repo`` at ``commit``, built: where the unpaired ``run --store`` measures it."""
    clone = work / "unpaired-checkout"
    if not (clone / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    _git(clone, "checkout", "-q", "-B", "main", commit)
    subprocess.run(["cc", "-O2", "prog.c", "-o", "prog"], cwd=clone, check=True)
    return clone


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


@contextlib.contextmanager
def timing_lock(path: str):
    fd = os.open(path, os.O_RDONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


@contextlib.contextmanager
def busy_loops(n: int):
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
             for _ in range(n)]
    try:
        yield
    finally:
        for p in loops:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
            p.wait()


def pairbench(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    done = subprocess.run([PAIRBENCH, *args], cwd=cwd, capture_output=True, text=True)
    return time.monotonic() - start, done


def history(store: Path, cwd: Path) -> dict:
    _, done = pairbench(["history", "--store", f"sqlite:///{store}", "-f", "json"], cwd)
    if done.returncode != 0:
        raise RuntimeError(f"history of {store} exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def repetition(work: Path, index: int, rng: random.Random, record_time: str, busy: int, lock: str) -> dict:
    """Records the 12 commits both ways into fresh stores; returns the raw figures."""
    repo, commits = repository(work)
    out = work / f"rep{index}"
    out.mkdir(exist_ok=True)
    paired, wall, cpu = out / "paired.db", out / "unpaired-wall.db", out / "unpaired-cpu.db"
    for f in (paired, wall, cpu):
        f.unlink(missing_ok=True)
    rows = []
    with timing_lock(lock), busy_loops(busy):
        for k, commit in enumerate(commits, start=1):
            row = {"commit": k, "load_before": loadavg()}
            clone = checkout(work, repo, commit)  # built before timing, as the record's cache is
            ways = ["paired", "unpaired"]
            rng.shuffle(ways)
            for way in ways:
                if way == "paired":
                    seconds, done = pairbench(
                        ["record", commit, "--store", f"sqlite:///{paired}", "--max-time", record_time,
                         "--seed", str(rng.randrange(2**31)), "-q"], repo)
                    row.update(record_seconds=seconds, record_exit=done.returncode)
                    if done.returncode != 0:
                        row["record_error"] = done.stderr[-1500:]
                else:
                    for metric, store in (("wall", wall), ("cpu", cpu)):
                        seconds, done = pairbench(
                            ["run", "--runs", "20", "--store", f"sqlite:///{store}", "--name", "prog",
                             "--metric", metric, "--seed", str(rng.randrange(2**31)), "-q",
                             "--json", str(out / f"run-{metric}-{k}.json"), "./prog"], clone)
                        row[f"run_{metric}_seconds"], row[f"run_{metric}_exit"] = seconds, done.returncode
                        if done.returncode == 0:
                            row[f"run_{metric}_median_ms"] = run_median_ms(out / f"run-{metric}-{k}.json", metric)
            row["load_after"] = loadavg()
            rows.append(row)
            print(f"  rep {index} commit {k}: load {row['load_before']:.1f}->{row['load_after']:.1f},"
                  f" record {row.get('record_seconds', 0):.1f} s exit {row.get('record_exit')}", flush=True)
    return {"repetition": index, "busy": busy, "record_time": record_time, "commits": commits,
            "rows": rows, "paired": history(paired, repo), "wall": history(wall, repo),
            "cpu": history(cpu, repo)}


def run_median_ms(path: Path, metric: str) -> float:
    """The median of one ``run`` result's samples, on ``metric`` (from its raw samples)."""
    doc = json.loads(path.read_text())
    samples = doc["series"][0]["samples"]
    if metric == "wall":
        values = samples["wall_ns"]
    else:
        values = [u + s for u, s in zip(samples["user_ns"], samples["sys_ns"], strict=True)]
    return statistics.median(values) / 1e6


# --------------------------------------------------------------------------- the figures


def _pct(change: float, low: float | None, high: float | None) -> str:
    interval = "no interval" if low is None or high is None else f"[{low:+.2f}%, {high:+.2f}%]"
    return f"{change:+.2f}% {interval}"


def paired_figures(rep: dict) -> dict:
    """The paired history's links by position (link k is commit k-1 -> k), its steps and drifts."""
    position = {c: i for i, c in enumerate(rep["commits"], start=1)}
    histories = rep["paired"]["paired"]
    links, steps, drifts, cumulative = [], [], [], None
    for h in histories:
        for link in h["links"]:
            k = position.get(link["after"])
            links.append((k, link))
            if link["decided"]:
                steps.append((position.get(link["before"]), k, link["decided"]))
        drifts += [(position.get(d["anchor"]), position.get(d["latest"]["after"]), d["direction"]) for d in h["drifts"]]
        if h["cumulative"]:
            cumulative = h["cumulative"][-1]
    return {"metric": [h["metric"] for h in histories], "links": sorted(links, key=lambda x: x[0] or 0),
            "steps": steps, "drifts": drifts, "cumulative": cumulative}


def unpaired_figures(rep: dict, metric: str) -> dict:
    position = {c: i for i, c in enumerate(rep["commits"], start=1)}
    steps = []
    for h in rep[metric]["benchmarks"]:
        steps += [(position.get(s["before"]), position.get(s["after"]), s["change_pct"], s["low_pct"], s["high_pct"])
                  for s in h["steps"]]
    medians = [row.get(f"run_{metric}_median_ms") for row in rep["rows"]]
    return {"steps": steps, "medians": [m for m in medians if m is not None]}


def exact(steps: list[tuple]) -> tuple[bool, int]:
    """(the step found at link 6 -> 7, the number of steps found elsewhere)."""
    right = [s for s in steps if s[0] == STEP_COMMIT - 1 and s[1] == STEP_COMMIT]
    return bool(right), len(steps) - len(right)


def report(reps: list[dict]) -> str:
    lines = []
    counts: dict[tuple[int, str], list[int]] = {}
    for rep in reps:
        rows = rep["rows"]
        loads = [r["load_before"] for r in rows] + [r["load_after"] for r in rows]
        seconds = [r["record_seconds"] for r in rows if "record_seconds" in r]
        lines += [f"## repetition {rep['repetition']} ({rep['busy']} busy loops, record --max-time "
                  f"{rep['record_time']})",
                  f"load average (1 min) before/after the records: median {statistics.median(loads):.1f}, "
                  f"{min(loads):.1f}-{max(loads):.1f}; record {statistics.median(seconds):.1f} s median, "
                  f"{max(seconds):.1f} s max; record exits {sorted({r.get('record_exit') for r in rows})}"]
        p = paired_figures(rep)
        lines.append(f"paired links ({', '.join(p['metric'])} time):")
        for k, link in p["links"]:
            mark = f"  STEP {link['decided']}" if link["decided"] else ""
            lines.append(f"  {k - 1:>2}->{k:<2} {_pct(link['change_pct'], link['low_pct'], link['high_pct'])}"
                         f" at {100 * (1 - link['alpha']):.1f}%, {link['rounds']} rounds{mark}")
        if p["cumulative"]:
            c = p["cumulative"]
            lines.append(f"  cumulative at commit {rep['commits'].index(c['after']) + 1} since the anchor: "
                         f"{_pct(c['change_pct'], c['low_pct'], c['high_pct'])}")
        lines.append(f"  drifts: {p['drifts'] or 'none'}")
        for way, steps in [("paired", p["steps"])] + [(m, unpaired_figures(rep, m)["steps"]) for m in ("wall", "cpu")]:
            right, false = exact(steps)
            tally = counts.setdefault((rep["busy"], way), [0, 0, 0])
            tally[0] += right
            tally[1] += false
            tally[2] += 1
            if way != "paired":
                u = unpaired_figures(rep, way)
                lines.append(f"unpaired run --runs 20 --store, {way} time: medians {min(u['medians']):.3f}-"
                             f"{max(u['medians']):.3f} ms ({max(u['medians']) / min(u['medians']):.2f}x); steps "
                             + (", ".join(f"{a}->{b} {_pct(c, lo, hi)}" for a, b, c, lo, hi in steps) or "none"))
            lines.append(f"  {way}: step at link 6->7 {'found' if right else 'NOT found'}, "
                         f"{false} step(s) elsewhere")
        lines.append("")
    for busy in sorted({b for b, _ in counts}):
        n = counts[busy, "paired"][2]
        lines.append(f"## {busy} busy loops: {n} repetition(s), {n * (COMMITS - 1)} links each way")
        for way in ("paired", "wall", "cpu"):
            right, false, _ = counts[busy, way]
            lines.append(f"  {way}: step found at 6->7 in {right}/{n}; false steps at the other "
                         f"{n * (COMMITS - 2)} links: {false}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--record-time", default="30s")
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--lock", default=LOCK, help="the timing lock (another path only for a trial of the script)")
    parser.add_argument("--report", action="store_true", help="print the journal's figures, measure nothing")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    journal = args.work / "journal.jsonl"
    if not args.report:
        done = sum(1 for _ in journal.open()) if journal.exists() else 0
        for index in range(done, done + args.repeats):
            rng = random.Random(args.seed * 1000 + index)
            print(f"repetition {index} (seed {args.seed * 1000 + index}, busy loops {args.busy})", flush=True)
            figures = repetition(args.work, index, rng, args.record_time, args.busy, args.lock)
            with journal.open("a") as f:
                f.write(json.dumps(figures) + "\n")
    print(report([json.loads(line) for line in journal.open()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
