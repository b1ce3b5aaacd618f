"""Runs built by hand for tests of the analysis, the store and the renderers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pairbench.model import BenchmarkKey, Command, Run, Sample, Samples, Side
from pairbench.parsers import parse_settings
from pairbench.store import shards


def series(walls: Sequence[float], *, status: Sequence[int] | None = None, pairs: Sequence[int] | None = None,
           iterations: int = 1, start_seq: int = 0, stride: int = 1, metrics: Mapping | None = None,
           **columns) -> Samples:
    """Samples with these wall times (ns), one per round unless ``pairs`` says otherwise."""
    status = status or [0] * len(walls)
    pairs = pairs if pairs is not None else list(range(len(walls)))
    rows = [Sample(wall_ns=int(w), status=s, pair=p, seq=start_seq + stride * i, iterations=iterations,
                   **{k: int(v[i]) for k, v in columns.items()})
            for i, (w, s, p) in enumerate(zip(walls, status, pairs, strict=True))]
    return Samples.from_rows(rows, metrics)


def side(name: str, label: str = "") -> Side:
    return Side(name, Command(name, (name,)), label)


def make_run(kind: str, sides: Sequence[Side], samples: Mapping[tuple[int, int], Samples], *,
             benchmarks: Sequence[BenchmarkKey] = (BenchmarkKey("command"),), environment=None,
             **options) -> Run:
    """A complete run of ``kind`` with these sides and samples; ``options`` as the CLI takes them
    (``runs=40`` turns adaptive stopping off, ``alpha``, ``threshold``...)."""
    measured = [s for s in sides if s.label != "self-check"]
    options = {"seed": 1, "self_check": len(measured) < len(sides), **options,
               "names": [s.name for s in measured]}
    settings = parse_settings(kind, [s.command.text for s in measured], options)
    return Run(kind, tuple(sides), settings, "0.2.0", "2026-11-24T00:00:00+00:00",
               benchmarks=tuple(benchmarks), samples=dict(samples), state="complete",
               finished_at="2026-11-24T00:01:00+00:00", environment=environment or {})


def compare_run(walls: Mapping[str, Sequence[float]], **options) -> Run:
    """A comparison of the first name (the baseline) with the others, their walls paired by round;
    a name ending in " (copy)" is the self-check copy."""
    names = list(walls)
    sides = [side(n, "baseline" if i == 0 else "self-check" if n.endswith(" (copy)") else "candidate")
             for i, n in enumerate(names)]
    samples = {(0, i): series(w, start_seq=i, stride=len(names)) for i, w in enumerate(walls.values())}
    return make_run("compare", sides, samples, **options)


BASE_NS = 1_000_000.0
GO_ROUNDS = 40
GO_ITERATIONS = 100


def go_suite(per_op: dict[str, dict[str, tuple]], *, time_ratio: float | np.ndarray = 0.0,
             legacy: bool = False, **options):
    """A Go suite: benchmark NAME reports, per unit, (baseline's, candidate's) per-operation values
    (a number, or an array over the rounds), stored as totals over GO_ITERATIONS like the Go adapter's
    (a unit not per operation, such as MB/s, as it is)."""
    samples = {}
    for b, units in enumerate(per_op.values()):
        sides = [{}, {}]
        for unit, pair in units.items():
            column = unit.removesuffix("/op") if legacy else unit
            for s, value in enumerate(pair):
                scale = GO_ITERATIONS if unit.endswith("/op") else 1  # a rate is kept as reported
                sides[s][column] = np.broadcast_to(np.asarray(value, dtype=float), GO_ROUNDS) * scale
        times = BASE_NS * np.exp(np.linspace(-0.01, 0.01, GO_ROUNDS))
        samples[(b, 0)] = series(times, iterations=GO_ITERATIONS, start_seq=0, stride=2, metrics=sides[0])
        samples[(b, 1)] = series(times * np.exp(time_ratio), iterations=GO_ITERATIONS, start_seq=1, stride=2,
                                 metrics=sides[1])
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(n) for n in per_op], **options)
    return run.replace(suite=shards.suite_record(list(per_op), None, "go"))
