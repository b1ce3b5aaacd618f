"""Runs built by hand for tests of the analysis, the store and the renderers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairbench.model import BenchmarkKey, Command, Run, Sample, Samples, Side
from pairbench.settings import parse_settings


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
