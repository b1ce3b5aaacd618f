"""The analysed JSON: summaries, comparisons and notes for other tools, never the raw samples."""

from __future__ import annotations

import json

from pairbench.report.jsonfile import REPORT_FORMAT, render_json


def test_json_holds_summaries_and_comparisons_but_no_samples(compare_run, compare_analysis):
    doc = json.loads(render_json(compare_run, compare_analysis))
    assert doc["format"] == REPORT_FORMAT == "pairbench.report/2" and doc["kind"] == "compare"
    assert [s["side"] for s in doc["summaries"]] == [side.name for side in compare_run.sides]
    assert doc["summaries"][0]["median"] == compare_analysis.summaries[0].median
    assert doc["summaries"][0]["unit"] == "ns"
    (comparison,) = doc["comparisons"]
    assert comparison["verdict"] == "slower"
    assert comparison["effect"]["estimate"] == compare_analysis.comparisons[0].effect.estimate
    assert doc["series"][1] == {"benchmark": 0, "side": 1, "measured": 40, "failed": 0, "warmup": 1}
    assert "wall_ns" not in json.dumps(doc) and doc["environment"]["host"] == "bench-01"


def test_json_gives_every_note_as_data_and_in_words(compare_run, compare_analysis):
    doc = json.loads(render_json(compare_run, compare_analysis))
    notes = doc["analysis_notes"]
    assert [n["code"] for n in notes] == [n.code for n in compare_analysis.all_notes()]
    grubbs = notes[0]
    assert grubbs["code"] == "grubbs-tail" and grubbs["subject"] == {"side": "old build"}
    assert grubbs["text"].startswith("the slowest sample lies 3.6 SD above the mean")


def test_a_single_command_run_has_summaries_and_no_comparison(single_run, single_analysis):
    doc = json.loads(render_json(single_run, single_analysis))
    assert doc["comparisons"] == [] and len(doc["summaries"]) == 1
    assert doc["summaries"][0]["median"] == single_analysis.summaries[0].median
