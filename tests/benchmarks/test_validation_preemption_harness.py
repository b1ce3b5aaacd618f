"""The pure parts of benchmarks/validation_preemption.py and benchmarks/block_symmetry.py: the
samples they build and the statistics they print (no pairbench runs here)."""

from __future__ import annotations

import numpy as np
from scripts import benchmark_script

study = benchmark_script("validation_preemption")
symmetry = benchmark_script("block_symmetry")


def test_validation_samples_take_each_count_six_times_and_stretch_as_many_as_asked():
    rng = np.random.default_rng(1)
    clean = study.validation_samples(np.random.default_rng(1), 1000.0, 0.0, 1024, 0.0, stretched=0)
    taken = study.validation_samples(rng, 1000.0, 0.0, 1024, 0.0, stretched=2)
    assert sorted({s.iterations for s in taken}) == [128, 256, 512, 1024]
    assert all(sum(s.iterations == n for s in taken) == 6 for n in (128, 256, 512, 1024))
    assert all(s.wall_ns == s.iterations * 1000 for s in clean)
    longer = [s.wall_ns - s.iterations * 1000 for s in taken if s.wall_ns != s.iterations * 1000]
    assert len(longer) == 2 and all(2_000_000 <= extra <= 30_000_000 for extra in longer)


def test_the_old_least_squares_rule_calls_a_real_body_elided_once_a_sample_is_stretched():
    old = new = 0
    for seed in range(20):  # the old rule is wrong about 92% of the time here, the new one never
        stretched = study.validation_samples(np.random.default_rng(seed), 40_000.0, 0.0, 25, 0.10, stretched=1)
        old += study.least_squares_elided(stretched) == "warn"
        new += study.judge_elided_body(stretched).status == "warn"
    assert old >= 15 and new == 0


def test_the_chi_square_of_positive_blocks_is_zero_for_exactly_half(capsys):
    runs = [np.array([0.01, -0.01] * 50), np.array([-0.02, 0.02] * 50)]
    symmetry.summarize("even", runs)
    assert "chi-square 0.00 on 2 df, p 1.000" in capsys.readouterr().out
