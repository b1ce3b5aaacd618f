"""Synthetic `compare` results for the report-speed benchmarks, and a timer for pairbench's CLI.

Shared by report_size.py (two sides, a million samples) and many_sides.py
(a thousand sides): both build a complete result column by column, write it
with its analysis as `pairbench compare --json` does, and time `pairbench`
subcommands in fresh processes.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
PYTHON = ROOT / ".venv" / "bin" / "python"


def synthetic_columns(wall: np.ndarray, rng: np.random.Generator, **columns) -> dict:
    """Every sample column for the wall times ``wall``: plausible rusage, ``columns`` given as-is."""
    from pairbench.model import SAMPLE_COLUMNS

    n = len(wall)
    built = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
    built.update(
        wall_ns=wall.astype(np.int64), user_ns=(0.9 * wall).astype(np.int64),
        sys_ns=(0.05 * wall).astype(np.int64), max_rss_kib=20_000 + rng.integers(0, 400, n),
        voluntary_cs=rng.poisson(1, n), involuntary_cs=rng.poisson(3, n),
        pair=np.arange(n), iterations=np.ones(n, dtype=np.int64))
    built.update(columns)
    return built


def synthetic_compare(names: list[str], columns: list[dict], started: str, finished: str):
    """A complete comparison of one benchmark: side i is ``./names[i]`` with sample ``columns[i]``."""
    from pairbench.model import Command, Run, Samples, Side
    from pairbench.parsers import parse_settings

    rounds = len(columns[0]["wall_ns"])
    sides = tuple(Side(name, Command(f"./{name}", (f"./{name}",)), "baseline" if i == 0 else "candidate")
                  for i, name in enumerate(names))
    settings = parse_settings("compare", [f"./{n}" for n in names],
                              {"runs": rounds, "alpha": 0.01, "threshold": 1.0, "seed": 1, "names": names})
    samples = {(0, i): Samples(c) for i, c in enumerate(columns)}
    return Run("compare", sides, settings, "0.2.0", started, samples=samples, finished_at=finished,
               state="complete", stopped_because=f"completed the requested {rounds} rounds")


def write_analysed(run, path: Path) -> None:
    """Write ``run`` with its analysis beside the samples, as ``pairbench compare --json`` does."""
    from pairbench.analysis import analyse
    from pairbench.analysis.derived import derived_records
    from pairbench.store.resultfile import write_result

    write_result(run, path, derived_records(run, analyse(run)))


def timed(args: list[str]) -> float:
    """Seconds one ``pairbench ARGS`` takes in a fresh process (start-up included)."""
    start = time.perf_counter()
    subprocess.run([str(PYTHON), "-m", "pairbench", *args], check=True, capture_output=True)
    return time.perf_counter() - start
