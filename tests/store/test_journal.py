"""The journal: samples written as they arrive, read back after a crash, never overwritten."""

import json

import pytest
from store_runs import stored_run

from pairbench.errors import ResultFileError
from pairbench.measure.sampler import Measured
from pairbench.model import Sample
from pairbench.store.journal import Journal, journal_path
from pairbench.store.resultfile import read_result


def started(tmp_path, run=None) -> Journal:
    return Journal(tmp_path / "r.json",
                   run or stored_run(n=0, state="running").replace(samples={}, stopped_because=""))


def append(journal: Journal, side: int, wall_ns: int, benchmark: int = 0, metrics=None, **columns) -> None:
    journal.on_sample(Measured(side, benchmark, Sample(wall_ns=wall_ns, **columns), metrics or {}))


def crash(journal: Journal) -> None:
    """End ``journal``'s run as a crash does: its file is closed (the kernel releases the lock),
    neither finished nor removed."""
    journal._handle.close()


def test_journal_of_a_crashed_run_can_be_read(tmp_path):
    journal = started(tmp_path)
    for i in range(3):
        append(journal, 0, 100 + i, seq=2 * i, pair=i)
        append(journal, 1, 200 + i, seq=2 * i + 1, pair=i)
    # a crash: no close, no final document
    back = read_result(tmp_path / "r.json")  # falls back to r.json.partial
    assert back.state == "interrupted" and back.stopped_because == "the run did not finish"
    assert list(back.series(0, 0)["wall_ns"]) == [100, 101, 102]
    assert list(back.series(0, 1)["wall_ns"]) == [200, 201, 202]
    assert back.notes == stored_run().notes


def test_journal_keeps_metrics_and_benchmarks_of_each_sample(tmp_path):
    from store_runs import two_benchmark_run

    journal = started(tmp_path, two_benchmark_run().replace(samples={}, state="running"))
    append(journal, 1, 12, benchmark=1, metrics={"value": 256.5})
    back = read_result(journal.path)
    assert list(back.series(1, 1).metrics["value"]) == [256.5] and len(back.series(0, 0)) == 0


def test_journal_with_a_half_written_last_line_keeps_the_rest_and_says_so(tmp_path):
    journal = started(tmp_path)
    append(journal, 0, 100)
    append(journal, 1, 200)
    with open(journal.path, "a") as handle:
        handle.write('{"b": 0, "s": 0, "v": [12')
    back = read_result(journal.path)
    assert [len(back.series(0, s)) for s in range(2)] == [1, 1]
    assert [n.data for n in back.notes if n.code == "journal-cut-short"] == [{"recovered": 2}]


def test_journal_is_removed_after_a_clean_close(tmp_path):
    journal = started(tmp_path)
    journal.close(remove=True)
    assert not journal_path(tmp_path / "r.json").exists()


def _with_line(tmp_path, line: str) -> Journal:
    journal = started(tmp_path)
    append(journal, 0, 100)
    journal._handle.write(line + "\n")  # a corrupted line between two good ones
    append(journal, 0, 101)
    return journal


@pytest.mark.parametrize(("line", "problem"), [
    ("garbage", "malformed journal line"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (json.dumps({"b": 0, "s": True, "v": [100] + [0] * 12}), "a journal line must be"),
    (json.dumps({"b": 0, "s": 5, "v": [100] + [0] * 12}), "benchmark 0 or side 5 out of range"),
    (json.dumps({"b": 0, "s": 0, "v": [100, 2**53] + [0] * 11}), r"user_ns is 9007199254740992, beyond the limit"),
    (json.dumps({"b": 0, "s": 0, "v": [100, 1]}), "a sample must be 13 integers"),
    (json.dumps({"b": 0, "s": 0, "v": [100] + [0] * 12, "m": {"value": "x"}}), "must map metric names to numbers"),
    ('{"b": 0, "s": 0, "v": [100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0], "m": {"value": 1e400}}', "too large"),
    ('{"b": 0, "b": 1, "s": 0, "v": [100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]}', "twice|more than once"),
])
def test_a_bad_line_inside_a_journal_is_an_error_naming_its_line(tmp_path, line, problem):
    journal = _with_line(tmp_path, line)
    with pytest.raises(ResultFileError, match=rf"r\.json\.partial:3: .*{problem}"):
        read_result(journal.path)


def test_journal_sample_at_the_2_to_the_53_limits_is_read(tmp_path):
    journal = started(tmp_path)
    append(journal, 0, 2**53 - 1, pair=-(2**53 - 1))
    back = read_result(journal.path)
    assert int(back.series(0, 0)["wall_ns"][0]) == 2**53 - 1
    assert int(back.series(0, 0)["pair"][0]) == -(2**53 - 1)


def _journal_with_header(tmp_path, **run_changes):
    """A journal whose header run has ``run_changes`` applied (as a hand-edited file would)."""
    journal = started(tmp_path)
    journal.close(remove=False)
    header, *rest = journal.path.read_text().splitlines(keepends=True)
    record = json.loads(header)
    record["run"].update(run_changes)
    journal.path.write_text(json.dumps(record) + "\n" + "".join(rest))
    return journal.path


@pytest.mark.parametrize(("changes", "problem"), [
    ({"sides": []}, "sides is empty"),
    ({"notes": "a note"}, "notes must be a list"),
    ({"environment": {"executor": 5}}, r"environment\.executor must be an object"),
    ({"format": "x", "kind": "suite"}, "unknown kind"),
])
def test_a_journal_with_a_bad_header_is_refused_naming_the_file(tmp_path, changes, problem):
    path = _journal_with_header(tmp_path, **changes)
    with pytest.raises(ResultFileError, match=rf"r\.json\.partial: .*{problem}"):
        read_result(path)


def test_journal_whose_header_cannot_be_written_leaves_no_file_to_block_the_next_run(tmp_path):
    unwritable = stored_run(n=0, state="running").replace(environment={"load": float("nan")})
    with pytest.raises(ResultFileError, match=r"r\.json\.partial: cannot write the journal \("):
        Journal(tmp_path / "r.json", unwritable)
    assert not journal_path(tmp_path / "r.json").exists()
    started(tmp_path).close(remove=True)


def test_starting_a_journal_refuses_to_overwrite_one_left_by_a_crashed_run(tmp_path):
    crashed = started(tmp_path)
    append(crashed, 0, 100)
    append(crashed, 1, 200)
    crash(crashed)
    before = crashed.path.read_bytes()
    with pytest.raises(ResultFileError) as info:
        started(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{crashed.path}: holds the samples of a run that did not finish")
    assert f"`pairbench show {crashed.path}`" in message and "choose another --json path" in message
    assert "\n" not in message and crashed.path.read_bytes() == before


def test_a_new_journal_can_start_once_the_previous_one_was_removed(tmp_path):
    started(tmp_path).close(remove=True)
    journal = started(tmp_path)
    append(journal, 0, 100)
    assert len(read_result(journal.path).series(0, 0)) == 1


def test_a_run_with_a_crashed_runs_journal_at_its_json_path_exits_4_and_keeps_the_journal(tmp_path):
    from cli_runner import invoke
    from fakes import FakeExecutor

    from pairbench.errors import EXIT_RESULT_FILE

    out = tmp_path / "r.json"
    first = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1",
                   executor=FakeExecutor({"sleep 0.1": 0.1}))
    assert first.code == 0, first.err
    assert not journal_path(out).exists()  # a finished run removes its journal
    crashed = started(tmp_path)
    append(crashed, 0, 100)
    crash(crashed)
    refused = FakeExecutor({"sleep 0.1": 0.1})
    result = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1", executor=refused)
    assert result.code == EXIT_RESULT_FILE
    assert result.err.count("\n") == 1 and "holds the samples of a run that did not finish" in result.err
    assert len(read_result(journal_path(out)).series(0, 0)) == 1
    assert refused.closed  # the refused run still closes its executor (a spawner process, by default)


# -- one journal, one run ------------------------------------------------------------------


def test_a_second_run_with_the_same_path_is_told_another_run_is_live_not_to_delete_it(tmp_path):
    live = started(tmp_path)
    append(live, 0, 100)
    with pytest.raises(ResultFileError) as info:
        started(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{live.path}: another pairbench run is writing it now")
    assert "remove" not in message and "choose another --json path" in message
    live.close(remove=True)
    started(tmp_path).close(remove=True)  # once it ended, the path is free


def test_a_journal_this_run_did_not_create_is_never_removed(tmp_path):
    ours = started(tmp_path)
    append(ours, 0, 100)
    ours.path.unlink()  # another run (or a user) put its own file at the path meanwhile
    ours.path.write_text("someone else's\n")
    ours.close(remove=True)
    assert ours.path.read_text() == "someone else's\n"


def test_a_run_refuses_a_result_name_ending_in_partial(tmp_path):
    from cli_runner import invoke
    from fakes import FakeExecutor

    result = invoke("run", "--runs", "3", "--json", str(tmp_path / "r.json.partial"), "sleep 0.1",
                    executor=FakeExecutor())
    assert result.code == 2
    assert result.err.startswith("error: --json must not end in .partial")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("option", ["--export-markdown", "--export-csv", "--export-html"])
def test_an_export_named_like_a_journal_is_refused_before_it_can_replace_one(tmp_path, option):
    from cli_runner import invoke
    from fakes import FakeExecutor

    live = tmp_path / "other.json.partial"
    live.write_text("another run's journal\n")
    result = invoke("run", "--runs", "3", option, str(live), "sleep 0.1", executor=FakeExecutor())
    assert result.code == 2
    assert result.err.startswith(f"error: {option} must not end in .partial")
    assert "--json 'PATH'".replace("PATH", str(tmp_path / "other.json")) in result.err
    assert live.read_text() == "another run's journal\n"


def test_a_run_whose_journal_was_replaced_does_not_remove_the_newcomer(tmp_path):
    from cli_runner import invoke
    from fakes import FakeExecutor

    out = tmp_path / "r.json"
    journal = journal_path(out)

    def replace_journal(command, index, clock_ns):
        if index == 2:
            journal.unlink()
            journal.write_text("another run's journal\n")
        return 0.1

    result = invoke("run", "--runs", "4", "--json", str(out), "sleep 0.1", executor=FakeExecutor(replace_journal))
    assert result.code == 0, result.err
    assert journal.read_text() == "another run's journal\n"
    assert len(json.loads(out.read_text())["series"][0]["samples"]["wall_ns"]) == 4


# -- where the samples are after a failure --------------------------------------------------


def test_when_the_result_directory_is_deleted_mid_run_no_message_points_to_the_lost_journal(tmp_path):
    import shutil

    from cli_runner import invoke
    from fakes import FakeExecutor

    directory = tmp_path / "results"
    directory.mkdir()
    out = directory / "r.json"

    def remove_directory(command, index, clock_ns):
        if index == 2:
            shutil.rmtree(directory)
        return 0.1

    result = invoke("run", "--runs", "4", "--json", str(out), "sleep 0.1", executor=FakeExecutor(remove_directory))
    assert result.code == 4
    (line,) = [line for line in result.err.splitlines() if "cannot write the result" in line]
    assert "are in the journal" not in line and "holds the first" not in line
    assert f"the journal {journal_path(out)} is gone too" in line
    assert "sleep 0.1" in result.out  # the summary is still on screen


_KILLED_BEFORE_RENAME = """
import os, signal, sys
sys.path.insert(0, sys.argv[2])
from cli_runner import FIXED_ENVIRONMENT
from pairbench import cli
from fakes import FakeExecutor

def killed(*args, **kwargs):  # the final rename of the result document: the moment of the kill
    os.kill(os.getpid(), signal.SIGKILL)

os.replace = os.rename = killed
cli.main(["run", "--runs", "3", "--seed", "1", "--json", sys.argv[1], "sleep 0.1"],
         executor_factory=lambda output: FakeExecutor(),
         environment=lambda *a, **k: dict(FIXED_ENVIRONMENT))
"""


@pytest.fixture
def killed_before_rename(tmp_path):
    """A run killed just before it renamed its complete result document into place."""
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "r.json"
    support = Path(__file__).resolve().parents[1] / "support"
    process = subprocess.run([sys.executable, "-c", _KILLED_BEFORE_RENAME, str(out), str(support)],
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == -9, process.stderr
    (leftover,) = [p for p in tmp_path.iterdir() if p.name.startswith(".r.json.")]
    assert not out.exists() and journal_path(out).exists()
    return out, leftover


@pytest.mark.e2e
def test_the_next_run_finds_the_complete_document_a_killed_run_did_not_rename(killed_before_rename):
    from cli_runner import invoke
    from fakes import FakeExecutor

    out, leftover = killed_before_rename
    result = invoke("run", "--runs", "3", "--json", str(out), "sleep 0.1", executor=FakeExecutor())
    assert result.code == 4 and result.err.count("\n") == 1
    assert f"{leftover} holds its complete result document" in result.err
    assert f"rename it to {out}" in result.err
    assert json.loads(leftover.read_text())["state"] == "complete"


@pytest.mark.e2e
def test_show_of_a_killed_runs_result_says_where_its_complete_document_is(killed_before_rename):
    from cli_runner import invoke

    out, leftover = killed_before_rename
    for path in (out, journal_path(out)):
        result = invoke("show", str(path))
        assert result.code == 0, result.err
        assert f"{leftover} holds this run's complete result document" in result.out
