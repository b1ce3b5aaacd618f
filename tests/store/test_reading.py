"""Reading a result defensively: regular files only, bounded size and memory, numbers JSON can hold
exactly, each key once; every refusal one line naming the file (exit 4 from the CLI)."""

from __future__ import annotations

import json
import os
import sys
import tracemalloc

import pytest
from cli_runner import invoke
from store_runs import stored_run

from pairbench.errors import EXIT_RESULT_FILE, EXIT_USAGE, ResultFileError
from pairbench.store import files
from pairbench.store.resultfile import read_result, run_to_document, write_result


def _one_line_refusal(path, pattern):
    with pytest.raises(ResultFileError, match=pattern) as info:
        read_result(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


def _document_text(**changes) -> str:
    document = run_to_document(stored_run())
    document.update(changes)
    return json.dumps(document, separators=(",", ":"))


# --------------------------------------------------------------------------- what is read


def test_a_device_is_refused_without_reading_it():
    _one_line_refusal("/dev/zero", "not a regular file")
    result = invoke("show", "/dev/zero")
    assert result.code == EXIT_RESULT_FILE and result.err.count("\n") == 1


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    _one_line_refusal(fifo, "not a regular file")
    assert invoke("doctor", "--environment", str(fifo)).code == EXIT_RESULT_FILE


def test_the_size_limit_admits_the_largest_results_pairbench_writes_and_not_much_more():
    # two sides of a million samples each take 137 MB (benchmarks/RESULTS.md, report size);
    # parsing costs about 4 bytes of memory per byte of a real result, up to 10 for a hostile one
    assert 150 * 10**6 < files.MAX_FILE_BYTES <= 256 * 2**20


def test_a_file_of_millions_of_empty_lists_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text('{"format":"pairbench.result/2","junk":[' + ",".join(["[]"] * 3_000_000) + "]}")
    tracemalloc.start()
    try:
        _one_line_refusal(path, "3,000,002 lists and objects")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * path.stat().st_size  # the text, not a Python object per bracket (22x when parsed)


def test_a_file_of_millions_of_short_strings_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_STRINGS", 1000)
    path = tmp_path / "strings.json"
    path.write_text(_document_text(junk=["ab"] * 2000))
    _one_line_refusal(path, "strings")


def test_running_out_of_memory_is_one_line_and_exit_4(tmp_path, monkeypatch):
    write_result(stored_run(), tmp_path / "r.json")

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(json, "loads", exhausted)
    for args in (["show"], ["report", "--format", "json"], ["doctor", "--environment"]):
        result = invoke(*args, str(tmp_path / "r.json"))
        assert result.code == EXIT_RESULT_FILE, (args, result.err)
        assert result.err.count("\n") == 1 and "memory" in result.err and "Traceback" not in result.err


def test_running_out_of_memory_while_analysing_is_one_line_and_exit_4(tmp_path, monkeypatch):
    write_result(stored_run(), tmp_path / "r.json")
    monkeypatch.setattr("pairbench.analysis.analyse", lambda run: (_ for _ in ()).throw(MemoryError()))
    result = invoke("show", str(tmp_path / "r.json"))
    assert result.code == EXIT_RESULT_FILE and result.err.count("\n") == 1 and "memory" in result.err


# --------------------------------------------------------------------------- numbers and keys


def test_a_number_too_large_for_a_float_is_refused_not_read_as_infinity(tmp_path):
    text = _document_text().replace('"wall_ns":[1000', '"wall_ns":[1e400', 1)
    text = text.replace('"metrics":{}', '"metrics":{"value":[1e400,1,1,1,1]}', 1)
    path = tmp_path / "r.json"
    path.write_text(text)
    _one_line_refusal(path, "1e400 is too large")
    result = invoke("report", str(path), "--format", "json")
    assert result.code == EXIT_RESULT_FILE and "Traceback" not in result.err


def test_a_key_given_twice_in_one_object_is_refused(tmp_path):
    text = _document_text().replace('"kind":"compare"', '"kind":"compare","kind":"run"', 1)
    assert text.count('"kind"') == 2
    path = tmp_path / "r.json"
    path.write_text(text)
    _one_line_refusal(path, "the key 'kind' appears twice in one object")


def test_a_five_thousand_digit_integer_is_refused_in_plain_words(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(_document_text().replace('"wall_ns":[1000', '"wall_ns":[' + "9" * 5000, 1))
    message = _one_line_refusal(path, f"more than {sys.get_int_max_str_digits()} digits")
    assert "sys.set_int_max_str_digits" not in message


def test_an_alpha_that_is_not_a_number_is_refused_before_measuring(use_executor):
    executor = use_executor()
    result = invoke("compare", "--alpha", "nan", "--runs", "12", "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_USAGE and "--alpha" in result.err and "Traceback" not in result.err
    assert executor.calls == []
