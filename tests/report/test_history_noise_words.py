"""A history of one-sided runs on a loaded machine says that its points are not comparable at its
noise, shows that noise in each point's interval, and points to the paired commands."""

from __future__ import annotations

import numpy as np

from pairbench.analysis.history import History, Point, benchmark_history, group_change_points
from pairbench.model import BenchmarkKey
from pairbench.report.history import render_history


def _history(values, run_half_width: float) -> History:
    points = [Point(f"{k:040x}"[::-1], "2026-02-01T00:00:00+00:00", "main", False, "", 1, float(v),
                    v * (1 - run_half_width), v * (1 + run_half_width), (f"u{k}",), v * (1 - run_half_width),
                    v * (1 + run_half_width)) for k, v in enumerate(values)]
    h = benchmark_history(BenchmarkKey("parse_doc", (), "ns"), points)
    return History("m", (h,), group_change_points([h]))


def test_a_history_whose_commits_scatter_far_beyond_one_runs_interval_says_so_and_what_to_do():
    # The tomli history of the real-world trial: 22.5% noise per commit, each run +-1% (R1). Before,
    # each point was printed with its run's +-1% and the noise line said nothing more.
    values = 400e3 * np.exp(np.random.default_rng(21).normal(0.0, 0.225, 32))
    text = render_history(_history(values, 0.011))
    assert "times one run's own ±1.1%" in text and "cannot be told from it here" in text
    assert "pairbench confirm A B" in text and "pairbench bisect GOOD BAD" in text
    last = [line for line in text.split("latest:")[1].splitlines() if "result(s)" in line][-1]
    low, high = (float(v.split()[0]) for v in last.split("[")[1].split("]")[0].split(", "))
    median = float(last.split()[2])
    assert high / low > 1.5 and low < median < high  # the noise between commits, not +-1.1%


def test_a_quiet_history_says_nothing_more_than_its_noise():
    values = 400e3 * np.exp(np.random.default_rng(22).normal(0.0, 0.004, 32))
    text = render_history(_history(values, 0.003))
    assert "noise about" in text and "times one run's own" not in text
