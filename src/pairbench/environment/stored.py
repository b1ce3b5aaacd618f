"""Stored machine metadata, read defensively: each value is None (not read) or of its type.

The checks judge metadata that may come from a file: partial, from another
version, or edited by hand. :func:`stored` returns a value of the expected
type or raises ``ValueError`` naming the key and what it holds;
``checks.evaluate`` turns that into an ``unknown`` finding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

NUMBER = (int, float)
_KINDS = {bool: "true or false", int: "an integer", NUMBER: "a number", str: "a string",
          list: "a list", dict: "an object"}


def stored(value, kind, name: str):
    """``value`` if it is None (not read) or a ``kind``; else a ValueError naming ``name``.

    ``kind`` is one of ``_KINDS``; a bool is not accepted as a number.
    """
    if value is None:
        return None
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    raise ValueError(f"{name} = {shown} is not {_KINDS[kind]}")


def is_int(value) -> bool:
    """An integer, and not ``true`` or ``false`` (which Python counts as 1 and 0)."""
    return isinstance(value, int) and not isinstance(value, bool)


def section(env: Mapping, name: str) -> Mapping:
    """The object ``env[name]`` ({} when absent); ValueError when it is not an object."""
    return stored(env.get(name), dict, name) or {}


def cpu_list(value, name: str) -> list[int] | None:
    """A stored list of CPU numbers (None when absent); ValueError when it is not one."""
    cpus = stored(value, list, name)
    return None if cpus is None else [stored(cpu, int, name) for cpu in cpus]


def cpu_count(env: Mapping, name: str) -> int | None:
    """The CPU list ``name`` as a count (None when absent or empty)."""
    cpus = stored(env.get(name), list, name)
    return len(cpus) if cpus else None


def usable_cpus(env: Mapping) -> int | None:
    """CPUs pairbench may run on: the tree's affinity list, else this process's."""
    allowed = cpu_count(section(env, "isolation"), "allowed_cpus")
    return allowed or stored(env.get("usable_cpus"), int, "usable_cpus") or stored(
        env.get("logical_cpus"), int, "logical_cpus")


def online_cpus(env: Mapping) -> int | None:
    """CPUs of the whole machine (the load average is machine-wide): sysfs online list, else os.cpu_count."""
    return cpu_count(env, "online_cpus") or stored(env.get("logical_cpus"), int, "logical_cpus")


def load_average(env: Mapping) -> list | None:
    """The stored 1, 5 and 15 minute load averages (None: not read); ValueError when malformed."""
    load = stored(env.get("load_average"), list, "load_average")
    if load is not None and (len(load) != 3 or not all(
            isinstance(x, NUMBER) and not isinstance(x, bool) and math.isfinite(x) for x in load)):
        raise ValueError(f"load_average = {load!r:.40} is not three numbers")
    return load
