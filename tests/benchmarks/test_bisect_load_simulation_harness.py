"""The pure simulation of benchmarks/bisect_load_simulation.py: a few seeded searches, the rule
of this tree and one loaded from a file."""

from __future__ import annotations

from pathlib import Path

from scripts import benchmark_script

simulation = benchmark_script("bisect_load_simulation")


def test_without_load_every_search_names_the_right_commit():
    counts = simulation.simulate(simulation.rule_module(None), 30, 1.0, 0.1, 5)
    assert counts == {"right": 30, "wrong": 0, "spread": 0, "inconclusive": 0}


def test_a_rule_loaded_from_a_file_is_the_one_simulated():
    import pairbench.analysis.bisection as here

    loaded = simulation.rule_module(Path(here.__file__))
    assert loaded is not here and loaded.Search is not here.Search
    assert simulation.simulate(loaded, 40, 0.4, 0.1, 6) == simulation.simulate(here, 40, 0.4, 0.1, 6)


def test_under_load_that_moves_the_steps_size_no_search_names_a_wrong_commit():
    """400 searches with each comparison's step scaled by its own load (0.4-1): never a wrong
    commit, and the commit still named where the comparisons see enough of the step."""
    counts = simulation.simulate(simulation.rule_module(None), 400, 0.4, 0.1, 20261127)
    assert counts["wrong"] == 0 and counts["spread"] <= 4 and counts["right"] >= 0.3 * 400
