"""The worker protocol's lines (``docs/worker-protocol.md``): formatting and strict parsing.

Shared by the driver (``measure.worker``) and the Python worker
(``worker.serve``), so both sides read and write the same lines; a sample's reply
is the model's ``command.Execution``. Standard
library only: a Python worker imports this, and must start fast. Everything a
worker sends is hostile: each parser bounds what it accepts and raises
``ProtocolError`` saying what was wrong.
"""

from __future__ import annotations

import hashlib
import re

from pairbench.command import Execution
from pairbench.frozen import frozen
from pairbench.limits import MAX_SAMPLE_VALUE

VERSION = 1
GREETING = f"pairbench-worker {VERSION}"
FDS_VARIABLE = "PAIRBENCH_WORKER_FDS"
MAX_LINE_BYTES = 4096
MAX_NAME_BYTES = 200
MAX_BENCHMARKS = 10_000
MAX_ITERATIONS = 1 << 40
MAX_FIELD_VALUE = MAX_SAMPLE_VALUE  # what a result keeps: a larger value could be measured but never read back

REPLY_FIELDS = {"ns": "wall_ns", "user_ns": "user_ns", "sys_ns": "sys_ns", "vcs": "voluntary_cs",
                "ivcs": "involuntary_cs", "minflt": "minor_faults", "majflt": "major_faults",
                "maxrss_kib": "max_rss_kib"}
"""The fields of an ``ok`` reply pairbench reads, and the ``Execution`` field each is; ``ns`` is
required, the others are 0 when absent."""
COUNT_FIELDS = {"instructions": "instructions"}
"""The fields a worker adds when a hardware counter counted its loop (``PAIRBENCH_COUNTER``);
None when absent."""

UNSAFE_NAME_CHARACTER = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What a name may not hold: whitespace, C0 and C1 control characters and DEL (which a terminal may
obey), and the bidirectional controls (which reorder what is shown around them)."""
_PARAMS = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<params>[^\[\]]*)\]$")
_FIELD_KEY = re.compile(r"^[a-z_][a-z0-9_]*$")
_DIGITS = re.compile(r"^[0-9]{1,19}$")


class ProtocolError(Exception):
    """A line that is not what the protocol allows here; the message says what was wrong."""


@frozen
class ErrorReply:
    """An ``error`` reply: the benchmark failed; ``message`` is the worker's text."""

    message: str


# --------------------------------------------------------------------------- names


def as_name(text: str) -> str:
    """``text`` (a pytest node id) as a benchmark name: the text itself when it is one; else (it
    holds whitespace or a control character, or is over ``MAX_NAME_BYTES``) the text with those
    characters made ``_``, cut, and ended with ``~`` and a digest of the whole text, so two node ids
    never share a name."""
    name = UNSAFE_NAME_CHARACTER.sub("_", text)
    if name == text and name and len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES:
        return name
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]
    kept = name.encode("utf-8", "replace")[: MAX_NAME_BYTES - _DIGEST_CHARS - 1].decode("utf-8", "ignore")
    return f"{kept}~{digest}"


_DIGEST_CHARS = 12


def check_name(name: str) -> str:
    """``name`` if it is a valid benchmark name (see the protocol), else ``ProtocolError``."""
    if not isinstance(name, str) or not name:
        raise ProtocolError("a benchmark name is empty")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ProtocolError(f"a benchmark name is longer than {MAX_NAME_BYTES} bytes")
    if UNSAFE_NAME_CHARACTER.search(name):
        raise ProtocolError("a benchmark name holds whitespace or a control character")
    return name


def split_name(name: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``sort[n=1000,kind=random]`` -> ``("sort", (("kind", "random"), ("n", "1000")))``: the base name
    and its parameters, sorted. A name without a well-formed ``[...]`` is all base."""
    match = _PARAMS.match(name)
    if not match:
        return name, ()
    pairs = []
    for item in match["params"].split(","):
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            return name, ()
        pairs.append((key, value))
    if len({k for k, _ in pairs}) != len(pairs):
        return name, ()
    return match["base"], tuple(sorted(pairs))


# --------------------------------------------------------------------------- requests


def list_request() -> str:
    return "list\n"


def run_request(name: str, iterations: int) -> str:
    return f"run {check_name(name)} {_iterations(iterations)}\n"


def quit_request() -> str:
    return "quit\n"


def parse_request(line: str) -> tuple[str, ...]:
    """A request line (without its newline) as ``("list",)``, ``("quit",)`` or ``("run", NAME, N)``
    (N as text, checked); ``ProtocolError`` for anything else."""
    words = line.split(" ")
    if words in (["list"], ["quit"]):
        return (words[0],)
    if len(words) == 3 and words[0] == "run":
        check_name(words[1])
        if not _DIGITS.match(words[2]):
            raise ProtocolError(f"the iteration count {words[2]!r} is not a whole number")
        _iterations(int(words[2]))
        return ("run", words[1], words[2])
    raise ProtocolError(f"unknown request {line[:80]!r}")


def _iterations(iterations: int) -> int:
    if isinstance(iterations, bool) or not isinstance(iterations, int) or not 1 <= iterations <= MAX_ITERATIONS:
        raise ProtocolError(f"an iteration count must be a whole number from 1 to 2^40, got {iterations!r}")
    return iterations


# --------------------------------------------------------------------------- replies


def format_list(names: list[str]) -> str:
    """The reply to ``list``: the count line and one line per benchmark."""
    return "".join([f"benchmarks {len(names)}\n", *(f"benchmark {check_name(n)}\n" for n in names)])


def format_ok(sample: Execution) -> str:
    """An ``ok`` reply: a sample's nanoseconds and its thread's resource usage."""
    fields = " ".join(f"{key}={int(getattr(sample, name))}" for key, name in {**REPLY_FIELDS, **COUNT_FIELDS}.items()
                      if getattr(sample, name) is not None)
    return f"ok {fields}\n"


def format_error(message: str) -> str:
    """An ``error`` reply: ``message`` on one line (newlines and other control characters become
    spaces), cut to fit the line limit."""
    flat = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in message) or "failed"
    encoded = flat.encode("utf-8", "replace")[: MAX_LINE_BYTES - 8]
    return "error " + encoded.decode("utf-8", "ignore") + "\n"


def parse_greeting(line: str) -> None:
    if line != GREETING:
        raise ProtocolError(f"expected the greeting {GREETING!r}, got {line[:80]!r}")


def parse_count(line: str) -> int:
    """``benchmarks N`` -> N (at most ``MAX_BENCHMARKS``)."""
    words = line.split(" ")
    if len(words) != 2 or words[0] != "benchmarks" or not _DIGITS.match(words[1]):
        raise ProtocolError(f"expected 'benchmarks N', got {line[:80]!r}")
    count = int(words[1])
    if count > MAX_BENCHMARKS:
        raise ProtocolError(f"the worker lists {count} benchmarks, more than {MAX_BENCHMARKS}")
    return count


def parse_listed(line: str) -> str:
    """``benchmark NAME`` -> NAME (checked)."""
    keyword, sep, name = line.partition(" ")
    if keyword != "benchmark" or not sep:
        raise ProtocolError(f"expected 'benchmark NAME', got {line[:80]!r}")
    return check_name(name)


def parse_reply(line: str) -> Execution | ErrorReply:
    """An ``ok`` reply as the sample's ``Execution`` (its ``start_ns`` 0: the caller's clock says when),
    or an ``error`` reply; ``ProtocolError`` for anything else."""
    keyword, _, rest = line.partition(" ")
    if keyword == "error":
        return ErrorReply(rest)
    if keyword != "ok":
        raise ProtocolError(f"expected 'ok ...' or 'error ...', got {line[:80]!r}")
    values: dict[str, int] = {}
    for item in rest.split(" ") if rest else ():
        key, sep, text = item.partition("=")
        if not sep or not _FIELD_KEY.match(key):
            raise ProtocolError(f"the field {item[:40]!r} is not KEY=VALUE")
        if key in values:
            raise ProtocolError(f"the field {key!r} is given twice")
        if not _DIGITS.match(text) or int(text) > MAX_FIELD_VALUE:
            raise ProtocolError(f"the field {key}={text[:40]!r} is not a whole number from 0 to 2^53 - 1")
        values[key] = int(text)
    if "ns" not in values:
        raise ProtocolError("the reply has no ns= field (the sample's nanoseconds)")
    return Execution(start_ns=0, **{name: values[key] for key, name in {**REPLY_FIELDS, **COUNT_FIELDS}.items()
                                    if key in values})
