"""The fields only a ``bench`` result has (``suite``) and the harness named in a note's data, fuzzed
with the values of ``test_result_fields``: `show` never crashes on them (the red-team audit's G22:
``suite.harness`` as a list or an object ended `show` with exit 70)."""

from __future__ import annotations

import json

import pytest
from cli_runner import invoke
from test_result_fields import DATA, VALUES, check, mutated

from pairbench.notes import Note


def bench_document() -> dict:
    """The report tests' compare result as a bench run of a Google Benchmark suite, with a note a
    harness's validation writes."""
    document = json.loads((DATA / "compare.json").read_text(encoding="utf-8"))
    document["kind"] = "bench"
    document["suite"] = {"benchmarks": 1, "digest": "0" * 16, "shard": None, "harness": "gbench"}
    document["notes"] = [Note("benchmark-elided-body", {"per_iteration_ns": 0.5, "growing": True,
                                                       "harness": "gbench"}).to_dict()]
    return document


PATHS = [("suite",), ("suite", "harness"), ("suite", "benchmarks"), ("suite", "digest"), ("suite", "shard"),
         ("suite", "merged"), ("notes", 0, "data", "harness")]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ".".join(map(str, p)))
def test_every_value_in_a_bench_results_own_fields_is_shown_or_refused_in_one_line(tmp_path, path):
    for i, value in enumerate(VALUES):
        document = bench_document()
        if path[-1] == "merged":
            document["suite"]["merged"] = []
        path_file = tmp_path / f"r{i}.json"
        path_file.write_text(json.dumps(mutated(document, path, value), allow_nan=False), encoding="utf-8")
        check(invoke("show", str(path_file)), f"{'.'.join(map(str, path))} = {value!r}")
