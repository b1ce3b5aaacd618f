"""Go's own units on real Go test binaries: B/op and allocs/op get a table each, with verdicts a CI
can gate on (``--fail-on-metric``), recomputed by ``show`` from the stored samples.

The candidate's ``BenchmarkAlloc`` allocates 16 bytes more an iteration (72 -> 88 B/op, 1 -> 2
allocs/op): Go prints whole numbers per operation, the same in every round at the iteration counts
these samples reach, so these verdicts do not depend on the machine's load; ``BenchmarkSame`` allocates
nothing itself on either side."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke

from pairbench.errors import EXIT_OK, EXIT_VERDICT

pytestmark = pytest.mark.e2e

# a round's process repeats each benchmark twice (a warmup, then the round's value), not 8 times: the units
# are whole numbers per operation whatever the repetitions
ARGS = ("--seed", "3", "-q", "--sample-time", "5ms", "--runs", "16", "--repetitions", "2", "-k", "Alloc|Same")


def _tables(document: dict) -> dict:
    return {t["unit"]: {c["benchmark"]["name"]: c for c in t["comparisons"]} for t in document["metric_tables"]}


@pytest.fixture(scope="module")
def measured(gotest, tmp_path_factory):
    out = tmp_path_factory.mktemp("units")
    code, stdout, err = invoke("bench", *ARGS, "--json", str(out / "r.json"), "--export-markdown",
                               str(out / "r.md"), gotest.baseline, gotest.candidate)
    return code, stdout, err, out


def test_b_op_and_allocs_op_each_get_a_table_with_verdicts_and_do_not_gate_by_default(measured):
    code, stdout, err, out = measured
    assert code == EXIT_OK, err
    tables = _tables(json.loads((out / "r.json").read_text()))
    assert list(tables) == ["B/op", "allocs/op", "widgets/op"]  # the last from b.ReportMetric, one benchmark's
    assert tables["widgets/op"]["BenchmarkAlloc"]["verdict"] == "same" and len(tables["widgets/op"]) == 1
    alloc, same = tables["B/op"]["BenchmarkAlloc"], tables["B/op"]["BenchmarkSame"]
    assert (alloc["baseline_median"], alloc["candidate_median"]) == (72, 88)
    assert alloc["verdict"] == "higher" and alloc["method"] == "sign test" and alloc["change"] == pytest.approx(22.2, abs=0.1)
    # Go's runtime allocates now and then beside a benchmark (20 B/op in a few rounds at 256 iterations,
    # either side): no verdict either way, whether or not a round caught it
    assert (same["baseline_median"], same["candidate_median"]) == (0, 0) and same["verdict"] in ("same", "inconclusive")
    more = tables["allocs/op"]["BenchmarkAlloc"]
    assert (more["baseline_median"], more["candidate_median"], more["verdict"]) == (1, 2, "higher")
    assert more["pvalue"] <= 2 * 2 * 0.5 ** 16  # Holm over the unit's 2 comparisons
    assert "B/op (Holm over 2 comparisons" in stdout and "allocs/op (Holm over 2 comparisons" in stdout
    markdown = (out / "r.md").read_text()
    assert "**allocs/op (Holm over 2 comparisons, alpha 0.01; higher is worse): 1 higher" in markdown
    assert "| BenchmarkAlloc | 1 | 2 | +100.0% (sign test) | higher |" in markdown


@pytest.mark.slow
def test_fail_on_metric_gates_on_the_unit_named_and_says_a_unit_no_benchmark_reported(gotest, tmp_path):
    # BenchmarkAlloc alone, in 10 rounds: its one more allocation is 10 higher rounds of 10, p = 0.002
    code, _, err = invoke("bench", "--seed", "3", "-q", "--sample-time", "5ms", "--runs", "10", "--repetitions", "2",
                          "-k", "Alloc", "--fail-on-metric", "allocs/op", "--fail-on-metric", "allocs", gotest.baseline,
                          gotest.candidate)
    assert code == EXIT_VERDICT, err
    assert "--fail-on-metric: 1 comparison(s) worse in allocs/op" in err
    assert "--fail-on-metric allocs: no benchmark reported this unit (units reported: B/op, allocs/op, widgets/op)" in err


def test_show_recomputes_the_unit_tables_from_the_stored_samples(measured, tmp_path):
    _, _, _, out = measured
    document = json.loads((out / "r.json").read_text())
    for table in document["metric_tables"]:  # what other tools read; pairbench never reads it back
        for c in table["comparisons"]:
            c["verdict"] = "lower"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    code, stdout, err = invoke("show", str(edited))
    assert code == EXIT_OK, err
    rows = [line.split()[:7] for line in stdout.splitlines() if line.startswith("BenchmarkAlloc")]
    assert ["BenchmarkAlloc", "72", "88", "+22.2%", "(sign", "test)", "higher"] in rows
    assert ["BenchmarkAlloc", "1", "2", "+100.0%", "(sign", "test)", "higher"] in rows
