"""How long ``make test`` takes from a fresh clone, and where the time goes.

Clones REVISION of this repository into a new directory, runs ``make TARGET`` there (``test``: the
system packages checked, a new virtual environment installed, every test, the unprivileged pass),
optionally beside ``--busy`` busy loops (``workloads/spin.c --busy``), and prints as Markdown: the
wall time and the CPU time of the whole, the load average before and after, the pytest result line,
each phase's wall time and the share of the machine's CPUs in use during it (from when each phase's
first line of output appeared), each xdist worker's tests, their CPU time and how long the first
worker to finish waited for the other (``tests/support/timeline.py``), the time per test directory
(summed over the workers), and the slowest tests; the raw files stay in ``benchmarks/out``. The
caches outside the clone (``~/.cache/pairbench-tests``: built harness programs, the wheelhouse,
the built package by source digest; pip's and Go's own) are used as they are: a fresh clone on a
machine that ran the suite before, as a contributor's second clone or a CI runner with cached
directories is. Run it under the timing lock, with the load recorded::

    flock /work/timing.lock nice -n 5 .venv/bin/python benchmarks/test_suite.py [--revision HEAD] \\
        [--target test] [--busy 0]
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from calibration import build_spin
from perturbation import busy_processes

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "out" / "test_suite"
GOAL_S = 240.0


def _cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far (/proc/stat; idle and iowait are not busy)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


class MachineBusy:
    """The machine's busy and total jiffies every half second while make runs, so that each phase
    shows how much of the two CPUs was in use: a phase far below 100% left a CPU idle."""

    def __init__(self, started: float):
        self.started, self.samples, self._stop = started, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter() - self.started, *_cpu_jiffies()))
            self._stop.wait(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append((time.perf_counter() - self.started, *_cpu_jiffies()))

    def busy(self, start: float, end: float) -> float | None:
        """The share of the machine's CPU time in use between ``start`` and ``end`` (seconds from the start)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2 or inside[-1][2] == inside[0][2]:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][2] - inside[0][2])


def run_suite(revision: str, target: str, workdir: Path, junit: Path, timeline: Path) -> dict:
    """Clone ``revision`` into ``workdir`` and run ``make target`` there; its figures, and when each
    line of make's output (stdout and stderr together) appeared."""
    subprocess.run(["git", "clone", "-q", str(REPO), str(workdir)], check=True)
    subprocess.run(["git", "checkout", "-q", revision], cwd=workdir, check=True)
    env = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit}", "PAIRBENCH_TEST_TIMELINE": str(timeline),
           "PYTHONUNBUFFERED": "1"}  # each line of output timed as it appears
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before, started, wall_started = os.getloadavg(), time.perf_counter(), time.time()
    lines: list[tuple[float, str]] = []
    with MachineBusy(started) as machine, subprocess.Popen(["make", target], cwd=workdir, env=env,
                                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                          text=True) as make:
        for line in make.stdout:
            lines.append((time.perf_counter() - started, line.rstrip("\n")))
        code = make.wait()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = "\n".join(text for _, text in lines)
    summary = [text for _, text in lines if " passed" in text or " failed" in text]
    return {"code": code, "wall": wall, "cpu": cpu, "load_before": load_before,
            "load_after": os.getloadavg(), "summary": summary[-1] if summary else "(no pytest summary)",
            "tail": output[-6000:], "lines": lines, "started": wall_started, "machine": machine}


# the first line of each phase of ``make test`` in make's output, in order
PHASE_MARKS = (
    ("install-test-deps.sh, then python -m venv", lambda text: text.startswith("scripts/install-test-deps.sh")),
    ("setup: pip upgrading itself", lambda text: "-m pip install" in text),
    ("setup: pip install -e (dependencies, native spawner, bytecode)", lambda text: "pip install" in text
     and " -e " in text),
    ("pytest", lambda text: "-m pytest -n" in text),
    ("unprivileged pass (test-unprivileged.sh)", lambda text: text.startswith("scripts/test-unprivileged.sh")),
)


def phases(lines: list[tuple[float, str]], wall: float, workers: list[dict]) -> list[tuple[str, float, float]]:
    """(phase, start, end; seconds from the start of make) from the times make's output lines appeared, pytest's split where the
    workers' first test started and their last ended; a phase whose mark never appeared is left
    out, its time counted in the phase before."""
    starts, at = [], 0
    for name, is_mark in PHASE_MARKS:
        for index in range(at, len(lines)):
            if is_mark(lines[index][1]):
                starts.append((name, lines[index][0]))
                at = index + 1
                break
    names = [name for name, _ in starts]
    if workers and "pytest" in names:
        where = names.index("pytest") + 1
        first, last = min(w["first"] for w in workers), max(w["last"] for w in workers)
        starts[where - 1] = ("pytest: start-up and collection", starts[where - 1][1])
        starts[where:where] = [("pytest: the tests (first start to last end)", first),
                               ("pytest: the last test's end to pytest's exit", last)]
    ends = [start for _, start in starts[1:]] + [wall]
    return ([("clone checked, make starting", 0.0, starts[0][1])] if starts else []) + [
        (name, start, end) for (name, start), end in zip(starts, ends, strict=True)]


def worker_balance(timeline: Path, run_started: float) -> list[dict]:
    """Per xdist worker: tests run, seconds in tests, when its first test started and its last ended
    (seconds from the start of make), from the files ``tests/support/timeline.py`` wrote."""
    workers = []
    for name in sorted(glob.glob(f"{timeline}.gw*.jsonl")):
        with open(name) as rows:
            tests = [json.loads(row) for row in rows]
        if tests:
            workers.append({"worker": tests[0]["worker"], "tests": len(tests),
                            "busy": sum(t["end"] - t["start"] for t in tests),
                            "cpu": sum(t.get("cpu", 0.0) for t in tests),
                            "first": min(t["start"] for t in tests) - run_started,
                            "last": max(t["end"] for t in tests) - run_started,
                            "last_test": max(tests, key=lambda t: t["end"])})
    return workers


def per_test(junit: Path) -> list[tuple[str, float, set[str]]]:
    """(test id, seconds, the test's directory) of every test case in the JUnit file."""
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        rows.append((name, float(case.get("time") or 0.0), case.get("classname", "").split(".")[1:2]))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revision", default="HEAD", help="what to clone and test")
    parser.add_argument("--target", default="test", help="the make target (test, test-quick)")
    parser.add_argument("--busy", type=int, default=0, help="busy loops beside the run")
    parser.add_argument("--slowest", type=int, default=20, help="how many of the slowest tests to list")
    args = parser.parse_args(argv)
    spin = build_spin(OUT) if args.busy else None
    revision = subprocess.run(["git", "rev-parse", "--short", args.revision], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs; python {platform.python_version()}")
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; make {args.target} of {revision} from a fresh clone, "
          f"{args.busy} busy loop(s) beside")
    scratch = Path(tempfile.mkdtemp(prefix="pairbench-suite-"))
    try:
        junit, timeline = scratch / "junit.xml", scratch / "timeline"
        if spin is not None:
            with busy_processes(spin, args.busy):
                found = run_suite(args.revision, args.target, scratch / "clone", junit, timeline)
        else:
            found = run_suite(args.revision, args.target, scratch / "clone", junit, timeline)
        tests = per_test(junit) if junit.exists() else []
        workers = worker_balance(timeline, found["started"])
        OUT.mkdir(parents=True, exist_ok=True)  # the raw files, for a closer look afterwards
        for kept in [junit, *scratch.glob("timeline.*.jsonl")]:
            if kept.exists():
                shutil.copy2(kept, OUT / f"{revision}.{kept.name}")
        (OUT / f"{revision}.make.log").write_text("".join(f"{at:8.2f} {text}\n" for at, text in found["lines"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n| wall (s) | CPU (s) | load before | load after | make's exit | pytest | goal <= {GOAL_S:.0f} s |")
    print("|---|---|---|---|---|---|---|")
    loads = [" ".join(f"{v:.1f}" for v in found[key]) for key in ("load_before", "load_after")]
    print(f"| {found['wall']:.0f} | {found['cpu']:.0f} | {loads[0]} | {loads[1]} | {found['code']} | "
          f"{found['summary'].strip('= ')} | {'met' if found['wall'] <= GOAL_S else 'missed'} |")
    if found["code"] != 0:
        print("\n```\n" + found["tail"] + "\n```")
    print("\nwhere the wall time went (from when each phase's first line of output appeared):\n")
    print("| phase | wall (s) | the machine's CPUs in use |\n|---|---|---|")
    for name, start, end in phases(found["lines"], found["wall"], workers):
        busy = found["machine"].busy(start, end)
        print(f"| {name} | {end - start:.1f} | {'' if busy is None else f'{100 * busy:.0f}%'} |")
    if workers:
        print("\nthe xdist workers (seconds from the start of make):\n")
        print("| worker | tests | in tests (s) | their CPU (s) | first test started | last test ended | its last test |")
        print("|---|---|---|---|---|---|---|")
        for worker in workers:
            last = worker["last_test"]
            print(f"| {worker['worker']} | {worker['tests']} | {worker['busy']:.0f} | {worker['cpu']:.0f} | {worker['first']:.1f} | "
                  f"{worker['last']:.1f} | `{last['id']}` ({last['end'] - last['start']:.1f} s) |")
        ends = [worker["last"] for worker in workers]
        print(f"\nidle tail: the first worker to finish waited {max(ends) - min(ends):.1f} s for the last")
    if tests:
        by_directory = collections.Counter()
        for _, seconds, directory in tests:
            by_directory[directory[0] if directory else "?"] += seconds
        print(f"\n{len(tests)} test cases, {sum(s for _, s, _ in tests):.0f} s summed over the workers; by directory:\n")
        print("| directory | seconds |\n|---|---|")
        for directory, seconds in by_directory.most_common():
            print(f"| {directory} | {seconds:.0f} |")
        print(f"\nthe {args.slowest} slowest:\n\n| test | seconds |\n|---|---|")
        for name, seconds, _ in sorted(tests, key=lambda row: -row[1])[:args.slowest]:
            print(f"| `{name}` | {seconds:.1f} |")
        over = sum(1 for _, seconds, _ in tests if seconds > 30)
        print(f"\ntests over 30 s: {over}")
    return found["code"]


if __name__ == "__main__":
    sys.exit(main())
