"""How long `show` and `report` take on a result of many sides with few samples each (issue 14, item 10).

    .venv/bin/python benchmarks/many_sides.py [--sides 1000] [--samples 12]

Builds a synthetic `compare` result of SIDES sides (a baseline and SIDES - 1
candidates, one benchmark) of SAMPLES samples each, fixed rounds, and two
references in the same run: the same number of sides divided by ten (time
proportional to the data takes a tenth as long), and two sides holding as many
samples in all (what the samples themselves cost, without the per-series
work). Each is written to benchmarks/out/ as `pairbench compare --json` writes
it, then timed in fresh processes: `pairbench show` and `pairbench report` in
every format (read, analyse, render, write). Prints a Markdown table of times
and the ratio of the largest run to its tenth; figures go to
benchmarks/RESULTS.md by hand, with the date and machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
PYTHON = ROOT / ".venv" / "bin" / "python"
FORMATS = ("markdown", "csv", "json", "html")


def synthetic_run(sides: int, samples: int):
    """A complete comparison of ``sides`` sides (candidate i is i/10 % slower) of ``samples`` rounds."""
    from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Side
    from pairbench.settings import parse_settings

    rng = np.random.default_rng(2026)
    names = [f"cmd-{i:04d}" for i in range(sides)]
    built, series = [], {}
    for i, name in enumerate(names):
        wall = 2e6 * (1 + 0.001 * i) * rng.lognormal(0, 0.04, samples)
        columns = {c: np.zeros(samples, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns.update(
            wall_ns=wall.astype(np.int64), user_ns=(0.9 * wall).astype(np.int64),
            sys_ns=(0.05 * wall).astype(np.int64), max_rss_kib=20_000 + rng.integers(0, 400, samples),
            voluntary_cs=rng.poisson(1, samples), involuntary_cs=rng.poisson(3, samples),
            start_ns=(np.arange(samples) * sides * 2.1e6).astype(np.int64),
            seq=sides * np.arange(samples) + i, pair=np.arange(samples),
            iterations=np.ones(samples, dtype=np.int64))
        built.append(Side(name, Command(f"./{name}", (f"./{name}",)), "baseline" if i == 0 else "candidate"))
        series[(0, i)] = Samples(columns)
    settings = parse_settings("compare", [f"./{n}" for n in names],
                              {"runs": samples, "alpha": 0.01, "threshold": 1.0, "seed": 1, "names": names})
    return Run("compare", tuple(built), settings, "0.2.0", "2026-11-24T00:00:00Z", samples=series,
               finished_at="2026-11-24T01:00:00Z", state="complete",
               stopped_because=f"completed the requested {samples} rounds")


def write_analysed(run, path: Path) -> None:
    """Write ``run`` with its analysis beside the samples, as ``pairbench compare --json`` does."""
    from pairbench.analysis import analyse
    from pairbench.report.jsonfile import derived_document
    from pairbench.store.resultfile import write_result

    write_result(run, path, derived_document(run, analyse(run)))


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(PYTHON), "-m", "pairbench", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def measure(label: str, sides: int, samples: int) -> dict:
    path = OUT / f"many-sides-{sides}x{samples}.json"
    write_analysed(synthetic_run(sides, samples), path)
    row = {"label": label, "sides": sides, "samples": sides * samples, "size": path.stat().st_size,
           "show": timed(["show", str(path)])}
    for fmt in FORMATS:
        row[fmt] = timed(["report", str(path), "--format", fmt, "-o", str(OUT / f"many-sides.{fmt}")])
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sides", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=12)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    total = args.sides * args.samples
    rows = [measure("many sides", args.sides, args.samples),
            measure("a tenth of the sides", max(args.sides // 10, 2), args.samples),
            measure("two sides, as many samples", 2, total // 2)]
    print("| result | sides | samples | file | show | " + " | ".join(f"report {f}" for f in FORMATS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(FORMATS))
    for r in rows:
        times = " | ".join(f"{r[k]:.1f} s" for k in ("show", *FORMATS))
        print(f"| {r['label']} | {r['sides']:,} | {r['samples']:,} | {r['size'] / 1e6:.1f} MB | {times} |")
    big, tenth = rows[0], rows[1]
    ratio = (big["show"] - _startup()) / max(tenth["show"] - _startup(), 1e-9)
    print(f"\n`show` of {big['sides']:,} sides / {tenth['sides']:,} sides, start-up "
          f"({_startup():.1f} s) subtracted: {ratio:.1f}x for {big['sides'] / tenth['sides']:.0f}x the data")


_STARTUP: list[float] = []


def _startup() -> float:
    """What every `show` pays whatever the data: the interpreter, the imports, and a two-side result of
    a few samples read, analysed and printed (the quickest of three)."""
    if not _STARTUP:
        path = OUT / "many-sides-tiny.json"
        write_analysed(synthetic_run(2, 12), path)
        _STARTUP.append(min(timed(["show", str(path)]) for _ in range(3)))
    return _STARTUP[0]


if __name__ == "__main__":
    sys.exit(main())
