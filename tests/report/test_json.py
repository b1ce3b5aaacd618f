"""The analysed JSON: summaries and comparisons for other tools, never the raw samples."""

from __future__ import annotations

import json

from pairbench.report.analysed import analyse
from pairbench.report.jsonfile import REPORT_FORMAT, render_json


def test_json_holds_summaries_and_comparisons_but_no_samples(compare_run):
    doc = json.loads(render_json(analyse(compare_run)))
    assert doc["format"] == REPORT_FORMAT and doc["kind"] == "compare"
    assert doc["comparisons"] == [dict(c) for c in compare_run.comparisons]
    assert [s["name"] for s in doc["summaries"]] == [v.name for v in compare_run.variants]
    assert doc["summaries"][0]["median"] == compare_run.summaries[0]["median"]
    assert doc["variants"][1]["samples"] == {"measured": 40, "failed": 0, "warmup": 1}
    assert "wall_ns" not in json.dumps(doc["variants"])
    assert doc["recomputed"] == [] and doc["environment"]["host"] == "bench-01"


def test_json_recomputes_what_a_document_did_not_store(single_run):
    doc = json.loads(render_json(analyse(single_run.replace(summaries=()))))
    assert doc["recomputed"] == ["summaries"]
    assert doc["summaries"][0]["median"] == single_run.summaries[0]["median"]
    assert doc["comparisons"] == []


def test_a_compare_result_without_stored_comparisons_gets_them_recomputed(compare_run):
    doc = json.loads(render_json(analyse(compare_run.replace(comparisons=()))))
    assert doc["recomputed"] == ["comparisons"]
    (again,) = doc["comparisons"]
    stored = compare_run.comparisons[0]
    assert again["verdict"] == stored["verdict"] == "slower"
    assert again["effect"] == stored["effect"]
