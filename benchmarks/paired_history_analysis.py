"""The figures of ``paired_history_study.py``: what its recorded histories show, paired and unpaired.

For every history the journal holds complete (every commit recorded, each with exit status 0), reads
its store and scores:

* **paired** (the links, as ``pairbench history`` judges them: ``analysis.links.link_histories``):
  the steps found, each named by the commit it ends at; a step scenario is *exact* when the only
  step is at the true commit; an A/A or drift history counts each step as false; a drift history
  counts whether a drift was reported and whether its cumulative interval (the window's latest
  anchor link) covers the true +2%;
* **unpaired**: the same records' commit sides (each record's candidate series: the commit measured
  at that record's time, as ``run --store`` would have measured it alone), one median per commit on
  wall time and on CPU time, segmented by pairbench's unpaired detector
  (``analysis.change_points.detect`` on the log medians) and, with ``--peers``, by E-divisive means
  (``history_peers.py``); a break is named by the commit it starts at;
* **cost**: the seconds a record took (the journal), per commit.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from paired_history_study import factors, true_step_commit  # noqa: E402

DRIFT = 2.0  # percent, the drift scenario's total change


def complete_histories(journal: Path, partial: bool = False) -> dict[tuple[str, int], list[dict]]:
    """The journal's records by (cell, history), in commit order: the histories whose every commit
    was recorded with exit status 0 (``partial``: also those cut short, from their first commit on,
    each scored on the commits it has)."""
    found: dict[tuple[str, int], dict[int, dict]] = defaultdict(dict)
    for line in journal.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "record":
            found[(entry["cell"], entry["history"])][entry["commit"]] = entry
    complete = {}
    for key, records in found.items():
        scenario = next(iter(records.values()))["scenario"]
        n = len(factors(scenario)) if not partial else len(records)
        if sorted(records) == list(range(1, n + 1)) and all(r["code"] == 0 for r in records.values()):
            complete[key] = [records[k] for k in range(1, n + 1)]
    return complete


def paired_score(store_path: Path, records: list[dict]) -> dict:
    from pairbench.analysis.links import link_histories
    from pairbench.store.history import Store

    index = {r["sha"]: r["commit"] for r in records}
    with Store.open(f"sqlite:///{store_path}", read_only=True) as store:
        [machine] = store.machines()
        [benchmark] = store.link_benchmarks(machine.id)
        links = store.links(machine.id, [benchmark.id])
        samples = {uid: store.link_samples(uid) for uid in dict.fromkeys(link.result_uid for link in links)}
        first = _first_result(store, records[0]["sha"])
    histories = link_histories(benchmark.key, links, 1.0)
    metrics = sorted({h.metric for h in histories})
    h = max(histories, key=lambda h: len(h.chain))
    steps = [index[d.link.after] for d in h.steps]
    drift = h.drifts[0] if h.drifts else None
    latest = h.cumulative[-1].link if h.cumulative else None
    step_sizes = [(d.link.effect, d.link.effect_low, d.link.effect_high) for d in h.steps]
    return {"metric": "+".join(metrics), "steps": steps, "step_sizes": step_sizes, "links": len(h.chain),
            "drift": None if drift is None else {"first": index.get(drift.first), "direction": drift.direction,
                                                  "low": drift.latest.effect_low, "high": drift.latest.effect_high,
                                                  "estimate": drift.latest.effect},
            "cumulative": None if latest is None else (latest.effect, latest.effect_low, latest.effect_high,
                                                       index.get(latest.after)),
            "rounds": [d.link.rounds for d in h.chain],
            "unpaired": _unpaired_values(records, links, samples, first)}


def _first_result(store, sha: str):
    """The uid of the first record's result (one side: no link names it)."""
    from sqlalchemy import select

    from pairbench.store import schema

    results = schema.metadata.tables["results"]
    with store._engine.connect() as conn:
        row = conn.execute(select(results.c.uid).where(results.c.commit_hash == sha)
                           .order_by(results.c.id).limit(1)).first()
    return None if row is None else (row[0], store.link_samples(row[0]))


def _unpaired_values(records, links, samples, first) -> dict[str, list[float]]:
    """Each commit's median per operation, wall and CPU, from its own record's commit side."""
    by_commit = {}
    if first is not None:
        by_commit[records[0]["sha"]] = first[1]
    for link in links:
        by_commit.setdefault(link.after, samples[link.result_uid])
    out: dict[str, list[float]] = {"wall": [], "cpu": []}
    for r in records:
        rows = by_commit.get(r["sha"], [])
        series = next((s for _, _, role, s in rows if role in ("candidate", "")), None)
        for metric in out:
            if series is None:
                out[metric].append(math.nan)
                continue
            values = series.measured().metric_values(metric)
            out[metric].append(float(np.median(values)) if values.size else math.nan)
    return out


def detected(values: list[float]) -> list[int]:
    """The commits (1-based) at which pairbench's unpaired detector starts a new segment."""
    from pairbench.analysis.change_points import detect

    y = np.log(np.asarray(values, dtype=np.float64))
    return [int(b) + 1 for b in detect(y).breaks]


def peers(python: str | None, series: list[list[float]]) -> list[list[int]] | None:
    if not python or not series:
        return None
    done = subprocess.run([python, str(HERE / "history_peers.py")], input=json.dumps(
        {"series": series, "methods": ["e-divisive"]}), capture_output=True, text=True, check=True)
    return [[int(b) + 1 for b in breaks] for breaks in json.loads(done.stdout)["breaks"]["e-divisive"]]


def analyse(args) -> str:
    work, journal = Path(args.work), Path(args.journal)
    complete = complete_histories(journal, getattr(args, "partial", False))
    cells: dict[str, list[dict]] = defaultdict(list)
    for (cell, h), records in sorted(complete.items()):
        score = paired_score(work / "stores" / f"{cell}-{h:02d}.db", records)
        score["seconds"] = [r["seconds"] for r in records]
        score["load"] = [r["loadavg_before"][0] for r in records]
        score["scenario"] = records[0]["scenario"]
        cells[cell].append(score)
    series = [(cell, i, metric, s["unpaired"][metric]) for cell, scores in cells.items()
              for i, s in enumerate(scores) for metric in ("wall", "cpu")]
    edm = peers(args.peers, [v for *_, v in series])
    for k, (cell, i, metric, values) in enumerate(series):
        cells[cell][i].setdefault("pairbench_unpaired", {})[metric] = detected(values)
        if edm is not None:
            cells[cell][i].setdefault("edivisive", {})[metric] = edm[k]
    return tables(cells, journal)


def _judge(steps: list[int], scenario: str) -> tuple[bool, int]:
    """(the step is named at its exact commit and nowhere else, false steps)."""
    true = true_step_commit(scenario)
    false = sum(1 for s in steps if s != true)
    return (true is not None and steps == [true]), false


def tables(cells: dict[str, list[dict]], journal: Path) -> str:
    lines = ["| cell | histories | commits | method | exact step | histories with a false step | false steps "
             "(per 1,000 commits) | drift found | drift interval covers +2% |", "|---|---|---|---|---|---|---|---|---|"]
    for cell, scores in sorted(cells.items()):
        scenario = scores[0]["scenario"]
        commits = sum(len(s["seconds"]) for s in scores)
        methods = [("paired links", lambda s: s["steps"])]
        for metric in ("wall", "cpu"):
            methods.append((f"unpaired {metric}, pairbench", lambda s, m=metric: s["pairbench_unpaired"][m]))
            if "edivisive" in scores[0]:
                methods.append((f"unpaired {metric}, E-divisive", lambda s, m=metric: s["edivisive"][m]))
        for name, steps_of in methods:
            judged = [_judge(steps_of(s), scenario) for s in scores]
            exact = sum(j[0] for j in judged) if true_step_commit(scenario) else "—"
            false = sum(j[1] for j in judged)
            with_false = sum(1 for j in judged if j[1])
            drift = covers = "—"
            if scenario == "drift2" and name == "paired links":
                drift = sum(1 for s in scores if s["drift"])
                covers = sum(1 for s in scores if s["drift"] and s["drift"]["low"] <= DRIFT <= s["drift"]["high"])
            lines.append(f"| {cell} | {len(scores)} | {commits} | {name} | {exact} | {with_false} | "
                         f"{false} ({1000 * false / commits:.1f}) | {drift} | {covers} |")
    lines += ["", "| cell | metric of the links | seconds per record: median (max) | load average (1 min): median "
              "| links' rounds: median | paired step sizes | drift's cumulative change |", "|---|---|---|---|---|---|---|"]
    for cell, scores in sorted(cells.items()):
        seconds = [x for s in scores for x in s["seconds"]]
        load = [x for s in scores for x in s["load"]]
        rounds = [x for s in scores for x in s["rounds"]]
        sizes = "; ".join(f"{e:+.2f}% [{lo:+.2f}, {hi:+.2f}]" for s in scores for e, lo, hi in s["step_sizes"][:1])
        drifts = "; ".join(f"{d['estimate']:+.2f}% [{d['low']:+.2f}, {d['high']:+.2f}]" for s in scores
                           if (d := s["drift"]))
        lines.append(f"| {cell} | {', '.join(sorted({s['metric'] for s in scores}))} | "
                     f"{np.median(seconds):.1f} ({max(seconds):.1f}) | {np.median(load):.1f} | "
                     f"{int(np.median(rounds)) if rounds else 0} | {sizes or '—'} | {drifts or '—'} |")
    records = [json.loads(line) for line in journal.read_text().splitlines() if line.startswith("{")]
    lines += ["", f"Journal: {len(records)} records, {sum(1 for r in records if r['code'] != 0)} failed, "
              f"{records[0]['at'] if records else ''} to {records[-1]['at'] if records else ''}."]
    return "\n".join(lines)
