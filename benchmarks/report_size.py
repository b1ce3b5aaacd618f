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
import sys

import numpy as np

from synthetic_results import OUT, ROOT, synthetic_columns, synthetic_compare, timed, write_analysed


def synthetic_run(n: int):
    """A complete two-side comparison of ``n`` rounds with drift, interruptions and rusage columns."""
    rng = np.random.default_rng(2026)
    drift = 1 + 0.03 * np.sin(np.arange(n) / (n / 7))
    columns = []
    for i in range(2):
        wall = 2e6 * (1 + 0.01 * i) * drift * rng.lognormal(0, 0.04, n)
        wall[rng.random(n) < 0.03] *= 1.5  # interruptions
        columns.append(synthetic_columns(wall, rng, start_ns=(np.arange(n) * 4.2e6).astype(np.int64),
                                         seq=2 * np.arange(n) + i, slot=rng.integers(0, 2, n)))
    return synthetic_compare(["baseline", "candidate"], columns, "2026-11-22T00:00:00Z", "2026-11-22T01:00:00Z")


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
