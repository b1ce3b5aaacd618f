"""Histories for tests: results of ``run`` with given medians, stored with given commits."""

from __future__ import annotations

import hashlib

import numpy as np
from runs import make_run, series, side

from pairbench.environment.fingerprint import machine_of
from pairbench.store.history import Provenance

MACHINE_ENV = {"machine": "x86_64", "cpu_model": "Test CPU", "logical_cpus": 2, "os": "Debian GNU/Linux 12"}
OTHER_ENV = {**MACHINE_ENV, "cpu_model": "Other CPU"}


def result(medians: dict[str, float], k: int, *, environment=None, n: int = 9, seed: int = 0):
    """A ``run`` of one command per name, each with ``n`` samples about its median (ns); ``k`` makes
    its start time (and so its identity) distinct."""
    rng = np.random.default_rng([seed, k])
    names = list(medians)
    samples = {(0, s): series(np.round(medians[name] * rng.uniform(0.995, 1.005, n)), start_seq=s,
                              stride=len(names))
               for s, name in enumerate(names)}
    run = make_run("run", [side(name) for name in names], samples, runs=n,
                   environment=environment or MACHINE_ENV)
    stamp = f"2026-01-{1 + k // 86400 % 28:02d}T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}+00:00"
    return run.replace(started_at=stamp, finished_at=stamp)


def commit_hash(k: int) -> str:
    """The made-up hash of commit number ``k`` (distinct in its first characters, as real ones are)."""
    return hashlib.sha1(f"commit {k}".encode()).hexdigest()


def commit(k: int) -> Provenance:
    """Commit number ``k`` of a made-up history: its hash and time (one a minute)."""
    return Provenance(commit_hash(k), f"2026-02-01T{k // 60 % 24:02d}:{k % 60:02d}:00+00:00", "main", False)


def store_history(store, medians_by_commit, *, environment=None, seed: int = 0) -> None:
    """Store one result per commit, commit ``k`` with the medians ``medians_by_commit[k]``."""
    from pairbench.analysis import analyse  # here: the concurrent writers' processes need no scipy
    from pairbench.sessions.record import summaries_of

    for k, medians in enumerate(medians_by_commit):
        run = result(medians, k, environment=environment, seed=seed)
        store.add(run, summaries_of(run, analyse(run)), machine_of(run.environment), commit(k))
