"""A paired history against unpaired records, on real processes: generated repositories recorded
commit by commit with ``pairbench record``, under the machine's own load, phased load, and phased
load beside two busy loops.

Not run by the test suite: it takes hours of the machine. Two phases:

``measure``
    Generates the repositories (``--work DIR``): a C program (a ``pairbench.h`` worker whose loop runs
    ``N_k`` dependent multiply-adds at commit ``k``) and a Python function (a ``@pairbench.benchmark``
    loop), one repository per scenario:

    * ``step2``: 40 commits, the loop 2% longer from commit 21 on;
    * ``drift2``: 40 commits, the loop 0.1% longer at each of commits 11..30 (2% in all, spread evenly);
    * ``aa``: 40 commits that change only a README (an A/A history: the same program throughout);
    * ``step8``: 12 commits, the loop 8% longer from commit 7 on (the 12-commit repository measured
      by hand before this study: unpaired records found no step in it).

    Each *history* is a fresh SQLite store; its commits are recorded in order by ``pairbench record
    REV`` run in this process (``pairbench.cli.app.main``: the real command, without an interpreter's
    start-up per record), with the project's defaults but ``--max-time`` (``--record-time``) and
    ``--sample-time``. The build cache (worktrees by tree hash) is shared by every history of a
    repository, so each commit builds once. Every record is journaled as a JSON line (scenario, load,
    history, commit, exit code, seconds, load average before and after) to ``--journal``; a run that
    stops resumes where the journal ends, and a partial run still yields figures.

    The timing lock (``/work/timing.lock``, flock) is taken for at most ``--chunk`` seconds at a
    time, then released for ``--pause`` seconds so other work can time; the load generators run only
    while it is held: ``phased`` is one busy loop that runs 3 s and sleeps 3 s, ``busy`` is that plus
    two busy loops all the time (``sh -c 'while :; do :; done'``, their process ids kept and ended
    by this script).

``analyse``
    Reads every complete history's store: the paired history's steps and drifts
    (``analysis.links.link_histories``, as ``pairbench history`` shows them), and the unpaired
    history of the same records' commit sides (each record's candidate series: the commit measured
    at that record's time, as an unpaired ``run --store`` would have measured it), wall and CPU
    time, with pairbench's unpaired detector (``analysis.change_points.detect`` on log medians) and,
    when ``--peers PYTHON`` names a Python with ``signal-processing-algorithms`` installed, E-divisive
    means (``benchmarks/history_peers.py``). Prints the tables of ``benchmarks/results/
    paired_history_study.md``.

Usage::

    nohup .venv/bin/python benchmarks/paired_history_study.py measure --work /tmp/pbstudy \\
        --journal /tmp/pbstudy/journal.jsonl --plan busy:step8:2,busy:step2:20,... &
    .venv/bin/python benchmarks/paired_history_study.py analyse --work /tmp/pbstudy \\
        --journal /tmp/pbstudy/journal.jsonl [--peers /tmp/history-peers/bin/python]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

LOCK = "/work/timing.lock"
BASE_LOOPS = 20_000  # C: about 20 us an operation here; Python: 2,000 (about 100 us)
SCENARIOS = ("step2", "drift2", "aa", "step8")
LOADS = ("quiet", "phased", "busy")


# --------------------------------------------------------------------------- the repositories


def factors(scenario: str) -> list[float]:
    """The loop's length at each commit (1-based commit k at index k - 1), relative to commit 1."""
    if scenario == "step2":
        return [1.0] * 20 + [1.02] * 20
    if scenario == "drift2":
        return [1.0 + 0.001 * min(max(k - 10, 0), 20) for k in range(1, 41)]
    if scenario == "aa":
        return [1.0] * 40
    if scenario == "step8":
        return [1.0] * 6 + [1.08] * 6
    raise ValueError(scenario)


def true_step_commit(scenario: str) -> int | None:
    """The 1-based commit at which the step lies (None: no step)."""
    return {"step2": 21, "step8": 7}.get(scenario)


C_SOURCE = """#include "pairbench.h"
/* commit {k} */
PAIRBENCH(work) {{
    unsigned s = 1;
    for (unsigned i = 0; i < {loops}u; i++) s = s * 1103515245u + i;
    pairbench_keep(s);
}}
PAIRBENCH_MAIN()
"""
PY_SOURCE = """import pairbench

LOOPS = {loops}  # commit {k}


@pairbench.benchmark
def work():
    s = 1
    for i in range(LOOPS):
        s = (s * 1103515245 + i) & 0xFFFFFFFF
    return s
"""


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "study", "GIT_AUTHOR_EMAIL": "study@example.com",
           "GIT_COMMITTER_NAME": "study", "GIT_COMMITTER_EMAIL": "study@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def repository(work: Path, language: str, scenario: str) -> tuple[Path, list[str]]:
    """The generated repository of ``scenario`` (made once) and its commits, oldest first."""
    root = work / f"repo-{language}-{scenario}"
    if (root / ".git").exists():
        return root, _git(root, "rev-list", "--reverse", "HEAD").split()
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    if language == "c":
        from pairbench import __file__ as package

        header = Path(package).parent / "worker" / "include"
        recipe = f'build = "cc -O2 -I{header} bench.c -o bench"\nbench = "bench"\n'
        (root / ".gitignore").write_text("bench\n.pairbench/\n")
    else:
        recipe = 'build = "true"\nbench = "bench_work.py"\n'
        (root / ".gitignore").write_text(".pairbench/\n__pycache__/\n")
    (root / "pairbench.toml").write_text(f"[confirm]\n{recipe}")
    base = BASE_LOOPS if language == "c" else BASE_LOOPS // 10
    for k, factor in enumerate(factors(scenario), start=1):
        loops = round(base * factor)
        if scenario != "aa" or k == 1:
            source = C_SOURCE if language == "c" else PY_SOURCE
            (root / ("bench.c" if language == "c" else "bench_work.py")).write_text(
                source.format(loops=loops, k=k if scenario != "aa" else 1))
        (root / "README").write_text(f"commit {k}\n")
        _git(root, "add", ".")
        _git(root, "commit", "-q", "-m", f"commit {k}")
    return root, _git(root, "rev-list", "--reverse", "HEAD").split()


# --------------------------------------------------------------------------- load and lock


class Load:
    """The load generators of ``kind``, started and ended by this script (by their process ids)."""

    def __init__(self, kind: str):
        self.kind, self.processes = kind, []

    def __enter__(self):
        loop = ["sh", "-c", "while :; do :; done"]
        phased = ["sh", "-c", "while :; do timeout 3 sh -c 'while :; do :; done'; sleep 3; done"]
        if self.kind in ("phased", "busy"):
            self.processes.append(subprocess.Popen(phased, start_new_session=True))
        if self.kind == "busy":
            self.processes += [subprocess.Popen(loop, start_new_session=True) for _ in range(2)]
        return self

    def __exit__(self, *exc):
        for p in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)  # its own session: the loop and its children
            p.wait()
        self.processes = []


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


class Lock:
    """``/work/timing.lock`` held for a chunk of at most ``seconds``."""

    def __init__(self, seconds: float, pause: float):
        self.seconds, self.pause, self.fd, self.since = seconds, pause, None, 0.0

    def hold(self) -> None:
        if self.fd is not None and time.monotonic() - self.since > self.seconds:
            self.release()
            time.sleep(self.pause)
        if self.fd is None:
            self.fd = os.open(LOCK, os.O_RDONLY | os.O_CREAT)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.since = time.monotonic()

    def due(self) -> bool:
        return self.fd is not None and time.monotonic() - self.since > self.seconds

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Cell:
    load: str
    scenario: str
    histories: int
    language: str = "c"
    start: int = 0  # the round robin's round its first history is measured in (later: after the others)

    @property
    def name(self) -> str:
        return f"{self.language}-{self.scenario}-{self.load}"


def parse_plan(text: str) -> list[Cell]:
    cells = []
    for part in text.split(","):
        fields = part.split(":")
        load, scenario, count = fields[:3]
        language = fields[3] if len(fields) > 3 and fields[3] else "c"
        start = int(fields[4]) if len(fields) > 4 else 0
        if load not in LOADS or scenario not in SCENARIOS or language not in ("c", "py"):
            raise SystemExit(f"bad cell {part!r}")
        cells.append(Cell(load, scenario, int(count), language, start))
    return cells


def journaled(path: Path) -> dict[tuple[str, int], int]:
    """How many commits of each (cell, history) the journal holds as recorded."""
    done: dict[tuple[str, int], int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut by a stop
            if entry.get("event") == "record":
                key = (entry["cell"], entry["history"])
                done[key] = max(done.get(key, 0), entry["commit"])
    return done


def record(root: Path, commit: str, store: Path, args, *, first: bool = False) -> tuple[int, str]:
    """``pairbench record`` of ``commit``; ``first``: the history's first record, one side with no
    link, given ``--first-record-time`` (it has no comparison to stop it, so it runs its budget)."""
    from pairbench.cli.app import main

    budget = args.first_record_time if first and args.first_record_time else args.record_time
    argv = ["record", commit, "--branch", "main", "--store", f"sqlite:///{store}", "--max-time", budget,
            "--sample-time", args.sample_time, "-q"]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(root)
    try:
        code = main(argv, stdout=out, stderr=err)
    finally:
        os.chdir(here)
    return code, err.getvalue()[-400:]


def measure(args) -> None:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    journal = Path(args.journal)
    cells = parse_plan(args.plan)
    done = journaled(journal)
    lock = Lock(args.chunk, args.pause)
    # round robin over the cells' histories, so a partial run has figures for each cell
    rounds = max(c.start + c.histories for c in cells)
    order = [(cell, r - cell.start) for r in range(rounds) for cell in cells if 0 <= r - cell.start < cell.histories]
    deadline = time.monotonic() + args.hours * 3600
    with journal.open("a") as out:
        for cell, h in order:
            root, commits = repository(work, cell.language, cell.scenario)
            store = work / "stores" / f"{cell.name}-{h:02d}.db"
            store.parent.mkdir(exist_ok=True)
            start = done.get((cell.name, h), 0)
            for k in range(start + 1, len(commits) + 1):
                if time.monotonic() > deadline:
                    lock.release()
                    return
                lock.hold()
                with Load(cell.load):
                    time.sleep(0.5 if cell.load != "quiet" else 0.0)
                    before, t0 = loadavg(), time.monotonic()
                    code, tail = record(root, commits[k - 1], store, args, first=k == 1)
                    seconds = time.monotonic() - t0
                    after = loadavg()
                entry = {"event": "record", "record_time": args.record_time, "cell": cell.name, "load": cell.load, "scenario": cell.scenario,
                         "language": cell.language, "history": h, "commit": k, "sha": commits[k - 1], "code": code,
                         "seconds": round(seconds, 3), "loadavg_before": before, "loadavg_after": after,
                         "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
                if code != 0:
                    entry["stderr"] = tail
                out.write(json.dumps(entry) + "\n")
                out.flush()
                if lock.due():
                    lock.release()
                    time.sleep(args.pause)
    lock.release()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="phase", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--work", required=True)
    m.add_argument("--journal", required=True)
    m.add_argument("--plan", required=True, help="LOAD:SCENARIO:HISTORIES[:c|py[:FIRST_ROUND]],...")
    m.add_argument("--record-time", default="10s")
    m.add_argument("--sample-time", default="500us")
    m.add_argument("--first-record-time", help="budget of a history's first record (one side, no link)")
    m.add_argument("--chunk", type=float, default=840.0, help="seconds the lock is held at most")
    m.add_argument("--pause", type=float, default=90.0, help="seconds between chunks")
    m.add_argument("--hours", type=float, default=3.0)
    a = sub.add_parser("analyse")
    a.add_argument("--work", required=True)
    a.add_argument("--journal", required=True)
    a.add_argument("--peers", help="a Python with signal-processing-algorithms (E-divisive means)")
    a.add_argument("--partial", action="store_true", help="also score histories cut short, on the commits they have")
    args = parser.parse_args(argv)
    if args.phase == "measure":
        measure(args)
        return 0
    from paired_history_analysis import analyse  # beside this file

    print(analyse(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
