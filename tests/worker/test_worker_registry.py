"""The ``@pairbench.benchmark`` decorator: its forms, parameter expansion, naming and validation."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import pairbench
from pairbench.worker import registry
from pairbench.worker.registry import Benchmark, HarnessError, recording, resolve


def declared(source: str, file: str = "/benchmarks/bench_x.py", module: str = "bench_x") -> dict:
    """Run ``source`` as if it were the file ``file`` imported as ``module``; its namespace."""
    namespace = {"__name__": module, "pairbench": pairbench}
    exec(compile(textwrap.dedent(source).lstrip("\n"), file, "exec"), namespace)
    return namespace


def collected(*sources: tuple[str, str]) -> list[Benchmark]:
    """The benchmarks of ``(file, source)`` pairs, each file its own module."""
    with recording() as found:
        for index, (file, source) in enumerate(sources):
            declared(source, file, f"module{index}")
    return resolve(found.declarations())


def names(benchmarks: list[Benchmark]) -> list[str]:
    return [bench.name for bench in benchmarks]


# --------------------------------------------------------------------------- decorator forms


def test_bare_decorator_declares_the_function_under_its_name_and_returns_it_unchanged():
    with recording() as found:
        namespace = declared("""
            @pairbench.benchmark
            def parse_small():
                return 42
        """)
    [bench] = resolve(found.declarations())
    assert bench.name == "parse_small"
    assert bench.function is namespace["parse_small"]
    assert namespace["parse_small"]() == 42
    assert (bench.setup, bench.teardown, bench.params) == (None, None, ())
    assert (bench.file, bench.line) == ("/benchmarks/bench_x.py", 1)


def test_decorator_with_parentheses_and_with_options_declares_the_same_way():
    def make_table():
        return {"k": 1}

    def drop_table(table):
        table.clear()

    with recording() as found:
        @pairbench.benchmark()
        def empty():
            pass

        @pairbench.benchmark(name="dict-lookup", setup=make_table, teardown=drop_table)
        def lookup(table):
            return table["k"]

    first, second = resolve(found.declarations())
    assert (first.name, first.function) == ("empty", empty)
    assert (second.name, second.function, second.setup, second.teardown) == (
        "dict-lookup", lookup, make_table, drop_table)


def test_pairbench_benchmark_is_the_registry_decorator():
    assert pairbench.benchmark is registry.benchmark
    assert "benchmark" in dir(pairbench) and "benchmark" in pairbench.__all__
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = pairbench.no_such_name


@pytest.mark.e2e
def test_importing_pairbench_and_its_decorator_loads_nothing_heavy():
    code = ("import sys, pairbench; assert 'pairbench.worker' not in sys.modules; pairbench.benchmark; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'click', 'rich', 'jinja2') or m.startswith('pairbench.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["pairbench.command", "pairbench.frozen", "pairbench.limits", "pairbench.notes",
                         "pairbench.worker",
                         "pairbench.worker.discovery", "pairbench.worker.protocol",
                         "pairbench.worker.registry"]  # limits: the protocol's


def test_a_declaration_outside_any_collection_goes_to_the_default_registry_and_not_to_a_collection():
    @pairbench.benchmark
    def outside():
        pass

    with recording() as found:
        pass
    assert found.declarations() == []


# --------------------------------------------------------------------------- parameters


def test_params_expand_to_one_benchmark_per_combination_named_with_sorted_keys():
    [*benchmarks] = collected(("/b/bench_sort.py", """
        @pairbench.benchmark(params={"size": [1, 10], "kind": ["asc", "desc"]})
        def sort(kind, size):
            pass
    """))
    assert names(benchmarks) == ["sort[kind=asc,size=1]", "sort[kind=asc,size=10]",
                                 "sort[kind=desc,size=1]", "sort[kind=desc,size=10]"]
    assert benchmarks[1].params == (("kind", "asc"), ("size", 10))
    assert benchmarks[1].kwargs == {"kind": "asc", "size": 10}


def test_an_explicit_name_is_the_base_of_parameterised_names():
    benchmarks = collected(("/b/bench_sort.py", """
        @pairbench.benchmark(name="sorted-list", params={"n": range(2)}, setup=lambda n: [0] * n)
        def sort(data):
            pass
    """))
    assert names(benchmarks) == ["sorted-list[n=0]", "sorted-list[n=1]"]


# --------------------------------------------------------------------------- names


def test_a_default_name_declared_in_two_files_is_prefixed_with_each_files_stem():
    benchmarks = collected(
        ("/b/bench_json.py", "@pairbench.benchmark\ndef parse(): pass\n@pairbench.benchmark\ndef only_here(): pass"),
        ("/b/xml_bench.py", "@pairbench.benchmark(params={'n': [1]})\ndef parse(n): pass"),
    )
    assert names(benchmarks) == ["bench_json.parse", "only_here", "xml_bench.parse[n=1]"]


def test_an_explicit_name_is_kept_while_a_default_name_colliding_with_it_is_prefixed():
    benchmarks = collected(
        ("/b/bench_a.py", "@pairbench.benchmark(name='parse')\ndef a(): pass"),
        ("/b/bench_b.py", "@pairbench.benchmark\ndef parse(): pass"),
    )
    assert names(benchmarks) == ["parse", "bench_b.parse"]


def test_two_benchmarks_with_one_name_in_one_file_are_an_error_naming_both():
    with pytest.raises(HarnessError) as error:
        collected(("/b/bench_a.py", """
            @pairbench.benchmark
            def parse(): pass

            @pairbench.benchmark
            def parse(): pass
        """))
    message = str(error.value)
    assert "two benchmarks are named 'parse'" in message
    assert "/b/bench_a.py:1" in message and "/b/bench_a.py:4" in message
    assert "name=" in message


def test_explicit_names_equal_across_files_are_an_error():
    with pytest.raises(HarnessError, match=r"'fast'.*bench_a\.py:1.*bench_b\.py:1"):
        collected(("/b/bench_a.py", "@pairbench.benchmark(name='fast')\ndef a(): pass"),
                  ("/b/bench_b.py", "@pairbench.benchmark(name='fast')\ndef b(): pass"))


def test_default_names_equal_in_two_files_with_one_stem_are_an_error():
    with pytest.raises(HarnessError, match="bench_a.parse"):
        collected(("/one/bench_a.py", "@pairbench.benchmark\ndef parse(): pass"),
                  ("/two/bench_a.py", "@pairbench.benchmark\ndef parse(): pass"))


def test_a_source_run_again_under_another_module_name_declares_its_benchmarks_once():
    source = "@pairbench.benchmark\ndef parse(): pass"
    with recording() as found:
        declared(source, "/b/bench_a.py", "pairbench_bench_0_bench_a")
        declared(source, "/b/bench_a.py", "bench_a")  # the same file, imported by a sibling
    assert names(resolve(found.declarations())) == ["parse"]


def test_a_name_too_long_once_parameters_are_added_is_an_error_suggesting_a_shorter_name():
    with pytest.raises(HarnessError, match=r"longer than 200 bytes.*shorter name"):
        collected(("/b/bench_a.py", f"@pairbench.benchmark(name={'x' * 195!r}, params={{'n': [1000]}})\n"
                                    "def f(n): pass"))


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("options", "complaint"), [
    ("params=[1, 2]", "`params` must be a non-empty dict"),
    ("params={}", "`params` must be a non-empty dict"),
    ("params={'n': []}", r"`params\['n'\]` must be a non-empty list"),
    ("params={'n': 'abc'}", r"`params\['n'\]` must be a non-empty list"),
    ("params={'n': 5}", r"`params\['n'\]` must be a non-empty list"),
    ("params={'not valid': [1]}", "'not valid' is not a Python identifier"),
    ("params={'s': ['a b']}", "renders as 'a b', which a benchmark name cannot hold"),
    ("params={'s': ['a,b']}", "renders as 'a,b'"),
    ("params={'s': ['']}", "renders as ''"),
    ("params={'s': [1, '1']}", "values that render alike: 1"),
    ("name='two words'", "whitespace"),
    ("name=''", "empty"),
    ("name=3", "`name` must be a string"),
    ("name='x[y]', params={'n': [1]}", "brackets"),
    ("setup=42", "`setup` must be a function"),
    ("teardown='drop'", "`teardown` must be a function"),
])
def test_invalid_options_are_an_error_naming_the_function_and_file(options, complaint):
    with pytest.raises(HarnessError, match=complaint) as error:
        declared(f"""
            import pairbench
            @pairbench.benchmark({options})
            def bad(n=0, s=0):
                pass
        """, "/b/bench_bad.py")
    assert "@pairbench.benchmark on bad (/b/bench_bad.py:2)" in str(error.value)


def test_a_name_given_positionally_is_an_error_saying_to_pass_it_by_keyword():
    with pytest.raises(HarnessError, match=r"@pairbench.benchmark\(name='fast'\)"):
        pairbench.benchmark("fast")


def test_an_unknown_option_is_a_type_error():
    with pytest.raises(TypeError):
        pairbench.benchmark(repeat=3)
