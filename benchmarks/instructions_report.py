"""The tables of benchmarks/results/instructions.md from what ``instructions_study.py`` wrote.

Usage (a study's ``--out`` directory, or ``benchmarks/data``, whose files are named
``instructions-goals.jsonl``, ``instructions-goals-alpha0.1.jsonl``, ``instructions-matrix.jsonl``)::

    .venv/bin/python benchmarks/instructions_report.py benchmarks/out/instructions
    .venv/bin/python benchmarks/instructions_report.py benchmarks/data
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def failed(r: dict) -> bool:
    """A run that stopped at its first sample (the program failed: no round was measured)."""
    return r.get("rounds") == 0 and "failed-rounds" in (r.get("notes") or [])


def shown(r: dict | None) -> str:
    if r is None:
        return "—"
    if "error" in r:
        return f"error ({r['error'][:40].strip()!s})"
    if failed(r):
        return f"failed at its first sample, {r['elapsed_s']:.0f} s"
    estimate = "" if r.get("estimate") is None else f" {r['estimate']:+.2f}%"
    return f"{r['verdict']}{estimate}, {r.get('rounds')} r, {r['elapsed_s']:.0f} s"


def first_load(r: dict) -> float:
    return float(json.loads(r["loadavg_before"].replace("'", '"'))[0])


def beside(runs: list[dict]) -> str:
    """In how many runs other processes ran two busy loops or more and a phased loop at both the
    start and the end (not recorded before the study counted them)."""
    recorded = [r for r in runs if r.get("others_loops_before") and r.get("others_loops_after")]
    if not recorded:
        return "not recorded"
    both = [r for r in recorded if all(loops["busy"] >= 2 and loops["phased"] >= 1
                                       for loops in (r["others_loops_before"], r["others_loops_after"]))]
    return f"{len(both)} of {len(recorded)}"


def goal_row(label: str, load: str, runs: list[dict]) -> str:
    verdicts = defaultdict(int)
    for r in runs:
        verdicts[r.get("verdict", "error")] += 1
    rounds = [r["rounds"] for r in runs if r.get("rounds") is not None]
    seconds = sorted(r["elapsed_s"] for r in runs)
    loads = [first_load(r) for r in runs]
    return (f"| {label} | {load} | {len(runs)} | {', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))} | "
            f"{max(rounds) if rounds else '—'} | {seconds[len(seconds) // 2]:.0f}, {seconds[-1]:.0f} | "
            f"{min(loads):.1f}-{max(loads):.1f} | {beside(runs)} |")


def goals(found: list[dict]) -> str:
    """One row per case and own load (``none``: no load of the study's own), and a total per case
    measured under more than one."""
    lines = ["| case | own load | trials | verdicts | rounds (max) | seconds (median, max) | load average (1 min, before) "
             "| beside 2 busy + phased loops of other jobs |",
             "|---|---|---|---|---|---|---|---|"]
    by_case = defaultdict(lambda: defaultdict(list))
    for r in found:  # a trial that found no other busy loops ran beside the study's own load: apart
        by_case[r["case"]][r["load"] + (" (no other loops found)" if r.get("own_load_fallback") else "")].append(r)
    for case, by_load in by_case.items():
        for load, runs in by_load.items():
            lines.append(goal_row(case, load, runs))
        if len(by_load) > 1:
            lines.append(goal_row(f"**{case}, all**", "", [r for runs in by_load.values() for r in runs]))
    return "\n".join(lines)


def direction(r: dict | None) -> int | None:
    if r is None or r.get("verdict") not in ("slower", "faster"):
        return None
    return 1 if r["verdict"] == "slower" else -1


METRICS = ("instructions", "cpu", "wall")


def matrix(found: list[dict]) -> str:
    """A row per case and load (and per repetition, where a cell was measured again)."""
    cells = defaultdict(list)
    for r in found:
        cells[(r["case"], r["load"], r["metric"])].append(r)
    cases = list(dict.fromkeys(r["case"] for r in found))
    loads = list(dict.fromkeys(r["load"] for r in found))
    lines = ["| case | load | instructions | CPU time | wall time | directions agree | instr / CPU effect |",
             "|---|---|---|---|---|---|---|"]
    for case in cases:
        for load in loads:
            runs = [cells.get((case, load, m), []) for m in METRICS]
            for k in range(max(len(r) for r in runs)):
                i, c, w = (r[k] if k < len(r) else None for r in runs)
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


def named(directory: Path, stem: str) -> Path:
    """``stem``.jsonl as the study writes it, or ``instructions-stem``.jsonl as benchmarks/data keeps it."""
    plain = directory / f"{stem}.jsonl"
    return plain if plain.exists() else directory / f"instructions-{stem}.jsonl"


def main(argv=None) -> int:
    directory = Path((argv or sys.argv[1:])[0])
    print("## Goals\n")
    print(goals(rows(named(directory, "goals"))))
    extra = sorted({*directory.glob("goals-alpha*.jsonl"), *directory.glob("instructions-goals-alpha*.jsonl")})
    for path in extra:
        print(f"\n{path.stem.removeprefix('instructions-').removeprefix('goals-')}:\n")
        print(goals(rows(path)))
    found = rows(named(directory, "matrix"))
    print("\n## Matrix\n")
    print(matrix(found))
    print("\n" + notes(found))
    return 0

if __name__ == "__main__":
    sys.exit(main())
