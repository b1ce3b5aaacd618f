"""A suite's comparisons together: Holm's procedure across them (with the family of the whole suite,
shards included), a Holm-only rejection judged on its interval at its Holm level, the summary in
reading order, and the geometric mean's bootstrap interval (coverage by seeded simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from runs import make_run, series, side

from pairbench import stats
from pairbench.analysis import analyse
from pairbench.analysis.suite import geometric_mean
from pairbench.model import BenchmarkKey
from pairbench.store import shards

BASE = 1_000_000.0


def suite_run(ratios: dict[str, np.ndarray], *, family: int | None = None, **options):
    """A bench suite whose benchmark NAME's candidate takes exp(ratios[NAME][i]) times the baseline in
    round i."""
    samples = {}
    for b, values in enumerate(ratios.values()):
        samples[(b, 0)] = series(np.full(len(values), BASE), start_seq=0, stride=2)
        samples[(b, 1)] = series(BASE * np.exp(values), start_seq=1, stride=2)
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(n) for n in ratios], **options)
    names = list(ratios) + [f"BM_elsewhere_{i}" for i in range((family or len(ratios)) - len(ratios))]
    return run.replace(suite=shards.suite_record(names, None, "gbench"))


# ratios with an anytime p-value (mixture tuned for 0.01/3) between 0.01/3 and 0.01: Bonferroni over
# three comparisons keeps 0 in the interval, Holm rejects once the other two are rejected
BORDERLINE = np.random.default_rng(1).permutation(np.concatenate([-np.linspace(0.001, 0.002, 9),
                                                                  np.linspace(0.01, 0.02, 32)]))
CLEAR = np.linspace(0.09, 0.11, 40)


def test_the_p_values_of_a_suite_are_holm_adjusted_over_the_suite():
    analysis = analyse(suite_run({"BM_a": CLEAR, "BM_b": -CLEAR, "BM_c": BORDERLINE}))
    raw = [c.pvalue_unadjusted for c in analysis.comparisons]
    np.testing.assert_allclose([c.pvalue for c in analysis.comparisons], stats.holm(raw))
    assert {c.adjustment for c in analysis.comparisons} == {"holm"}


def test_a_comparison_holm_rejects_beyond_bonferroni_is_judged_on_its_interval_at_its_holm_level():
    (a, b, c) = analyse(suite_run({"BM_a": CLEAR, "BM_b": -CLEAR, "BM_c": BORDERLINE})).comparisons
    assert (a.verdict.verdict, b.verdict.verdict) == ("slower", "faster")
    assert 0.01 / 3 < c.pvalue_unadjusted <= 0.01 and c.pvalue <= 0.01
    assert c.verdict.verdict == "slower" and c.effect.low > 0
    assert c.effect.confidence == pytest.approx(0.99) and "Holm step at alpha 0.01" in c.effect.method


def test_the_same_ratios_in_a_larger_suite_stay_undecided_since_the_family_is_the_whole_suite():
    run = suite_run({"BM_a": CLEAR, "BM_b": -CLEAR, "BM_c": BORDERLINE}, family=6)
    (_, _, c) = analyse(run).comparisons
    assert c.pvalue > 0.01 and c.verdict.verdict not in ("slower", "faster")


def test_the_summary_lists_regressions_then_improvements_then_equivalent_and_inconclusive():
    rng = np.random.default_rng(3)
    ratios = {"BM_small_slow": CLEAR * 0.3, "BM_fast": -CLEAR, "BM_same": rng.normal(0, 0.001, 400),
              "BM_big_slow": CLEAR * 2, "BM_noisy": rng.normal(0, 0.2, 40)}
    summary = analyse(suite_run(ratios)).suite
    assert [c.benchmark.name for c in summary.regressions] == ["BM_big_slow", "BM_small_slow"]
    assert [c.benchmark.name for c in summary.improvements] == ["BM_fast"]
    assert [c.benchmark.name for c in summary.equivalent] == ["BM_same"]
    assert [c.benchmark.name for c in summary.inconclusive] == ["BM_noisy"]
    assert summary.correction == "holm" and summary.family == 5


def test_the_geometric_mean_is_the_mean_of_the_benchmarks_mean_log_ratios():
    values = [np.full(10, np.log(1.10)) + np.linspace(-0.01, 0.01, 10), np.full(10, np.log(0.90))
              + np.linspace(-0.01, 0.03, 10)]
    g = geometric_mean(values, seed=1)
    assert g.estimate == pytest.approx(100 * (np.sqrt(1.10 * 0.90) * np.exp(0.005) - 1), abs=1e-9)
    assert g.low < g.estimate < g.high and g.benchmarks == 2 and g.method.startswith("studentized")


@pytest.mark.parametrize(("benchmarks", "rounds"), [(30, 10), (10, 30)])
def test_the_geometric_mean_interval_covers_the_true_change_under_skewed_rounds(benchmarks, rounds):
    """Seeded simulation: skewed per-round log-ratios (exponential, mean 1 - ln 2 above the
    benchmark's median) about known medians; the true change is the mean of the benchmarks' mean
    log-ratios. The 95% interval must cover it in 90-99% of 300 suites (the binomial band). The
    mean of medians covered 51% at 30 benchmarks of 10 rounds."""
    rng = np.random.default_rng(2026 + rounds)
    covered, trials = 0, 300
    for _ in range(trials):
        medians = rng.normal(0, 0.05, benchmarks)
        values = [m + 0.02 * (rng.standard_exponential(rounds) - np.log(2)) for m in medians]
        g = geometric_mean(values, seed=int(rng.integers(1 << 31)), n_resamples=999)
        truth = 100 * np.expm1(np.mean(medians) + 0.02 * (1 - np.log(2)))
        covered += g.low <= truth <= g.high
    assert 0.90 * trials <= covered <= 0.99 * trials


def test_benchmarks_never_measured_are_counted_apart_not_as_inconclusive():
    rng = np.random.default_rng(3)
    run = suite_run({"BM_noisy": rng.normal(0, 0.2, 40), "BM_unreached": np.zeros(0), "BM_too": np.zeros(0)})
    summary = analyse(run).suite
    assert [c.benchmark.name for c in summary.inconclusive] == ["BM_noisy"]
    assert [c.benchmark.name for c in summary.unmeasured] == ["BM_unreached", "BM_too"]
