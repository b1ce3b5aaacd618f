"""``compare_functions``: two Python callables compared in this process, the library call."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest
from cli_runner import invoke
from fakes import ScriptedCalls

from pairbench.api import compare_functions
from pairbench.sessions import functions
from pairbench.sessions.functions import time_calls

pytestmark = pytest.mark.e2e


def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total


def triple(n):
    return spin(3 * n)


THREE_TIMES = """
import json
import numpy as np
from pairbench.sessions.functions import measure_functions
{functions}
run, analysis = measure_functions(spin, triple, (300,), max_time="5s", seed=3)
[c] = analysis.comparisons
series = list(run.samples.values())
print(json.dumps({{"verdict": c.verdict.verdict, "estimate": c.effect.estimate, "low": c.effect.low,
                  "high": c.effect.high, "metric": c.metric,
                  "iterations": sorted({{int(v) for s in series for v in s.columns["iterations"]}}),
                  "interrupted": [int(np.sum(s.columns["involuntary_cs"] > 0)) for s in series]}}))
"""


@pytest.mark.slow
def test_a_function_three_times_slower_is_found_slower():
    """spin(900) costs 3.5 times spin(300) (+250%, quiet and beside load alike, once the samples last
    about 1 ms). Inside this suite it once gave +105% [90, 109] at 32 iterations a sample, which no
    standalone run did (36 runs beside two busy loops or a parallel pytest: +245..+262%); the cause
    is not known. This virtual machine has phases of seconds in which some processes run a loop 2.3
    times slower (tests/cli/test_bisect_command.py), so the bound is the verdict and an effect far
    from the pull of a sample's fixed cost (the next test's +89%), not the size. Measured in a fresh
    interpreter, as a user's process is, with the figures in the message."""
    script = THREE_TIMES.format(functions=inspect.getsource(spin) + inspect.getsource(triple))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "slower", result
    assert result["low"] > 50.0, result  # percent


def test_a_function_against_itself_is_compared_as_two_sides_and_shows_no_large_change(monkeypatch):
    """Timed by a script (``fakes.ScriptedCalls``: 10 us a call, 1% noise, virtual time), so the
    verdict load could flip on a real clock is asserted too."""
    monkeypatch.setattr(functions, "CALLS", ScriptedCalls(lambda function, args: 1e-5, seed=4))
    result = compare_functions(spin, spin, 300, max_time="3s", seed=4)
    assert result.baseline != result.candidate
    assert result.effect is not None and abs(result.effect.estimate) < 1.0  # percent
    assert result.verdict.verdict == "equivalent"


def test_an_exception_in_a_function_reaches_the_caller():
    def broken(n):
        raise KeyError("no such key")

    with pytest.raises(KeyError, match="no such key"):
        compare_functions(spin, broken, 10, max_time="1s")


def test_the_result_document_can_be_shown(tmp_path):
    path = tmp_path / "functions.json"
    compare_functions(spin, triple, 100, max_time="2s", seed=5, json_path=str(path))
    code, out, _ = invoke("show", str(path))
    assert code == 0
    assert "slower" in out


def test_a_probe_another_task_preempted_does_not_size_the_samples(monkeypatch):
    """Beside `make test` and two busy loops, 8 of 184 runs of the test above chose 1 to 8 iterations
    instead of 32 from a single probe preempted for a time slice; in samples of tens of us the
    constant cost of reading the thread's CPU clock (about 1 us) pulled the effect from +250% to
    +187..235%, intervals excluding it. Here every function's first sample of each count is
    preempted for 4 ms (scripted): the count is still the one of the functions' own time."""
    import functools

    from pairbench.measure.executor import Execution
    from pairbench.measure.worker import choose_iterations
    from pairbench.sessions import functions

    ns_per_call, seen = {spin: 10_000, triple: 36_000}, set()

    def probed(function, n, args, kwargs, start_ns):
        preempted = (function, n) not in seen
        seen.add((function, n))
        return Execution(wall_ns=n * ns_per_call[function] + 4_000_000 * preempted, start_ns=start_ns,
                         user_ns=n * ns_per_call[function], involuntary_cs=int(preempted))

    monkeypatch.setattr(functions, "time_calls", probed)
    probe = functools.partial(functions.slowest_probe, (spin, triple), (300,), {})
    assert choose_iterations(probe, 1_000_000) == 32  # 1 ms / 36 us = 28 calls: 32 is the nearest power of two


def test_the_collector_is_off_inside_the_timed_loop_and_restored_after():
    import gc

    seen = []
    time_calls(lambda: seen.append(gc.isenabled()), 4, (), {}, 0)
    assert seen == [False] * 4 and gc.isenabled()


NOTING = """
import json, sys, threading
from pairbench.api import compare_functions
seen = []
def noting():
    seen.append((len(sys.modules), sorted(t.name for t in threading.enumerate())))
compare_functions(noting, noting, max_time="0.3s", sample_time="50us", seed=5)
print(json.dumps(seen))
"""


def test_the_statistics_load_before_the_first_call_and_nothing_runs_beside_the_functions():
    # in a fresh interpreter: here the statistics may be loaded already by another test
    done = subprocess.run([sys.executable, "-c", NOTING], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert len(seen) > 100 and all(s == seen[0] for s in seen)  # nothing imported between the calls
    assert seen[0][1] == ["MainThread"]


def test_runs_joined_into_one_keep_every_runs_samples_and_notes():
    """The pytest plugin's one document of its tests: a note of a later test's run was dropped."""
    from pairbench.notes import Note
    from pairbench.sessions.functions import joined, measure_functions

    first, _ = measure_functions(spin, None, (100,), name="a", max_time="50ms", seed=1)
    second, _ = measure_functions(spin, None, (200,), name="b", max_time="50ms", seed=2)
    noted = Note("failed-rounds", {"count": 1})
    run = joined([first, second.replace(notes=(*second.notes, noted))], "pytest")
    assert [key.name for key in run.benchmarks] == ["a", "b"] and [s.name for s in run.sides] == ["pytest"]
    assert noted in run.notes
    assert len(run.samples[(0, 0)]) == len(first.samples[(0, 0)])
    assert len(run.samples[(1, 0)]) == len(second.samples[(0, 0)])


def test_a_sample_time_too_short_for_the_clocks_own_cost_is_raised_and_said():
    """At --sample-time 1us a sample would be one call, and reading the clocks (about 1 us on a KVM
    guest, some 100 ns on bare metal) a large share of it: the count is raised until that cost is at
    most 1% of the quicker function's sample, every sample runs the raised count, and a note says so."""
    from pairbench.sessions.functions import measure_functions

    run, analysis = measure_functions(spin, triple, (30,), max_time="1s", sample_time="1us", seed=5)
    raised = [n for n in run.notes if n.code == "sample-time-raised"]
    assert len(raised) == 1
    data = raised[0].data
    assert data["iterations"] > data["chosen"] and data["fixed_ns"] <= 0.01 * data["sample_ns"] + 1e-9
    counts = {int(n) for s in run.samples.values() for n, w in zip(s.columns["iterations"], s.columns["warmup"],
                                                                   strict=True) if not w}
    assert counts == {data["iterations"]}
    assert raised[0] in analysis.comparisons[0].notes  # what compare_functions returns
