"""The history store at size: 10,000 results x 100 benchmarks in SQLite and PostgreSQL.

What it measures, per database (a SQLite file in WAL mode; a PostgreSQL 15
server started here as the tests start it, but with fsync on, as in
production):

* **insert**: 10,000 results, each a run of 100 benchmarks with 10 samples
  each, stored one result per transaction through ``Store.add`` (the
  summaries are given, as the measuring command's analysis gives them).
  Reference: the same rows inserted by the database driver alone
  (``executemany``, one transaction per result, no SQLAlchemy, no codec),
  measured in the same run; the ratio is pairbench's cost over the floor.
* **query**: the history of one benchmark over the 10,000 commits
  (``Store.series``), its analysis (points, PELT, step sizes) and the
  terminal text; reference: the bare ``SELECT`` of its 10,000 medians.
* **history command**: ``pairbench history BENCHMARK --store URL`` as a user
  runs it, a new process each time (Python's start-up and imports included):
  best and median of 5.

Usage (about 10 minutes and 1 GB of disk; under the shared lock):
    flock /work/.heavy.lock .venv/bin/python benchmarks/history_store.py --results 10000
    flock /work/.heavy.lock .venv/bin/python benchmarks/history_store.py --detector   # the detector alone
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from postgres import PostgresServer  # noqa: E402

from pairbench.environment.fingerprint import machine_of  # noqa: E402
from pairbench.model import SAMPLE_COLUMNS, BenchmarkKey, Command, Run, Samples, Side  # noqa: E402
from pairbench.parsers import parse_settings  # noqa: E402
from pairbench.store import codec  # noqa: E402
from pairbench.store.history import Provenance, SeriesSummary, Store  # noqa: E402

ENV = {"machine": "x86_64", "cpu_model": "Study CPU", "logical_cpus": 2, "os": "Debian GNU/Linux 12"}
BENCHMARKS = tuple(BenchmarkKey(f"bench-{b:03d}", (("n", "1000"),)) for b in range(100))
SAMPLES = 10
SETTINGS = parse_settings("bench", ["./bench"], {"seed": 1, "runs": SAMPLES})


def make_run(k: int, rng: np.random.Generator) -> tuple[Run, dict]:
    """Result ``k``: 100 benchmarks of one worker, 10 samples each, ``bench-042`` 10% slower from the
    middle commit on; and its summaries."""
    samples, summaries = {}, {}
    for b in range(len(BENCHMARKS)):
        level = 1000.0 * (1 + b) * (1.1 if BENCHMARKS[b].name == "bench-042" and k >= 5000 else 1.0)
        walls = np.round(level * 1024 * rng.lognormal(0, 0.01, SAMPLES)).astype(np.int64)
        columns = {c: np.zeros(SAMPLES, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns.update(wall_ns=walls, seq=np.arange(SAMPLES) + b * SAMPLES, pair=np.arange(SAMPLES),
                       iterations=np.full(SAMPLES, 1024))
        samples[(b, 0)] = Samples(columns)
        median = float(np.median(walls)) / 1024
        summaries[(b, 0)] = SeriesSummary(SAMPLES, 0, median, median * 0.99, median * 1.01, median)
    stamp = f"2026-01-01T00:00:00.{k:06d}+00:00"
    run = Run("bench", (Side("bench", Command("./bench", ("./bench",))),), SETTINGS, "0.3.0", stamp,
              benchmarks=BENCHMARKS, samples=samples, finished_at=stamp, state="complete", environment=ENV)
    return run, summaries


def provenance(k: int) -> Provenance:
    commit = hashlib.sha1(f"commit {k}".encode()).hexdigest()
    return Provenance(commit, f"2026-{1 + k // 43200:02d}-{1 + k // 1440 % 30:02d}T{k // 60 % 24:02d}:"
                              f"{k % 60:02d}:00+00:00", "main", False)


def insert_pairbench(url: str, results: int) -> float:
    """Seconds spent in ``Store.add`` for ``results`` results (each made just before, untimed)."""
    rng = np.random.default_rng(1)
    machine = machine_of(ENV)
    spent = 0.0
    with Store.open(url) as store:
        for k in range(results):
            run, summaries = make_run(k, rng)
            started = time.perf_counter()
            store.add(run, summaries, machine, provenance(k))
            spent += time.perf_counter() - started
    return spent


def insert_reference(url: str, results: int) -> float:
    """The floor: the driver inserting the same number of rows and bytes, one transaction per result."""
    rng = np.random.default_rng(1)
    blob = codec.encode(make_run(0, rng)[0].samples[(0, 0)])
    rows = [(k, b, "bench", "", "./bench", SAMPLES, 0, 1.0, 0.9, 1.1, 1.0, blob) for k in range(1) for b in range(100)]
    if url.startswith("sqlite"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        marker, begin = "?", "BEGIN IMMEDIATE"
    else:
        import psycopg

        conn = psycopg.connect(url.replace("+psycopg", ""), autocommit=True)
        marker, begin = "%s", "BEGIN"
    conn.execute("CREATE TABLE r (id INTEGER PRIMARY KEY, uid TEXT)")
    conn.execute("CREATE TABLE s (result_id INTEGER, benchmark_id INTEGER, side TEXT, role TEXT, command TEXT, "
                 "n INTEGER, n_failed INTEGER, median FLOAT, lo FLOAT, hi FLOAT, mean FLOAT, samples "
                 + ("BLOB)" if marker == "?" else "BYTEA)"))
    insert = f"INSERT INTO s VALUES ({', '.join([marker] * 12)})"
    started = time.perf_counter()
    cursor = conn.cursor()
    for k in range(results):
        conn.execute(begin)
        cursor.execute(f"INSERT INTO r VALUES ({marker}, {marker})", (k, str(k)))
        cursor.executemany(insert, [(k, *row[1:]) for row in rows])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def query(url: str, repeats: int = 5) -> tuple[float, float, int]:
    """(best time of the history of bench-042 with its analysis and text, best bare SELECT, steps)."""
    from sqlalchemy import create_engine, text

    from pairbench.analysis.history import benchmark_history, points_of
    from pairbench.report.history import render_history

    times, steps = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        with Store.open(url) as store:
            [machine] = store.machines()
            benchmark = next(b for b in store.benchmarks(machine.id) if b.key.name == "bench-042")
            history = benchmark_history(benchmark.key, points_of(store.series(machine.id, benchmark)))
        from pairbench.analysis.history import History, group_change_points

        render_history(History("m", (history,), group_change_points([history])))
        times.append(time.perf_counter() - started)
        steps = len(history.steps)
    engine = create_engine(url if "+" in url or url.startswith("sqlite") else url)
    bare = []
    for _ in range(repeats):
        started = time.perf_counter()
        with engine.connect() as conn:
            conn.execute(text("SELECT s.median FROM series s JOIN results r ON r.id = s.result_id "
                              "WHERE s.benchmark_id = (SELECT id FROM benchmarks WHERE name = 'bench-042') "
                              "ORDER BY r.commit_time")).all()
        bare.append(time.perf_counter() - started)
    engine.dispose()
    return min(times), min(bare), steps


def command(url: str, repeats: int = 5) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pairbench", "history", "bench-042*", "--store", url,
                        "--machine", machine_of(ENV).fingerprint], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


def study(name: str, url: str, reference_url: str, results: int) -> dict:
    inserted = insert_pairbench(url, results)
    floor = insert_reference(reference_url, results)
    best, bare, steps = query(url)
    cli = command(url)
    row = {"database": name, "results": results, "insert_s": inserted, "insert_per_result_ms": 1000 * inserted / results,
           "reference_s": floor, "insert_ratio": inserted / floor, "history_s": best, "select_s": bare,
           "history_ratio": best / bare, "steps": steps, "cli_best_s": min(cli), "cli_median_s": statistics.median(cli)}
    print(row, flush=True)
    return row


def detector(n: int = 10_000, repeats: int = 5, seed: int = 16) -> dict[str, float]:
    """Best time of ``analysis.history.detect`` (the change points and their noise, all a history's
    analysis costs beyond the query) on seeded log-values of ``n`` commits, CV 2%: without a step
    (PELT's worst case: it prunes nothing) and with one of 10% in the middle."""
    from pairbench.analysis.change_points import detect

    rng = np.random.default_rng(seed)
    flat = np.log1p(0.02 * rng.standard_normal(n))
    stepped = flat + np.where(np.arange(n) >= n // 2, np.log(1.1), 0.0)
    found = {}
    for name, y in (("no step", flat), ("one step", stepped)):
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            detection = detect(y)
            times.append(time.perf_counter() - started)
        found[name] = min(times)
        found[f"{name}: steps"] = len(detection.segmentation.breaks)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--query-only", metavar="SQLITE_FILE",
                        help="time the history of bench-042 in a store a previous run kept (--keep), no inserts")
    parser.add_argument("--keep", type=Path, help="keep the SQLite store here (to --query-only it later)")
    parser.add_argument("--detector", action="store_true",
                        help="time only the change-point detector on 10,000 commits, without and with a step")
    args = parser.parse_args(argv)
    if args.detector:
        import pairbench

        print(f"{pairbench.__file__}: {detector()}")
        return 0
    if args.query_only:
        url = f"sqlite:///{Path(args.query_only).resolve()}"
        best, bare, steps = query(url)
        cli = command(url)
        print(f"history {1000 * best:.0f} ms, bare SELECT {1000 * bare:.0f} ms, steps {steps}; "
              f"pairbench history best {min(cli):.2f} s, median {statistics.median(cli):.2f} s")
        return 0
    work = Path(tempfile.mkdtemp(prefix="pairbench-store-study-"))
    rows = []
    try:
        if "sqlite" in args.databases:
            rows.append(study("SQLite", f"sqlite:///{work / 'history.db'}", f"sqlite:///{work / 'floor.db'}",
                              args.results))
        if "postgresql" in args.databases:
            server = PostgresServer(durable=True).start()
            try:
                rows.append(study("PostgreSQL", server.database(), server.database(), args.results))
            finally:
                server.stop()
    finally:
        sizes = {p.name: p.stat().st_size for p in work.iterdir()}
        if args.keep:
            keep_copy(work / "history.db", args.keep)
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{platform.node()} {platform.machine()}, Python {platform.python_version()}; SQLite files: {sizes}")
    print("| database | results x benchmarks | insert (pairbench) | per result | driver alone | ratio | "
          "history of 1 benchmark (query + analysis + text) | bare SELECT | steps found | `pairbench history` "
          "(new process), best / median of 5 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['database']} | {r['results']:,} x 100 | {r['insert_s']:.0f} s | {r['insert_per_result_ms']:.1f} ms | "
              f"{r['reference_s']:.0f} s | {r['insert_ratio']:.2f} | {1000 * r['history_s']:.0f} ms | "
              f"{1000 * r['select_s']:.0f} ms | {r['steps']} | {r['cli_best_s']:.2f} s / {r['cli_median_s']:.2f} s |")
    return 0


def keep_copy(store: Path, target: Path) -> None:
    """Copy the SQLite store to ``target`` through SQLite's backup API: the file alone lacks what its
    write-ahead log still holds (a copy of it once kept an empty store)."""
    import sqlite3

    source, copy = sqlite3.connect(store), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()


if __name__ == "__main__":
    raise SystemExit(main())
