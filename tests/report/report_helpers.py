"""Report test helpers: fixture paths, the golden files, a CLI runner (imported by the tests)."""

from __future__ import annotations

import json
from pathlib import Path

from golden import assert_golden as _assert_golden

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GOLDEN = HERE / "golden"
ARTIFACTS = HERE.parents[1] / "tests" / "artifacts"
HOSTILE = json.loads((DATA / "compare.json").read_text(encoding="utf-8"))["sides"][1]["name"]


def assert_golden(name: str, actual: str) -> None:
    """Compare ``actual`` with ``golden/NAME`` (the one golden-file convention: ``golden.assert_golden``)."""
    _assert_golden(GOLDEN / name, actual)


from cli_runner import CliResult, invoke  # noqa: E402,F401 - shared with the CLI tests


def two_benchmark_run(rounds: int = 30):
    """A comparison of two sides on two benchmarks, built by hand (no executor, no result file).

    ``sort[n=1000]`` is timed in ns over 1024 iterations a sample, and the
    candidate ``new`` is 5% slower at it; ``alloc`` counts bytes (its ``value``
    metric, also over 1024 iterations), equal on both sides, and only the
    baseline's ``alloc`` series has an ``allocs`` metric too. Round ``p`` runs
    every series once: ``seq`` = 4p + 2 side + benchmark.
    """
    import numpy as np

    from pairbench.model import BenchmarkKey, Command, Run, Sample, Samples, Side
    from pairbench.parsers import parse_settings

    rng = np.random.default_rng(7)
    keys = (BenchmarkKey("sort", (("n", "1000"),)), BenchmarkKey("alloc", (), "B"))
    sides = (Side("old", Command("./old", ("./old",)), "baseline"),
             Side("new", Command("./new", ("./new",)), "candidate"))
    samples = {}
    for s, slower in enumerate((1.0, 1.05)):
        for b in range(len(keys)):
            walls = 1024 * 1500 * (slower if b == 0 else 1.0) * rng.lognormal(0, 0.01, rounds)
            rows = [Sample(wall_ns=int(w), seq=4 * p + 2 * s + b, pair=p, slot=s, iterations=1024,
                           max_rss_kib=20_000, involuntary_cs=int(rng.integers(0, 2)))
                    for p, w in enumerate(walls)]
            metrics = {}
            if b == 1:
                metrics["value"] = 1024 * 4096 * rng.lognormal(0, 0.002, rounds)
                if s == 0:
                    metrics["allocs"] = np.full(rounds, 3.0 * 1024)
            samples[(b, s)] = Samples.from_rows(rows, metrics)
    settings = parse_settings("compare", ["./old", "./new"], {"seed": 5, "runs": rounds, "names": ["old", "new"]})
    return Run("compare", sides, settings, "0.2.0", "2026-11-24T00:00:00Z", benchmarks=keys, samples=samples,
               finished_at="2026-11-24T00:01:00Z", state="complete",
               stopped_because=f"completed the requested {rounds} rounds")


def self_check_run(rounds: int = 40):
    """A comparison whose A/A self-check copy of the baseline runs 10% slower (so the check fails),
    and whose candidate failed once (a failed sample, a round left out)."""
    import numpy as np
    from runs import make_run, series, side

    rng = np.random.default_rng(1)
    base = 1e6 * rng.lognormal(0, 0.01, rounds)
    walls = {"old": base, "new": base * 1.05 * rng.lognormal(0, 0.01, rounds),
             "old (copy)": base * 1.1 * rng.lognormal(0, 0.01, rounds)}
    status = {"new": [0] * (rounds - 1) + [1]}
    sides = [side("old", "baseline"), side("new", "candidate"), side("old (copy)", "self-check")]
    samples = {(0, i): series(w, start_seq=i, stride=3, status=status.get(name))
               for i, (name, w) in enumerate(walls.items())}
    return make_run("compare", sides, samples, runs=rounds)
