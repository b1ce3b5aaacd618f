"""A fuzz of every field of a real result document: `show`, `report` (every format, to a file) and
`doctor --environment` never crash, never exit with a code outside the README's table, and never
print a control character they were handed (issue 14, done-when).

The documents are the report tests' real `pairbench compare` and `pairbench run` results (written
through the CLI with a scripted executor; ``tests/report/data``), with notes of several codes added.
Every field (each key of every object, the items of lists as ``fields`` says, the document itself) is
replaced, in turn, by a value drawn with a fixed seed from ``VALUES`` (a deletion, other JSON types,
extreme numbers, text with terminal escapes and a byte that was not UTF-8), so a failure reproduces.
The analysis the document holds for other tools (``summaries``, ``comparisons``, ``analysis_notes``)
is never read back, so only a few of its fields are drawn. Every document goes to `show` and
`doctor --environment`; one `show` accepts also to `report -o FILE` in one format, the formats taken
in turn (a document the reader refuses is refused by every command alike: one reader).
``tests/report/test_control_characters.py`` gives every format the same hostile text in every field.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.notes import Note

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "report" / "data"
SEED = 20261124
CHUNKS = 6  # the cases are split so that pytest-xdist spreads them over its workers
DELETE = object()
HOSTILE = "x\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e\udcff"
VALUES = (DELETE, None, True, False, 0, -1, 1, 2**53, 2**63, -(2**63), 1e308, -1e308, 0.5, "", HOSTILE,
          "9" * 30, [], [1], [HOSTILE], {}, {"a": 1}, {HOSTILE: HOSTILE}, [[]])
DERIVED = ("summaries", "comparisons", "analysis_notes")
FORMATS = ("markdown", "csv", "json", "html")
READER_CODES = {0, 2, 4}  # a file read: fine, no machine metadata in it (doctor), refused
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def readme_exit_codes() -> set[int]:
    table = (ROOT / "README.md").read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}


def base_documents() -> dict[str, dict]:
    notes = [Note("renamed", {"name": "a", "copies": ["a (2)"]}).to_dict(),
             Note("leftover-processes", {"side": "old build", "count": 2}).to_dict(),
             Note("recorded", {"text": "noticed while measuring"}).to_dict()]
    documents = {}
    for name in ("compare", "run"):
        document = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
        document["notes"] = notes
        documents[name] = document
    return documents


def fields(value, path=()):
    """Every path into ``value``: the value itself, each key of an object, the first two items of a
    list of the document (both sides, two series), the first item of a list within them."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from fields(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2] if len(path) <= 1 else value[:1]):
            yield from fields(item, (*path, i))


def mutated(document: dict, path: tuple, value) -> object:
    if not path:
        return {} if value is DELETE else value
    document = copy.deepcopy(document)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return document


def cases() -> list[tuple[str, tuple, object]]:
    rng = random.Random(SEED)
    chosen = []
    for name, document in base_documents().items():
        for path in fields(document):
            if path and path[0] in DERIVED and len(path) > 2:
                continue  # never read back: the top of each is fuzzed, not every number in it
            chosen.append((name, path, rng.choice(VALUES)))
    return chosen


CASES = cases()


def check(result, what: str, out_files=()) -> None:
    assert result.code in readme_exit_codes() and result.code in READER_CODES, (what, result.code, ascii(result.err))
    assert "Traceback" not in result.err and "internal error" not in result.err, (what, ascii(result.err))
    if result.code:
        assert result.err.count("\n") == 1, (what, ascii(result.err))
    for text in (result.out, result.err, *out_files):
        raw = RAW_CONTROL.search(text)
        assert raw is None, (what, ascii(text[max(0, raw.start() - 80):raw.end() + 20]))


def test_every_field_of_both_documents_is_fuzzed():
    paths = {(name, path) for name, path, _ in CASES}
    for name, document in base_documents().items():
        assert {p for p in fields(document) if not (p and p[0] in DERIVED and len(p) > 2)} <= {
            p for n, p in paths if n == name}
    assert len(CASES) > 250


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_a_fuzzed_result_document_never_crashes_show_report_or_doctor(tmp_path, chunk):
    documents, plotly = base_documents(), _plotly_js()
    path = tmp_path / "fuzzed.json"
    for index in range(chunk, len(CASES), CHUNKS):
        name, field, value = CASES[index]
        what = f"{name} {field!r} = {value if value is not DELETE else 'deleted'!r}"
        path.write_text(json.dumps(mutated(documents[name], field, value)), encoding="utf-8")
        shown = invoke("show", str(path))
        check(shown, f"show {what}")
        check(invoke("doctor", "--environment", str(path)), f"doctor {what}")
        if shown.code:
            continue  # refused by the one reader every command shares
        fmt = FORMATS[index % len(FORMATS)]  # each accepted document in one more format, in turn
        out = tmp_path / f"report-{index}.{fmt}"
        result = invoke("report", str(path), "--format", fmt, "-o", str(out))
        written = [p.read_text(encoding="utf-8").replace(plotly, "") for p in tmp_path.glob(f"report-{index}.*")]
        check(result, f"report {fmt} {what}", written)
        assert result.code == 0, (fmt, what, ascii(result.err))


def test_every_format_renders_a_fuzzed_document_that_show_accepts():
    formats = {FORMATS[i % len(FORMATS)] for i, (name, field, value) in enumerate(CASES)
               if field and field[0] in ("environment", "sides", "notes")}
    assert formats == set(FORMATS)


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()  # inlined as shipped (it holds tabs): not text from outside
