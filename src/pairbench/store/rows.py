"""The values of the history store's rows: what a row read may hold (each checked by its column,
so a value no pairbench writes is a ``StoreError`` naming the column, not a crash further on), and
text as the store keeps it. Shared by ``store.history`` and ``store.links``.
"""

from __future__ import annotations

import json
import math
import re

from pairbench.frozen import frozen
from pairbench.model import BenchmarkKey


@frozen
class StoredBenchmark:
    """A benchmark the store knows: its row's id and its key."""

    id: int
    key: BenchmarkKey


CONFIRMATION_STATES = ("confirmed", "rejected", "inconclusive")


class _StoredValueError(ValueError):
    """A value of a row read that no pairbench writes."""


def _refused(value, name: str, what: str) -> _StoredValueError:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return _StoredValueError(f"{name} holds {shown}, not {what}")


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise _refused(value, name, "text")
    return value


def _optional_text(value, name: str) -> str | None:
    return None if value is None else _text(value, name)


def _optional_number(value, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _refused(value, name, "a finite number")
    return float(value)


def _count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**53:
        raise _refused(value, name, "a count")
    return value


def _optional_flag(value, name: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _refused(value, name, "true or false")


def _status(value, name: str) -> str:
    if value not in CONFIRMATION_STATES:
        raise _refused(value, name, f"one of {', '.join(CONFIRMATION_STATES)}")
    return value


def _blob(value, name: str) -> bytes:
    if not isinstance(value, bytes):
        raise _refused(value, name, "compressed samples")
    return value


def _insert_ignoring(conn, table):
    """``INSERT ... ON CONFLICT DO NOTHING`` in the connection's dialect."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing()


def _benchmark_row(key: BenchmarkKey) -> dict:
    return storable_row({"name": key.name, "params": json.dumps(dict(key.params), sort_keys=True), "unit": key.unit})


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` as the store keeps it: a lone surrogate (a byte of a name or a path that was not
    UTF-8, which no database takes as text: U+DCFF for byte 0xFF) written as the escape that
    ``report.safe.visible`` shows for it (``\\xff``), so the same name is always stored alike."""
    return _SURROGATE.sub(_escaped_surrogate, text)


def _escaped_surrogate(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def storable_row(row: dict) -> dict:
    """``row`` with every text value :func:`storable`."""
    return {key: storable(value) if isinstance(value, str) else value for key, value in row.items()}


def _key(name: str, params: str, unit: str) -> BenchmarkKey:
    """A stored benchmark's key; ``ValueError`` when the row is not one pairbench wrote."""
    try:
        decoded = json.loads(params)
        if not isinstance(decoded, dict) or not all(isinstance(v, str) for v in decoded.values()):
            raise ValueError("params is not an object of strings")
        return BenchmarkKey(name, tuple(sorted(decoded.items())), unit)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the benchmark {name!r} is stored wrongly ({exc})") from None


