"""Recording results in the history store: after ``run``, ``compare`` and ``bench``, and on import.

SQLAlchemy (through ``store.history``) is imported only where a store is used:
a measuring command without one must not pay for it before its first sample.

A measuring command writes its result file first (``sessions.result``), then calls
:func:`record`: the run, the summary of each series from its analysis (for
queries), the machine it ran on and the commit the working tree was at go to
the store in one transaction. A store that fails then loses nothing: the
result file holds the run, or, when no ``--json`` was given, the document is
written to ``.pairbench/unstored/`` in the project, and the error says how to
import it later (``pairbench store import FILE``). Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.errors import StoreError
from pairbench.frozen import frozen
from pairbench.outputs import private_directory
from pairbench.store.database import StoreUrl, parse_url
from pairbench.store.project import Project

if TYPE_CHECKING:  # history and store commands need no analysis of a run; a measuring command
    # resolves its store (target_of) before its first sample, which needs none of these either
    from pairbench.analysis import Analysis
    from pairbench.environment.fingerprint import Machine
    from pairbench.model import Run
    from pairbench.store.history import Provenance, SeriesSummary, Store

PRIVATE_DIR = ".pairbench"
UNSTORED_DIR = f"{PRIVATE_DIR}/unstored"


@frozen
class StoreTarget:
    """Where results go: the store's URL, the machine's given name (None: its fingerprint) and the
    project (its root keeps the results a failed store could not take)."""

    url: StoreUrl
    machine_name: str | None
    project: Project


@frozen
class Recorded:
    """What became of a result sent to the store: its uid and whether it was new, or the error and
    where the result is kept instead (``kept_in`` None: nowhere but on screen)."""

    uid: str
    added: bool = False
    error: StoreError | None = None
    kept_in: str | None = None


def target_of(project: Project, given: str | None, *, default: bool = False,
              environ: Mapping[str, str] = os.environ) -> StoreTarget | None:
    """The store ``given`` (``--store``), the environment or the project config names, or None
    when results are not stored (see ``Project.store_url``)."""
    chosen = project.store_url(given, environ=environ, default=default)
    if chosen is None:
        return None
    text, base = chosen
    return StoreTarget(parse_url(text, base=base), project.machine_name(environ), project)


def summaries_of(run: Run, analysis: Analysis | None) -> dict[tuple[int, int], SeriesSummary]:
    """The summary of each series, by (benchmark, side) index, for the store's queries: the
    analysis's counts, and the median, its interval and the mean on the metric the record's
    ``--metric`` keeps the series on (``analysis.points``: auto decided on its samples)."""
    from pairbench.analysis.points import stored_point
    from pairbench.store.history import SeriesSummary  # SQLAlchemy: only once results are stored

    if analysis is None:
        return {}
    benchmark = {key: b for b, key in enumerate(run.benchmarks)}
    side = {s.name: i for i, s in enumerate(run.sides)}
    found = {}
    for s in analysis.summaries:
        index = (benchmark[s.benchmark], side[s.side])
        point = stored_point(run, *index)
        found[index] = SeriesSummary(s.n, s.n_failed, point.median, point.low, point.high, point.mean, point.metric)
    return found


def provenance_here(source: str = "measured", directory: str | None = None) -> Provenance:
    """The commit, branch and dirtiness of the working tree at ``directory`` (the working directory)."""
    from pairbench.measure.revisions import tree_state
    from pairbench.store.history import Provenance

    state = tree_state(directory or os.getcwd())
    if state is None:
        return Provenance(source=source)
    return Provenance(state.commit, state.commit_time, state.branch, state.dirty, source)


def machine_for(run: Run, target: StoreTarget) -> Machine:
    from pairbench.environment.fingerprint import machine_of

    return machine_of(run.environment, target.machine_name)


def open_store(target: StoreTarget, *, read_only: bool = False) -> Store:
    """The store, opened (reached, and migrated when older; ``read_only``: neither changed nor locked)
    or ``StoreError``. A SQLite store in the project's ``.pairbench`` (the default one) is written
    there only through real directories (:func:`private_store_directory`)."""
    from pairbench.store.history import Store

    if not read_only:
        private_store_directory(target)
    return Store(target.url, read_only=read_only)


def private_store_directory(target: StoreTarget) -> None:
    """The directory of a SQLite store below the project's ``.pairbench``, made through no symbolic link
    (``outputs.private_directory``: a link a repository commits could point anywhere); ``StoreError``
    when a link is there. A store elsewhere is the user's to name, links and all."""
    path = target.url.sqlite_path
    if path is None:
        return
    root = Path(os.path.abspath(target.project.root))
    try:
        relative = Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        return
    if relative.parts[:1] != (PRIVATE_DIR,):
        return
    try:
        private_directory(root, str(relative.parent))
    except OSError as exc:
        raise StoreError(f"{target.url.shown}: cannot write it ({exc.strerror or exc})") from None


def store_files(target: StoreTarget | None) -> list[tuple[str, str]]:
    """The files of a SQLite store (the database and SQLite's own beside it), as inputs no output
    of the same command may replace: (what, path)."""
    if target is None or target.url.sqlite_path is None:
        return []
    return [(f"the store {target.url.shown}", str(target.url.sqlite_path) + suffix)
            for suffix in ("", "-wal", "-shm", "-journal")]


def record(run: Run, analysis: Analysis | None, target: StoreTarget, *,
           result_path: str | None, provenance: Provenance | None = None) -> Recorded:
    """Store ``run``; on failure keep it (see the module docstring) and say where in ``Recorded``."""
    provenance = provenance or provenance_here()
    try:
        with open_store(target) as store:
            uid, added = store.add(run, summaries_of(run, analysis), machine_for(run, target), provenance)
        return Recorded(uid, added)
    except StoreError as error:
        from pairbench.store.history import result_uid

        uid = result_uid(run)
        return Recorded(uid, error=error, kept_in=result_path or keep_unstored(run, analysis, target, uid))


def keep_unstored(run: Run, analysis: Analysis | None, target: StoreTarget, uid: str) -> str | None:
    """Write the result document to ``.pairbench/unstored/`` in the project (made through no
    symbolic link: ``outputs.private_directory``); its path, or None when that cannot be written
    either."""
    from pairbench.sessions.result import save

    stamp = "".join(c for c in run.started_at if c.isdigit())[:14] or "result"
    try:
        path = private_directory(target.project.root, UNSTORED_DIR) / f"{stamp}-{uid[:12]}.json"
        if path.is_symlink():
            return None  # never written through a link (a repository can commit one)
        save(run, analysis, path)
    except OSError:
        return None
    return str(path)
