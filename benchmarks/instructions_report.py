"""The tables of benchmarks/results/instructions.md from what ``instructions_study.py`` wrote.

Usage::

    .venv/bin/python benchmarks/instructions_report.py benchmarks/out/instructions
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def shown(r: dict | None) -> str:
    if r is None:
        return "—"
    if "error" in r:
        return f"error ({r['error'][:40].strip()!s})"
    estimate = "" if r.get("estimate") is None else f" {r['estimate']:+.2f}%"
    return f"{r['verdict']}{estimate}, {r.get('rounds')} r, {r['elapsed_s']:.0f} s"


def goals(found: list[dict]) -> str:
    lines = ["| case | trials | verdicts | rounds (max) | seconds (median, max) | load average (1 min) |",
             "|---|---|---|---|---|---|"]
    by_case = defaultdict(list)
    for r in found:
        by_case[r["case"]].append(r)
    for case, runs in by_case.items():
        verdicts = defaultdict(int)
        for r in runs:
            verdicts[r.get("verdict", "error")] += 1
        rounds = [r["rounds"] for r in runs if r.get("rounds") is not None]
        seconds = sorted(r["elapsed_s"] for r in runs)
        loads = [float(json.loads(r["loadavg_before"].replace("'", '"'))[0]) for r in runs]
        lines.append(f"| {case} | {len(runs)} | {', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))} | "
                     f"{max(rounds) if rounds else '—'} | {seconds[len(seconds) // 2]:.0f}, {seconds[-1]:.0f} | "
                     f"{min(loads):.1f}-{max(loads):.1f} |")
    return "\n".join(lines)


def direction(r: dict | None) -> int | None:
    if r is None or r.get("verdict") not in ("slower", "faster"):
        return None
    return 1 if r["verdict"] == "slower" else -1


def matrix(found: list[dict]) -> str:
    cells = {(r["case"], r["load"], r["metric"]): r for r in found}
    cases = list(dict.fromkeys(r["case"] for r in found))
    loads = list(dict.fromkeys(r["load"] for r in found))
    lines = ["| case | load | instructions | CPU time | wall time | directions agree | instr / CPU effect |",
             "|---|---|---|---|---|---|---|"]
    for case in cases:
        for load in loads:
            i, c, w = (cells.get((case, load, m)) for m in ("instructions", "cpu", "wall"))
            di, dc = direction(i), direction(c)
            agree = "—" if di is None or dc is None else ("yes" if di == dc else "**no**")
            ratio = "—"
            if i and c and i.get("estimate") and c.get("estimate"):
                ratio = f"{i['estimate'] / c['estimate']:.2f}"
            lines.append(f"| {case} | {load} | {shown(i)} | {shown(c)} | {shown(w)} | {agree} | {ratio} |")
    return "\n".join(lines)


def notes(found: list[dict]) -> str:
    flagged = [f"{r['case']} ({r['load']})" for r in found
               if r["metric"] == "instructions" and "counts-disagree" in (r.get("notes") or [])]
    return "counts-disagree note on: " + (", ".join(flagged) if flagged else "none")


def main(argv=None) -> int:
    directory = Path((argv or sys.argv[1:])[0])
    print("## Goals\n")
    print(goals(rows(directory / "goals.jsonl")))
    extra = sorted(directory.glob("goals-alpha*.jsonl"))
    for path in extra:
        print(f"\n{path.stem.removeprefix('goals-')}:\n")
        print(goals(rows(path)))
    found = rows(directory / "matrix.jsonl")
    print("\n## Matrix\n")
    print(matrix(found))
    print("\n" + notes(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
