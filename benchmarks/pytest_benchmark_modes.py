"""pytest-benchmark tests under ``pairbench bench --against``: a pytest run per sample against one pytest
worker per side and block (issue 28).

The case of the 2026-11-26 new-user report: a git repository whose ``mylib.work()`` (a Python loop over
2,000 ints) does 5% more work in HEAD than in HEAD~1, and ``parse()`` the same in both, each benchmarked
by a pytest-benchmark test. Each trial runs, one after the other and in a fresh random order,

* ``processes``: ``pairbench bench test_pb.py --harness pytest-benchmark-processes --against HEAD~1``
  (every sample a pytest run of one test: two pytest processes a round), the reference;
* ``workers``: the same with ``--harness pytest-benchmark`` (a pytest worker per side serves a block of
  rounds, the tests run once to record their calls),

each with ``--max-time`` as given (default: pairbench's own 5 s, then 60 s, as the pytest fixture uses;
``--against HEAD`` makes it an A/A trial: both sides the same code, any verdict but equivalent or
inconclusive is false; ``--modes`` picks some),
and records the wall time, and per test the verdict, the change and its interval, and the rounds. The
ratios printed are each mode's wall time over ``processes``' in the same trial. Hold the heavy lock:

    flock /work/.heavy.lock .venv/bin/python benchmarks/pytest_benchmark_modes.py --trials 2 --max-time 5s
    flock /work/.heavy.lock .venv/bin/python benchmarks/pytest_benchmark_modes.py --trials 1 --max-time 60s
    flock /work/.heavy.lock .venv/bin/python benchmarks/pytest_benchmark_modes.py --trials 3 --max-time 60s \
        --against HEAD --modes workers
    .venv/bin/python benchmarks/pytest_benchmark_modes.py --report-only

Records go to ``--out/modes.jsonl`` (one line per run; a rerun appends).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODES = {"processes": "pytest-benchmark-processes", "workers": "pytest-benchmark"}
LIBRARY = '''
def work(n=2000):
    total = 0
    for i in range(n{extra}):
        total += i * i % 7
    return total


def parse(text="12,34,56,78," * 50):
    return [int(part) for part in text.split(",") if part]
'''
TESTS = '''
import mylib


def test_work(benchmark):
    benchmark(mylib.work)


def test_parse(benchmark):
    benchmark(mylib.parse)
'''


def make_repository(root: Path) -> Path:
    """The repository: HEAD~1 with ``work()`` as given, HEAD with 5% more iterations."""
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "test_pb.py").write_text(TESTS)
    for message, extra in (("base", ""), ("work does 5% more", " + n // 20")):
        (repo / "mylib.py").write_text(LIBRARY.replace("{extra}", extra))
        for args in (["add", "."], ["commit", "-qm", message]):
            subprocess.run([*git, *args], cwd=repo, check=True)
    return repo


def run_mode(repo: Path, mode: str, max_time: str, seed: int, scratch: Path, against: str = "HEAD~1") -> dict:
    """One ``pairbench bench --against REV`` in ``mode``: its wall time and each test's outcome."""
    result = scratch / f"{mode}-{seed}.json"
    argv = [sys.executable, "-m", "pairbench", "bench", "test_pb.py", "--harness", MODES[mode], "--against",
            against, "--max-time", max_time, "--seed", str(seed), "-q", "--json", str(result)]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - started
    record = {"mode": mode if against == "HEAD~1" else f"{mode} A/A", "max_time": max_time, "seed": seed, "wall_s": wall, "exit": done.returncode,
              "load": os.getloadavg()[0], "tests": {}}
    if done.returncode not in (0, 1) or not result.exists():
        record["error"] = done.stderr[-2000:]
        return record
    for c in json.loads(result.read_text())["comparisons"]:
        effect = c.get("effect") or {}
        record["tests"][c["benchmark"]["name"].split("::")[-1]] = {
            "verdict": c["verdict"], "estimate": effect.get("estimate"), "low": effect.get("low"),
            "high": effect.get("high"), "rounds": c["rounds"]}
    return record


def trial(repo: Path, max_time: str, seed: int, scratch: Path, out: Path, modes=tuple(MODES),
          against: str = "HEAD~1") -> list[dict]:
    order = list(modes)
    random.Random(seed).shuffle(order)
    records = [run_mode(repo, mode, max_time, seed, scratch, against) for mode in order]
    with out.open("a") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return records


def report(records: list[dict]) -> None:
    """Per trial, each mode's wall time over the reference's, and each test's outcome."""
    by_trial: dict = {}
    for r in records:
        by_trial.setdefault((r["max_time"], r["seed"]), {})[r["mode"]] = r
    print("max-time  seed  mode           wall s  ratio  load  test_work (+5%)                      test_parse (same)")
    for (max_time, seed), modes in sorted(by_trial.items()):
        reference = modes.get("processes")
        for mode in (*MODES, *(f"{m} A/A" for m in MODES)):
            r = modes.get(mode)
            if r is None:
                continue
            ratio = f"{r['wall_s'] / reference['wall_s']:.2f}" if reference and "A/A" not in mode else "—"
            cells = [_outcome(r["tests"].get(name)) for name in ("test_work", "test_parse")]
            print(f"{max_time:>8}  {seed:>4}  {mode:<13} {r['wall_s']:7.1f}  {ratio:>5}  {r['load']:4.1f}  "
                  f"{cells[0]:<36} {cells[1]}")


def _outcome(test: dict | None) -> str:
    if not test:
        return "—"
    if test["estimate"] is None:
        return f"{test['verdict']}, no interval, {test['rounds']} rounds"
    return (f"{test['verdict']} {test['estimate']:+.1f}% [{test['low']:+.1f}, {test['high']:+.1f}], "
            f"{test['rounds']} r")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--max-time", default="5s")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "pytest_benchmark_modes")
    parser.add_argument("--against", default="HEAD~1", help="HEAD: an A/A trial (both sides the same code)")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "modes.jsonl"
    if not args.report_only:
        with tempfile.TemporaryDirectory(prefix="pb-modes-") as scratch:
            repo = make_repository(Path(scratch))
            for i in range(args.trials):
                trial(repo, args.max_time, args.seed + i, Path(scratch), path, args.modes, args.against)
    report([json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
