"""Verdicts on CPU time (--metric cpu): the values compared, the notes when wall and CPU time
disagree, and what every renderer says of it."""

from __future__ import annotations

import json

import numpy as np
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.analysis.comparison import Criteria
from pairbench.analysis.derived import comparison_record
from pairbench.analysis.rules import cpu_use
from pairbench.analysis.stopping import StoppingRule
from pairbench.measure.sampler import Measured, RoundEnd
from pairbench.model import BenchmarkKey, Sample, Samples
from pairbench.parsers import settings_from_stored
from pairbench.report.sentences import verdict_label, verdict_sentence
from pairbench.report.wording import word

ROUNDS = 60
RNG = np.random.default_rng(24)
CPU = 25_000_000 * np.exp(RNG.normal(0.0, 0.003, (2, ROUNDS)))  # a steady 25 ms of CPU per run
STOLEN = RNG.exponential(30_000_000, (2, ROUNDS)) * RNG.integers(1, 6, (2, ROUNDS))  # other tasks' slices


def loaded_pair(change: float, *, switches: int = 8, off_cpu: float = 0.0):
    """A baseline and a candidate ``change`` times its CPU time, whose wall times are their CPU
    times plus what other tasks took (``switches`` involuntary switches each), plus ``off_cpu``
    of sleeping (no switch) per run."""
    out = []
    for k, factor in enumerate((1.0, change)):
        cpu = CPU[k] * factor
        wall = cpu + STOLEN[k] * (switches > 0) + off_cpu
        out.append(series(wall, user_ns=cpu * 0.9, sys_ns=cpu * 0.1, involuntary_cs=[switches] * ROUNDS,
                          start_seq=k, stride=2))
    return out


def compared(base: Samples, cand: Samples, **options):
    run = make_run("compare", [side("old", "baseline"), side("new", "candidate")], {(0, 0): base, (0, 1): cand},
                   runs=ROUNDS, **options)
    (comparison,) = analyse(run).comparisons
    return comparison


def codes(comparison) -> set[str]:
    return {n.code for n in comparison.notes}


def test_a_slowdown_hidden_in_other_tasks_time_slices_is_found_on_cpu_time_not_on_wall_time():
    base, cand = loaded_pair(1.02)
    on_wall, on_cpu = compared(base, cand, metric="wall"), compared(base, cand, metric="cpu")
    assert on_wall.verdict.verdict == "inconclusive" and on_wall.metric == "wall"
    assert on_cpu.verdict.verdict == "slower" and on_cpu.metric == "cpu"
    assert 1.5 < on_cpu.effect.estimate < 2.5
    assert "metrics-disagree" not in codes(on_cpu) and "cpu-time-partial" not in codes(on_cpu)


def test_a_harness_that_timed_its_own_loop_on_the_cpu_clock_is_compared_on_that_time():
    base, cand = loaded_pair(1.0)
    own = {"cpu_ns": CPU[0] * 1.05}
    base = Samples(base.columns, {"cpu_ns": CPU[0]})
    cand = Samples(cand.columns, own)
    found = compared(base, cand, metric="cpu")
    assert found.verdict.verdict == "slower" and 4.0 < found.effect.estimate < 6.0


def test_a_verdict_on_cpu_time_is_refused_when_no_cpu_time_was_recorded():
    walls = 10_000_000 + np.arange(ROUNDS) * 1000
    found = compared(series(walls, start_seq=0, stride=2), series(walls * 1.1, start_seq=1, stride=2), metric="cpu")
    assert found.verdict.refused and found.verdict.refusal.code == "no-cpu-time"
    assert found.verdict.refusal.data["sides"] == ["new", "old"]


def test_rounds_whose_cpu_time_read_zero_are_left_out_on_both_sides_alike():
    base, cand = loaded_pair(1.03)
    user = base["user_ns"].copy()
    user[:5] = 0
    zeroed = Samples({**base.columns, "user_ns": user, "sys_ns": np.where(np.arange(ROUNDS) < 5, 0,
                                                                             base["sys_ns"])})
    found = compared(zeroed, cand, metric="cpu")
    assert found.rounds == ROUNDS - 5 and found.verdict.verdict == "slower"


def test_a_sleeping_command_judged_on_cpu_time_says_to_trust_wall_time():
    base, cand = loaded_pair(1.0, switches=0, off_cpu=25_000_000.0)  # 25 ms asleep each run
    slept_more = Samples({**cand.columns, "wall_ns": cand["wall_ns"] + 10_000_000})  # 10 ms more asleep
    found = compared(base, slept_more, metric="cpu")
    assert found.verdict.verdict != "slower"
    partial = next(n for n in found.notes if n.code == "cpu-time-partial")
    assert partial.data["kind"] == "off-cpu" and partial.data["off_cpu_share"] > 0.25
    disagree = next(n for n in found.notes if n.code == "metrics-disagree")
    assert disagree.data["other"] == "wall" and disagree.data["other_low"] > 5.0


def test_several_threads_show_as_cpu_time_above_wall_time():
    use = cpu_use([10e6] * 8, [19e6] * 8, [0] * 8)
    assert use.kind == "threads" and use.cpu_over_wall > 1.8


def test_every_sample_interrupted_leaves_the_time_off_the_cpu_unknown():
    assert cpu_use([90e6] * 8, [25e6] * 8, [3] * 8).kind == "unknown"
    assert cpu_use([25.4e6] * 8, [25e6] * 8, [0] * 8).kind == "cpu-bound"


def test_every_sample_interrupted_but_each_giving_up_the_cpu_itself_is_decided_on_wall_time():
    """A sleeping command on a busy machine: its short bursts of work are all interrupted, so no quiet
    sample shows its waiting, but each sample also switched out by itself (its sleep). --metric auto
    chose CPU time for it, and could never see a sleep grow from 10 to 30 ms (the Action's test)."""
    from pairbench.analysis.rules import chosen_metric

    waiting = cpu_use([11e6] * 8, [1.2e6] * 8, [1] * 8, [2] * 8)
    assert waiting.kind == "waits" and chosen_metric(waiting) == "wall"
    for voluntary in (0, 1, 4):  # a start's one switch; a shell's waits for its child, fewer than forced
        computing = cpu_use([90e6] * 8, [25e6] * 8, [10] * 8, [voluntary] * 8)
        assert computing.kind == "unknown" and chosen_metric(computing) == "cpu"


def test_a_result_stored_before_the_metric_existed_is_read_as_decided_on_wall_time():
    stored = {"sampling": {"warmup": 1, "max_time_ns": 60_000_000_000, "seed": 3}, "decision": {"alpha": 0.01}}
    assert settings_from_stored("compare", ["a", "b"], [], stored).decision.metric == "wall"


def test_a_verdict_on_cpu_time_says_so_in_its_label_its_sentence_and_its_json():
    base, cand = loaded_pair(1.02)
    found = compared(base, cand, metric="cpu")
    assert verdict_label(found) == "slower on CPU time"
    assert "slower than old on CPU time [" in verdict_sentence(found)
    assert json.loads(json.dumps(comparison_record(found, "")))["metric"] == "cpu"


def test_the_stopping_rule_follows_the_cpu_time_of_each_round():
    rule = StoppingRule(Criteria(alpha=0.01, metric="cpu"), 0, [1])
    for r in range(ROUNDS):
        samples = tuple(Measured(k, 0, Sample(wall_ns=int(1e8 * (1 + (r + k) % 3)), user_ns=int(CPU[k, r] * (1 + 0.03 * k)),
                                              pair=r)) for k in (0, 1))
        rule.on_round(RoundEnd(r, False, samples, r + 1, 2 * r + 2, 0))
    assert rule.decide() == "the verdict was decided (slower)"


def test_a_count_is_compared_on_its_value_whatever_the_metric():
    base, cand = loaded_pair(1.0)
    run = make_run("compare", [side("old", "baseline"), side("new", "candidate")],
                   {(0, 0): base, (0, 1): Samples(cand.columns, {})}, benchmarks=(BenchmarkKey("allocs", (), "B"),),
                   runs=ROUNDS, metric="cpu")
    assert analyse(run).comparisons[0].metric == "wall"


# --------------------------------------------------------------------------- --metric auto


def test_auto_decides_a_cpu_bound_benchmark_on_cpu_time_and_says_why():
    base, cand = loaded_pair(1.02)  # every sample interrupted by other tasks
    found = compared(base, cand)  # the default
    assert found.metric == "cpu" and found.verdict.verdict == "slower"
    chosen = next(n for n in found.notes if n.code == "metric-chosen")
    assert chosen.data == {"metric": "cpu", "rounds": 10, "kind": "unknown", "off_cpu_share": None,
                           "cpu_over_wall": chosen.data["cpu_over_wall"]}


def test_auto_decides_a_sleeping_benchmark_on_wall_time():
    base, cand = loaded_pair(1.0, switches=0, off_cpu=25_000_000.0)
    slept_more = Samples({**cand.columns, "wall_ns": cand["wall_ns"] + 10_000_000})
    found = compared(base, slept_more)
    assert found.metric == "wall" and found.verdict.verdict == "slower"
    assert next(n for n in found.notes if n.code == "metric-chosen").data["kind"] == "off-cpu"
    assert "cpu-time-partial" not in codes(found)


def test_auto_chooses_from_the_first_rounds_alone_as_the_stopping_rule_does():
    base, cand = loaded_pair(1.03)
    sleepy = 25_000_000 * (np.arange(ROUNDS) < 10)  # asleep, uninterrupted, in the first 10 rounds only
    switches = np.where(np.arange(ROUNDS) < 10, 0, 8)
    base, cand = (Samples({**s.columns, "wall_ns": s["wall_ns"] + sleepy, "involuntary_cs": switches})
                  for s in (base, cand))
    found = compared(base, cand)
    rule = StoppingRule(Criteria(alpha=0.01, metric="auto"), 0, [1])
    for r, rows in enumerate(zip(base.rows(), cand.rows(), strict=True)):
        rule.on_round(RoundEnd(r, False, tuple(Measured(k, 0, row) for k, row in enumerate(rows)), r + 1, 0, 0))
    assert found.metric == rule.metric() == "wall"


def test_a_result_without_cpu_time_is_decided_on_wall_time_by_auto_without_a_note():
    walls = 10_000_000 + np.arange(ROUNDS) * 1000
    found = compared(series(walls, start_seq=0, stride=2), series(walls * 1.1, start_seq=1, stride=2))
    assert found.metric == "wall" and found.verdict.verdict == "slower" and "metric-chosen" not in codes(found)


def test_a_cpu_time_choice_is_checked_again_and_a_benchmark_seen_waiting_moves_to_wall_time_from_round_one():
    # a 10 ms sleep, then 12 ms, on equal CPU time: each sample gives up the CPU twice (its start, its
    # sleep); other tasks interrupt each of the first 10 rounds four times (the choice cannot tell it
    # waits: CPU time), then once (at 40 rounds the waiting shows: wall time, its sequence from round 1)
    base, cand = loaded_pair(1.0, switches=0, off_cpu=10_000_000.0)
    cand = Samples({**cand.columns, "wall_ns": cand["wall_ns"] + 2_000_000})
    switches = np.where(np.arange(ROUNDS) < 10, 4, 1)
    base, cand = (Samples({**s.columns, "involuntary_cs": switches, "voluntary_cs": np.full(ROUNDS, 2)})
                  for s in (base, cand))
    found = compared(base, cand)
    assert (found.metric, found.verdict.verdict) == ("wall", "slower")
    chosen = next(n for n in found.notes if n.code == "metric-chosen")
    assert (chosen.data["rounds"], chosen.data["first_rounds"], chosen.data["kind"]) == (40, 10, "waits")
    assert "from its first 40 rounds (its first 10 had looked CPU-bound)" in word(chosen)
    rule = StoppingRule(Criteria(alpha=0.01, metric="auto"), 0, [1])
    for r, rows in enumerate(zip(base.rows(), cand.rows(), strict=True)):
        rule.on_round(RoundEnd(r, False, tuple(Measured(k, 0, row) for k, row in enumerate(rows)), r + 1, 0, 0))
        assert rule.metric() == (None if r < 9 else "cpu" if r < 39 else "wall")
    assert np.allclose(rule.values(), np.log(cand["wall_ns"] / base["wall_ns"]))  # wall time from the first round


def test_a_cpu_bound_benchmark_keeps_cpu_time_at_every_check():
    base, cand = loaded_pair(1.02)  # interrupted every sample, one voluntary switch (its start) each
    base, cand = (Samples({**s.columns, "voluntary_cs": np.full(ROUNDS, 1)}) for s in (base, cand))
    found = compared(base, cand)
    assert (found.metric, found.verdict.verdict) == ("cpu", "slower")
    assert next(n for n in found.notes if n.code == "metric-chosen").data["rounds"] == 10
