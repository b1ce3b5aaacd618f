"""``record``: a commit measured against its predecessor (and every few records its window's anchor)
in interleaved, randomized rounds, and kept in the store as *links* of a paired history.

:class:`RecordSession` resolves the commit, finds its predecessor (``--against``, else the last
commit recorded on its branch on this machine) and the window's anchor (``analysis.links.
plan_record``), and builds them with the project's ``[confirm]`` recipe in the build cache
(``sessions.builds.BuildCache``, as ``bisect`` does: the predecessor's build from the last record is
reused). The CLI measures the sides (:class:`Sides`) in one session, as ``confirm`` does
(``pairbench bench`` on the builds' bench target, ``compare`` on a command): the predecessor, the
commit and, when the record measures it, the anchor as a third side *in the same rounds*, so the
cumulative change since the anchor gets its own interval from rounds the machine hit alike.
:func:`links_of` turns each comparison with the commit into a link at the level the record was made
for (``analysis.links.link_level``); a first record measures one side. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os

from pairbench.analysis.links import Plan, plan_record
from pairbench.errors import UsageError
from pairbench.frozen import frozen
from pairbench.measure.revisions import commit_time, commits_between, resolve, toplevel, tree_state
from pairbench.model import BenchmarkKey, utc_now
from pairbench.sessions.builds import SHORT, BuildCache, Revision, recipe_of, target_in
from pairbench.store.project import Project

RECORD_SOURCE = "record"


@frozen
class Sides:
    """What one record measures in the same interleaved rounds: the predecessor (the baseline), the
    commit recorded (the candidate) and, when the record measures it and it is another commit, the
    window's anchor (a third side, compared with the commit too); and the kinds of link each
    comparison gives (the predecessor's comparison is also the anchor's when the anchor is it)."""

    revisions: tuple[Revision, ...]  # predecessor, commit[, anchor]
    kinds: dict[int, tuple[str, ...]]  # the before side's index -> the kinds of link its comparison gives

    @property
    def anchored(self) -> bool:
        return len(self.revisions) == 3


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
        self.chain_metric: str | None = None  # what the branch's latest links compared (``plan``)
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
            self.chain_metric = _latest_metric(links)
        chain = [c for c in chain if c != self.commit.commit]
        if given["against"] == self.commit.commit or (given["against"] is None and not chain and against):
            raise UsageError(f"record: --against names the commit recorded ({self.commit.commit[:SHORT]})")
        return plan_record(chain, anchors, against=given["against"], anchor=given["anchor"], every=every,
                           window=window)

    def sides(self, plan: Plan) -> Sides | None:
        """What ``plan`` asks to measure (None for a first record: the commit alone)."""
        if plan.predecessor is None:
            return None
        predecessor = Revision(plan.predecessor, plan.predecessor)
        if plan.measure_anchor and plan.anchor == plan.predecessor:
            return Sides((predecessor, self.commit), {0: ("predecessor", "anchor")})
        if plan.measure_anchor and plan.anchor is not None:
            return Sides((predecessor, self.commit, Revision(plan.anchor, plan.anchor)),
                         {0: ("predecessor",), 2: ("anchor",)})
        return Sides((predecessor, self.commit), {0: ("predecessor",)})

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


def _latest_metric(links) -> str | None:
    """The metric most of the latest record's predecessor links used (None: no link yet): a branch's
    record keeps its history's metric when none is asked for, so its links form one chain, never
    split between wall and CPU time by ``--metric auto`` choosing again at each record."""
    predecessors = [link for link in links if link.kind == "predecessor"]
    if not predecessors:
        return None
    latest = [link.metric for link in predecessors if link.result_uid == predecessors[-1].result_uid]
    return max(sorted(set(latest)), key=latest.count)


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


def links_of(run, sides: Sides, *, rate: float, uid: str, commits: dict[str, int | None],
             branch: str | None, after_time: str | None, name: str | None = None,
             ) -> list[tuple[BenchmarkKey, object]]:
    """The links a record's ``run`` gives: each comparison of the commit with the predecessor or
    the anchor (``analysis.links.measured_links``: at the run's Bonferroni level, ``rate`` over
    its benchmarks), one link per kind its before side gives (``sides.kinds``), with the effect,
    its interval, the unadjusted anytime-valid p-value, the metric, the rounds, the threshold and
    rate it is judged by; ``commits``: the commits after each before side up to the commit;
    ``name``: what the history calls a whole command's benchmark."""
    from pairbench.analysis.links import measured_links
    from pairbench.store.history import Link

    found, when = [], utc_now()
    for m in measured_links(run):
        if m.after != 1 or m.before not in sides.kinds:
            continue
        c, before = m.comparison, sides.revisions[m.before].commit
        effect = c.effect
        pvalue = c.pvalue_unadjusted if c.pvalue_unadjusted is not None else 1.0
        key = m.benchmark if name is None or m.benchmark.name != "command" else \
            BenchmarkKey(name, m.benchmark.params, m.benchmark.unit)
        for kind in sides.kinds[m.before]:
            found.append((key, Link(
                0, uid, kind, before, sides.revisions[1].commit, after_time, branch, commits.get(before),
                c.metric, c.rounds, m.level, effect.estimate if effect else None, effect.low if effect else None,
                effect.high if effect else None, min(1.0, max(0.0, pvalue)), when, m.threshold, rate)))
    return found
