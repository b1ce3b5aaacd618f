"""The journal: samples written as they arrive, read back after a crash, never overwritten."""

import json

import pytest

from conftest import stored_run
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
    from conftest import two_benchmark_run

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
    ({"format": "x", "kind": "bench"}, "unknown kind"),
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
    append(crashed, 1, 200)  # no close: the run crashed
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

    from pairbench.errors import EXIT_RESULT_FILE
    from pairbench.measure.fake import FakeExecutor

    out = tmp_path / "r.json"
    first = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1",
                   executor=FakeExecutor({"sleep 0.1": 0.1}))
    assert first.code == 0, first.err
    assert not journal_path(out).exists()  # a finished run removes its journal
    crashed = started(tmp_path)
    append(crashed, 0, 100)
    refused = FakeExecutor({"sleep 0.1": 0.1})
    result = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1", executor=refused)
    assert result.code == EXIT_RESULT_FILE
    assert result.err.count("\n") == 1 and "holds the samples of a run that did not finish" in result.err
    assert len(read_result(journal_path(out)).series(0, 0)) == 1
    assert refused.closed  # the refused run still closes its executor (a spawner process, by default)
