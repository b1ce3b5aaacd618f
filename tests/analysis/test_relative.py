"""hyperfine's relative summary of a ``run``: each series against the fastest, paired by round, with
scipy's quantile test as the independent reference for the interval."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from runs import make_run, series, side

from pairbench.analysis import analyse
from pairbench.model import BenchmarkKey


def _run(walls: dict[str, np.ndarray], kind: str = "run"):
    names = list(walls)
    samples = {(0, i): series(w, start_seq=i, stride=len(names)) for i, w in enumerate(walls.values())}
    return make_run(kind, [side(n) for n in names], samples)


def test_each_series_is_the_median_per_round_ratio_to_the_fastest_with_the_sign_test_interval():
    rng = np.random.default_rng(8)
    fast = np.floor(1e6 * rng.lognormal(0, 0.05, 30))
    slow = np.floor(fast * np.exp(rng.normal(np.log(1.5), 0.1, 30)))
    relative = analyse(_run({"slow": slow, "fast": fast})).relative
    assert len(relative) == 1
    (one,) = relative
    assert (one.side, one.reference_side, one.rounds) == ("slow", "fast", 30)
    ratios = np.log(slow / fast)
    reference = scipy.stats.quantile_test(ratios, q=np.median(ratios), p=0.5).confidence_interval(0.95)
    assert one.times == pytest.approx(np.exp(np.median(ratios)), rel=1e-9)
    assert (one.low, one.high) == pytest.approx((np.exp(reference.low), np.exp(reference.high)), rel=1e-9)


def test_too_few_rounds_give_the_ratio_without_an_interval_and_say_how_many_are_needed():
    (one,) = analyse(_run({"a": np.full(4, 2e6) * [1, 1.1, 1, 1.2], "b": np.full(4, 1e6)})).relative
    assert one.low is None and one.needed == 6 and one.times == pytest.approx(np.exp(np.median(np.log([2, 2.2, 2, 2.4]))))


def test_only_a_run_of_several_series_has_a_relative_summary():
    assert analyse(_run({"only": np.full(10, 1e6)})).relative == ()
    assert analyse(_run({"a": np.full(10, 1e6), "b": np.full(10, 2e6)}, kind="compare")).relative == ()
    parameterized = make_run("run", [side("sleep {t}")],
                             {(b, 0): series(np.full(8, 1e6 * (b + 1)), start_seq=b, stride=2) for b in range(2)},
                             benchmarks=[BenchmarkKey("command", (("t", "1"),)), BenchmarkKey("command", (("t", "2"),))])
    (one,) = analyse(parameterized).relative
    assert one.benchmark.params == (("t", "2"),) and one.times == pytest.approx(2.0)
