"""The environment of every program pairbench starts, and what pairbench keeps to itself.

pairbench runs programs on the user's behalf: commands and their ``--prepare``,
``--conclude``, ``--setup`` and ``--cleanup``, workers, harness invocations and
listings, ``confirm``'s builds, and git. None of them gets pairbench's own
credentials: the history store's URL (``PAIRBENCH_STORE``) and libpq's
variables (every ``PG*`` one: ``PGPASSWORD``, ``PGPASSFILE``, ``PGSERVICE``,
``PGHOST``...) are removed from their environment. A program that needs one of
libpq's variables (a benchmark of database code) gets it when the user names it
with ``--pass-env NAME``; ``PAIRBENCH_STORE`` never.

Code of another commit (the revision of ``bench --against`` and of the pytest
plugin's ``--pairbench-against``, both revisions of ``confirm``: built and
measured) gets less: only what a build or a benchmark needs to run at all
(:data:`BASE`: ``PATH``, ``HOME``, the locale...) and the variables the user
passes with ``--pass-env``. Both sides of such a comparison get that same
environment, so it is no difference between them.

The policy is chosen once per command (:func:`policy`, by the CLI and the pytest
plugin) and read by every place that starts a program (:func:`for_children`);
outside any policy, programs get the inherited environment without the
credentials. A program pairbench starts runs as the same user, and could read
pairbench's own environment in ``/proc/PID/environ``: :func:`keep_to_ourselves`
makes pairbench non-dumpable (``PR_SET_DUMPABLE`` 0, Linux) while it holds a
credential, which puts that file, and ptrace, out of reach of the user's
processes (not of root's). Files stay the user's: a program can read
``~/.pgpass`` as the user can.

Standard library only: the spawners import this.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping

from pairbench.frozen import frozen
from pairbench.measure.prctl import PR_SET_DUMPABLE, prctl

STORE_VARIABLE = "PAIRBENCH_STORE"
BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR")
"""What a program of another commit gets without ``--pass-env``: enough to find programs, a home for
the caches of compilers and package managers, the locale (and every ``LC_*``), the time zone, the
terminal's type and the temporary directory."""
_LIBPQ = re.compile(r"PG[A-Z0-9_]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_credential(name: str) -> bool:
    """Whether variable ``name`` is pairbench's own credential: the store's URL, or libpq's."""
    return name == STORE_VARIABLE or _LIBPQ.fullmatch(name) is not None


@frozen
class Policy:
    """What the programs of one command get: ``isolated`` (only ``BASE`` and the passed variables: code
    of another commit), and the variables ``passed`` through by name (``--pass-env``)."""

    isolated: bool = False
    passed: tuple[str, ...] = ()


_current = Policy()


def passed_names(values: Iterable[str] | None, option: str = "--pass-env") -> tuple[str, ...]:
    """``--pass-env`` values checked: variable names (letters, digits, ``_``), not the store's URL;
    ``ValueError`` naming the option and the value otherwise. A name may be given more than once."""
    names = []
    for value in values or ():
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            raise ValueError(f"{option} takes the name of an environment variable (letters, digits and _), "
                             f"got {value!r}")
        if value == STORE_VARIABLE:
            raise ValueError(f"{option} {STORE_VARIABLE}: the history store's URL never reaches a program "
                             "pairbench runs")
        names.append(value)
    return tuple(dict.fromkeys(names))


@contextlib.contextmanager
def policy(chosen: Policy) -> Iterator[Policy]:
    """Programs started inside the block get the environment ``chosen`` says (see the module
    docstring); the earlier policy is back afterwards."""
    global _current
    before, _current = _current, chosen
    try:
        yield chosen
    finally:
        _current = before


def current() -> Policy:
    return _current


def for_children(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a program started now gets: ``base`` (``os.environ``) as the current policy
    says, without pairbench's credentials unless passed by name."""
    return _filtered(dict(os.environ if base is None else base), _current)


def inherited() -> dict[str, str]:
    """``os.environ`` without pairbench's credentials, whatever the policy: for pairbench's own tool,
    git, which needs the user's ``GIT_*`` settings and runs no code of a checkout."""
    return _filtered(dict(os.environ), Policy())


def for_children_bytes() -> dict[bytes, bytes]:
    """:func:`for_children` of ``os.environb``, exactly as the operating system gave the bytes."""
    if not os.supports_bytes_environ:
        return {k.encode(): v.encode() for k, v in for_children().items()}
    decoded = {os.fsdecode(k): (k, v) for k, v in os.environb.items()}
    kept = _filtered({name: "" for name in decoded}, _current)
    return dict(decoded[name] for name in kept)


def _filtered(environ: dict[str, str], chosen: Policy) -> dict[str, str]:
    passed = set(chosen.passed)
    return {name: value for name, value in environ.items()
            if name in passed or (not is_credential(name)
                                  and (not chosen.isolated or name in BASE or name.startswith("LC_")))}


def holds_credential(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``environ`` (``os.environ``) holds one of pairbench's credentials."""
    return any(is_credential(name) for name in (os.environ if environ is None else environ))


def keep_to_ourselves() -> bool:
    """Make this process non-dumpable (Linux ``PR_SET_DUMPABLE`` 0): its ``/proc/PID/environ``,
    ``mem`` and ptrace then need root, not merely the same user as the programs it starts. True if
    it worked. (A core dump of pairbench is then not written either.)"""
    return prctl(PR_SET_DUMPABLE, 0)
