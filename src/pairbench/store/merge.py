"""Joining the shards of one suite (``bench --shard K/N``) into one suite result.

Each shard is a result document of ``pairbench bench --shard K/N``, measured
on its own machine. :func:`merge` checks, before joining anything, that they
belong together, and refuses with one message naming the file and what differs:

* every file is a shard (``suite.shard`` set) of the same N, each K once, none missing;
* of the same suite: the same number of benchmarks and the same digest of their names;
* with the same settings (all but ``--shard``, ``--balance`` and the outputs),
  the same sides, and the same pairbench version;
* no benchmark in two shards.

The merged run holds every shard's benchmarks (in shard order) and samples
(``seq`` offset so they stay distinct), every shard's notes, the first shard's
environment with each shard's machine listed in ``suite.shards``, and a
``suite`` that says which shards it joins. Its analysis then applies Holm's
procedure across the whole suite, as a single run's would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pairbench.errors import UsageError
from pairbench.frozen import frozen
from pairbench.model import Run, Samples

UNCHECKED_SETTINGS = ("shard", "balance")  # bench options that may differ between shards


@frozen
class Shard:
    """One shard's run and the file it came from."""

    path: str
    run: Run

    @property
    def index(self) -> int:
        return self.run.suite.shard[0]

    @property
    def count(self) -> int:
        return self.run.suite.shard[1]


def merge(shards: Sequence[Shard]) -> Run:
    """The suite result joining ``shards`` (``UsageError`` naming the file when they do not belong
    together; a file that cannot be read is the caller's ``ResultFileError``)."""
    if not shards:
        raise UsageError("merge needs the shard files to join")
    for shard in shards:
        _check_is_shard(shard)
    first = shards[0]
    for shard in shards[1:]:
        _check_same_suite(first, shard)
    ordered = sorted(shards, key=lambda s: s.index)
    _check_complete(ordered)
    return _joined(ordered)


def _check_is_shard(shard: Shard) -> None:
    run = shard.run
    if run.kind != "bench" or not run.suite or not run.suite.shard:
        raise UsageError(f"{shard.path}: not a shard of a suite (it was not measured with pairbench bench "
                         "--shard K/N); merge joins shard files")
    if run.state == "running":
        raise UsageError(f"{shard.path}: the shard is still running (or its run crashed); merge its result "
                         "once it has finished")


def _check_same_suite(first: Shard, other: Shard) -> None:
    a, b = first.run, other.run
    where = f"{other.path} and {first.path}"
    if a.tool_version != b.tool_version:
        raise UsageError(f"{where} were written by different pairbench versions ({b.tool_version} and "
                         f"{a.tool_version}); measure every shard with the same version")
    if other.count != first.count:
        raise UsageError(f"{where} split the suite into different numbers of shards ({other.count} and "
                         f"{first.count}); give every shard the same --shard K/N")
    if (a.suite.benchmarks, a.suite.digest) != (b.suite.benchmarks, b.suite.digest):
        raise UsageError(f"{where} are shards of different suites ({b.suite.benchmarks} and "
                         f"{a.suite.benchmarks} benchmarks, names digest {b.suite.digest[:12]} and "
                         f"{a.suite.digest[:12]}): the programs or the -k filter differ")
    if [(s.name, s.label) for s in a.sides] != [(s.name, s.label) for s in b.sides]:
        raise UsageError(f"{where} compare different sides ({', '.join(s.name for s in b.sides)} and "
                         f"{', '.join(s.name for s in a.sides)}); name them alike with --name")
    differing = _differing_settings(a, b)
    if differing:
        raise UsageError(f"{where} were measured with different settings ({'; '.join(differing)}); "
                         "give every shard the same options")


def _differing_settings(a: Run, b: Run) -> list[str]:
    first, other = _comparable(a), _comparable(b)
    return [f"{group}.{key}: {other[group].get(key)!r} and {first[group].get(key)!r}"
            for group in sorted(first.keys() | other.keys())
            for key in sorted(first.get(group, {}).keys() | other.get(group, {}).keys())
            if first.get(group, {}).get(key) != other.get(group, {}).get(key)]


def _comparable(run: Run) -> dict:
    stored = run.settings.stored()
    workers = {k: v for k, v in stored.get("workers", {}).items() if k not in UNCHECKED_SETTINGS}
    sampling = {k: v for k, v in stored["sampling"].items() if k != "seed"}
    return {**stored, "workers": workers, "sampling": sampling}


def _check_complete(ordered: Sequence[Shard]) -> None:
    indices = [s.index for s in ordered]
    for previous, shard in zip(ordered, ordered[1:], strict=False):
        if shard.index == previous.index:
            raise UsageError(f"{shard.path} and {previous.path} are both shard {shard.index} of {shard.count}; "
                             "give each shard once")
    missing = ordered[0].count - len(indices)  # the shards are distinct and within 1..N (store.checks.suite)
    if missing:
        raise UsageError(f"shard{'s' if missing > 1 else ''} {_spans(indices, ordered[0].count)} of "
                         f"{ordered[0].count} {'are' if missing > 1 else 'is'} missing; merge needs every "
                         "shard of the suite")
    seen: dict = {}
    for shard in ordered:
        for key in shard.run.benchmarks:
            if key in seen:
                raise UsageError(f"{shard.path} and {seen[key]} both measured {key.label!r}: they are not "
                                 "shards of one split (was --balance given to some and not others?)")
            seen[key] = shard.path


def _spans(present: Sequence[int], count: int, shown: int = 10) -> str:
    """The numbers 1..``count`` not in ``present`` (sorted), as spans ("2-5, 9"), the first ``shown``
    of them: O(len(present)), whatever ``count`` is."""
    spans, previous = [], 0
    for index in [*present, count + 1]:
        if index > previous + 1:
            first, last = previous + 1, index - 1
            spans.append(str(first) if first == last else f"{first}-{last}")
        previous = index
    return ", ".join(spans[:shown]) + (f" and {len(spans) - shown} more spans" if len(spans) > shown else "")


def _joined(ordered: Sequence[Shard]) -> Run:
    """One run of every shard's benchmarks, samples and notes, listing each shard's machine."""
    machines = [{"shard": shard.index, "file": shard.path, "host": shard.run.environment.get("host"),
                 "cpu_model": shard.run.environment.get("cpu_model"), "started_at": shard.run.started_at,
                 "finished_at": shard.run.finished_at, "state": shard.run.state} for shard in ordered]
    first = ordered[0].run
    suite = dataclasses.replace(first.suite, shard=None, merged=tuple(s.index for s in ordered),
                                shards=tuple(machines))
    return join_runs([s.run for s in ordered]).replace(stopped_because=f"merged {len(ordered)} shards",
                                                       suite=suite, settings=_without_shard(first))


def join_runs(runs: Sequence[Run]) -> Run:
    """One run of ``runs``' benchmarks, in the order given, on the first run's sides (each series keeps
    its side): the shards of a suite (:func:`merge`), or the pytest plugin's tests, each measured
    alone. Samples keep their columns, their ``seq`` continuing from run to run so they stay
    distinct; the notes are every run's, each once; the first run's settings and environment, from
    the earliest start to the latest end, ended as the worst of them (interrupted, failed, complete)."""
    benchmarks, samples, notes, offset = [], {}, [], 0
    for run in runs:
        base = len(benchmarks)
        benchmarks.extend(run.benchmarks)
        for (b, s), series in run.samples.items():
            samples[(base + b, s)] = _offset(series, offset)
        offset += 1 + max((int(series["seq"].max()) for series in run.samples.values() if len(series)), default=-1)
        notes.extend(note for note in run.notes if note not in notes)
    states = {run.state for run in runs}
    return runs[0].replace(benchmarks=tuple(benchmarks), samples=samples, notes=tuple(notes),
                           state=next((s for s in ("interrupted", "failed") if s in states), "complete"),
                           started_at=min(run.started_at for run in runs),
                           finished_at=max(run.finished_at for run in runs))


def _offset(series: Samples, offset: int) -> Samples:
    columns = dict(series.columns)
    columns["seq"] = series["seq"] + offset
    return Samples(columns, dict(series.metrics))


def _without_shard(run: Run):
    workers = dataclasses.replace(run.settings.workers, shard=None, balance=None)
    return dataclasses.replace(run.settings, workers=workers)
