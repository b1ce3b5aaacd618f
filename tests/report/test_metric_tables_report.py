"""A Go suite's own units in every output, against golden files: one table per unit (B/op, allocs/op,
then the others by name) in the terminal and in Markdown, and ``metric_tables`` in the JSON, with each
kind of verdict: higher by the sign test, a change from 0, same (equal in every round), equal medians
whose rounds differ, the time's interval on varying values, and a rate whose lower value is worse."""

from __future__ import annotations

import json

import numpy as np
from report_helpers import assert_golden
from runs import GO_ROUNDS, go_suite

from pairbench.analysis import analyse
from pairbench.analysis.derived import derived_records
from pairbench.report.markdown import render_markdown
from pairbench.report.text import render_suite


def suite():
    rng = np.random.default_rng(5)
    vary = 4096 * np.exp(rng.normal(0, 0.01, (2, GO_ROUNDS)))
    rare = np.where(np.arange(GO_ROUNDS) % 7 == 3, 20.0, 0.0)
    run = go_suite({
        "BenchmarkAlloc": {"B/op": (72, 88), "allocs/op": (1, 2)},
        "BenchmarkZero": {"B/op": (0, 0), "allocs/op": (0, 0)},
        "BenchmarkNew": {"B/op": (0, 16), "allocs/op": (0, 1)},
        "BenchmarkRare": {"B/op": (rare, np.roll(rare, 2)), "allocs/op": (0, 0)},
        "BenchmarkVary": {"B/op": (vary[0], vary[1] * 1.2), "allocs/op": (3, 3), "MB/s": (120, 90)},
    }, time_ratio=0.001)
    return run, analyse(run)


def test_the_terminal_shows_one_table_per_unit():
    run, analysis = suite()
    assert_golden("units.txt", render_suite(run, analysis, width=120))


def test_markdown_shows_one_table_per_unit():
    run, analysis = suite()
    assert_golden("units.md", render_markdown(run, analysis))


def test_the_json_has_a_section_per_unit():
    run, analysis = suite()
    tables = derived_records(run, analysis)["metric_tables"]
    assert_golden("units.json", json.dumps(tables, indent=1, sort_keys=True) + "\n")
