"""A fuzz of every harness output pairbench reads (Google Benchmark JSON, go test text, criterion's
saved files, pytest-benchmark JSON) and of the worker protocol's replies: each parser either returns
what pairbench can store (counts from 1 to 2**53 - 1, times positive, finite and at most 2**53 - 1 ns,
finite metrics; names without control characters where the protocol says so) or raises its own
error (``FormatError``, ``ProtocolError``). Anything else (an ``OverflowError``, a ``TypeError``) is
the kind of crash that ended a whole suite with exit 70 (the red-team audit's G12 and G13).

The inputs are the real recorded outputs of ``tests/adapters/data/`` with one field (a JSON value, a
word of a line) replaced, in turn, by a value drawn with a fixed seed from ``test_result_fields``'s
hostile values and a few of the harnesses' own; the protocol's lines are valid ones likewise cut,
widened and garbled. The budget is a fixed number of cases per format (a few seconds in all), so a
failure reproduces: the assertion names the case. ``PAIRBENCH_FUZZ_CASES=N`` and
``PAIRBENCH_FUZZ_SEED=S`` run a longer or another fuzz by hand.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import random
from pathlib import Path

import pytest
from test_result_fields import DELETE, HOSTILE, VALUES, fields, mutated

from pairbench.command import Execution
from pairbench.measure.harnesses import criterion, gbench, gotest, pytest_benchmark
from pairbench.measure.harnesses.base import FormatError, Report
from pairbench.model import MAX_SAMPLE_VALUE
from pairbench.worker import protocol

DATA = Path(__file__).resolve().parents[1] / "adapters" / "data"
SEED = int(os.environ.get("PAIRBENCH_FUZZ_SEED", 20261126))
CASES = int(os.environ.get("PAIRBENCH_FUZZ_CASES", 400))  # per format: a few seconds in all
NUMBERS = (DELETE, 1e308, -1e308, 1e-320, 2**53, 2**53 - 1, 2**63, 10**400, -1, 0, 0.0, -0.0, 1e30, "1e999",
           "NaN", True, [1e308, 1e308], {"point_estimate": 1e308})
WORDS = ("1e999", "1e308", "-1234", "0", "9" * 30, "9" * 5000, "nan", "inf", "1e-400", ".5", "ns/op", "B/op",
         "value", "value/op", HOSTILE, "\x1b[2J", "", "Benchmark\x85x-2", "MB/s")


def check_report(report: Report, case: str) -> None:
    assert 1 <= report.iterations <= MAX_SAMPLE_VALUE, case
    if not report.error:
        # 0 only where the harness says so: a Go line without ns/op (go test leaves a time of 0 out)
        assert math.isfinite(report.total_ns) and 0 <= report.total_ns <= MAX_SAMPLE_VALUE, case
    assert all(math.isfinite(v) for v in report.metrics.values()), case
    assert "value" not in report.metrics, case  # the measured time's name is pairbench's


def json_cases(document: dict, rng: random.Random) -> list[tuple[tuple, object]]:
    paths = [p for p in fields(document) if p]
    return [(rng.choice(paths), rng.choice(VALUES + NUMBERS)) for _ in range(CASES)]


def test_google_benchmark_json_fuzzed_is_read_or_refused():
    document = json.loads((DATA / "gbench-1.7.1.json").read_text())
    for path, value in json_cases(document, random.Random(SEED)):
        case = f"gbench {path} = {value!r:.80}"
        try:
            text = json.dumps(mutated(document, path, value))
            for report in gbench.parse_json(text, "r.json").results:
                check_report(report, case)
        except FormatError:
            pass


def test_pytest_benchmark_json_fuzzed_is_read_or_refused():
    document = json.loads((DATA / "pytest-benchmark-5.3.1.json").read_text())
    for path, value in json_cases(document, random.Random(SEED + 1)):
        case = f"pytest-benchmark {path} = {value!r:.80}"
        try:
            report = pytest_benchmark.parse_json(json.dumps(mutated(document, path, value)), "p.json")
        except FormatError:
            continue
        for result, rounds in zip(report.results, report.rounds, strict=True):
            check_report(result, case)
            assert all(math.isfinite(seconds) for seconds in rounds), case


def test_go_test_text_fuzzed_is_read_or_refused():
    lines = (DATA / "go-count2.txt").read_text().split("\n")
    rng = random.Random(SEED + 2)
    for _ in range(CASES):
        changed = list(lines)
        row = rng.randrange(len(changed))
        words = changed[row].split() or [""]
        words[rng.randrange(len(words))] = rng.choice(WORDS)
        changed[row] = "\t".join(words)
        case = f"go line {row + 1}: {changed[row]!r:.120}"
        try:
            for report in gotest.parse_text("\n".join(changed), "go.txt", rng.choice((None, "-2"))).results:
                check_report(report, case)
        except FormatError:
            pass


def test_criterion_files_fuzzed_are_read_or_refused(tmp_path):
    source = DATA / "criterion-0.5.1" / "sum_100" / "new"
    documents = {name: json.loads((source / name).read_text())
                 for name in ("benchmark.json", "sample.json", "estimates.json")}
    rng = random.Random(SEED + 3)
    new = tmp_path / "new"
    new.mkdir()
    for _ in range(CASES // 2):
        name = rng.choice(sorted(documents))
        path = rng.choice([p for p in fields(documents[name]) if p])
        value = rng.choice(VALUES + NUMBERS)
        for other, document in documents.items():
            chosen = mutated(document, path, value) if other == name else copy.deepcopy(document)
            (new / other).write_text(json.dumps(chosen))
        case = f"criterion {name} {path} = {value!r:.80}"
        with contextlib.suppress(FormatError):
            check_report(criterion.read_one(new), case)


REPLIES = ("ok ns=1048231 user_ns=1046000 sys_ns=0 vcs=0 ivcs=1 minflt=0 majflt=0 maxrss_kib=1420",
           "error the fixture is broken", "benchmarks 2", "benchmark sort[n=1000]", "pairbench-worker 1")
GARBAGE = ("", " ", "=", "ns=", "ns=-1", "ns=" + "9" * 30, "ns=18446744073709551616", "Upper=2", "\x1b]0;x\x07",
           "\x85", "\u202e", "\x9b31m", "ns=1 ns=2", "x" * 300, "\t", "benchmark", "ok", "ns=0")


def test_worker_protocol_replies_fuzzed_are_read_or_refused():
    rng = random.Random(SEED + 4)
    parsers = (protocol.parse_reply, protocol.parse_count, protocol.parse_listed, protocol.parse_greeting)
    for _ in range(CASES * 2):
        words = rng.choice(REPLIES).split(" ")
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(words) + 1)
            action = rng.randrange(3)
            if action == 0 and words:
                del words[min(at, len(words) - 1)]
            elif action == 1:
                words.insert(at, rng.choice(GARBAGE))
            elif words:
                words[min(at, len(words) - 1)] = rng.choice(GARBAGE)
        line = " ".join(words)
        for parse in parsers:
            case = f"{parse.__name__}({line!r:.120})"
            try:
                value = parse(line)
            except protocol.ProtocolError:
                continue
            if isinstance(value, Execution):
                assert all(0 <= getattr(value, name) <= protocol.MAX_FIELD_VALUE
                           for name in protocol.REPLY_FIELDS.values()), case
            elif parse is protocol.parse_listed:
                assert not protocol.UNSAFE_NAME_CHARACTER.search(value), case
            elif parse is protocol.parse_count:
                assert 0 <= value <= protocol.MAX_BENCHMARKS, case


@pytest.mark.parametrize("cut", [2, 10, 100, 1000])
def test_google_benchmark_json_cut_short_is_refused(cut):
    text = (DATA / "gbench-1.7.1.json").read_text()
    with pytest.raises(FormatError):
        gbench.parse_json(text[:-cut], "r.json")
