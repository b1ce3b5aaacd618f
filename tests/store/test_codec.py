"""Raw samples in the store: compressed blobs that read back exactly, and refused when damaged."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest
from runs import series

from pairbench.model import SAMPLE_COLUMNS
from pairbench.store import codec


def test_samples_read_back_exactly_with_their_metrics():
    rng = np.random.default_rng(1)
    walls = rng.integers(1, 2**52, 500)
    samples = series(walls, start_seq=3, stride=2, iterations=1024, metrics={"value": rng.normal(size=500),
                                                                             "allocs": np.full(500, 3.0)},
                     max_rss_kib=rng.integers(0, 10**6, 500))
    back = codec.decode(codec.encode(samples))
    for column in SAMPLE_COLUMNS:
        assert np.array_equal(back[column], samples[column]) and back[column].dtype == np.int64
    assert set(back.metrics) == {"value", "allocs"} and np.array_equal(back["value"], samples["value"])


def test_no_samples_read_back_as_none():
    assert len(codec.decode(codec.encode(series([])))) == 0


def test_ordered_columns_compress_well():
    blob = codec.encode(series(np.full(10_000, 1_000_000), start_seq=0, stride=2))
    assert len(blob) < 10_000 * len(SAMPLE_COLUMNS) * 8 / 100


def _blob(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return codec.MAGIC + zlib.compress(struct.pack("<I", len(text)) + text + body)


@pytest.mark.parametrize(("blob", "message"), [
    (b"PK\x03\x04", "no PBS1 mark"),
    (codec.MAGIC + b"not zlib", "corrupt"),
    (_blob({"n": 2, "metrics": []}, b"\0" * 8), "truncated or too long"),
    (_blob({"n": 1, "metrics": []}, b"\0" * 8 * (len(SAMPLE_COLUMNS) + 1)), "truncated or too long"),
    (_blob({"n": -1, "metrics": []}, b""), "count must be"),
    (_blob({"n": 10**12, "metrics": []}, b""), "count must be"),
    (_blob({"n": 0, "metrics": [""]}, b""), "metric names"),
    (_blob({"n": 1, "metrics": ["v"]}, b"\0" * 8 * len(SAMPLE_COLUMNS) + struct.pack("<d", float("nan"))),
     "not a finite number"),
])
def test_a_damaged_blob_is_refused_saying_why(blob, message):
    with pytest.raises(ValueError, match=message):
        codec.decode(blob)


def test_a_blob_that_inflates_beyond_its_count_is_refused_before_it_is_held():
    bomb = _blob({"n": 1, "metrics": []}, b"\0" * 50_000_000)  # 50 MB of zeros, 50 kB compressed
    with pytest.raises(ValueError, match="too long"):
        codec.decode(bomb)
