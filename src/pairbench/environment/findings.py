"""What the doctor found: one :class:`Finding` per check, and a :class:`Report` of them.

A finding is a typed note (``pairbench.notes``): the code ``doctor-CHECK`` and
the figures behind it, its status among them. ``report.findings`` words it
(what was read, why it matters for timing, the fix), as ``report.wording``
words every other note. Statuses, from good to bad:

* ``ok``: nothing to do;
* ``unknown``: the value could not be read (a container, a VM, not Linux) or
  there were too few data to judge; never a failure;
* ``warn``: the numbers will be noisier or biased, but still usable;
* ``fail``: numbers measured like this are likely to mislead.

A report's status is its worst finding's. Nothing here words or prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field

from pairbench.frozen import frozen
from pairbench.notes import Note

STATUSES = ("ok", "unknown", "warn", "fail")  # good to bad
_RANK = {status: rank for rank, status in enumerate(STATUSES)}
PREFIX = "doctor-"


@frozen
class Finding:
    """The outcome of one check: a note of code ``doctor-CHECK`` whose data holds its ``status`` and
    the figures it was judged from (JSON-ready)."""

    note: Note

    def __post_init__(self):
        if self.status not in _RANK:
            raise ValueError(f"`status` must be one of {STATUSES}, got {self.status!r}")

    @property
    def check(self) -> str:
        """The check's stable identifier ("load", "setup-overhead")."""
        return self.note.code.removeprefix(PREFIX)

    @property
    def status(self) -> str:
        return self.note.data.get("status")

    @property
    def data(self) -> dict:
        """The figures behind the finding, without its status."""
        return {key: value for key, value in self.note.data.items() if key != "status"}


def found(check: str, status: str, **data) -> Finding:
    """The finding of ``check``: ``status`` and the figures it was judged from."""
    return Finding(Note(PREFIX + check, {"status": status, **data}))


def worst(statuses: Iterable[str]) -> str:
    """The worst of ``statuses`` (``ok`` for none)."""
    return max(statuses, key=_RANK.__getitem__, default="ok")


def at_least(status: str, threshold: str) -> bool:
    """Whether ``status`` is as bad as ``threshold`` or worse."""
    return _RANK[status] >= _RANK[threshold]


@frozen
class Report:
    """The doctor's answer: findings, their overall status, and details for ``--json``.

    ``kind`` is ``environment`` (``pairbench doctor``) or ``benchmark``
    (``pairbench doctor COMMAND``); ``details`` holds what was measured
    (samples, fits) as JSON-ready data.
    """

    kind: str
    findings: tuple[Finding, ...]
    details: Mapping = field(default_factory=dict)

    @property
    def status(self) -> str:
        return worst(f.status for f in self.findings)

    def counts(self) -> dict[str, int]:
        """How many findings have each status, in STATUSES order."""
        return {s: sum(1 for f in self.findings if f.status == s) for s in STATUSES}
