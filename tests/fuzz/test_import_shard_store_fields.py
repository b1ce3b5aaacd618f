"""A fuzz of what pairbench reads besides its own results (issue 26, item 6): other tools' files
(`import`), shard files (`merge`) and the rows of a history store (`history`, `store info`, and a
`run` that stores into it). Whatever the input, the command exits with a code of the README's table
(never 70), says a refusal in one line, prints no control character it was handed, and a file it
writes is one `show` reads (the writers keep the readers' limits).

The inputs are real: the harnesses' recorded output (``tests/adapters/data``), a shard written by
`bench`'s writer, a store written by `Store.add`. Each field (every key of the JSON documents, the
words of the go text, every column of every table) is replaced in turn by a value drawn with a fixed
seed (``SEED``), so a failure reproduces; ``BUDGET`` cases per input keep it to a few seconds.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from test_result_fields import (
    DELETE,
    HOSTILE,
    RAW_CONTROL,
    VALUES,
    fields,
    mutated,
    readme_exit_codes,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "adapters" / "data"
SEED = 20261126
BUDGET = 40  # cases per input: each is one or two commands of ~20 ms
CHUNKS = 4
NUMBERS = (0, -1, 1, 2**53, 2**63, 10**400, 1e308, -1e308, 1e-320, 0.5, 1e30)
GO_WORDS = ("0", "-1", "1e999", "1e308", "NaN", "-5", "9" * 400, "\x1b]0;x\x07", "B/op", "ns/op", "", "1.5e",
            "BenchmarkX-2", HOSTILE, "+3", ".5")
SQL_VALUES = (None, 0, -1, 2**63 - 1, -(2**63), 1.5, float("inf"), float("-inf"), "", "abc",
              HOSTILE.replace("\udcff", ""), "9" * 40, b"\x00\xff", b"", "[1, 2", '{"n": 1}', "2026-13-99",
              "CAST(x'41ff' AS TEXT)")  # the last: text that is not UTF-8, as another program can store it


def _json_cases(name: str) -> list[tuple[str, tuple, object]]:
    document = json.loads((DATA / name).read_text())
    rng = random.Random(f"{SEED}:{name}")
    paths = list(fields(document))
    return [(name, path, rng.choice(VALUES + NUMBERS)) for path in rng.sample(paths, min(BUDGET, len(paths)))]


def _go_cases() -> list[tuple[str, tuple, object]]:
    lines = (DATA / "go-count2.txt").read_text().splitlines()
    rng = random.Random(f"{SEED}:go")
    cases = []
    for _ in range(BUDGET):
        line = rng.randrange(len(lines))
        words = lines[line].split()
        cases.append(("go-count2.txt", (line, rng.randrange(max(1, len(words)))), rng.choice(GO_WORDS)))
    return cases


CASES = [case for name in ("hyperfine-1.15.json", "gbench-1.7.1.json", "pytest-benchmark-5.3.1.json")
         for case in _json_cases(name)] + _go_cases()


def _go_mutated(path: tuple, value: str) -> str:
    lines = (DATA / "go-count2.txt").read_text().splitlines()
    line, word = path
    words = lines[line].split() or [""]
    words[min(word, len(words) - 1)] = value
    lines[line] = "\t".join(words)
    return "\n".join(lines) + "\n"


def check(result, what: str, codes=frozenset({0, 4})) -> None:
    assert result.code in readme_exit_codes() and result.code in codes, (what, result.code, ascii(result.err))
    assert "Traceback" not in result.err and "internal error" not in result.err, (what, ascii(result.err))
    if result.code:
        assert result.err.count("\n") == 1, (what, ascii(result.err))
    for text in (result.out, result.err):
        raw = RAW_CONTROL.search(text)
        assert raw is None, (what, ascii(text[max(0, raw.start() - 80):raw.end() + 20]))


def _shown(value) -> str:
    return "deleted" if value is DELETE else ascii(value)[:60]


def test_every_input_is_fuzzed_within_its_budget():
    assert {name for name, _, _ in CASES} == {"hyperfine-1.15.json", "gbench-1.7.1.json",
                                               "pytest-benchmark-5.3.1.json", "go-count2.txt"}
    assert 3 * BUDGET < len(CASES) <= 4 * BUDGET


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_an_imported_file_is_refused_in_one_line_or_written_as_show_reads_it(tmp_path, chunk):
    source, out = tmp_path / "in", tmp_path / "out.json"
    for index in range(chunk, len(CASES), CHUNKS):
        name, path, value = CASES[index]
        what = f"import {name} {path!r} = {_shown(value)}"
        if name.endswith(".txt"):
            source.write_text(_go_mutated(path, value), encoding="utf-8", errors="surrogatepass")
        else:
            document = mutated(json.loads((DATA / name).read_text()), path, value)
            source.write_text(json.dumps(document), encoding="utf-8", errors="surrogatepass")
        out.unlink(missing_ok=True)
        result = invoke("convert", "--json", str(out), str(source))
        check(result, what)
        assert out.exists() == (result.code == 0), what
        if result.code == 0:
            check(invoke("show", str(out)), f"show of {what}", codes={0})


# --------------------------------------------------------------------------- shard files


def _shard_documents(tmp_path) -> tuple[dict, dict]:
    from runs import make_run, series, side

    from pairbench.model import BenchmarkKey
    from pairbench.store import shards
    from pairbench.store.resultfile import write_result

    names = ["BM_a", "BM_b", "BM_c"]
    documents = []
    for k in (1, 2):
        mine = shards.select(names, k, 2)
        samples = {}
        for b in range(len(mine)):
            samples[(b, 0)] = series([1000 + i for i in range(8)], start_seq=16 * b, stride=2)
            samples[(b, 1)] = series([1100 + i for i in range(8)], start_seq=16 * b + 1, stride=2)
        run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                       benchmarks=[BenchmarkKey(m) for m in mine], shard=f"{k}/2")
        run = run.replace(suite=shards.suite_record(names, (k, 2), "gbench"), environment={"host": f"ci-{k}"})
        write_result(run, tmp_path / f"s{k}.json")
        documents.append(json.loads((tmp_path / f"s{k}.json").read_text()))
    return documents[0], documents[1]


def test_a_fuzzed_shard_is_refused_in_one_line_or_merged_into_a_result_show_reads(tmp_path):
    first, second = _shard_documents(tmp_path)
    rng = random.Random(f"{SEED}:shard")
    paths = [p for p in fields(first) if not (p and p[0] in ("summaries", "comparisons", "analysis_notes"))]
    extremes = [[1, 10**18], [10**18, 10**18], [0, 2], [2, 2], [1, 1], [-1, 2], [1, 10_001], [1.0, 2]]
    cases = [(p, rng.choice(VALUES + NUMBERS)) for p in rng.sample(paths, min(BUDGET, len(paths)))]
    cases += [(("suite", "shard"), shard) for shard in extremes]
    out = tmp_path / "merged.json"
    for path, value in cases:
        what = f"merge {path!r} = {_shown(value)}"
        (tmp_path / "s1.json").write_text(json.dumps(mutated(first, path, value)), errors="surrogatepass")
        (tmp_path / "s2.json").write_text(json.dumps(second))
        out.unlink(missing_ok=True)
        result = invoke("merge", "--json", str(out), str(tmp_path / "s1.json"), str(tmp_path / "s2.json"))
        check(result, what, codes={0, 1, 2, 4})
        if result.code in (0, 1):
            check(invoke("show", str(out)), f"show of {what}", codes={0})


# --------------------------------------------------------------------------- store rows


@pytest.fixture(scope="module")
def store_file(tmp_path_factory) -> Path:
    from history_runs import store_history

    from pairbench.environment.fingerprint import machine_of
    from pairbench.model import BenchmarkKey
    from pairbench.store.history import Confirmation, Link, Store

    path = tmp_path_factory.mktemp("store") / "h.db"
    with Store.open(str(path)) as store:
        store_history(store, [{"parse": 1e6, "sort": 2e5}, {"parse": 1.1e6, "sort": 2e5}], environment=FIXED_ENVIRONMENT)
        store.add_confirmations(machine_of(FIXED_ENVIRONMENT), [(BenchmarkKey("parse"), Confirmation(
            0, "a" * 40, "b" * 40, "confirmed", "slower", 0.1, 0.05, 0.15, None, "2026-02-01T00:00:00+00:00"))])
        store.add_links(machine_of(FIXED_ENVIRONMENT), [(BenchmarkKey("sort"), Link(
            0, "u", kind, "a" * 40, "b" * 40, "2026-02-01T00:00:00+00:00", "main", 1, "cpu", 900, 1e-3, 2.0, 1.5, 2.5,
            1e-5, "2026-02-01T00:00:01+00:00", 1.0, 1e-3)) for kind in ("predecessor", "anchor")])
    return path


def _store_cases(path: Path) -> list[tuple[str, str, object]]:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = [(t, r[1]) for t in sorted(tables) for r in conn.execute(f"PRAGMA table_info({t})")]
    conn.close()
    rng = random.Random(f"{SEED}:store")
    return [(table, column, rng.choice(SQL_VALUES)) for table, column in columns]


def _updated(path: Path, table: str, column: str, value) -> bool:
    """Set ``column`` of every row of ``table`` to ``value`` (a string starting CAST: that SQL)."""
    sql = value if isinstance(value, str) and value.startswith("CAST(") else "?"
    try:
        with sqlite3.connect(path) as conn:
            conn.execute(f'UPDATE "{table}" SET "{column}" = {sql}', () if sql != "?" else (value,))
        return True
    except sqlite3.IntegrityError:
        return False
    finally:
        conn.close()


def test_every_column_of_every_table_is_fuzzed(store_file):
    cases = _store_cases(store_file)
    assert {t for t, _, _ in cases} == {"schema_version", "machines", "benchmarks", "results", "series",
                                        "confirmations", "links"}
    assert len(cases) > 45


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_a_store_row_no_pairbench_wrote_is_refused_in_one_line(store_file, tmp_path, use_executor, chunk):
    cases = _store_cases(store_file)
    path = tmp_path / "h.db"
    for table, column, value in cases[chunk::CHUNKS]:
        what = f"{table}.{column} = {_shown(value)}"
        shutil.copy(store_file, path)
        if not _updated(path, table, column, value):
            continue  # the database itself refuses it (a text id, a second row alike): nothing to read
        for command in (["store", "info"], ["history", "--format", "json"], ["run", "--runs", "3", "-q", "sleep 0.1"]):
            use_executor()  # a fresh one for each run
            check(invoke(*command, "--store", str(path)), f"{' '.join(command)} with {what}")
