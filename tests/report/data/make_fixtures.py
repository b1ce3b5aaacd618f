"""Write the result documents the report tests read: ``compare.json`` and ``run.json``.

Regenerate from the repository root (only when the result format changes; the
golden files in ``tests/report/golden`` then change too, and
``PAIRBENCH_UPDATE_GOLDEN=1`` rewrites them):

    .venv/bin/python tests/report/data/make_fixtures.py

The results are real ``pairbench compare`` / ``run`` documents (format
``pairbench.result/2``) produced through ``cli.main`` with its seams: a
scripted FakeExecutor (no process runs, no time passes) and a fixed machine
description. Only the timestamps and the tool version are then made fixed.
The candidate's name is hostile on purpose (HTML, Markdown, a pipe, a newline).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
HOSTILE = '<script>window.__pwned=1</script> | *new* `build`\nline 2 & <img src=x onerror="alert(1)">'
ENVIRONMENT = {
    "host": "bench-01", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-test",
    "machine": "x86_64", "cpu_model": "Example CPU @ 3.0GHz", "logical_cpus": 2,
    "governors": {"performance": [0, 1]}, "turbo": False,
    "load_average": [0.12, 0.08, 0.05],
    "activity": {"window_s": 0.1, "cpu": {"busy_cpus": 0.1, "steal_percent": 0.0},
                 "busiest_processes": [{"pid": 42, "name": "cron", "cpu_percent": 1.5,
                                        "command": "/usr/sbin/cron -f | <b>x</b>"}]},
    "timer": {"clock": "CLOCK_MONOTONIC", "advertised_resolution_ns": 1, "measured_resolution_ns": 50},
    "python": {"version": "3.11.7", "implementation": "CPython"},
    "pairbench": "0.2.0", "libraries": {"numpy": "2.0.0", "scipy": "1.14.0"},
}
STARTED, FINISHED, VERSION = "2026-11-22T10:00:00Z", "2026-11-22T10:00:09Z", "0.2.0"


def script(seed: int):
    """What each command "costs": ~50 ms, 4% more for ``sleep 0.2``, a slow phase and 5% stalls."""
    rng = np.random.default_rng(seed)

    def run(command, index, clock_ns):
        slow = 1.04 if "0.2" in command.text else 1.0
        phase = 1.0 + 0.02 * np.sin(clock_ns / 3e9)
        wall = 0.05 * slow * phase * float(np.exp(rng.normal(0.0, 0.01)))
        if rng.random() < 0.05:
            wall *= 1.3  # an interruption: a slow outlier
        return {"duration": wall, "user_ns": int(wall * 0.9e9), "sys_ns": int(wall * 0.05e9),
                "max_rss_kib": int(20_000 + rng.integers(0, 64) * 4 + (2048 if slow > 1 else 0)),
                "voluntary_cs": int(rng.integers(0, 3)), "involuntary_cs": int(rng.poisson(2))}

    return run


def invoke(seed: int, *args: str) -> None:
    """``pairbench ARGS`` in-process, measured by a FakeExecutor scripted with ``seed``."""
    sys.path.insert(0, str(HERE.parents[1] / "support"))
    from fakes import FakeExecutor

    from pairbench import cli

    executor = FakeExecutor(script(seed), gap_ns=1_000_000)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), stdout=out, stderr=err, color=False,
                    executor_factory=lambda output: executor,
                    environment=lambda *a, **k: json.loads(json.dumps(ENVIRONMENT)))
    if code not in (0, 1):
        raise SystemExit(f"pairbench {' '.join(args)} failed ({code}): {err.getvalue()}")


def fix_times(path: Path) -> None:
    """Replace the wall-clock timestamps and the tool version by fixed values."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["started_at"], doc["finished_at"] = STARTED, FINISHED
    doc["tool"]["version"] = VERSION
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    invoke(5, "compare", "--runs", "40", "--warmup", "1", "--seed", "11", "--name", "old build",
           "--name", HOSTILE, "--json", str(HERE / "compare.json"), "sleep 0.1", "sleep 0.2")
    invoke(6, "run", "--runs", "25", "--seed", "3", "--json", str(HERE / "run.json"), "sleep 0.1")
    for name in ("compare.json", "run.json"):
        fix_times(HERE / name)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2] / "src"))
    main()
