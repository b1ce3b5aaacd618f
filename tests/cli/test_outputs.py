"""Where `run`, `compare` and `report` write: refused clashes, export failures that hide nothing,
and an unwritable standard output (closed pipe, full disk)."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeExecutor
from stored import side_samples

from pairbench.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_MEASUREMENT,
    EXIT_RESULT_FILE,
    EXIT_USAGE,
    EXIT_VERDICT,
)
from pairbench.store.resultfile import read_result

FIXTURE = Path(__file__).resolve().parents[1] / "report" / "data" / "compare.json"
FAILS_ON_SAMPLE_3 = {"sleep 0.1": [0.1, 0.1, {"duration": 0.1, "status": 2}]}


# -- outputs that would overwrite each other or the result --------------------------


@pytest.mark.parametrize("clash", [
    ["--json", "same", "--export-markdown", "same"],
    ["--export-html", "same", "--export-markdown", "same"],
    ["--export-csv", "s.csv", "--export-markdown", "s.summary.csv"],
    ["--json", "same", "--output", "same"],
])
@pytest.mark.parametrize("command", ["run", "compare"])
def test_outputs_naming_one_file_are_refused_before_measuring(use_executor, tmp_path, command, clash):
    fake = use_executor(FakeExecutor())
    args = [arg if arg.startswith("--") else str(tmp_path / arg) for arg in clash]
    result = invoke(command, "--runs", "6", "--seed", "1", *args, "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_USAGE, result.err
    assert "name the same file" in result.err and "give them different paths" in result.err
    assert fake.calls == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["run", "compare"])
def test_an_export_over_the_runs_own_journal_is_refused_before_measuring(use_executor, tmp_path, command):
    fake = use_executor(FakeExecutor())
    result = invoke(command, "--runs", "6", "--json", str(tmp_path / "r.json"),
                    "--export-html", str(tmp_path / "r.json.partial"), "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_USAGE, result.err
    assert "--export-html must not end in .partial" in result.err and "journal" in result.err
    assert fake.calls == [] and list(tmp_path.iterdir()) == []


def test_an_export_through_a_symbolic_link_to_the_result_is_refused(use_executor, tmp_path):
    use_executor(FakeExecutor())
    (tmp_path / "link.md").symlink_to(tmp_path / "r.json")
    result = invoke("run", "--runs", "3", "--json", str(tmp_path / "r.json"),
                    "--export-markdown", str(tmp_path / "link.md"), "sleep 0.1")
    assert result.code == EXIT_USAGE and "name the same file" in result.err


@pytest.mark.parametrize("output", ["input", "link", "sibling"])
def test_report_refuses_to_write_over_the_result_it_reads(tmp_path, output):
    source = tmp_path / "r.summary.csv"  # a result may have any name
    source.write_bytes(FIXTURE.read_bytes())
    (tmp_path / "link.json").symlink_to(source)
    target = {"input": source, "link": tmp_path / "link.json", "sibling": tmp_path / "r.csv"}[output]
    result = invoke("report", str(source), "-o", str(target), "--format", "csv")
    assert result.code == EXIT_USAGE and "name the same file" in result.err
    assert source.read_bytes() == FIXTURE.read_bytes()


def test_export_to_a_directory_is_refused_before_measuring(use_executor, tmp_path):
    fake = use_executor(FakeExecutor(FAILS_ON_SAMPLE_3))
    result = invoke("run", "--runs", "10", "--export-markdown", str(tmp_path), "sleep 0.1")
    assert result.code == EXIT_USAGE and "is a directory; give a file path" in result.err
    assert fake.calls == []


# -- an export that fails hides neither the run's error nor its exit code ----------


@pytest.fixture
def failing_markdown_export(monkeypatch):
    from pairbench.store import files

    real = files.atomic_write_text

    def write(path, text):
        if str(path).endswith(".md"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, text)

    monkeypatch.setattr(files, "atomic_write_text", write)


def test_failed_command_with_a_failing_export_reports_both_and_exits_3(
        use_executor, tmp_path, failing_markdown_export):
    use_executor(FakeExecutor(FAILS_ON_SAMPLE_3))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "10", "--seed", "1", "--json", str(out),
                    "--export-markdown", str(tmp_path / "r.md"), "sleep 0.1")
    assert result.code == EXIT_MEASUREMENT
    assert "r.md: cannot write the report (No space left on device)" in result.err
    assert "'sleep 0.1' failed on sample 3: exit code 2" in result.err
    assert list(side_samples(out, 0)["status"]) == [0, 0, 2]


def test_interrupted_run_with_a_failing_export_exits_130(use_executor, tmp_path, failing_markdown_export):
    use_executor(FakeExecutor({"sleep 0.1": [0.1, 0.1, KeyboardInterrupt]}))
    result = invoke("run", "--runs", "10", "--export-markdown", str(tmp_path / "r.md"), "sleep 0.1")
    assert result.code == EXIT_INTERRUPTED
    assert "cannot write the report" in result.err


def test_compare_with_a_failing_export_still_evaluates_fail_on_and_exits_4(
        use_executor, tmp_path, failing_markdown_export):
    use_executor(FakeExecutor({"sleep 0.1": 0.1, "sleep 0.2": lambda c, i, t: 0.2 * (1 + 0.01 * (i % 5))}))
    result = invoke("compare", "--runs", "20", "--seed", "1", "--fail-on", "slower",
                    "--export-markdown", str(tmp_path / "r.md"), "sleep 0.1", "sleep 0.2")
    assert "cannot write the report" in result.err
    assert "--fail-on slower: 1 comparison(s) matched" in result.err
    assert result.code == EXIT_RESULT_FILE


def test_compare_whose_export_works_exits_1_on_a_fail_on_match(use_executor, tmp_path):
    use_executor(FakeExecutor({"sleep 0.1": 0.1, "sleep 0.2": lambda c, i, t: 0.2 * (1 + 0.01 * (i % 5))}))
    result = invoke("compare", "--runs", "20", "--seed", "1", "--fail-on", "slower",
                    "--export-markdown", str(tmp_path / "r.md"), "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_VERDICT and (tmp_path / "r.md").exists()


# -- a duration that rounds to nothing ----------------------------------------------


def test_timeout_below_one_nanosecond_is_a_usage_error_before_setup_runs(use_executor, tmp_path):
    fake = use_executor(FakeExecutor({"touch x": 0.01}))
    result = invoke("run", "--timeout", "0.1ns", "--setup", "touch x", "--runs", "3", "sleep 0.1")
    assert result.code == EXIT_USAGE
    assert "--timeout" in result.err and "at least 1 ns" in result.err and "timeout_ns" not in result.err
    assert fake.calls == []


# -- standard output that cannot be written -----------------------------------------


class _Unwritable(io.StringIO):
    def __init__(self, error: OSError):
        super().__init__()
        self.error = error

    def write(self, text):
        raise self.error


def _main(args, error):
    err = io.StringIO()
    code = invoke(*args, stdout=_Unwritable(error), stderr=err).code
    return code, err.getvalue()


def test_closed_standard_output_exits_141_quietly_not_like_a_fail_on_match():
    code, err = _main(["show", str(FIXTURE)], BrokenPipeError(errno.EPIPE, "Broken pipe"))
    assert code == EXIT_BROKEN_PIPE and err == ""


def test_full_standard_output_exits_4_and_says_so():
    code, err = _main(["show", str(FIXTURE)], OSError(errno.ENOSPC, "No space left on device"))
    assert code == EXIT_RESULT_FILE
    assert err == "error: cannot write to standard output (No space left on device)\n"


def test_closed_standard_output_does_not_cut_a_run_short_nor_hide_its_failure(use_executor, tmp_path):
    use_executor(FakeExecutor(FAILS_ON_SAMPLE_3))
    out = tmp_path / "r.json"
    code, err = _main(["run", "--runs", "10", "--json", str(out), "--export-markdown", str(tmp_path / "r.md"),
                       "sleep 0.1"], BrokenPipeError(errno.EPIPE, "Broken pipe"))
    assert code == EXIT_MEASUREMENT and "failed on sample 3" in err
    assert (tmp_path / "r.md").exists() and read_result(out).state == "failed"


def _pairbench(args, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pairbench", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=60)


# /dev/full is a Linux (and BSD) device: a platform limit, not a gap. Everywhere, the same path
# is covered in process by test_full_standard_output_exits_4_and_says_so.
@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists("/dev/full"),
                    reason="this system has no /dev/full; the in-process ENOSPC test covers the path")
def test_pairbench_writing_to_dev_full_exits_4_without_a_traceback():
    with open("/dev/full", "w") as full:
        result = _pairbench(["show", str(FIXTURE)], full)
    assert result.returncode == EXIT_RESULT_FILE
    assert result.stderr == "error: cannot write to standard output (No space left on device)\n"


@pytest.mark.e2e
def test_pairbench_writing_to_a_closed_pipe_exits_141_without_a_traceback():
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = _pairbench(["show", str(FIXTURE)], write_end)
    finally:
        os.close(write_end)
    assert result.returncode == EXIT_BROKEN_PIPE and result.stderr == ""
