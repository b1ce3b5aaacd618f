"""Default side names of ``bench``: short enough for a table, and still telling the sides apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.sessions.commands import SHORT_NAME, path_names

WORKER = Path(__file__).resolve().parents[1] / "support" / "protocol_worker.py"


@pytest.mark.parametrize(("paths", "names"), [
    (["istrconv-a.test", "istrconv-b.test"], ("istrconv-a.test", "istrconv-b.test")),
    (["old/bench", "new/bench"], ("old/bench", "new/bench")),
    (["./itoa-a/target/release/deps/bench-af32dd66837da667", "./itoa-b/target/release/deps/bench-af32dd66837da667"],
     ("itoa-a", "itoa-b")),
    (["old/target/release/deps/parse-1a2b3c", "new/target/release/deps/parse-4d5e6f"],
     ("parse-1a2b3c", "parse-4d5e6f")),
    (["/a/bench", "/a/b/bench"], ("a/bench", "b/bench")),
    (["./x", "x"], ("x", "x")),  # one file twice: distinct_names tells them apart
    (["tests/bench_lib.py"], ("bench_lib.py",)),
])
def test_sides_given_as_paths_are_named_by_what_tells_them_apart(paths, names):
    assert path_names(paths) == names


def test_a_long_distinct_suffix_falls_back_to_the_differing_directories():
    deep = ["/build/" + side + "/" + "x" * SHORT_NAME for side in ("main", "pr-17")]
    assert path_names(deep) == ("main", "pr-17")


def test_programs_with_arguments_keep_their_text():
    assert path_names(["python w.py --slow", "python w.py"]) == ("python w.py --slow", "python w.py")


@pytest.mark.e2e
def test_bench_tables_name_deep_builds_by_their_directories(tmp_path):
    paths = []
    for side in ("itoa-a", "itoa-b"):
        program = tmp_path / side / "target" / "release" / "deps" / "bench-af32dd66837da667"
        program.parent.mkdir(parents=True)
        program.write_text(f"#!/bin/sh\nexec {sys.executable} {WORKER} \"$@\"\n")
        program.chmod(0o755)
        paths.append(str(program))
    code, out, err = invoke("bench", "--max-time", "3s", "--sample-time", "200us", "--seed", "7", "-q",
                            "-k", "^add$", "--runs", "12", *paths)
    assert code == 0, err
    assert "itoa-a" in out and "itoa-b" in out and "target/release" not in out
