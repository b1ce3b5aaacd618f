"""One set of limits for every reader and writer (issue 26: G11, G19): pairbench never writes a file
it then refuses to read, and an input's size, not a number written in it, bounds what reading it
costs (a stored shard count, a go test text)."""

from __future__ import annotations

import json
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from cli_runner import invoke
from store_runs import stored_run

from pairbench.errors import EXIT_MEASUREMENT, EXIT_RESULT_FILE, EXIT_USAGE, ResultFileError
from pairbench.limits import MAX_SAMPLE_VALUE, MAX_SHARDS, MAX_SIDES
from pairbench.model import Samples
from pairbench.store import resultfile
from pairbench.store.files import dumps
from pairbench.store.imports import read_import
from pairbench.store.resultfile import document_chunks, read_result, run_to_document, write_result
from pairbench.worker.protocol import ProtocolError, parse_reply

ROOT = Path(__file__).resolve().parents[2]
HYPERFINE = ROOT / "tests" / "adapters" / "data" / "hyperfine-1.15.json"
GO = ROOT / "tests" / "adapters" / "data" / "go-count2.txt"


def _hyperfine(tmp_path, commands: int = 2, seconds: float = 0.002) -> Path:
    document = {"results": [{"command": f"sleep {i}", "mean": seconds, "times": [seconds] * 3,
                             "exit_codes": [0] * 3} for i in range(commands)]}
    path = tmp_path / "hyperfine.json"
    path.write_text(json.dumps(document))
    return path


# --------------------------------------------------------------------------- the writers keep the readers' limits (G11)


@pytest.mark.parametrize(("commands", "seconds", "problem"), [
    (2, 1e8, "from 0 to 2**53 - 1 ns"),  # 1e17 ns: more than a result holds
    (MAX_SIDES + 1, 0.002, f"a result holds at most {MAX_SIDES}"),
])
def test_an_import_a_result_could_not_hold_is_refused_and_nothing_written(tmp_path, commands, seconds, problem):
    out = tmp_path / "out.json"
    result = invoke("convert", "--json", str(out), str(_hyperfine(tmp_path, commands, seconds)))
    assert result.code == EXIT_RESULT_FILE and problem in result.err, result.err
    assert "internal error" not in result.err and not out.exists()


def test_commands_that_share_a_name_are_imported_with_names_of_their_own(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"results": [{"command": c, "mean": 0.002, "times": [0.002] * 3,
                                             "exit_codes": [0] * 3} for c in ("a", "a", "a (2)")]}))
    out = tmp_path / "out.json"
    result = invoke("convert", "--json", str(out), str(path))
    assert result.code == 0, result.err
    assert sorted(s.name for s in read_result(out).sides) == ["a", "a (2)", "a (3)"]


def test_a_result_is_checked_by_the_readers_rules_before_it_is_written(tmp_path):
    run = stored_run()
    columns = dict(run.samples[(0, 1)].columns)
    columns["user_ns"] = columns["user_ns"] + MAX_SAMPLE_VALUE + 1  # what a worker's rusage could say
    bad = run.replace(samples={**run.samples, (0, 1): Samples(columns, {})})
    with pytest.raises(ResultFileError, match=r"series\[1\]\.user_ns\[0\].*beyond the limit of 2\*\*53 - 1"):
        write_result(bad, tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()
    infinite = run.replace(samples={**run.samples, (0, 1): Samples(run.samples[(0, 1)].columns,
                                                                  {"value": np.full(5, np.inf)})})
    with pytest.raises(ResultFileError, match="must hold finite numbers"):
        write_result(infinite, tmp_path / "r.json")


def test_a_result_larger_than_the_reader_takes_is_never_written(tmp_path, monkeypatch):
    from pairbench.store import files

    run = stored_run()
    write_result(run, tmp_path / "old.json")
    before = (tmp_path / "old.json").read_bytes()
    monkeypatch.setattr(files, "MAX_FILE_BYTES", len(before) - 1)
    with pytest.raises(ResultFileError, match="larger than"):
        write_result(run, tmp_path / "old.json")
    assert (tmp_path / "old.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]  # no temporary left


def test_a_worker_value_no_result_holds_is_a_protocol_error():
    assert parse_reply(f"ok ns={MAX_SAMPLE_VALUE}").wall_ns == MAX_SAMPLE_VALUE
    for field in ("ns", "user_ns", "maxrss_kib"):
        with pytest.raises(ProtocolError, match="0 to 2\\^53 - 1"):
            parse_reply(f"ok ns=5 {field}={MAX_SAMPLE_VALUE + 1}".replace("ns=5 ns=", "ns="))


WORKER = textwrap.dedent("""\
    import os, sys
    r, w = map(int, os.environ.pop("PAIRBENCH_WORKER_FDS").split(","))
    requests, replies = os.fdopen(r), os.fdopen(w, "w", buffering=1)
    replies.write("pairbench-worker 1\\n")
    for line in requests:
        if line.startswith("list"):
            replies.write("benchmarks 1\\nbenchmark b\\n")
        elif line.startswith("run"):
            replies.write("ok ns=%d\\n" % (int(sys.argv[1]) * int(line.split()[2])))
        else:
            break
    """)


@pytest.mark.e2e
def test_bench_never_writes_a_value_show_would_refuse(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(WORKER)
    out = tmp_path / "r.json"
    result = invoke("bench", "--runs", "8", "-q", "--max-time", "5s", "--json", str(out),
                    f"{sys.executable} {script} 1000", f"{sys.executable} {script} {MAX_SAMPLE_VALUE}")
    assert result.code == EXIT_MEASUREMENT and "2^53 - 1" in result.err, result.err
    shown = invoke("show", str(out))
    assert shown.code == 0, shown.err


def test_more_commands_than_a_result_holds_is_a_usage_error():
    result = invoke("run", "--runs", "2", *[f"sleep 0.{i:04d}" for i in range(MAX_SIDES + 1)])
    assert result.code == EXIT_USAGE and f"at most {MAX_SIDES} sides" in result.err
    self_check = invoke("compare", "--self-check", "--runs", "2", *[f"sleep 0.{i:04d}" for i in range(MAX_SIDES)])
    assert self_check.code == EXIT_USAGE and "--self-check copy" in self_check.err


def test_the_document_is_written_in_chunks_exactly_as_one_piece(monkeypatch):
    from pairbench.analysis import analyse
    from pairbench.analysis.derived import derived_records

    monkeypatch.setattr(resultfile, "NUMBERS_PER_CHUNK", 2)  # every column crosses chunks
    run = stored_run(n=7)
    run = run.replace(samples={key: Samples(s.columns, {"value": s["wall_ns"] * 1.25, "b": -s["wall_ns"] / 3})
                               for key, s in run.samples.items()})
    derived = derived_records(run, analyse(run))
    assert "".join(document_chunks(run, derived)) == dumps(run_to_document(run, derived)) + "\n"


# --------------------------------------------------------------------------- bounded by the input's size (G19)


def _shard_file(tmp_path, shard) -> Path:
    from runs import make_run, series, side

    from pairbench.model import BenchmarkKey
    from pairbench.store import shards

    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")],
                   {(0, 0): series([1000] * 8, start_seq=0, stride=2), (0, 1): series([1100] * 8, start_seq=1, stride=2)},
                   benchmarks=[BenchmarkKey("BM_a")], shard="1/2")
    run = run.replace(suite=shards.suite_record(["BM_a", "BM_b"], (1, 2), "gbench"))
    document = run_to_document(run)
    document["suite"]["shard"] = shard
    path = tmp_path / "shard.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("count", [10**8, 10**18, MAX_SHARDS + 1])
def test_a_stored_shard_count_is_bounded_as_the_option_is(tmp_path, count):
    path = _shard_file(tmp_path, [1, count])
    result = invoke("merge", "--json", str(tmp_path / "m.json"), str(path))
    assert result.code == EXIT_RESULT_FILE and f"<= {MAX_SHARDS}" in result.err and len(result.err) < 400


def test_missing_shards_are_named_in_spans_not_one_by_one(tmp_path):
    path = _shard_file(tmp_path, [3, MAX_SHARDS])
    result = invoke("merge", "--json", str(tmp_path / "m.json"), str(path))
    assert result.code == EXIT_USAGE and f"shards 1-2, 4-{MAX_SHARDS} of {MAX_SHARDS} are missing" in result.err
    assert len(result.err) < 300


@pytest.mark.slow
def test_a_go_text_is_imported_in_memory_a_small_multiple_of_its_size(tmp_path):
    lines = ["goos: linux", "goarch: amd64", "pkg: example.com/p", "cpu: Example CPU"]
    rng = np.random.default_rng(1)
    lines += [f"BenchmarkParse/size={k % 7}-2 \t {1000 + k % 97}\t {rng.uniform(10, 2000):.1f} ns/op\t"
              f"{k % 999} B/op\t{k % 9} allocs/op" for k in range(10_000)]
    path = tmp_path / "go.txt"
    path.write_text("\n".join(lines) + "\nPASS\n")
    size = path.stat().st_size  # the peak is 3.3 bytes a byte at 10,000 lines as at 30,000 (under tracemalloc, 3 s)
    tracemalloc.start()
    try:
        run = read_import(str(path))
        write_result(run, tmp_path / "go.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(len(s) for s in run.samples.values()) == 10_000 and len(run.benchmarks) == 7
    assert peak < 6 * size, f"{peak / size:.1f} bytes of memory a byte of input"  # 18x before: objects per line
    assert read_result(tmp_path / "go.json").benchmarks == run.benchmarks


def test_go_text_read_a_line_at_a_time_is_read_as_before():
    from pairbench.measure.harnesses import gotest

    whole = gotest.parse_text(GO.read_text(), str(GO))
    run = read_import(str(GO))
    assert [k.name for k in run.benchmarks] == list(dict.fromkeys(r.name for r in whole.results))
    assert sum(len(s) for s in run.samples.values()) == len(whole.results)
    totals = np.concatenate([run.samples[(b, 0)].metrics["value"] for b in range(len(run.benchmarks))])
    assert sorted(totals.tolist()) == sorted(r.total_ns for r in whole.results)
