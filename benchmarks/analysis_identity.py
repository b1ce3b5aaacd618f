"""Whether two source trees analyse and report the same seeded runs bit for bit.

    .venv/bin/python benchmarks/analysis_identity.py --source before=DIR --source after=DIR

``DIR`` is a tree's ``src`` folder, as for ``analysis_cost.py``. Each tree, in its own process
(``PYTHONPATH=DIR``), analyses 300 seeded compares (3 to 6000 rounds; a 20 ms, a 0.7 ms, a 50 us
and a 2 ms command, CPU times in whole microseconds or nanoseconds; no change, +0.5% and +5%) and
renders the text report of 48 of them (color and not, two widths). Every field of each
``Analysis`` is written canonically, floats as hex, and hashed with the report's text. Prints how
many cases differ (0 when a change to the analysis left every number as it was) and the first
differing fields. No timing: no lock needed (run it under ``nice``).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import hashlib
import json
import os
import subprocess
import sys

import numpy as np


def canonical(v):
    """``v`` as JSON-ready data, every float as its hex form (exact)."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: canonical(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, np.ndarray):
        return [canonical(x) for x in v.tolist()]
    if isinstance(v, (np.floating, float)):
        return float(v).hex()
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (list, tuple)):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        return {str(k): canonical(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, enum.Enum):
        return str(v)
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return repr(v)


def seeded_run(n: int, command_ns: float, effect: float, quantum: int, seed: int, noise: float):
    """A complete two-command compare: paired lognormal timings, CPU times rounded to ``quantum`` ns."""
    from synthetic_results import synthetic_columns, synthetic_compare

    rng = np.random.default_rng(seed)
    shared = rng.lognormal(0.0, 0.03, n)
    columns = []
    for i in range(2):
        wall = command_ns * (1.0 + effect * i) * shared * rng.lognormal(0.0, noise, n)
        user, sys_ = (quantum * np.rint(s * wall * rng.lognormal(0.0, 0.01, n) / quantum) for s in (0.9, 0.05))
        columns.append(synthetic_columns(wall, rng, start_ns=(np.arange(n) * 2 * command_ns).astype(np.int64),
                                         seq=2 * np.arange(n) + i, slot=rng.integers(0, 2, n),
                                         user_ns=user.astype(np.int64), sys_ns=sys_.astype(np.int64)))
    return synthetic_compare(["baseline", "candidate"], columns, "2026-11-30T00:00:00Z", "2026-11-30T00:01:00Z")


def cases() -> list[tuple]:
    found, seed = [], 0
    for n in [3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 31, 40, 49, 50, 51, 64, 100, 150, 200, 201, 250,
              400, 1000, 2500, 6000]:
        for command_ns, quantum in [(20e6, 1000), (0.7e6, 1000), (5e4, 1000), (2e6, 1)]:
            for effect in [0.0, 0.005, 0.05]:
                if n >= 1000 and (effect, quantum) not in [(0.005, 1000), (0.0, 1)]:
                    continue
                seed += 1
                found.append((n, command_ns, effect, quantum, seed, 0.02 if seed % 3 else 0.1))
    return found


def worker() -> dict:
    """{case: its canonical analysis (and report) and their hash}, in this process's tree."""
    from pairbench.analysis import analyse
    from pairbench.report import text

    out = {}
    for i, case in enumerate(cases()):
        run = seeded_run(*case)
        try:
            data = {"analysis": canonical(analyse(run))}
        except Exception as exc:  # noqa: BLE001 - an error is an outcome to compare too
            data = {"error": repr(exc)}
        if "analysis" in data and i % 6 == 0:
            analysis = analyse(run)
            render = text.renderer(run, analysis)
            data["report"] = [render(run, analysis, color=color, width=width)
                              for color in (False, True) for width in (80, 110)]
        encoded = json.dumps(data, sort_keys=True)
        out[str(case)] = {"hash": hashlib.sha256(encoded.encode()).hexdigest(), "data": data}
    return out


def differences(a, b, path: str = "") -> list[str]:
    if type(a) is not type(b):
        return [f"{path}: {str(a)[:60]} != {str(b)[:60]}"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:60]} != {str(b)[:60]}"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        json.dump(worker(), sys.stdout)
        return 0
    sources = [tuple(s.split("=", 1)) for s in args.source]
    if len(sources) != 2 or any(len(s) != 2 or not os.path.isdir(s[1]) for s in sources):
        raise SystemExit("give two trees as --source LABEL=DIR, DIR an existing src folder")
    found = []
    for _, tree in sources:
        done = subprocess.run([sys.executable, __file__, "--worker"], env=dict(os.environ, PYTHONPATH=tree),
                              check=True, capture_output=True, text=True)
        found.append(json.loads(done.stdout))
    first, second = found
    differ = [case for case in first if first[case]["hash"] != second.get(case, {}).get("hash")]
    print(f"{len(first)} cases, {len(differ)} differ")
    for case in differ[:5]:
        print(case, *differences(first[case]["data"], second[case]["data"])[:5], sep="\n  ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
