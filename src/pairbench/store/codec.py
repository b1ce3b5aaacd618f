"""Raw samples as one compressed blob per series, for the history store.

A blob is ``PBS1`` and a zlib stream of: the length of a JSON header (4 bytes,
little-endian), the header (``{"n": N, "metrics": [names]}``), then each column
of ``SAMPLE_COLUMNS`` as N little-endian int64 values and each metric as N
float64 values. Columns that change little from sample to sample (``seq``,
``start_ns``, ``pair``) are stored as differences, which compress to a few bits.
No pickle: reading a blob from a shared database must not run code.

Reading checks what writing guarantees and bounds what it allocates: the
decompressed size is at most what the header's N needs (a stream that inflates
beyond it is refused before it is held), every column is complete, metrics are
finite. A bad blob is a ``ValueError`` naming what is wrong; the store names
the result and series.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np

from pairbench.model import SAMPLE_COLUMNS, Samples

MAGIC = b"PBS1"
DELTA_COLUMNS = ("seq", "start_ns", "pair")
MAX_SAMPLES = 50_000_000
MAX_HEADER = 1 << 16
MAX_METRICS = 64
LEVEL = 6


def encode(samples: Samples) -> bytes:
    """The blob of ``samples`` (columns in ``SAMPLE_COLUMNS`` order, then the metrics by name)."""
    names = sorted(samples.metrics)
    header = json.dumps({"n": len(samples), "metrics": names}, separators=(",", ":")).encode()
    table = np.array([samples.columns[column] for column in SAMPLE_COLUMNS], dtype="<i8").reshape(
        len(SAMPLE_COLUMNS), len(samples))
    table[_DELTA_ROWS, 1:] = np.diff(table[_DELTA_ROWS], axis=1)  # first values kept: deltas from 0
    parts = [struct.pack("<I", len(header)), header, table.tobytes()]
    parts += [np.asarray(samples.metrics[name], dtype="<f8").tobytes() for name in names]
    return MAGIC + zlib.compress(b"".join(parts), LEVEL)


_DELTA_ROWS = [list(SAMPLE_COLUMNS).index(column) for column in DELTA_COLUMNS]


def decode(blob: bytes) -> Samples:
    """The samples of a blob written by :func:`encode`; ``ValueError`` if it is not one."""
    if not isinstance(blob, (bytes, bytearray, memoryview)) or bytes(blob[:4]) != MAGIC:
        raise ValueError("the samples are not in pairbench's format (no PBS1 mark)")
    inflater = zlib.decompressobj()
    try:
        head = inflater.decompress(bytes(blob[4:]), 4 + MAX_HEADER)
        n, names, header_end = _header(head)
        body_size = 8 * n * (len(SAMPLE_COLUMNS) + len(names))
        have = len(head) - header_end
        # at most one byte beyond the body is inflated (0 would mean "no limit" to zlib)
        rest = inflater.decompress(inflater.unconsumed_tail, body_size - have + 1) if have <= body_size else b""
    except zlib.error as exc:
        raise ValueError(f"the samples are corrupt ({exc})") from None
    body = head[header_end:] + rest
    if len(body) != body_size or inflater.unconsumed_tail or not inflater.eof:
        raise ValueError(f"the samples are truncated or too long: {len(body)} bytes for {n} samples")
    return _columns(body, n, names)


def _header(data: bytes) -> tuple[int, list[str], int]:
    if len(data) < 4:
        raise ValueError("the samples are truncated (no header)")
    (size,) = struct.unpack("<I", data[:4])
    if size > MAX_HEADER or len(data) < 4 + size:
        raise ValueError("the samples' header is too long or truncated")
    try:
        header = json.loads(data[4:4 + size])
    except (ValueError, UnicodeDecodeError):
        raise ValueError("the samples' header is not JSON") from None
    n, names = (header.get("n"), header.get("metrics")) if isinstance(header, dict) else (None, None)
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_SAMPLES:
        raise ValueError(f"the samples' count must be 0 to {MAX_SAMPLES:,}, got {n!r}")
    if not isinstance(names, list) or len(names) > MAX_METRICS or not all(
            isinstance(x, str) and x for x in names) or len(set(names)) != len(names):
        raise ValueError("the samples' metric names must be distinct, non-empty strings")
    return n, names, 4 + size


def _columns(body: bytes, n: int, names: list[str]) -> Samples:
    columns, offset = {}, 0
    for column in SAMPLE_COLUMNS:
        values = np.frombuffer(body, dtype="<i8", count=n, offset=offset).astype(np.int64)
        columns[column] = np.cumsum(values) if column in DELTA_COLUMNS else values
        offset += 8 * n
    metrics = {}
    for name in names:
        values = np.frombuffer(body, dtype="<f8", count=n, offset=offset).astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"the metric {name!r} holds a value that is not a finite number")
        metrics[name] = values
        offset += 8 * n
    return Samples(columns, metrics)
