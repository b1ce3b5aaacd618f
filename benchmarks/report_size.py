"""How long `pairbench report` takes on a million samples, and how big the HTML gets.

    .venv/bin/python benchmarks/report_size.py [SAMPLES_PER_VARIANT ...]

For each size (default 500000 and 1000000 samples per variant, two variants:
1e6 and 2e6 samples in all), writes a synthetic `compare` result with drift,
outliers and rusage columns to benchmarks/out/, its summaries and comparison
computed and stored as `pairbench compare` stores them, then times, in a fresh
process each, `pairbench report R.json -o R.html` (read, analyse, render,
write) and the Markdown and CSV reports, and prints a Markdown table of times
and sizes. The HTML must stay under 20 MB and take seconds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
PYTHON = ROOT / ".venv" / "bin" / "python"


def synthetic_run(n: int):
    from pairbench.model import SAMPLE_COLUMNS, Command, Run, Samples, Variant

    rng = np.random.default_rng(2026)
    drift = 1 + 0.03 * np.sin(np.arange(n) / (n / 7))
    variants = []
    for i, name in enumerate(("baseline", "candidate")):
        wall = 2e6 * (1 + 0.01 * i) * drift * rng.lognormal(0, 0.04, n)
        wall[rng.random(n) < 0.03] *= 1.5  # interruptions
        columns = {c: np.zeros(n, dtype=np.int64) for c in SAMPLE_COLUMNS}
        columns.update(
            wall_ns=wall.astype(np.int64), user_ns=(0.9 * wall).astype(np.int64),
            sys_ns=(0.05 * wall).astype(np.int64), max_rss_kib=20_000 + rng.integers(0, 400, n),
            voluntary_cs=rng.poisson(1, n), involuntary_cs=rng.poisson(3, n),
            start_ns=(np.arange(n) * 4.2e6).astype(np.int64), seq=2 * np.arange(n) + i,
            pair=np.arange(n), slot=rng.integers(0, 2, n))
        variants.append(Variant(name, Command(f"./{name}", (f"./{name}",)), label=name,
                                samples=Samples(columns)))
    return Run(kind="compare", variants=tuple(variants), tool_version="0.1.0",
               started_at="2026-11-22T00:00:00Z", finished_at="2026-11-22T01:00:00Z",
               state="complete", stopped_because=f"completed the requested {n} rounds",
               options={"runs": n, "alpha": 0.01, "threshold": 1.0, "seed": 1})


def with_analysis(run):
    from pairbench import analysis
    from pairbench.comparison import compare_run, settings_for_run

    run = run.replace(summaries=tuple(s.to_dict() for s in analysis.summarize_run(run)))
    settings = settings_for_run(run)
    return run.replace(comparisons=tuple(r.to_dict(settings, run.stopped_because)
                                         for r in compare_run(run, settings)))


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(PYTHON), "-m", "pairbench", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main(sizes: list[int]) -> None:
    from pairbench.resultfile import write_result

    OUT.mkdir(parents=True, exist_ok=True)
    print("| samples | result file | HTML report | HTML size | Markdown | CSV (samples + summary) |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        result = OUT / f"report-{n}.json"
        write_result(with_analysis(synthetic_run(n)), result)
        html, md, csv = OUT / f"report-{n}.html", OUT / f"report-{n}.md", OUT / f"report-{n}.csv"
        t_html = timed(["report", str(result), "-o", str(html)])
        t_md = timed(["report", str(result), "-o", str(md)])
        t_csv = timed(["report", str(result), "-o", str(csv)])
        size = html.stat().st_size / 1e6
        print(f"| {2 * n:,} | {result.stat().st_size / 1e6:.0f} MB | {t_html:.1f} s | {size:.1f} MB "
              f"| {t_md:.1f} s | {t_csv:.1f} s |")
        assert size < 20, f"the HTML report is {size:.1f} MB"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main([int(a) for a in sys.argv[1:]] or [500_000, 1_000_000])
