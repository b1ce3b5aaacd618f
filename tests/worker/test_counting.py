"""The Python worker's counting of its loop (``worker/counting.py``, ``serve.timed_loop``): only the
loop is between the counter's start and stop, the counter is stopped even when a call raises, the
count reaches the reply, and the request for counting is read and removed from the environment."""

from __future__ import annotations

import pytest

from pairbench.command import Execution
from pairbench.worker import counting, protocol, serve


class Recording:
    """A counter that records what the worker asked of it."""

    resets = True

    def __init__(self):
        self.events: list[str] = []
        self.instructions = None

    def start(self):
        self.events.append("start")

    def stop(self):
        self.events.append("stop")

    def finish(self):
        self.events.append("finish")
        self.instructions = 1234


def test_the_loop_alone_is_counted_and_the_count_reaches_the_reply(monkeypatch):
    counter, calls = Recording(), []
    monkeypatch.setattr(serve, "COUNTER", counter)
    reply = serve.timed_loop(lambda: (calls.append(counter.events[-1])), serve.NO_ARGUMENT, 3)
    assert calls == ["start"] * 3  # every call ran between start and stop
    assert counter.events == ["start", "stop", "finish"]
    assert reply.instructions == 1234


def test_the_counter_is_stopped_when_a_counted_call_raises(monkeypatch):
    counter = Recording()
    monkeypatch.setattr(serve, "COUNTER", counter)

    def failing():
        raise ValueError("no")

    with pytest.raises(ValueError):
        serve.timed_loop(failing, serve.NO_ARGUMENT, 2)
    assert counter.events == ["start", "stop"]  # no dump of a failed sample; collection switched off


def test_fresh_setup_calls_sum_a_resetting_counters_counts(monkeypatch):
    counter = Recording()
    monkeypatch.setattr(serve, "COUNTER", counter)
    reply = serve.timed_fresh_calls(lambda: 1, lambda argument: None, 3)
    assert reply.instructions == 3 * 1234 and counter.events.count("start") == 3


def test_without_counting_nothing_is_counted(monkeypatch):
    monkeypatch.setattr(serve, "COUNTER", None)
    assert serve.timed_loop(lambda: None, serve.NO_ARGUMENT, 2).instructions is None


def test_a_count_crosses_the_protocol_and_an_uncounted_reply_carries_none():
    counted = protocol.parse_reply(protocol.format_ok(Execution(wall_ns=5, start_ns=0, instructions=777)).strip())
    assert counted.instructions == 777
    plain = protocol.format_ok(Execution(wall_ns=5, start_ns=0))
    assert "instructions" not in plain and protocol.parse_reply(plain.strip()).instructions is None


def test_the_request_is_removed_from_the_environment_and_an_unknown_one_refused():
    environ = {"PAIRBENCH_COUNTER": "cycles"}
    with pytest.raises(counting.CountingUnavailable, match="callgrind or instructions"):
        counting.from_environment(environ)
    assert "PAIRBENCH_COUNTER" not in environ
    assert counting.from_environment({}) is None


def test_a_missing_counting_library_says_how_to_get_it(tmp_path):
    with pytest.raises(counting.CountingUnavailable, match="reinstall pairbench"):
        counting.CallgrindRegion(str(tmp_path / "absent.so"))
