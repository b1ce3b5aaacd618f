"""What the doctor found: one :class:`Finding` per check, and a :class:`Report` of them.

A finding has a status, what was read, why it matters for timing, and the
exact command (or step) that fixes it. Statuses, from good to bad:

* ``ok``: nothing to do;
* ``unknown``: the value could not be read (a container, a VM, not Linux) or
  there were too few data to judge; never a failure;
* ``warn``: the numbers will be noisier or biased, but still usable;
* ``fail``: numbers measured like this are likely to mislead.

A report's status is its worst finding's. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

STATUSES = ("ok", "unknown", "warn", "fail")  # good to bad
_RANK = {status: rank for rank, status in enumerate(STATUSES)}


@dataclass(frozen=True)
class Finding:
    """The outcome of one check: status, reading, why it matters, fix, and the figures behind it.

    ``check`` is a stable identifier ("load", "setup-overhead"); ``title`` the
    human name; ``reading`` says what was read or measured and where;
    ``why`` why it matters for timing; ``fix`` the exact command or step that
    fixes it ("" when there is nothing to do); ``data`` the JSON-ready figures.
    """

    check: str
    title: str
    status: str
    reading: str
    why: str = ""
    fix: str = ""
    data: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in _RANK:
            raise ValueError(f"`status` must be one of {STATUSES}, got {self.status!r}")

    @property
    def verdict(self) -> str:
        """The one-line verdict: ``WARN  load average: 2.9 on 2 CPUs ...``."""
        return f"{self.status.upper():<7} {self.title}: {self.reading}"

    def to_dict(self) -> dict:
        return {
            "check": self.check,
            "title": self.title,
            "status": self.status,
            "reading": self.reading,
            "why": self.why,
            "fix": self.fix,
            "data": dict(self.data),
        }


def worst(statuses: Iterable[str]) -> str:
    """The worst of ``statuses`` (``ok`` for none)."""
    return max(statuses, key=_RANK.__getitem__, default="ok")


def at_least(status: str, threshold: str) -> bool:
    """Whether ``status`` is as bad as ``threshold`` or worse."""
    return _RANK[status] >= _RANK[threshold]


@dataclass(frozen=True)
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

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "status": self.status,
            "counts": self.counts(),
            "findings": [f.to_dict() for f in self.findings],
            **dict(self.details),
        }
