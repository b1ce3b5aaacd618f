"""``record``: a commit measured against its predecessor (and every few records its window's anchor)
in interleaved, randomized rounds, and kept in the store as *links* of a paired history.

:class:`RecordSession` resolves the commit, finds its predecessor (``--against``, else the last
commit recorded on its branch on this machine) and the window's anchor (``analysis.links.
plan_record``), and builds them with the project's ``[confirm]`` recipe in the build cache
(``sessions.builds.BuildCache``, as ``bisect`` does: the predecessor's build from the last record is
reused). The CLI measures each pair as ``confirm`` does (``pairbench bench`` on the builds' bench
target, ``compare`` on a command) and hands the outcome to :func:`links_of`, which turns each
comparison into a link at the level the record was made for (``analysis.links.link_level``). The
predecessor comparison and the anchor comparison are two sessions, each paired and interleaved in
its own rounds (``bench`` runs two programs at a time); a first record measures one side. Nothing
here prints.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from pairbench.analysis.links import Plan, plan_record
from pairbench.errors import UsageError
from pairbench.measure.revisions import commit_time, commits_between, resolve, toplevel, tree_state
from pairbench.model import BenchmarkKey, utc_now
from pairbench.sessions.builds import SHORT, BuildCache, Revision, recipe_of, target_in
from pairbench.store.project import Project

RECORD_SOURCE = "record"


@dataclass(frozen=True)
class Pair:
    """Two revisions measured together, and the kinds of link their comparison gives."""

    before: Revision
    after: Revision
    kinds: tuple[str, ...]  # "predecessor", "anchor", or both when the anchor is the predecessor


class RecordSession:
    """One ``pairbench record [REV]`` in ``project`` (see the module docstring)."""

    def __init__(self, project: Project, revision: str = "HEAD", *, branch: str | None = None,
                 cache_dir: str | None = None):
        self.project = project
        self.recipe = recipe_of(project, "record")
        repository = toplevel(str(project.root))
        if repository is None:
            raise UsageError(f"record builds commits out of git, but {project.root} is in no git repository")
        self.repository = repository
        self.commit = Revision(revision, resolve(revision, repository, option="record"))
        state = tree_state(str(project.root))
        self.branch = branch or (state.branch if state else None)
        self.subdirectory = os.path.relpath(project.root, repository)
        self.cache = BuildCache(self.recipe, repository, self.subdirectory, project.build_timeout_ns(),
                                directory=cache_dir)

    def plan(self, store, machine, *, against: str | None = None, anchor: str | None = None,
             every: int, window: int) -> Plan:
        """What this record measures, from what ``store`` holds of this branch on ``machine``."""
        given = {name: resolve(rev, self.repository, option=f"--{name}") if rev else None
                 for name, rev in (("against", against), ("anchor", anchor))}
        chain, anchors = [], []
        machine_id = store.machine_id(machine) if store.version else None
        if machine_id is not None:
            links = store.links(machine_id, [b.id for b in store.link_benchmarks(machine_id)], self.branch)
            chain = _chain(links, store.last_recorded(machine_id, self.branch))
            anchors = list(dict.fromkeys(link.before for link in links if link.kind == "anchor"))
        chain = [c for c in chain if c != self.commit.commit]
        if given["against"] == self.commit.commit or (given["against"] is None and not chain and against):
            raise UsageError(f"record: --against names the commit recorded ({self.commit.commit[:SHORT]})")
        return plan_record(chain, anchors, against=given["against"], anchor=given["anchor"], every=every,
                           window=window)

    def pairs(self, plan: Plan) -> list[Pair]:
        """The comparisons ``plan`` asks for (none for a first record)."""
        if plan.predecessor is None:
            return []
        after = self.commit
        if plan.anchor == plan.predecessor and plan.measure_anchor:
            return [Pair(Revision(plan.predecessor, plan.predecessor), after, ("predecessor", "anchor"))]
        pairs = [Pair(Revision(plan.predecessor, plan.predecessor), after, ("predecessor",))]
        if plan.measure_anchor and plan.anchor is not None:
            pairs.append(Pair(Revision(plan.anchor, plan.anchor), after, ("anchor",)))
        return pairs

    @contextlib.contextmanager
    def built(self, *revisions: Revision):
        """``revisions`` built (from the cache, or now), each with its tree; the cache released after."""
        try:
            yield tuple(self.cache.built(r) for r in revisions)
        finally:
            self.cache.close()

    def target(self, built: Revision) -> str:
        return target_in(self.recipe, built)

    def provenance(self):
        """Where a record is kept in the history: the recorded commit, its committer time, the branch."""
        from pairbench.store.history import Provenance

        commit = self.commit.commit
        return Provenance(commit, commit_time(commit, self.repository), self.branch, False, RECORD_SOURCE)

    def commits(self, before: str) -> int | None:
        return commits_between(before, self.commit.commit, self.repository)


def _chain(links, last: str | None) -> list[str]:
    """The recorded commits of a branch, oldest first: the predecessor links' commits in order, and
    the last recorded commit (a first record has no link)."""
    chain: list[str] = []
    for link in links:
        if link.kind != "predecessor":
            continue
        for commit in (link.before, link.after):
            if commit in chain:
                chain.remove(commit)
            chain.append(commit)
    if last is not None and last not in chain:
        chain.append(last)
    return chain


def links_of(outcome, pair: Pair, *, level: float, uid: str, commits: int | None, branch: str | None,
             after_time: str | None, name: str | None = None) -> list[tuple[BenchmarkKey, object]]:
    """The links each comparison of ``outcome`` (``pair.before`` against ``pair.after``) gives, one
    per kind of ``pair``: the effect with its interval, the comparison's own anytime-valid p-value,
    the metric and rounds; ``level`` the error rate each is tested at (``analysis.links``); ``name``:
    what the history calls a whole command's benchmark."""
    from pairbench.store.history import Link

    analysis = outcome.analysis
    if analysis is None:
        return []
    found, when = [], utc_now()
    for c in analysis.real_comparisons:
        effect = c.effect
        pvalue = c.pvalue_unadjusted if c.pvalue_unadjusted is not None else effect.pvalue if effect else 1.0
        key = c.benchmark if name is None or c.benchmark.name != "command" else \
            BenchmarkKey(name, c.benchmark.params, c.benchmark.unit)
        for kind in pair.kinds:
            found.append((key, Link(
                0, uid, kind, pair.before.commit, pair.after.commit, after_time, branch, commits,
                c.metric, c.rounds, level, effect.estimate if effect else None, effect.low if effect else None,
                effect.high if effect else None, min(1.0, max(0.0, pvalue)), when)))
    return found
