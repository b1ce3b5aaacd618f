"""Work given to the sampler to run beside the warmup rounds (loading what follows the last sample)
runs while they run, has ended before the first measured sample, and never beside one."""

from __future__ import annotations

import os
import threading

import pytest
from fakes import FakeExecutor

from pairbench.command import Command
from pairbench.errors import CommandFailed
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import CommandTarget

A, B = (Command(text, (text,)) for text in ("a", "b"))


def _plan(warmup: int) -> SamplingPlan:
    return SamplingPlan((CommandTarget(A, "a"), CommandTarget(B, "b")), StopRule(runs=3), warmup_rounds=warmup,
                        seed=1)


class Beside:
    """Work that waits for the first warmup sample to have started, then notes that it ran."""

    def __init__(self):
        self.sample_started, self.ran = threading.Event(), False

    def __call__(self):
        assert self.sample_started.wait(10)
        self.ran = True


def _sampled(warmup: int, beside) -> list[dict]:
    seen = []

    def duration(command, index, clock_ns):
        if isinstance(beside, Beside):
            beside.sample_started.set()
        seen.append({"threads": sorted(t.name for t in threading.enumerate()),
                     "tasks": len(os.listdir("/proc/self/task")), "ran": getattr(beside, "ran", None)})
        return 0.01

    sampler = Sampler(FakeExecutor(duration), _plan(warmup), beside_warmup=beside)  # numpy loaded by now
    before = len(os.listdir("/proc/self/task"))  # this process's own (numpy's OpenBLAS pool among them)
    sampler.run()
    return [{**s, "tasks": s["tasks"] - before} for s in seen]


def test_the_work_runs_beside_the_warmup_round_and_has_ended_before_the_first_measured_sample():
    beside = Beside()
    seen = _sampled(1, beside)
    assert beside.ran
    assert len(seen) == 2 + 6
    assert "pairbench-beside-warmup" in seen[0]["threads"]  # it waited for this sample to start
    measured = seen[2:]
    assert all(s["threads"] == ["MainThread"] and s["ran"] for s in measured)
    assert [s["tasks"] for s in measured] == [0] * 6  # none added: the kernel's thread ended too


def test_without_warmup_rounds_the_work_is_not_run_beside_a_measured_sample():
    ran = []
    seen = _sampled(0, lambda: ran.append(True))
    assert ran == [] and all(s["threads"] == ["MainThread"] for s in seen)


def test_what_the_work_raises_is_dropped_and_the_rounds_go_on():
    def failing():
        raise ImportError("no such module")

    seen = _sampled(1, failing)
    assert len(seen) == 8 and all(s["threads"] == ["MainThread"] for s in seen[2:])


def test_a_warmup_sample_that_fails_ends_the_rounds_only_once_the_work_has_ended():
    # what follows a failure (--cleanup, the analysis) must not import beside the loading thread: the
    # work is still running when the failing sample is taken, and has ended when the failure is raised
    beside = Beside()

    def duration(command, index, clock_ns):
        beside.sample_started.set()
        return {"duration": 0.01, "status": 1}

    with pytest.raises(CommandFailed):
        Sampler(FakeExecutor(duration), _plan(1), beside_warmup=beside).run()
    assert beside.ran and "pairbench-beside-warmup" not in {t.name for t in threading.enumerate()}
