"""The result document, format /2: round trips, atomic writes, and hostile input refused in one line."""

import json
import os

import numpy as np
import pytest
from store_runs import stored_run, two_benchmark_run

from pairbench.command import ExecutorInfo
from pairbench.errors import ResultFileError
from pairbench.model import SAMPLE_COLUMNS
from pairbench.store import checks, files
from pairbench.store.files import dumps
from pairbench.store.resultfile import RESULT_FORMAT, read_result, run_to_document, write_result


def test_result_round_trips_through_the_file(tmp_path, run):
    path = tmp_path / "r.json"
    write_result(run, path)
    back = read_result(path)
    assert (back.kind, back.state, back.stopped_because) == ("compare", "complete", run.stopped_because)
    assert back.settings == run.settings
    assert back.sides == run.sides and back.benchmarks == run.benchmarks
    assert back.notes == run.notes
    for series in run.samples:
        for column in SAMPLE_COLUMNS:
            np.testing.assert_array_equal(run.samples[series][column], back.samples[series][column])


def test_benchmarks_with_parameters_units_and_float_metrics_round_trip(tmp_path):
    run = two_benchmark_run()
    write_result(run, tmp_path / "r.json")
    back = read_result(tmp_path / "r.json")
    assert back.benchmarks == run.benchmarks
    assert back.benchmarks[0].label == "sort[n=1000]" and back.benchmarks[1].unit == "B"
    np.testing.assert_array_equal(back.series(1, 1).metrics["value"], [256.0, 256.0, 257.5])
    np.testing.assert_array_equal(back.series(0, 0)["iterations"], [4, 4, 4])


def test_document_stores_samples_columnar_per_series_with_a_format_version(run):
    document = run_to_document(run)
    assert document["format"] == RESULT_FORMAT == "pairbench.result/2"
    assert document["series"][0]["benchmark"] == 0 and document["series"][0]["side"] == 0
    assert document["series"][0]["samples"]["wall_ns"] == [1000, 1001, 1002, 1003, 1004]
    assert document["settings"]["sampling"]["seed"] == 7 and document["settings"]["decision"]["alpha"] == 0.01


def test_derived_results_are_written_for_other_tools_and_never_read_back(tmp_path, run):
    derived = {"comparisons": [{"verdict": "faster", "effect": {"estimate": -50.0}}], "summaries": []}
    write_result(run, tmp_path / "r.json", derived)
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["comparisons"] == derived["comparisons"]
    edited = {**document, "comparisons": [{"verdict": "nonsense"}], "summaries": "not even a list"}
    (tmp_path / "r.json").write_text(json.dumps(edited))
    assert read_result(tmp_path / "r.json").samples.keys() == run.samples.keys()


def test_write_leaves_no_temporary_files_behind(tmp_path, run):
    write_result(run, tmp_path / "r.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_failed_write_keeps_the_previous_file(tmp_path, monkeypatch, run):
    path = tmp_path / "r.json"
    write_result(run, path)
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        write_result(stored_run(n=9), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_writing_through_a_symbolic_link_replaces_its_target_and_keeps_the_link(tmp_path, run):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "r.json"
    target.write_text("old")
    link = tmp_path / "r.json"
    link.symlink_to(target)
    write_result(run, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert read_result(target).sides[0].name == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "store"]


def test_run_interrupted_before_any_sample_is_still_read(tmp_path):
    write_result(stored_run(n=0, state="interrupted").replace(samples={}), tmp_path / "r.json")
    back = read_result(tmp_path / "r.json")
    assert [len(back.series(0, s)) for s in range(2)] == [0, 0]


@pytest.mark.parametrize("executor", [{"kind": "FakeExecutor", "rss_floor_kib": None},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": 0},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": 1800},
                                      {"kind": "SpawnerExecutor"},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": 820, "spawner": "native",
                                       "peak_memory": "rusage", "peak_memory_reason": "no cgroup v2"},
                                      {"kind": "SpawnerExecutor", "rss_floor_kib": None, "spawner": "native",
                                       "peak_memory": "cgroup"}])
def test_executor_metadata_as_pairbench_writes_it_is_read(tmp_path, run, executor):
    path = tmp_path / "r.json"
    document = json.loads(json.dumps(run_to_document(run)))
    path.write_text(json.dumps({**document, "environment": {"executor": executor}}))
    read = read_result(path)
    assert read.executor.to_dict() == {"rss_floor_kib": None, **executor} and "executor" not in read.environment
    write_result(read, path)
    assert json.loads(path.read_text())["environment"]["executor"] == {"rss_floor_kib": None, **executor}


@pytest.mark.parametrize("key", ["spawner", "peak_memory", "peak_memory_reason"])
def test_executor_metadata_that_is_not_text_is_refused_naming_the_field(tmp_path, run, key):
    document = json.loads(json.dumps(run_to_document(run)))
    (tmp_path / "r.json").write_text(json.dumps({**document, "environment": {"executor": {"kind": "SpawnerExecutor",
                                                                                            key: 3}}}))
    with pytest.raises(ResultFileError, match=f"environment.executor.{key}"):
        read_result(tmp_path / "r.json")
    bad = run.replace(executor=ExecutorInfo("SpawnerExecutor", **{key: 3}))
    with pytest.raises(ResultFileError, match=f"environment.executor.{key}"):  # nor written by pairbench
        write_result(bad, tmp_path / "w.json")
    assert not (tmp_path / "w.json").exists()


def _write_unchecked(run, path) -> None:
    """``run`` written as a document, without the checks ``write_result`` makes first (another
    program's file)."""
    path.write_text(dumps(run_to_document(run)) + "\n", encoding="utf-8")


def test_writer_refuses_to_emit_nan(tmp_path, run):
    with pytest.raises(ResultFileError, match="Out of range float"):
        write_result(run.replace(environment={"load": float("nan")}), tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_written_result_has_the_usual_file_mode_not_private(tmp_path, run):
    mask = os.umask(0o022)
    try:
        write_result(run, tmp_path / "r.json")
    finally:
        os.umask(mask)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


# --------------------------------------------------------------------------- hostile documents


def _document_with(mutate):
    document = run_to_document(stored_run())
    mutate(document)
    return document


def _write(tmp_path, document_or_text):
    path = tmp_path / "bad.json"
    path.write_text(document_or_text if isinstance(document_or_text, str) else json.dumps(document_or_text))
    return path


def _set_column(name, value, series=0):
    def mutate(doc):
        doc["series"][series]["samples"][name] = value
    return mutate


def _set(path, value):
    """Set ``doc[path[0]][path[1]]...`` to ``value``."""
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


HOSTILE = {
    "wrong version": (lambda d: d.update(format="pairbench.result/99"), "unsupported format"),
    "negative duration": (_set_column("wall_ns", [1, -5, 3, 4, 5]), r"wall_ns\[1\] is -5"),
    "zero duration": (_set_column("wall_ns", [1, 0, 3, 4, 5]), "durations must be positive"),
    "float duration": (_set_column("wall_ns", [1.5, 2, 3, 4, 5]), "list of integers"),
    "string duration": (_set_column("wall_ns", ["1", "2", "3", "4", "5"]), "list of integers"),
    "boolean column": (_set_column("wall_ns", [True] * 5), "list of integers"),
    "nested column": (_set_column("wall_ns", [[1], [2], [3], [4], [5]]), "list of integers"),
    "huge integer": (_set_column("wall_ns", [10**30] * 5), "integers|64 bits"),
    "unequal columns": (_set_column("user_ns", [1, 2]), "different lengths"),
    "missing column": (lambda d: d["series"][0]["samples"].pop("sys_ns"), "lacks the column 'sys_ns'"),
    "column not a list": (_set_column("wall_ns", {"a": 1}), "must be a list"),
    "negative rusage": (_set_column("max_rss_kib", [1, 2, -3, 4, 5]), "max_rss_kib.*negative"),
    "zero iterations": (_set_column("iterations", [1, 0, 1, 1, 1]), r"iterations\[1\] is 0: a sample holds"),
    "warmup not a flag": (_set_column("warmup", [0, 2, 0, 0, 0]), "warmup must hold only 0 and 1"),
    "boolean among integers": (_set_column("wall_ns", [5, True, 3, 4, 5]), "list of integers"),
    "duration of 2**62": (_set_column("wall_ns", [2**62, 1, 1, 1, 1]),
                          r"wall_ns\[0\] is 4611686018427387904, beyond the limit of 2\*\*53"),
    "user time of 2**53": (_set_column("user_ns", [1, 2**53, 1, 1, 1]), r"user_ns\[1\] is 9007199254740992"),
    "metric of strings": (_set(["series", 0, "metrics"], {"value": ["a"] * 5}), r"metrics\['value'\] must be a list of numbers"),
    "metric too short": (_set(["series", 0, "metrics"], {"value": [1.0]}), "different lengths"),
    "argv not strings": (lambda d: d["sides"][0]["command"].update(argv=[1, 2]), "list of strings"),
    "unknown state": (lambda d: d.update(state="exploded"), "unknown state"),
    "unknown kind": (lambda d: d.update(kind="benchmark"), "unknown kind"),
    "no sides": (lambda d: d.update(sides=[]), "sides is empty"),
    "two sides of one name": (_set(["sides", 1, "name"], "a"), r"sides\[1\]\.name 'a' is the name of an earlier"),
    "unknown side label": (_set(["sides", 1, "label"], "boss"), r"sides\[1\]\.label must be one of"),
    "no benchmarks": (lambda d: d.update(benchmarks=[]), "benchmarks must hold 1 to"),
    "benchmark twice": (lambda d: d.update(benchmarks=d["benchmarks"] * 2), "names one benchmark twice"),
    "benchmark without a name": (_set(["benchmarks", 0, "name"], ""), r"benchmarks\[0\]: a benchmark needs a name"),
    "series of a missing side": (_set(["series", 1, "side"], 7), r"series\[1\] names benchmark 0 and side 7"),
    "series twice": (lambda d: d["series"].append(d["series"][0]), r"series\[2\] repeats the series"),
    "notes a string": (lambda d: d.update(notes="a note"), "notes must be a list, got str"),
    "note without a code": (lambda d: d.update(notes=[{"data": {}}]), r"notes\[0\]\.code must be a string"),
    "alpha out of range": (_set(["settings", "decision", "alpha"], 1.5), "settings are not valid: --alpha"),
    "alpha a string": (_set(["settings", "decision", "alpha"], "lots"), "settings are not valid: --alpha"),
    "threshold zero": (_set(["settings", "decision", "threshold"], 0), "settings are not valid: --threshold"),
    "seed a flag": (_set(["settings", "sampling", "seed"], True), "settings are not valid: --seed"),
    "unknown setting": (_set(["settings", "sampling", "turbo"], 1), "unknown setting"),
    "prepare a flag": (_set(["settings", "sampling", "prepare"], True), "settings are not valid"),
    "prepare a number": (_set(["settings", "sampling", "prepare"], 0.5), "settings are not valid"),
    "executor a number": (lambda d: d["environment"].update(executor=5), "environment.executor must be an object, got int"),
    "executor floor negative": (lambda d: d["environment"].update(executor={"rss_floor_kib": -1}),
                                "rss_floor_kib must be non-negative, got -1"),
    "executor floor a flag": (lambda d: d["environment"].update(executor={"rss_floor_kib": True}),
                              "rss_floor_kib must be an integer, got bool"),
    "shell overhead a list": (lambda d: d.update(shell_overhead=[1]), "shell_overhead must be an object"),
    "shell overhead median a string": (lambda d: d.update(shell_overhead={"median_ns": "x", "min_ns": 1, "n": 3}),
                                       "shell_overhead.median_ns must be a number of nanoseconds, got str"),
    "shell overhead median huge": (lambda d: d.update(shell_overhead={"median_ns": 1e300, "min_ns": 1, "n": 3}),
                                   r"shell_overhead.median_ns must lie in \[0, 2\*\*53\)"),
    "shell overhead n a flag": (lambda d: d.update(shell_overhead={"median_ns": 5.5, "min_ns": 1, "n": True}),
                                "shell_overhead.n must be an integer, got bool"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_document_fails_with_one_line_naming_file_and_problem(tmp_path, case):
    mutate, pattern = HOSTILE[case]
    path = _write(tmp_path, _document_with(mutate))
    with pytest.raises(ResultFileError, match=pattern) as info:
        read_result(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message


def test_a_document_that_is_not_an_object_or_holds_nan_is_refused(tmp_path):
    with pytest.raises(ResultFileError, match="the document must be an object"):
        read_result(_write(tmp_path, "[1, 2, 3]"))
    text = json.dumps(run_to_document(stored_run())).replace('"wall_ns": [1000', '"wall_ns": [NaN', 1)
    with pytest.raises(ResultFileError, match="NaN is not allowed"):
        read_result(_write(tmp_path, text))


def test_a_note_of_a_code_this_version_does_not_know_is_kept_as_recorded_text(tmp_path):
    path = _write(tmp_path, _document_with(lambda d: d.update(notes=[{"code": "from-the-future", "data": {"x": 1}}])))
    (kept,) = read_result(path).notes
    assert kept.code == "recorded" and "from-the-future" in kept.data["text"]


def test_truncated_document_is_reported_as_truncated(tmp_path):
    text = json.dumps(run_to_document(stored_run()))
    with pytest.raises(ResultFileError, match="malformed JSON.*truncated"):
        read_result(_write(tmp_path, text[: len(text) // 2]))


def test_deeply_nested_document_is_refused(tmp_path):
    with pytest.raises(ResultFileError, match="nested too deeply|must be an object"):
        read_result(_write(tmp_path, "[" * 100_000 + "]" * 100_000))


def test_empty_binary_missing_and_directory_inputs_each_get_a_clear_error(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path, pattern in [(empty, "empty"), (binary, "not UTF-8"), (tmp_path / "missing.json", "no such file"),
                          (tmp_path, "is a directory")]:
        with pytest.raises(ResultFileError, match=pattern):
            read_result(path)


def test_oversized_file_is_refused_before_parsing(tmp_path, monkeypatch, run):
    _write_unchecked(run, tmp_path / "big.json")
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(ResultFileError, match="larger than"):
        read_result(tmp_path / "big.json")


def test_too_many_samples_are_refused(tmp_path, monkeypatch, run):
    _write_unchecked(run, tmp_path / "r.json")
    monkeypatch.setattr(checks, "MAX_SAMPLES_PER_SERIES", 3)
    with pytest.raises(ResultFileError, match="more than 3"):
        read_result(tmp_path / "r.json")
