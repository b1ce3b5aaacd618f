"""hyperfine's ``--export-json`` document (read by ``pairbench import``; hyperfine is no harness).

``{"results": [{"command", "times": [seconds...], "exit_codes": [...],
"parameters": {...}, "memory_usage_byte": [...], "mean", "user", ...}]}``: each
result is one command (with ``-P``/``-L``, one per parameter value), each time
one run of it. ``times`` is needed (hyperfine has written it since 1.2);
``exit_codes`` (1.11) and ``memory_usage_byte`` (1.19) are used when present,
and ``user`` and ``system``: hyperfine records the *mean* CPU times of a
command's runs only, not each run's.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.frozen import frozen
from pairbench.measure.harnesses.base import FormatError, finite_number
from pairbench.model import MAX_SAMPLE_VALUE

NAME = "hyperfine"


@frozen
class HyperfineResult:
    """One command's runs: wall times (ns, at least 1), exit codes, peak memory (KiB; None when
    hyperfine did not record it), the runs hyperfine wrote as 0 s, and the mean user and system CPU
    time of a run (ns; None when not recorded)."""

    command: str
    parameters: Mapping[str, str]
    times_ns: tuple[int, ...]
    exit_codes: tuple[int, ...]
    max_rss_kib: tuple[int, ...] | None
    zero_runs: int = 0  # runs hyperfine wrote as 0 s (below its shell's start-up, which it subtracts): 1 ns here
    user_ns: int | None = None
    sys_ns: int | None = None


def parse_document(document, source: str) -> tuple[HyperfineResult, ...]:
    """The results of a parsed hyperfine JSON export."""
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise FormatError(NAME, source, "not a hyperfine --export-json document: no \"results\" list")
    results = tuple(_result(entry, source, f"results[{i}]") for i, entry in enumerate(document["results"]))
    if not results:
        raise FormatError(NAME, source, "\"results\" is empty")
    return results


def _result(entry, source: str, where: str) -> HyperfineResult:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        raise FormatError(NAME, source, f"{where} needs a \"command\" string")
    times = entry.get("times")
    if not isinstance(times, list) or not times:
        raise FormatError(NAME, source, f"{where} ({entry['command']!r}) has no \"times\": each run's time is "
                          "needed (hyperfine 1.2 and later write them)")
    seconds = [finite_number(t, NAME, source, f"{where}.times[{j}]") for j, t in enumerate(times)]
    for j, t in enumerate(seconds):
        if not 0 <= t * 1e9 <= MAX_SAMPLE_VALUE:
            raise FormatError(NAME, source, f"{where}.times[{j}] is {t!r} s: a run's time is from 0 to 2**53 - 1 ns "
                              "(hyperfine never writes a negative one)")
    times_ns = tuple(max(1, round(t * 1e9)) for t in seconds)
    codes = _integers(entry.get("exit_codes", [0] * len(times)), len(times), source, f"{where}.exit_codes")
    memory = entry.get("memory_usage_byte")
    rss = (tuple(b // 1024 for b in _integers(memory, len(times), source, f"{where}.memory_usage_byte"))
           if memory is not None else None)
    parameters = entry.get("parameters") or {}
    if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
        raise FormatError(NAME, source, f"{where}.parameters must map names to strings")
    user, system = (_mean_ns(entry.get(key), source, f"{where}.{key}") for key in ("user", "system"))
    return HyperfineResult(entry["command"], dict(parameters), times_ns, codes, rss,
                           zero_runs=sum(1 for t in seconds if round(t * 1e9) < 1), user_ns=user, sys_ns=system)


def _mean_ns(value, source: str, where: str) -> int | None:
    """A mean CPU time in seconds as whole ns (None when absent); negative or absurd is refused."""
    if value is None:
        return None
    seconds = finite_number(value, NAME, source, where)
    if not 0 <= seconds < 1e9:
        raise FormatError(NAME, source, f"{where} must be seconds between 0 and 1e9, got {value!r}"[:300])
    return round(seconds * 1e9)


def _integers(values, length: int, source: str, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or len(values) != length:
        raise FormatError(NAME, source, f"{where} must be a list as long as \"times\" ({length})")
    out = []
    for j, value in enumerate(values):
        if value is None:  # a run without an exit code (killed by a signal)
            out.append(-1)
            continue
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**53:
            raise FormatError(NAME, source, f"{where}[{j}] must be a whole number, got {value!r}"[:300])
        out.append(value)
    return tuple(out)
