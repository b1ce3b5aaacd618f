"""A machine's history read out of the store: the benchmarks' points over commits, their steps.

``pairbench history`` shows it; ``confirm`` reads it to find the benchmarks with a step between
its two commits. Reading only: the store is opened by the caller (``sessions.record.open_store``),
the statistics are ``analysis.history``'s. Nothing here prints; names from the store are shown
through the CLI's escaping, with the errors that quote them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping

from pairbench.errors import StoreError


def this_machine(environment: Callable[..., Mapping], target):
    """The machine pairbench runs on (``environment`` reads its metadata), as the store ``target``
    knows machines (its fingerprint, or the name the project gives it); read without the 0.1 s
    window of what runs right now, which a fingerprint does not use."""
    from pairbench.environment.fingerprint import machine_of

    return machine_of(environment(activity_window_s=0.0), target.machine_name)


def load_history(store, machine, patterns: tuple[str, ...], last: int | None, branch: str | None = None):
    """The history of the benchmarks ``patterns`` name (all without any) on ``machine`` (of one
    ``branch`` when given): the paired history (``analysis.links``) of those recorded in links, the
    unpaired one of the others."""
    from pairbench.analysis.history import (
        History,
        benchmark_history,
        group_change_points,
        points_of,
    )
    from pairbench.analysis.links import link_histories
    from pairbench.settings import DEFAULTS

    linked = {b.id for b in store.link_benchmarks(machine.id)}
    known = store.benchmarks(machine.id)
    known += [b for b in store.link_benchmarks(machine.id) if b not in known]
    chosen = _chosen(sorted(known, key=lambda b: b.key), patterns, store, machine)
    by_benchmark: dict[int, list] = {}
    for link in store.links(machine.id, [b.id for b in chosen if b.id in linked], branch):
        by_benchmark.setdefault(link.benchmark_id, []).append(link)
    paired = tuple(h for b in chosen if b.id in linked
                   for h in link_histories(b.key, by_benchmark.get(b.id, ())[-last:] if last else
                                           by_benchmark.get(b.id, ()), DEFAULTS["threshold"]))
    chosen = [b for b in chosen if b.id not in linked]
    by_id = {}
    for confirmation in store.confirmations(machine.id, [b.id for b in chosen]):
        by_id.setdefault(confirmation.benchmark_id, []).append(confirmation)
    histories = []
    for benchmark in chosen:
        points = points_of(store.series(machine.id, benchmark, branch))
        points = points[-last:] if last else points
        if points:
            histories.append(benchmark_history(benchmark.key, points, by_id.get(benchmark.id, ())))
    label = f"{machine.label} ({machine.fingerprint})"
    return History(label, tuple(histories), group_change_points(histories), paired)


def _chosen(known, patterns: tuple[str, ...], store, machine):
    if not patterns:
        if not known:
            raise StoreError(f"{store.url.shown} has no results of machine {machine.label} yet")
        return known
    from pairbench.store.history import storable

    chosen = []
    for given in patterns:
        pattern = storable(given)  # a name that was not UTF-8 is stored with its bytes escaped
        matched = [b for b in known if b.key.label == pattern or b.key.name == pattern
                   or fnmatch.fnmatchcase(b.key.label, pattern)]
        if not matched:
            names = ", ".join(b.key.label for b in known[:10]) + (" ..." if len(known) > 10 else "")
            raise StoreError(f"no results of benchmark {pattern!r} on machine {machine.label} "
                             f"in {store.url.shown}; it has: {names or 'none'} (other machines: "
                             "pairbench history --machine)")
        chosen += [b for b in matched if b not in chosen]
    return chosen
