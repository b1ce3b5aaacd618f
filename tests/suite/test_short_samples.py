"""``bench`` on worker lanes: a --sample-time so short that a sample's fixed cost (its clock reads)
would pull every ratio towards 1 is raised, and the verdict says so (``measure.fixed_cost``).

The workers are scripted (``tests/support/fakes.FakeWorkers``, a virtual clock): a call of 1 us,
a sample's fixed cost of 1 us, told to the lane as the measured one."""

from __future__ import annotations

import json

from cli_runner import invoke
from fakes import FakeWorkers

from pairbench.store.resultfile import read_result

OLD = {"parse": {"per_iteration_ns": 1_000.0, "fixed_ns": 1_000.0}}
NEW = {"parse": {"per_iteration_ns": 3_500.0, "fixed_ns": 1_000.0}}
ARGV = ("bench", "--harness", "pairbench", "--seed", "4", "-q", "--runs", "24", "--no-store")


def measured(sample_time: str, sample_cost_ns: float) -> tuple[dict, str]:
    workers = FakeWorkers({"./bench-old": OLD, "./bench-new": NEW}, seed=1, noise=0.001,
                          sample_cost_ns=sample_cost_ns)
    result = invoke(*ARGV, "--sample-time", sample_time, "--json", "r.json", "./bench-old", "./bench-new",
                    workers=workers)
    assert result.code == 0, result.err
    with open("r.json") as file:
        return json.load(file), result.out


def rounds_counts() -> set[int]:
    """The iteration counts of the rounds' samples in the result written."""
    run = read_result("r.json")
    return {int(n) for s in run.samples.values()
            for n, w in zip(s.columns["iterations"], s.columns["warmup"], strict=True) if not w}


def test_a_ten_microsecond_sample_time_is_raised_until_the_clocks_cost_is_one_percent_and_said(worker_programs):
    document, _ = measured("10us", 1_000.0)
    raised = [n for n in document["notes"] if n["code"] == "sample-time-raised"]
    assert len(raised) == 1 and raised[0]["subject"] == {"benchmark": "parse"}
    data = raised[0]["data"]
    # 2 calls of 3.5 us make 10 us; 1 us is at most 1% of 128 calls of 1 us, not of 64
    assert data["chosen"] == 2 and data["iterations"] == 128
    assert rounds_counts() == {128}
    markdown = invoke("report", "r.json", "--format", "markdown")
    assert markdown.code == 0 and "10.0 µs was raised: a sample runs 128 iterations, not 2" in markdown.out


def test_the_sample_time_asked_is_kept_where_the_clocks_cost_is_small_beside_it(worker_programs):
    document, _ = measured("10us", 0.0)
    assert not [n for n in document["notes"] if n["code"] == "sample-time-raised"]
    assert rounds_counts() == {2}
