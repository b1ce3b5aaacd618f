"""The scripted executor: every feature, exactly, with no real time passing."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from fakes import FakeCall, FakeExecutor, ScriptError

from pairbench.errors import CommandNotFound, MeasurementError
from pairbench.measure.executor import Execution
from pairbench.model import STATUS_TIMEOUT, Command

A = Command("a", ("/bin/a",))
B = Command("b", ("/bin/b",))


def test_sleep_command_takes_exactly_its_duration_on_the_virtual_clock():
    ex = FakeExecutor()
    t0 = time.monotonic()
    runs = [
        ex.run(Command("sleep 0.25", ("/usr/bin/sleep", "0.25"))),
        ex.run(Command("sleep 2", ("/bin/sh", "-c", "sleep 2"), shell=True)),
        ex.run(Command("sleep 1e-3s", ("sleep", "1e-3s"))),
    ]
    assert time.monotonic() - t0 < 2.0  # no real time passes: sleeping would take 2.25 s
    assert [r.wall_ns for r in runs] == [250_000_000, 2_000_000_000, 1_000_000]
    assert [r.start_ns for r in runs] == [0, 250_000_000, 2_250_000_000]
    assert ex.now_ns() == 2_251_000_000
    assert all(r.status == 0 for r in runs)


def test_mapping_replays_durations_in_order_per_command():
    ex = FakeExecutor({"a": [0.1, 0.3], "b": (0.2,)})
    assert [ex.run(c).wall_ns for c in (A, B, A)] == [
        100_000_000,
        200_000_000,
        300_000_000,
    ]
    assert ex.texts == ["a", "b", "a"]


def test_single_item_entry_repeats_forever():
    ex = FakeExecutor({"a": 0.01})
    assert {ex.run(A).wall_ns for _ in range(100)} == {10_000_000}


def test_iterator_entries_are_consumed_lazily():
    ex = FakeExecutor({"a": itertools.count(1)}, unit="ms")
    assert [ex.run(A).wall_ns for _ in range(3)] == [1_000_000, 2_000_000, 3_000_000]


@pytest.mark.parametrize(
    ("unit", "value", "ns"),
    [("s", 1.5, 1_500_000_000), ("ms", 2, 2_000_000), ("us", 0.5, 500), ("ns", 123, 123)],
)
def test_numbers_are_durations_in_the_chosen_unit(unit, value, ns):
    assert FakeExecutor({"a": value}, unit=unit).run(A).wall_ns == ns


def test_numpy_numbers_are_accepted_as_durations():
    ex = FakeExecutor({"a": np.array([0.5, 0.25])})
    assert [ex.run(A).wall_ns for _ in range(2)] == [500_000_000, 250_000_000]
    assert FakeExecutor({"a": np.int64(7)}, unit="ns").run(A).wall_ns == 7


def test_exhausted_script_says_which_command_ran_out():
    ex = FakeExecutor({"a": [0.1]})
    ex.run(A)
    with pytest.raises(ScriptError, match=r"'a' ran out after 1 execution"):
        ex.run(A)


def test_unscripted_command_is_a_script_error_not_a_measurement_error():
    ex = FakeExecutor({"a": 0.1})
    with pytest.raises(ScriptError, match=r"no script for command 'b'.*\['a'\]") as info:
        ex.run(B)
    assert not isinstance(info.value, MeasurementError)


def test_default_covers_unscripted_commands():
    ex = FakeExecutor({"a": 0.1}, default=[0.2, 0.3])
    assert [ex.run(c).wall_ns for c in (B, A, Command("c", ("c",)))] == [
        200_000_000,
        100_000_000,
        300_000_000,
    ]


def test_dict_items_script_status_and_rusage():
    ex = FakeExecutor(
        {"a": {"duration": 0.2, "status": 3, "user_ns": 150_000_000, "max_rss_kib": 2048}}
    )
    run = ex.run(A)
    assert run == Execution(
        wall_ns=200_000_000, start_ns=0, status=3, user_ns=150_000_000, max_rss_kib=2048
    )


def test_dict_item_may_give_wall_ns_directly():
    assert FakeExecutor({"a": {"wall_ns": 42}}).run(A).wall_ns == 42


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"duration": 0.1, "colour": "red"}, "unknown key"),
        ({"status": 1}, "exactly one of"),
        ({"duration": 0.1, "wall_ns": 5}, "exactly one of"),
        (-0.1, ">= 0"),
        (float("nan"), ">= 0"),
        (True, "must be a duration"),
        ([[0.1]], "must be a duration"),
    ],
)
def test_unusable_script_items_are_refused_with_the_reason(item, message):
    ex = FakeExecutor({"a": item})
    with pytest.raises(ScriptError, match=message):
        ex.run(A)


def test_text_entry_is_refused_when_the_script_is_built():
    with pytest.raises(ScriptError, match="not text"):
        FakeExecutor({"a": "0.1"})


def test_execution_items_keep_their_fields_and_get_the_virtual_start():
    scripted = Execution(wall_ns=5_000, start_ns=999, status=-9, voluntary_cs=4)
    ex = FakeExecutor({"a": [0.001, scripted]})
    ex.run(A)
    assert ex.run(A) == Execution(wall_ns=5_000, start_ns=1_000_000, status=-9, voluntary_cs=4)


def test_scripted_failures_exit_code_and_signal():
    ex = FakeExecutor({"a": [{"duration": 0.1, "status": 1}, {"duration": 0.1, "status": -9}]})
    assert [ex.run(A).status for _ in range(2)] == [1, -9]


def test_duration_beyond_the_timeout_times_out_at_the_timeout():
    ex = FakeExecutor({"a": [0.5, 0.1]})
    slow = ex.run(A, timeout_ns=200_000_000)
    fast = ex.run(A, timeout_ns=200_000_000)
    assert (slow.status, slow.wall_ns) == (STATUS_TIMEOUT, 200_000_000)
    assert (fast.status, fast.wall_ns) == (0, 100_000_000)
    assert ex.now_ns() == 300_000_000
    assert [c.timeout_ns for c in ex.calls] == [200_000_000, 200_000_000]


def test_scripted_timeout_status_is_capped_at_the_timeout():
    ex = FakeExecutor({"a": {"duration": 0.05, "status": STATUS_TIMEOUT}})
    assert ex.run(A, timeout_ns=10_000_000).wall_ns == 10_000_000
    assert ex.run(A).status == STATUS_TIMEOUT


def test_callable_script_sees_command_call_index_and_clock():
    seen = []

    def script(command, index, clock_ns):
        seen.append((command.text, index, clock_ns))
        return 0.1 * (index + 1)

    ex = FakeExecutor(script)
    for c in (A, B, A):
        ex.run(c)
    assert seen == [("a", 0, 0), ("b", 1, 100_000_000), ("a", 2, 300_000_000)]


def test_per_command_callable_shares_the_global_call_index():
    ex = FakeExecutor({"a": 0.1, "b": lambda cmd, i, clock: {"duration": 0.01, "status": i}})
    ex.run(A)
    assert ex.run(B).status == 1


def test_drift_simulation_is_deterministic_with_a_seeded_rng():
    def drifting(seed):
        rng = np.random.default_rng(seed)
        ex = FakeExecutor(lambda cmd, i, clock: 0.1 * (1 + clock / 1e11) + rng.normal(0, 1e-3))
        return [ex.run(A).wall_ns for _ in range(50)]

    first, again = drifting(7), drifting(7)
    assert first == again
    assert np.mean(first[-10:]) > np.mean(first[:10])  # the clock-driven drift shows


def test_gap_and_start_offset_move_the_clock_between_executions():
    ex = FakeExecutor({"a": 0.1}, gap_ns=1_000, start_ns=5_000_000_000)
    runs = [ex.run(A) for _ in range(3)]
    assert [r.start_ns for r in runs] == [5_000_000_000, 5_100_001_000, 5_200_002_000]
    ex.advance(7)
    assert ex.now_ns() == 5_300_003_007


def test_call_log_records_order_start_and_result():
    ex = FakeExecutor({"a": 0.1, "b": 0.2})
    ex.run(B)
    ex.run(A, timeout_ns=10**9)
    assert ex.calls == [
        FakeCall(0, "b", B, 0, None, Execution(wall_ns=200_000_000, start_ns=0)),
        FakeCall(
            1, "a", A, 200_000_000, 10**9, Execution(wall_ns=100_000_000, start_ns=200_000_000)
        ),
    ]


def test_exception_items_are_raised_without_advancing_the_clock():
    ex = FakeExecutor({"a": [0.1, KeyboardInterrupt, 0.1], "b": [RuntimeError("disk on fire")]})
    ex.run(A)
    with pytest.raises(KeyboardInterrupt):
        ex.run(A)
    with pytest.raises(RuntimeError, match="disk on fire"):
        ex.run(B)
    assert ex.now_ns() == 100_000_000 and ex.texts == ["a"]
    assert ex.run(A).start_ns == 100_000_000


def test_missing_commands_raise_command_not_found_like_the_real_executor():
    ex = FakeExecutor({"a": 0.1}, missing={"nosuch --flag"})
    with pytest.raises(CommandNotFound, match=r"cannot run '/bin/nosuch' for command 'nosuch --flag': no such file"):
        ex.run(Command("nosuch --flag", ("/bin/nosuch", "--flag")))
    assert ex.calls == []


def test_close_is_idempotent_and_a_closed_fake_refuses_to_run():
    with FakeExecutor() as ex:
        pass
    assert ex.closed
    ex.close()
    with pytest.raises(MeasurementError, match="closed"):
        ex.run(Command("sleep 1", ("sleep", "1")))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"unit": "h"}, "unit"), ({"gap_ns": -1}, "gap_ns"), ({"script": 3}, "script")],
)
def test_bad_constructor_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FakeExecutor(**kwargs)
