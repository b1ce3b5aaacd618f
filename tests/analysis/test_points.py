"""An unpaired history's point: the metric a record keeps a series on, and its median on it."""

from __future__ import annotations

import numpy as np
from runs import make_run, series, side

from pairbench.analysis.points import point_metric, stored_point


def _run(metric: str, walls, cpus, voluntary=None):
    n = len(walls)
    samples = series(walls, user_ns=cpus, sys_ns=[0] * n, involuntary_cs=[0] * n,
                     voluntary_cs=voluntary if voluntary is not None else [0] * n)
    return make_run("run", [side("work")], {(0, 0): samples}, runs=n, metric=metric)


def test_a_point_keeps_the_metric_the_record_asked_for_and_its_median_on_it():
    walls, cpus = [1000, 1100, 1200, 1300, 5000, 1050, 1150, 1250, 1350], [900, 910, 920, 930, 940, 950, 960, 970, 980]
    wall, cpu = stored_point(_run("wall", walls, cpus), 0, 0), stored_point(_run("cpu", walls, cpus), 0, 0)
    assert (wall.metric, wall.median) == ("wall", float(np.median(walls)))
    assert (cpu.metric, cpu.median) == ("cpu", float(np.median(cpus)))
    assert cpu.low <= cpu.median <= cpu.high and cpu.mean == float(np.mean(cpus))


def test_auto_keeps_a_cpu_bound_series_on_cpu_time_and_a_sleeping_one_on_wall_time():
    busy = _run("auto", [1000] * 12, [990] * 12)
    sleeping = _run("auto", [1000] * 12, [100] * 12, voluntary=[3] * 12)
    assert point_metric(busy.samples[(0, 0)], "auto") == "cpu"
    assert point_metric(sleeping.samples[(0, 0)], "auto") == "wall"
    assert stored_point(busy, 0, 0).metric == "cpu" and stored_point(sleeping, 0, 0).metric == "wall"
