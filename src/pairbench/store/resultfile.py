"""The result document: a run with its raw samples, versioned JSON, written atomically, read defensively.

Format history (``"format"`` key of the document):
    pairbench.result/1  (pairbench 0.1) one command per variant, samples columnar per variant;
                        options as given; warnings as text; derived summaries and comparisons.
                        Read through ``store.legacy`` (one tested migration).
    pairbench.result/2  (pairbench 0.2) benchmarks (name, params, unit) measured on sides
                        (baseline, candidates, the self-check copy); samples columnar per series
                        (benchmark, side), integer columns plus float ``metrics``; typed
                        ``settings`` (sampling, decision); typed ``notes`` (code, data, subject).

The document also holds what the analysis derived (``summaries``, ``comparisons``,
``analysis_notes``), for other tools; pairbench itself never reads them back:
``show`` and ``report`` always analyse the samples.

Reading never uses pickle or eval; it rejects NaN and infinity, wrong types
(``true`` where an integer belongs), non-positive durations, sample values of
2**53 or more, unequal column lengths, no sides, two sides of one name, a
series of a benchmark or side that does not exist, bad settings, and nesting
too deep to parse, each with one line naming the file and the problem.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from pairbench.errors import ResultFileError
from pairbench.model import SAMPLE_COLUMNS, Run
from pairbench.store import checks, journal
from pairbench.store.checks import expect
from pairbench.store.document import (
    LEGACY_FORMAT,
    RESULT_FORMAT,
    check_series_key,
    run_from_header,
    run_header,
    series_of,
)
from pairbench.store.files import atomic_write_chunks, dumps, parse_json_text, read_text_file
from pairbench.store.legacy import run_from_v1

__all__ = ["LEGACY_FORMAT", "RESULT_FORMAT", "check_readable", "document_chunks", "read_result",
           "run_from_document", "run_to_document", "write_result"]
DERIVED_KEYS = ("summaries", "comparisons", "analysis_notes", "suite_summary", "metric_tables")


# --------------------------------------------------------------------------- writing


def run_to_document(run: Run, derived: Mapping | None = None) -> dict:
    """The JSON-ready document of ``run``: samples columnar per series, then ``derived`` (the
    analysis for other tools: ``summaries``, ``comparisons``, ``analysis_notes``)."""
    document = run_header(run)
    document["series"] = [
        {"benchmark": b, "side": s,
         "samples": {c: samples[c].tolist() for c in SAMPLE_COLUMNS},
         "metrics": {name: values.tolist() for name, values in samples.metrics.items()}}
        for (b, s), samples in sorted(run.samples.items())
    ]
    for key in DERIVED_KEYS:
        if derived and key in derived:
            document[key] = derived[key]
    return document


def write_result(run: Run, path: str | os.PathLike, derived: Mapping | None = None) -> None:
    """Write ``run`` (and ``derived``) to ``path`` atomically (temp file, fsync, rename), once it
    passed the readers' checks (:func:`check_readable`), written as it is encoded, within the size and
    shape the readers accept: a ``ResultFileError`` otherwise, and nothing is written."""
    check_readable(run, str(path))
    atomic_write_chunks(Path(path), document_chunks(run, derived), readable=True)


def check_readable(run: Run, source: str) -> None:
    """Refuse (``ResultFileError`` naming ``source``) a run that :func:`read_result` would refuse:
    its header read back through the reader's own parser (sides, benchmarks, settings, notes,
    suite, environment), each series through the reader's column checks."""
    try:
        header = json.loads(dumps(run_header(run)))
    except ValueError as exc:
        raise ResultFileError(f"{source}: cannot be written: {exc}") from None
    read = run_from_header(header, source)
    for i, ((b, s), samples) in enumerate(sorted(run.samples.items())):
        check_series_key(b, s, read, source, f"series[{i}]")
        checks.check_samples(samples.columns, samples.metrics, source, f"series[{i}]")


NUMBERS_PER_CHUNK = 65_536  # a chunk of a column as text: memory stays bounded whatever the run's size


def document_chunks(run: Run, derived: Mapping | None = None) -> Iterator[str]:
    """The text of :func:`run_to_document`'s document (as :func:`dumps` writes it, then a newline),
    in pieces: the columns are encoded a chunk at a time, never as a list of Python numbers."""
    header = dumps(run_header(run))
    yield header[:-1] + ',"series":['
    for i, ((b, s), samples) in enumerate(sorted(run.samples.items())):
        yield f'{"," if i else ""}{{"benchmark":{b},"side":{s},"samples":{{'
        yield from _columns((column, samples[column]) for column in SAMPLE_COLUMNS)
        yield '},"metrics":{'
        yield from _columns(samples.metrics.items())
        yield "}}"
    yield "]"
    for key in DERIVED_KEYS:
        if derived and key in derived:
            yield f",{dumps(key)}:{dumps(derived[key])}"
    yield "}\n"


def _columns(columns: Iterable[tuple[str, np.ndarray]]) -> Iterator[str]:
    """The members ``"name":[numbers]`` of a JSON object of columns, comma-separated."""
    for j, (name, values) in enumerate(columns):
        yield f'{"," if j else ""}{dumps(name)}:['
        yield from _numbers(values)
        yield "]"


def _numbers(values: np.ndarray) -> Iterator[str]:
    """A column's numbers as JSON, comma-separated, a chunk at a time (ints as ints, floats as
    ``json.dumps`` writes them: ``repr``; a non-finite float is a ``ValueError``, as dumps says)."""
    as_text = str if values.dtype.kind in "iu" else _finite_repr
    for start in range(0, len(values), NUMBERS_PER_CHUNK):
        yield ("," if start else "") + ",".join(map(as_text, values[start:start + NUMBERS_PER_CHUNK].tolist()))


def _finite_repr(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return repr(value)


# --------------------------------------------------------------------------- reading


def read_result(path: str | os.PathLike) -> Run:
    """Read a result document (format /2 or /1) or a journal; ``ResultFileError`` naming the file
    and the problem otherwise.

    Given ``RESULT.json`` that does not exist while ``RESULT.json.partial`` does,
    the journal is read instead (a run that crashed or is still going).
    """
    path = Path(path)
    if not path.exists() and journal.journal_path(path).exists():
        path = journal.journal_path(path)
    text = read_text_file(path)
    if journal.is_journal_text(text):
        return journal.read_journal(path, text)
    from pairbench.store import imports

    if imports.looks_like_go_output(text) and text.lstrip()[:1] not in ("{", "["):
        raise imports.import_first(path, imports.gotest.NAME)
    document = parse_json_text(path, text)
    found = imports.document_format(document) if isinstance(document, dict) and "format" not in document else None
    if found is not None:
        raise imports.import_first(path, found)  # not "unsupported format None"
    return run_from_document(document, source=str(path))


def run_from_document(document: object, *, source: str = "<document>") -> Run:
    """Validate a parsed document of either format and turn it into a :class:`Run`."""
    doc = expect(document, dict, source, "the document")
    fmt = doc.get("format")
    if fmt == LEGACY_FORMAT:
        return run_from_v1(doc, source)
    if fmt != RESULT_FORMAT:
        raise ResultFileError(f"{source}: unsupported format {fmt!r}; this pairbench reads "
                              f"{RESULT_FORMAT!r} and {LEGACY_FORMAT!r}")
    run = run_from_header(doc, source)
    return run.replace(samples=series_of(doc.get("series"), run, source))
