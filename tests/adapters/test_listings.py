"""A harness program's listing is output from a stranger: split into names at newlines only, bounded
in how many names it may give, and read in time proportional to its size.

The programs are shell scripts that answer a listing as the harness would, with names no real
program of that harness prints (the audit of 2026-11-26 tried them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairbench.measure.harnesses import base, criterion, gbench, gotest
from pairbench.measure.harnesses.base import DiscoveryError, Program

ODD_NAMES = ["BM_fs\x1cgs", "BM_vt\x0bff\x0c", "BM_line\u2028sep", "BM_nel\x85", "BM_ end ", "BM_plain"]


def script(tmp_path: Path, body: str) -> Program:
    path = tmp_path / "prog"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return Program((str(path),), text=str(path))


def listing_of(names: list[str], suffix: str = "") -> str:
    data = "".join(name + suffix + "\n" for name in names).encode()
    return "printf '" + "".join(f"\\{b:03o}" for b in data) + "'\n"


def test_a_google_benchmark_listing_splits_at_newlines_only_and_keeps_each_name_whole(tmp_path):
    program = script(tmp_path, listing_of(ODD_NAMES))
    found = gbench.Gbench().discover(program, tmp_path, 10)
    assert found.names == tuple(ODD_NAMES)


def test_a_criterion_listing_splits_at_newlines_only(tmp_path):
    program = script(tmp_path, listing_of(ODD_NAMES, ": benchmark"))
    assert criterion.Criterion().discover(program, tmp_path, 10).names == tuple(ODD_NAMES)


def test_a_listing_of_more_names_than_a_suite_holds_fails_the_listing_saying_how_many(tmp_path):
    program = script(tmp_path, f"seq -f 'BM_%g' 1 {base.MAX_LISTED + 1}\n")
    with pytest.raises(DiscoveryError, match="more than 100,000 benchmarks"):
        gbench.Gbench().discover(program, tmp_path, 30)


def test_go_sub_benchmarks_listed_one_by_one_share_one_listing_time(tmp_path):
    """When the run of all benchmarks at once fails, each runs alone to list its sub-benchmarks: all of
    them within one listing's time, not one each (a binary of thousands would take hours)."""
    program = script(tmp_path, """case "$*" in
  *-test.list*) printf 'BenchmarkA\\nBenchmarkB\\nBenchmarkC\\n'; exit 0 ;;
  *'|'*) exit 1 ;;
esac
sleep 1.5
echo 'BenchmarkA-2 1 5 ns/op'
""")
    with pytest.raises(DiscoveryError, match="one by one"):
        gotest.GoTest(gomaxprocs=2).discover(program, tmp_path, 2.0)
