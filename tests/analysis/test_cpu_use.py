"""Whether a benchmark is CPU-bound, read from enough samples: under load a CPU-bound program is
read as CPU-bound, and ``--metric auto`` chooses its CPU time, without ``cpu-time-partial``."""

from __future__ import annotations

import numpy as np

from pairbench.analysis.rules import chosen_metric, cpu_use


def loaded_spin(n: int, unswitched: int, seed: int = 9):
    """A CPU-bound 8 ms program under load 10: ``n - unswitched`` samples switched out by other tasks,
    and the unswitched ones still waited for a CPU after they started (wall 2.5 times the CPU time)."""
    rng = np.random.default_rng(seed)
    cpu = rng.normal(8e6, 0.3e6, n)
    involuntary = np.r_[np.zeros(unswitched), rng.integers(1, 6, n - unswitched)]
    wall = cpu * np.r_[np.full(unswitched, 2.5), rng.uniform(1.5, 4.0, n - unswitched)]
    return wall, cpu, involuntary, np.ones(n)


def test_a_cpu_bound_program_under_load_is_not_read_as_off_cpu_from_a_few_unswitched_samples():
    # Before a minimum was required, 3 unswitched samples of 20 read "off-cpu" (share 0.6): wall time.
    use = cpu_use(*loaded_spin(20, 3))
    assert (use.kind, use.off_cpu_share, use.unswitched) == ("unknown", None, 3)
    assert chosen_metric(use) == "cpu"


def test_over_a_whole_loaded_run_a_few_percent_unswitched_samples_leave_the_use_unknown():
    # The rule over all rounds gives cpu-time-partial: 15 unswitched of 500 read "off-cpu" before.
    use = cpu_use(*loaded_spin(500, 15))
    assert use.kind == "unknown" and chosen_metric(use) == "cpu"


def test_a_quarter_of_the_samples_unswitched_is_enough_to_read_the_time_off_the_cpu():
    wall, cpu, involuntary, voluntary = loaded_spin(20, 5)
    assert cpu_use(wall, cpu, involuntary, voluntary).kind == "off-cpu"  # 5 of 20: read, and 0.6 off
    assert cpu_use(wall[1:], cpu[1:], involuntary[1:], voluntary[1:]).kind == "unknown"  # 4 of 19


def test_a_short_run_needs_the_minimum_count_of_unswitched_samples_too():
    assert cpu_use([11e6] * 4, [1.2e6] * 4, [0] * 4).kind == "unknown"  # 4 of 4: too few to read
    assert cpu_use([11e6] * 5, [1.2e6] * 5, [0] * 5).kind == "off-cpu"


def test_a_sleep_interrupted_as_often_as_it_gives_up_the_cpu_waits_but_a_shell_around_a_spin_does_not():
    # measured beside busy loops and test workers: a 10 ms nanosleep, 2 voluntary switches a sample (its
    # start, its sleep) against 2 involuntary ones; sh -c around a CPU-bound program, 4 against 10
    sleep = cpu_use([12e6] * 20, [1.2e6] * 20, [2] * 20, [2] * 20)
    assert (sleep.kind, chosen_metric(sleep)) == ("waits", "wall")
    shell = cpu_use([20e6] * 20, [5e6] * 20, [10] * 20, [4] * 20)
    assert (shell.kind, chosen_metric(shell)) == ("unknown", "cpu")
    spin = cpu_use([20e6] * 20, [5e6] * 20, [1] * 20, [1] * 20)  # its start is its only voluntary switch
    assert chosen_metric(spin) == "cpu"
