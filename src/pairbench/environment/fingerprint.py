"""A machine's fingerprint: which results of the history store may be compared with each other.

Results measured on different machines are never put in one series: a step
between two of them would be the machines' difference, not the code's. The
fingerprint is a hash of what makes timings of one machine comparable (the
architecture, the CPU model, how many CPUs, the memory rounded to whole GiB,
whether it is a virtual machine, the operating system), read from a result's
stored metadata. It leaves out the host name, so the fresh runners of a CI
service of one instance type are one machine, as they should be compared; a
name given by the user (``[store] machine`` in the project config, or
``PAIRBENCH_MACHINE``) replaces the fingerprint altogether.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from pairbench.environment.stored import is_int
from pairbench.frozen import frozen

MAX_MACHINE_NAME = 100


@frozen
class Machine:
    """A machine as the store knows it: ``fingerprint`` (its identity), a ``label`` for people and
    the ``details`` it was computed from."""

    fingerprint: str
    label: str
    details: Mapping


def machine_of(environment: Mapping, name: str | None = None) -> Machine:
    """The machine a result with metadata ``environment`` was measured on; ``name`` (given by the
    user) names it instead of the fingerprint. Malformed metadata gives fewer details, never an
    error: a value that is not of its type counts as not read."""
    details = _details(environment)
    if name:
        return Machine(f"name:{name}", name, {**details, "name": name})
    canonical = json.dumps(details, sort_keys=True, separators=(",", ":"))
    return Machine(hashlib.sha256(canonical.encode()).hexdigest()[:16], _label(details), details)


def check_machine_name(name: str) -> str:
    """A user's machine name: printable, 1 to ``MAX_MACHINE_NAME`` characters (``ValueError``)."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_MACHINE_NAME \
            or not name.isprintable():
        raise ValueError(f"a machine name is 1 to {MAX_MACHINE_NAME} printable characters, got {name!r}")
    return name.strip()


def _details(env: Mapping) -> dict:
    memory = env.get("memory") if isinstance(env.get("memory"), Mapping) else {}
    total = memory.get("mem_total_kib")
    virtual = env.get("virtualization") if isinstance(env.get("virtualization"), Mapping) else {}
    flagged = [virtual.get(key) for key in ("hypervisor_flag", "dmi_virtual")]
    return {
        "machine": _text(env.get("machine")),
        "cpu_model": _text(env.get("cpu_model")),
        "logical_cpus": env.get("logical_cpus") if is_int(env.get("logical_cpus")) else None,
        "memory_gib": round(total / 2**20) if is_int(total) else None,
        "virtual": True if True in flagged else (False if False in flagged else None),
        "os": _text(env.get("os")),
    }


def _label(details: Mapping) -> str:
    """"AMD EPYC · 2 CPUs · 24 GiB · x86_64 · virtual machine"."""
    parts = [details["cpu_model"] or "unknown CPU"]
    if details["logical_cpus"]:
        parts.append(f"{details['logical_cpus']} CPUs")
    if details["memory_gib"]:
        parts.append(f"{details['memory_gib']} GiB")
    if details["machine"]:
        parts.append(details["machine"])
    if details["virtual"]:
        parts.append("virtual machine")
    return " · ".join(parts)


def _text(value) -> str | None:
    return " ".join(value.split())[:200] or None if isinstance(value, str) else None
