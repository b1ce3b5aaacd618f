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
import sys

import numpy as np

from synthetic_results import OUT, synthetic_columns, synthetic_compare, timed, write_analysed

FORMATS = ("markdown", "csv", "json", "html")


def synthetic_run(sides: int, samples: int):
    """A complete comparison of ``sides`` sides (candidate i is i/10 % slower) of ``samples`` rounds."""
    rng = np.random.default_rng(2026)
    columns = [synthetic_columns(2e6 * (1 + 0.001 * i) * rng.lognormal(0, 0.04, samples), rng,
                                 start_ns=(np.arange(samples) * sides * 2.1e6).astype(np.int64),
                                 seq=sides * np.arange(samples) + i)
               for i in range(sides)]
    names = [f"cmd-{i:04d}" for i in range(sides)]
    return synthetic_compare(names, columns, "2026-11-24T00:00:00Z", "2026-11-24T01:00:00Z")


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
