"""How the analysis reads the run's environment (the executor's RSS floor, odd metadata) and words its notes."""

import pytest

from pairbench.analysis import executor_rss_floor_kib, summarize_run
from pairbench.model import Command, Run, Sample, Samples, Variant


def run_with_environment(environment) -> Run:
    rows = [Sample(wall_ns=1_000_000 + 1_000 * i, max_rss_kib=1_000, seq=i) for i in range(12)]
    variant = Variant("x", Command("x", ("x",)), samples=Samples.from_rows(rows))
    return Run(kind="run", variants=(variant,), tool_version="0.1.0",
               started_at="2026-11-22T10:00:00+00:00", state="complete", environment=environment)


def test_max_rss_within_the_margin_of_the_executor_floor_is_flagged_at_the_floor():
    (summary,) = summarize_run(run_with_environment({"executor": {"rss_floor_kib": 990}}))
    assert summary.max_rss_at_floor


@pytest.mark.parametrize("executor", [5, "SpawnerExecutor", [990], None,
                                      {"rss_floor_kib": "990"}, {"rss_floor_kib": True},
                                      {"rss_floor_kib": -990}, {"rss_floor_kib": None}, {}])
def test_summarize_run_treats_malformed_executor_metadata_as_absent(executor):
    assert executor_rss_floor_kib({"executor": executor}) is None
    (summary,) = summarize_run(run_with_environment({"executor": executor}))
    assert summary.n == 12 and not summary.max_rss_at_floor


def test_summarize_run_without_executor_metadata_sets_no_floor():
    (summary,) = summarize_run(run_with_environment({}))
    assert summary.max_rss_at_floor is False and summary.max_rss_kib == 1_000


def test_too_few_samples_are_noted_in_the_users_words_not_the_statistics_parameter_name():
    variant = Variant("a", Command("a", ("a",)),
                      samples=Samples.from_rows([Sample(wall_ns=1_000_000, seq=0, pair=0)]))
    run = Run("run", (variant,), "0", "2026-11-23T00:00:00+00:00", state="complete")
    notes = summarize_run(run)[0].warnings
    assert "need at least 6 samples for a 95% interval of the median, got 1" in notes
    assert "need at least 4 samples for the batch-means error of the mean, got 1" in notes
    assert not any(note.startswith("x") for note in notes)
