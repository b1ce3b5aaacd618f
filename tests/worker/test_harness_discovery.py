"""Collecting benchmarks from files and directories: which files, how they are imported, what
an import failure says."""

from __future__ import annotations

import os

import pytest

from pairbench.worker.discovery import collect, find_files
from pairbench.worker.registry import HarnessError

pytestmark = pytest.mark.usefixtures("isolated_imports")

ONE = """
import pairbench

@pairbench.benchmark
def {name}():
    pass
"""


def names(benchmarks) -> list[str]:
    return [bench.name for bench in benchmarks]


def test_a_directory_is_searched_recursively_for_benchmark_files_in_sorted_order(tmp_path, write):
    for relative in ("b/bench_z.py", "bench_b.py", "a_bench.py", "b/sub/io_bench.py", "helper.py",
                     "benchmark_x.py", ".hidden/bench_h.py", "__pycache__/bench_p.py",
                     "env/bench_v.py", "env/pyvenv.cfg", ".git/bench_g.py"):
        write(relative, "raise RuntimeError('never imported')" if relative.startswith(("helper", "bench")) else "")
    found = [os.path.relpath(file, tmp_path) for file in find_files([str(tmp_path)])]
    assert found == ["a_bench.py", "b/bench_z.py", "b/sub/io_bench.py", "bench_b.py"]


def test_a_file_is_collected_once_when_given_both_alone_and_in_its_directory(tmp_path, write):
    file = write("bench_a.py", ONE.format(name="one"))
    assert names(collect([str(file), str(tmp_path)])) == ["one"]


def test_a_benchmark_file_can_import_its_siblings(write):
    write("shared.py", "SIZE = 7\n")
    file = write("bench_a.py", """
        import pairbench
        import shared

        @pairbench.benchmark(name=f"size{shared.SIZE}")
        def f():
            pass
    """)
    assert names(collect([str(file)])) == ["size7"]


def test_files_with_one_stem_in_two_directories_are_imported_as_distinct_modules(tmp_path, write):
    write("one/bench_x.py", ONE.format(name="first"))
    write("two/bench_x.py", ONE.format(name="second"))
    benchmarks = collect([str(tmp_path)])
    assert names(benchmarks) == ["first", "second"]
    assert benchmarks[0].function.__module__ != benchmarks[1].function.__module__


def test_a_benchmark_file_imported_by_another_declares_its_benchmarks_once(tmp_path, write):
    write("bench_a.py", "import bench_b\n" + ONE.format(name="in_a"))
    write("bench_b.py", ONE.format(name="in_b"))
    assert names(collect([str(tmp_path)])) == ["in_a", "in_b"]


def test_an_import_error_names_the_file_the_line_and_the_exception(write):
    file = write("bench_broken.py", """
        import pairbench

        raise ValueError("no fixture data")
    """)
    with pytest.raises(HarnessError) as error:
        collect([str(file)])
    message = str(error.value)
    assert f"cannot import {file}, line 3: ValueError: no fixture data" in message
    assert f"python {file}" in message


def test_a_syntax_error_names_the_file_and_line(write):
    file = write("bench_typo.py", "x = 1\ndef f(:\n")
    with pytest.raises(HarnessError, match=rf"cannot import {file}, line 2: SyntaxError"):
        collect([str(file)])


def test_an_invalid_declaration_in_a_file_is_reported_as_it_is(write):
    file = write("bench_bad.py", "import pairbench\n@pairbench.benchmark(params={'n': []})\ndef f(n): pass\n")
    with pytest.raises(HarnessError, match=rf"^@pairbench.benchmark on f \({file}:2\)"):
        collect([str(file)])


@pytest.mark.parametrize(("relative", "complaint"), [
    ("missing.py", "no such file or directory"),
    ("notes.txt", "is not a Python file"),
])
def test_a_path_that_is_no_python_file_or_directory_is_an_error(tmp_path, write, relative, complaint):
    if relative.endswith(".txt"):
        write(relative, "hello")
    with pytest.raises(HarnessError, match=complaint):
        collect([str(tmp_path / relative)])


def test_no_benchmark_found_is_an_error_saying_how_to_declare_one(tmp_path, write):
    write("bench_empty.py", "import pairbench\n")
    with pytest.raises(HarnessError, match=r"no benchmarks found .*1 files imported.*@pairbench.benchmark"):
        collect([str(tmp_path)])


def test_a_root_that_is_not_a_directory_is_an_error(tmp_path, write):
    file = write("bench_a.py", ONE.format(name="a"))
    with pytest.raises(HarnessError, match="--root .*not a directory"):
        collect([str(file)], root=str(tmp_path / "nowhere"))
