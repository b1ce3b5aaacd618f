"""How long `pairbench report` takes on a million samples, and how big the HTML gets.

    .venv/bin/python benchmarks/report_size.py [SAMPLES_PER_SIDE ...]

For each size (default 500000 and 1000000 samples per side, two sides: 1e6
and 2e6 samples in all), writes a synthetic `compare` result (format
pairbench.result/2, one benchmark, fixed rounds) with drift, outliers and
rusage columns to benchmarks/out/, with the analysis written beside the
samples as `pairbench compare --json` writes it, then times, in a fresh
process each, `pairbench report R.json -o R.html` (read, analyse, render,
write) and the Markdown and CSV reports, and prints a Markdown table of times
and sizes. The HTML must stay under 20 MB and take seconds.
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


def synthetic_run(n: int):
    """A complete two-side comparison of ``n`` rounds, built column by column."""
    from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Side
    from pairbench.settings import parse_settings

    rng = np.random.default_rng(2026)
    drift = 1 + 0.03 * np.sin(np.arange(n) / (n / 7))
    sides, samples = [], {}
    for i, name in enumerate(("baseline", "candidate")):
        wall = 2e6 * (1 + 0.01 * i) * drift * rng.lognormal(0, 0.04, n)
        wall[rng.random(n) < 0.03] *= 1.5  # interruptions
        columns = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns.update(
            wall_ns=wall.astype(np.int64), user_ns=(0.9 * wall).astype(np.int64),
            sys_ns=(0.05 * wall).astype(np.int64), max_rss_kib=20_000 + rng.integers(0, 400, n),
            voluntary_cs=rng.poisson(1, n), involuntary_cs=rng.poisson(3, n),
            start_ns=(np.arange(n) * 4.2e6).astype(np.int64), seq=2 * np.arange(n) + i,
            pair=np.arange(n), slot=rng.integers(0, 2, n), iterations=np.ones(n, dtype=np.int64))
        sides.append(Side(name, Command(f"./{name}", (f"./{name}",)), name))
        samples[(0, i)] = Samples(columns)
    settings = parse_settings("compare", ["./baseline", "./candidate"],
                              {"runs": n, "alpha": 0.01, "threshold": 1.0, "seed": 1,
                               "names": ["baseline", "candidate"]})
    return Run("compare", tuple(sides), settings, "0.2.0", "2026-11-22T00:00:00Z", samples=samples,
               finished_at="2026-11-22T01:00:00Z", state="complete",
               stopped_because=f"completed the requested {n} rounds")


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


def main(sizes: list[int]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    print("| samples | result file | HTML report | HTML size | Markdown | CSV (samples + summary) |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        result = OUT / f"report-{n}.json"
        write_analysed(synthetic_run(n), result)
        html, md, csv = OUT / f"report-{n}.html", OUT / f"report-{n}.md", OUT / f"report-{n}.csv"
        t_html = timed(["report", str(result), "-o", str(html)])
        t_md = timed(["report", str(result), "-o", str(md)])
        t_csv = timed(["report", str(result), "-o", str(csv)])
        size = html.stat().st_size / 1e6
        print(f"| {2 * n:,} | {result.stat().st_size / 1e6:.0f} MB | {t_html:.1f} s | {size:.1f} MB "
              f"| {t_md:.1f} s | {t_csv:.1f} s |")
        assert size < 20, f"the HTML report is {size:.1f} MB"


def parse_args(argv: list[str]) -> list[int]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, metavar="SAMPLES_PER_SIDE",
                        default=[500_000, 1_000_000], help="rounds (samples per side); default 500000 1000000")
    return parser.parse_args(argv).sizes


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main(parse_args(sys.argv[1:]))
