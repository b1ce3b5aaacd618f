"""Write the pairbench.result/1 files the migration tests read, with what pairbench 0.1 said of them.

These files were made once, by pairbench 0.1 at commit a98ebbe (the last
version that wrote format /1), and are kept as they came out: the migration
must read them and find the same numbers and verdicts. To remake them (only
if a /1 case is missing), check that commit out and run from its root:

    git worktree add /tmp/v1 a98ebbe
    cd /tmp/v1 && make setup && .venv/bin/python /path/to/tests/store/legacy/make_v1.py OUTDIR

For each case NAME this writes NAME.json (the result document, or
NAME.json.partial for a journal), NAME.show.txt (``pairbench show``) and
NAME.report.json (``pairbench report --format json``: the analysed summaries
and comparisons). Commands are scripted on a virtual clock (FakeExecutor), so
nothing depends on this machine; the metadata is replaced by fixed values.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np

ENVIRONMENT = {
    "host": "bench-01", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-test",
    "machine": "x86_64", "cpu_model": "Example CPU @ 3.0GHz", "logical_cpus": 2,
    "governors": {"powersave": [0, 1]}, "turbo": True,
    "load_average": [1.6, 0.9, 0.5],
    "activity": {"window_s": 0.1, "cpu": {"busy_cpus": 0.2, "steal_percent": 0.0},
                 "busiest_processes": [{"pid": 42, "name": "cc1", "cpu_percent": 80.0,
                                        "command": "cc1 -O2 x.c"}]},
    "timer": {"clock": "CLOCK_MONOTONIC", "advertised_resolution_ns": 1, "measured_resolution_ns": 50},
    "python": {"version": "3.11.7", "implementation": "CPython"},
    "pairbench": "0.1.0", "libraries": {"numpy": "2.0.0", "scipy": "1.14.0"},
}


def script(seed: int, ratios: dict[str, float]):
    rng = np.random.default_rng(seed)

    def run(command, index, clock_ns):
        factor = next((r for word, r in ratios.items() if word in command.text), 1.0)
        phase = 1.0 + 0.02 * np.sin(clock_ns / 3e9)
        wall = 0.05 * factor * phase * float(np.exp(rng.normal(0.0, 0.01)))
        if rng.random() < 0.05:
            wall *= 1.3
        return {"duration": wall, "user_ns": int(wall * 0.9e9), "sys_ns": int(wall * 0.05e9),
                "max_rss_kib": int(12_800 + rng.integers(0, 64) * 4),
                "voluntary_cs": int(rng.integers(0, 3)), "involuntary_cs": int(rng.poisson(2))}

    return run


def invoke(*args: str) -> tuple[int, str]:
    from pairbench import cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), stdout=out, stderr=err, color=False)
    return code, out.getvalue() + err.getvalue()


def fixed_metadata(path: Path) -> None:
    if path.name.endswith(".partial"):
        lines = path.read_text().split("\n")
        header = json.loads(lines[0])
        header["run"].update(started_at="2026-11-20T10:00:00+00:00")
        lines[0] = json.dumps(header, separators=(",", ":"))
        path.write_text("\n".join(lines))
        return
    document = json.loads(path.read_text())
    document.update(started_at="2026-11-20T10:00:00+00:00", finished_at="2026-11-20T10:01:00+00:00")
    path.write_text(json.dumps(document, separators=(",", ":")) + "\n")


CASES = {
    # name: (seed, ratios, argv after the command name)
    "compare-adaptive": (1, {"0.2": 1.04}, ["compare", "--seed", "11", "sleep 0.1", "sleep 0.2"]),
    "compare-fixed": (2, {"0.2": 1.01}, ["compare", "--seed", "12", "--runs", "30", "sleep 0.1", "sleep 0.2"]),
    "compare-family": (3, {"0.2": 0.97, "0.3": 1.0}, [
        "compare", "--seed", "13", "--runs", "40", "--self-check", "--name", "old", "--name", "new",
        "--name", "other", "sleep 0.1", "sleep 0.2", "sleep 0.3"]),
    "run-two": (4, {"0.2": 1.5}, ["run", "--seed", "14", "--runs", "25", "sleep 0.1", "sleep 0.2"]),
}


def main(out_dir: Path) -> None:
    # runs against commit a98ebbe, where measure.fake existed (today's fakes are in tests/support)
    import pairbench.environment  # noqa: I001
    from pairbench.cli import app
    from pairbench.measure import fake, session
    from pairbench.measure.fake import FakeExecutor

    # the run stores this machine metadata and judges it for its notes, as on a real machine
    pairbench.environment.collect_environment = lambda *args, **kwargs: dict(ENVIRONMENT)
    session.executor_metadata = lambda executor: {"kind": "SpawnerExecutor", "rss_floor_kib": 13000}
    fake.FakeExecutor.rss_floor_kib = lambda self: 13000

    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (seed, ratios, argv) in CASES.items():
        app.EXECUTOR_FACTORY = lambda output, s=seed, r=ratios: FakeExecutor(script(s, r))
        path = out_dir / f"{name}.json"
        code, text = invoke(argv[0], "-q", "--json", str(path), *argv[1:])
        assert code in (0, 1), text
        fixed_metadata(path)
        _record(out_dir, name, path)
    # a journal: a comparison whose process died after 17 rounds (the journal is what is left)
    app.EXECUTOR_FACTORY = lambda output: FakeExecutor(script(5, {"0.2": 1.02}))
    path = out_dir / "journal.json"
    invoke("compare", "-q", "--seed", "15", "--runs", "17", "--json", str(path), "sleep 0.1", "sleep 0.2")
    document = json.loads(path.read_text())
    journal = out_dir / "journal.json.partial"
    header = {"journal": "pairbench.journal/1", "run": {
        **{k: v for k, v in document.items() if k not in ("variants", "summaries", "comparisons")},
        "state": "running", "stopped_because": "", "finished_at": "",
        "variants": [{k: v for k, v in var.items() if k != "samples"} for var in document["variants"]]}}
    rows = sorted((s, i, [var["samples"][c][k] for c in var["samples"]])
                  for i, var in enumerate(document["variants"])
                  for k, s in enumerate(var["samples"]["seq"]))
    lines = [json.dumps(header, separators=(",", ":"))]
    lines += [json.dumps({"v": i, "s": row}, separators=(",", ":")) for _, i, row in rows]
    journal.write_text("\n".join(lines) + "\n")
    path.unlink()
    fixed_metadata(journal)
    _record(out_dir, "journal", journal)


def _record(out_dir: Path, name: str, path: Path) -> None:
    _, shown = invoke("show", str(path))
    (out_dir / f"{name}.show.txt").write_text(shown)
    _, report = invoke("report", str(path), "--format", "json")
    (out_dir / f"{name}.report.json").write_text(report)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
