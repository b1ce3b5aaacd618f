"""The result document and journal: round trips, crash safety, and hostile input."""

import json
import os

import numpy as np
import pytest

from pairbench import resultfile
from pairbench.errors import ResultFileError
from pairbench.model import SAMPLE_COLUMNS, Command, Run, Sample, Samples, Variant
from pairbench.resultfile import Journal, journal_path, read_result, run_to_document, write_result


def make_run(n=5, state="complete") -> Run:
    rows_a = [Sample(wall_ns=1_000 + i, user_ns=10, seq=2 * i, pair=i, slot=i % 2) for i in range(n)]
    rows_b = [Sample(wall_ns=2_000 + i, sys_ns=5, seq=2 * i + 1, pair=i, slot=1 - i % 2) for i in range(n)]
    return Run(
        kind="compare",
        variants=(
            Variant("a", Command("true", ("/bin/true",)), "baseline", Samples.from_rows(rows_a)),
            Variant("b", Command("sleep 0", ("/bin/sleep", "0")), "candidate", Samples.from_rows(rows_b)),
        ),
        tool_version="0.1.0",
        started_at="2026-11-22T10:00:00+00:00",
        finished_at="2026-11-22T10:00:05+00:00",
        state=state,
        stopped_because="completed the requested 5 rounds",
        environment={"host": "box", "cpu_model": "Test CPU"},
        options={"seed": 7, "runs": 5},
        warnings=("a note",),
    )


def test_result_round_trips_through_the_file(tmp_path):
    run = make_run()
    path = tmp_path / "r.json"
    write_result(run, path)
    back = read_result(path)
    assert back.kind == "compare" and back.state == "complete"
    assert back.options == {"seed": 7, "runs": 5}
    assert [v.command.argv for v in back.variants] == [("/bin/true",), ("/bin/sleep", "0")]
    for original, loaded in zip(run.variants, back.variants, strict=True):
        for column in SAMPLE_COLUMNS:
            np.testing.assert_array_equal(original.samples[column], loaded.samples[column])


def test_document_stores_samples_columnar_with_a_format_version():
    document = run_to_document(make_run())
    assert document["format"] == "pairbench.result/1"
    assert document["variants"][0]["samples"]["wall_ns"] == [1000, 1001, 1002, 1003, 1004]


def test_write_leaves_no_temporary_files_behind(tmp_path):
    write_result(make_run(), tmp_path / "r.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    write_result(make_run(), path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_result(make_run(n=9), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_journal_of_a_crashed_run_can_be_read(tmp_path):
    run = make_run(n=0, state="running")
    journal = Journal(tmp_path / "r.json", run)
    for i in range(3):
        journal.append(0, Sample(wall_ns=100 + i, seq=2 * i, pair=i))
        journal.append(1, Sample(wall_ns=200 + i, seq=2 * i + 1, pair=i))
    # simulate a crash: no close, no final document
    back = read_result(tmp_path / "r.json")  # falls back to r.json.partial
    assert back.state == "interrupted"
    assert list(back.variants[0].samples["wall_ns"]) == [100, 101, 102]
    assert list(back.variants[1].samples["wall_ns"]) == [200, 201, 202]


def test_journal_with_a_half_written_last_line_keeps_the_rest(tmp_path):
    run = make_run(n=0, state="running")
    journal = Journal(tmp_path / "r.json", run)
    journal.append(0, Sample(wall_ns=100))
    journal.append(1, Sample(wall_ns=200))
    with open(journal_path(tmp_path / "r.json"), "a") as handle:
        handle.write('{"v": 0, "s": [12')
    back = read_result(journal_path(tmp_path / "r.json"))
    assert [len(v.samples) for v in back.variants] == [1, 1]
    assert any("cut short" in w for w in back.warnings)


def test_journal_is_removed_after_a_clean_close(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.close(remove=True)
    assert not journal_path(tmp_path / "r.json").exists()


def test_malformed_line_inside_a_journal_is_an_error_with_its_line_number(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.append(0, Sample(wall_ns=100))
    journal._handle.write("garbage\n")  # a corrupted line between two good ones
    journal.append(0, Sample(wall_ns=101))
    with pytest.raises(ResultFileError, match=r"r\.json\.partial:3: malformed"):
        read_result(journal.path)


def _journal_with_header(tmp_path, **run_changes):
    """A journal whose header run has ``run_changes`` applied (as a hand-edited file would)."""
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.close(remove=False)
    header, *rest = journal.path.read_text().splitlines(keepends=True)
    record = json.loads(header)
    record["run"].update(run_changes)
    journal.path.write_text(json.dumps(record) + "\n" + "".join(rest))
    return journal.path


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**63, -(2**63) - 1, 10**30])
def test_journal_sample_beyond_2_to_the_53_is_refused_naming_the_line(tmp_path, value):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.append(0, Sample(wall_ns=100))
    journal._handle.write(json.dumps({"v": 0, "s": [100, value] + [0] * 11}) + "\n")
    journal.append(0, Sample(wall_ns=101))
    with pytest.raises(ResultFileError, match=r"r\.json\.partial:3: user_ns is -?\d+, beyond the limit of 2\*\*53"):
        read_result(journal.path)


def test_journal_sample_at_the_2_to_the_53_limits_is_read(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.append(0, Sample(wall_ns=2**53 - 1, pair=-(2**53 - 1)))
    back = read_result(journal.path)
    assert int(back.variants[0].samples["wall_ns"][0]) == 2**53 - 1
    assert int(back.variants[0].samples["pair"][0]) == -(2**53 - 1)


@pytest.mark.parametrize(("warnings", "problem"), [
    (5, "must be a list, got int"),
    ("a note", "must be a list, got str"),
    (["a note", 7], "must be a list of strings"),
])
def test_journal_header_warnings_must_be_a_list_of_strings(tmp_path, warnings, problem):
    path = _journal_with_header(tmp_path, warnings=warnings)
    with pytest.raises(ResultFileError, match=f"r\\.json\\.partial: warnings {problem}"):
        read_result(path)


def test_journal_line_nested_too_deeply_is_refused_naming_the_line(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.append(0, Sample(wall_ns=100))
    journal._handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    journal.append(0, Sample(wall_ns=101))
    with pytest.raises(ResultFileError, match=r"r\.json\.partial:3: nested too deeply"):
        read_result(journal.path)


def test_journal_line_with_a_boolean_variant_index_is_refused(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal._handle.write(json.dumps({"v": True, "s": [100] + [0] * 12}) + "\n")
    journal.append(0, Sample(wall_ns=101))
    with pytest.raises(ResultFileError, match=r"r\.json\.partial:2: a journal line must be"):
        read_result(journal.path)


def test_journal_whose_variants_share_a_name_is_refused(tmp_path):
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.close(remove=False)
    header = json.loads(journal.path.read_text())
    header["run"]["variants"][1]["name"] = "a"
    journal.path.write_text(json.dumps(header) + "\n")
    with pytest.raises(ResultFileError, match=r"r\.json\.partial: variants\[1\]\.name 'a' is the name"):
        read_result(journal.path)


def test_journal_whose_header_cannot_be_written_leaves_no_file_to_block_the_next_run(tmp_path):
    unwritable = make_run(n=0, state="running").replace(options={"alpha": float("nan")})
    with pytest.raises(ResultFileError, match=r"r\.json\.partial: cannot write the journal \("):
        Journal(tmp_path / "r.json", unwritable)
    assert not journal_path(tmp_path / "r.json").exists()
    Journal(tmp_path / "r.json", make_run(n=0, state="running")).close(remove=True)


def test_writing_through_a_symbolic_link_replaces_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "r.json"
    target.write_text("old")
    link = tmp_path / "r.json"
    link.symlink_to(target)
    write_result(make_run(), link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert read_result(target).variants[0].name == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "store"]
    assert [p.name for p in (tmp_path / "store").iterdir()] == ["r.json"]


def test_journal_header_warnings_are_kept_with_the_recovery_note(tmp_path):
    path = _journal_with_header(tmp_path, warnings=["a note"])
    assert read_result(path).warnings == ("a note",)


def test_journal_without_variants_is_refused(tmp_path):
    path = _journal_with_header(tmp_path, variants=[])
    with pytest.raises(ResultFileError, match=r"r\.json\.partial: variants is empty"):
        read_result(path)


@pytest.mark.parametrize("kind", ["run", "compare"])
def test_document_without_variants_is_refused_whatever_its_kind(tmp_path, kind):
    # pairbench never writes one: SamplingPlan refuses zero commands, and a run
    # interrupted before its first sample still lists its variants (with no samples)
    path = _write(tmp_path, _document_with(lambda d: d.update(kind=kind, variants=[], comparisons=[])))
    with pytest.raises(ResultFileError, match="variants is empty; a result holds at least one command"):
        read_result(path)


def test_run_interrupted_before_any_sample_is_still_read(tmp_path):
    write_result(make_run(n=0, state="interrupted"), tmp_path / "r.json")
    back = read_result(tmp_path / "r.json")
    assert [len(v.samples) for v in back.variants] == [0, 0]


@pytest.mark.parametrize("executor", [{"kind": "FakeExecutor", "rss_floor_kib": None},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": 0},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": 1800},
                                      {"kind": "SpawnerExecutor"}])
def test_executor_metadata_as_pairbench_writes_it_is_read(tmp_path, executor):
    write_result(make_run().replace(environment={"executor": executor}), tmp_path / "r.json")
    assert read_result(tmp_path / "r.json").environment["executor"] == executor


def test_journal_with_malformed_executor_metadata_is_refused(tmp_path):
    path = _journal_with_header(tmp_path, environment={"executor": 5})
    with pytest.raises(ResultFileError, match=r"r\.json\.partial: environment\.executor must be an object"):
        read_result(path)


def test_starting_a_journal_refuses_to_overwrite_one_left_by_a_crashed_run(tmp_path):
    crashed = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    crashed.append(0, Sample(wall_ns=100))
    crashed.append(1, Sample(wall_ns=200))  # no close: the run crashed
    before = crashed.path.read_bytes()
    with pytest.raises(ResultFileError) as info:
        Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    message = str(info.value)
    assert message.startswith(f"{crashed.path}: holds the samples of a run that did not finish")
    assert f"`pairbench show {crashed.path}`" in message and "choose another --json path" in message
    assert "\n" not in message
    assert crashed.path.read_bytes() == before
    assert [len(v.samples) for v in read_result(crashed.path).variants] == [1, 1]


def test_a_new_journal_can_start_once_the_previous_one_was_removed(tmp_path):
    Journal(tmp_path / "r.json", make_run(n=0, state="running")).close(remove=True)
    journal = Journal(tmp_path / "r.json", make_run(n=0, state="running"))
    journal.append(0, Sample(wall_ns=100))
    assert [len(v.samples) for v in read_result(journal.path).variants] == [1, 0]


def _document_with(mutate):
    document = run_to_document(make_run())
    mutate(document)
    return document


def _write(tmp_path, document_or_text):
    path = tmp_path / "bad.json"
    text = document_or_text if isinstance(document_or_text, str) else json.dumps(document_or_text)
    path.write_text(text)
    return path


def _set_column(name, value, variant=0):
    def mutate(doc):
        doc["variants"][variant]["samples"][name] = value
    return mutate


HOSTILE = {
    "wrong version": (lambda d: d.update(format="pairbench.result/99"), "unsupported format"),
    "not an object": (lambda d: None, None),
    "NaN duration": (None, "NaN is not allowed"),
    "negative duration": (_set_column("wall_ns", [1, -5, 3, 4, 5]), r"wall_ns\[1\] is -5"),
    "zero duration": (_set_column("wall_ns", [1, 0, 3, 4, 5]), "durations must be positive"),
    "float duration": (_set_column("wall_ns", [1.5, 2, 3, 4, 5]), "list of integers"),
    "string duration": (_set_column("wall_ns", ["1", "2", "3", "4", "5"]), "list of integers"),
    "boolean column": (_set_column("wall_ns", [True] * 5), "list of integers"),
    "nested column": (_set_column("wall_ns", [[1], [2], [3], [4], [5]]), "list of integers"),
    "huge integer": (_set_column("wall_ns", [10**30] * 5), "integers|64 bits"),
    "unequal columns": (_set_column("user_ns", [1, 2]), "different lengths"),
    "missing column": (lambda d: d["variants"][0]["samples"].pop("sys_ns"), "lacks the column 'sys_ns'"),
    "column not a list": (_set_column("wall_ns", {"a": 1}), "must be a list"),
    "negative rusage": (_set_column("max_rss_kib", [1, 2, -3, 4, 5]), "max_rss_kib.*negative"),
    "argv not strings": (lambda d: d["variants"][0]["command"].update(argv=[1, 2]), "list of strings"),
    "unknown state": (lambda d: d.update(state="exploded"), "unknown state"),
    "warmup not a flag": (_set_column("warmup", [0, 2, 0, 0, 0]), "warmup must hold only 0 and 1"),
    "warnings a number": (lambda d: d.update(warnings=5), "warnings must be a list, got int"),
    "warnings a string": (lambda d: d.update(warnings="a note"), "warnings must be a list, got str"),
    "warnings not strings": (lambda d: d.update(warnings=["a", 1]), "warnings must be a list of strings"),
    "no variants": (lambda d: d.update(variants=[]), "variants is empty"),
    "executor a number": (lambda d: d["environment"].update(executor=5),
                          "environment.executor must be an object, got int"),
    "executor floor negative": (lambda d: d["environment"].update(executor={"rss_floor_kib": -1}),
                                "rss_floor_kib must be non-negative, got -1"),
    "executor floor a string": (lambda d: d["environment"].update(executor={"rss_floor_kib": "9"}),
                                "rss_floor_kib must be an integer, got str"),
    "executor floor a flag": (lambda d: d["environment"].update(executor={"rss_floor_kib": True}),
                              "rss_floor_kib must be an integer, got bool"),
    "boolean among integers": (_set_column("wall_ns", [5, True, 3, 4, 5]), "list of integers"),
    "duration of 2**62": (_set_column("wall_ns", [2**62, 1, 1, 1, 1]),
                          r"wall_ns\[0\] is 4611686018427387904, beyond the limit of 2\*\*53"),
    "user time of 2**53": (_set_column("user_ns", [1, 2**53, 1, 1, 1]), r"user_ns\[1\] is 9007199254740992"),
    "two variants of one name": (lambda d: d["variants"][1].update(name="a"),
                                 r"variants\[1\]\.name 'a' is the name of an earlier variant"),
    "comparisons of numbers": (lambda d: d.update(comparisons=[1, 2]),
                               r"comparisons\[0\] must be an object, got int"),
    "comparisons an object": (lambda d: d.update(comparisons={}), "comparisons must be a list, got dict"),
    "summaries of strings": (lambda d: d.update(summaries=["a"]), r"summaries\[0\] must be an object, got str"),
    "shell overhead a list": (lambda d: d.update(shell_overhead=[1]), "shell_overhead must be an object"),
    "shell overhead median a string": (
        lambda d: d.update(shell_overhead={"median_ns": "x", "min_ns": 1, "n": 3}),
        "shell_overhead.median_ns must be a number of nanoseconds, got str"),
    "shell overhead min negative": (
        lambda d: d.update(shell_overhead={"median_ns": 5.5, "min_ns": -1, "n": 3}),
        r"shell_overhead.min_ns must lie in \[0, 2\*\*53\) nanoseconds, got -1"),
    "shell overhead median huge": (
        lambda d: d.update(shell_overhead={"median_ns": 1e300, "min_ns": 1, "n": 3}),
        r"shell_overhead.median_ns must lie in \[0, 2\*\*53\)"),
    "shell overhead without n": (lambda d: d.update(shell_overhead={"median_ns": 5.5, "min_ns": 1}),
                                 "shell_overhead.n must be an integer, got NoneType"),
    "shell overhead n a flag": (lambda d: d.update(shell_overhead={"median_ns": 5.5, "min_ns": 1, "n": True}),
                                "shell_overhead.n must be an integer, got bool"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_document_fails_with_one_line_naming_file_and_problem(tmp_path, case):
    mutate, pattern = HOSTILE[case]
    if case == "not an object":
        path = _write(tmp_path, "[1, 2, 3]")
        pattern = "the document must be an object"
    elif case == "NaN duration":
        text = json.dumps(run_to_document(make_run())).replace('"wall_ns":[1000', '"wall_ns":[NaN', 1)
        text = text.replace('"wall_ns": [1000', '"wall_ns": [NaN', 1)
        path = _write(tmp_path, text)
    else:
        path = _write(tmp_path, _document_with(mutate))
    with pytest.raises(ResultFileError, match=pattern) as info:
        read_result(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message


def test_truncated_document_is_reported_as_truncated(tmp_path):
    text = json.dumps(run_to_document(make_run()))
    path = _write(tmp_path, text[: len(text) // 2])
    with pytest.raises(ResultFileError, match="malformed JSON.*truncated"):
        read_result(path)


def test_deeply_nested_document_is_refused(tmp_path):
    path = _write(tmp_path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ResultFileError, match="nested too deeply|must be an object"):
        read_result(path)


def test_empty_binary_missing_and_directory_inputs_each_get_a_clear_error(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    cases = [(empty, "empty"), (binary, "not UTF-8"), (tmp_path / "missing.json", "no such file"),
             (tmp_path, "is a directory")]
    for path, pattern in cases:
        with pytest.raises(ResultFileError, match=pattern):
            read_result(path)


def test_oversized_file_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(resultfile, "MAX_FILE_BYTES", 100)
    path = tmp_path / "big.json"
    write_result(make_run(), path)
    with pytest.raises(ResultFileError, match="larger than"):
        read_result(path)


def test_too_many_samples_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(resultfile, "MAX_SAMPLES_PER_VARIANT", 3)
    path = tmp_path / "r.json"
    write_result(make_run(), path)
    with pytest.raises(ResultFileError, match="more than 3"):
        read_result(path)


def test_writer_refuses_to_emit_nan(tmp_path):
    run = make_run().replace(environment={"load": float("nan")})
    with pytest.raises(ValueError):
        write_result(run, tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_written_result_has_the_usual_file_mode_not_private(tmp_path):
    mask = os.umask(0o022)
    try:
        write_result(make_run(), tmp_path / "r.json")
    finally:
        os.umask(mask)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


def test_run_with_a_crashed_runs_journal_at_its_json_path_exits_4_and_keeps_the_journal(tmp_path, monkeypatch):
    from cli_runner import invoke

    from pairbench.cli import app
    from pairbench.errors import EXIT_RESULT_FILE
    from pairbench.measure.fake import FakeExecutor

    made = []
    monkeypatch.setattr(app, "EXECUTOR_FACTORY",
                        lambda output: made.append(FakeExecutor({"sleep 0.1": 0.1})) or made[-1])
    out = tmp_path / "r.json"
    first = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1")
    assert first.code == 0, first.err
    assert not journal_path(out).exists()  # a finished run removes its journal
    crashed = Journal(out, make_run(n=0, state="running"))
    crashed.append(0, Sample(wall_ns=100))
    result = invoke("run", "--runs", "3", "--seed", "1", "--json", str(out), "sleep 0.1")
    assert result.code == EXIT_RESULT_FILE
    assert result.err.count("\n") == 1 and "holds the samples of a run that did not finish" in result.err
    assert [len(v.samples) for v in read_result(journal_path(out)).variants] == [1, 0]
    assert made[-1].closed  # the refused run still closes its executor (a spawner process, by default)
