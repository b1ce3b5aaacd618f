"""The wire's reading of a reply: the native spawner's compact ``ok`` line is read without
``json``, and accepts, refuses and returns exactly what the JSON route does."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from pairbench.command import Execution
from pairbench.measure import wire

FIELDS = len(wire.EXECUTION_FIELDS)


def _outcome(read, line: bytes, request_id: int, kinds=("ok", "err", "int", "noexec")):
    try:
        reply = read(line, request_id, kinds)
    except wire.BadReply as refused:
        return "refused", str(refused)
    return "read", reply, [type(value) for value in reply]


def _lines(seed: int):
    """Compact ok lines with numbers of every shape, and near misses of every kind."""
    rng = np.random.default_rng(seed)
    numbers = [b"0", b"-0", b"7", b"-12", b"123456789012345678901234567890", b"01", b"+1", b"1_0",
               b"1.0", b"1e3", b" 1", b"true", b'"1"', b"null", b"-", b""]
    for _ in range(3000):
        count = FIELDS + int(rng.choice([0, 0, 0, -1, 1]))
        good = [str(int(v)).encode() for v in rng.integers(-10**12, 10**15, count)]
        if rng.random() < 0.5:
            good[int(rng.integers(count))] = numbers[int(rng.integers(len(numbers)))]
        head = rng.choice([b'[3,"ok",', b'[4,"ok",', b'[03,"ok",', b'[3, "ok", ', b'[3,"err",', b'["ok",'])
        tail = rng.choice([b"]", b"]", b"] ", b"],", b""])
        yield head + b",".join(good) + tail, 3
    yield b"[3,\"ok\"," + b",".join([b"1"] * FIELDS) + b"]\n", 3
    yield json.dumps([3, "ok", *range(FIELDS)]).encode(), 3  # the Python spawner's, with spaces


def test_a_compact_ok_reply_is_read_as_the_json_route_reads_every_line():
    compact = 0
    for line, request_id in itertools.chain(_lines(1), _lines(2)):
        assert _outcome(wire.checked_reply, line, request_id) == _outcome(wire._checked_json, line, request_id), line
        compact += wire._COMPACT_OK.fullmatch(line) is not None
    assert compact > 200  # the compact route was taken, not only the JSON one


def test_an_ok_reply_is_refused_where_the_request_expects_another_kind():
    line = b'[3,"ok",' + b",".join([b"1"] * FIELDS) + b"]"
    assert _outcome(wire.checked_reply, line, 3, ("floor", "err"))[0] == "refused"


def test_the_reply_fields_are_the_executions_first_fields_in_order():
    names = [field.name for field in dataclasses.fields(Execution)]
    assert tuple(names[:FIELDS]) == wire.EXECUTION_FIELDS
    reply = [3, "ok", *range(1, FIELDS + 1)]
    assert wire.execution_of(reply) == Execution(**dict(zip(wire.EXECUTION_FIELDS, reply[2:], strict=True)))


@pytest.mark.parametrize("line", [b'[3,"ok",' + b",".join([b"9"] * FIELDS) + b"]"])
def test_the_compact_route_returns_ints(line):
    reply = wire.checked_reply(line, 3, ("ok",))
    assert reply == [3, "ok", *[9] * FIELDS] and all(type(v) is int for v in reply[2:])
